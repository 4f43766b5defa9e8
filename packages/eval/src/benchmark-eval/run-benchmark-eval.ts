import { existsSync, readFileSync } from 'node:fs';
import { AgentFlowError, appendJsonl, createRandom, type RunEvent, type Tool, type Trajectory, writeFileAtomic } from '@agentflow/core';
import { createConfiguredToolSet, createPythonTool, type PythonTool } from '@agentflow/executor';
import { type CrossTaskMemory, createCrossTaskMemory } from '@agentflow/flow';
import { createSqliteMemoryStore } from '@agentflow/memory';
import { type BenchmarkItem, stripAnswerInstruction } from '../datasets/benchmark-item';
import { loadDataset } from '../datasets/load-dataset';
import { BENCHMARK_EVAL_DEFAULTS, type BenchmarkEvalSettings } from './benchmark-eval-settings';
import { type BenchmarkEvalAgent, type BenchmarkEvalModels, type BenchmarkEvalRun, createBenchmarkEvalAgent, watched } from './eval-agent';
import { defaultResumeCommand, type EvalDirectory, type EvalDirectoryWording, evalDirectoryOf, openEvalDirectory, readEvalConfig, readEvalRecords, readEvalTrajectories } from './eval-directory';
import { type EvalRecord, evalRecordOf, evalRunKey } from './eval-record';
import { createEvalScorer, type EvalScorer } from './eval-scorer';
import { type EvalPageItem, writeEvalPage } from './eval-page';
import { type EvalSummary, summarizeEval } from './eval-summary';

export interface RunBenchmarkEvalSettings {
  /** The eval directory: new (absent or empty), or one to continue with the same settings. */
  root: string;
  /** The experiment (`resolveBenchmarkEvalSettings`): recorded, compared on resume. */
  settings: BenchmarkEvalSettings;
  /**
   * Opens the models the settings name, once, when there is a run to make (a finished eval
   * opens none); their failures after the transport's retries stop the eval.
   */
  openModels: (settings: BenchmarkEvalSettings) => Promise<BenchmarkEvalModels>;
  /** Runs in flight at once (default 4, BENCHMARK_EVAL_DEFAULTS). With a memory, results depend on it. */
  concurrency?: number;
  /** Recorded in eval-config.json as the way the models were reached (URLs, key variable...); rewritten on resume, never compared. */
  connection?: Readonly<Record<string, unknown>>;
  /** Progress: stage `eval` (BENCHMARK_EVAL_STAGE) with one `progress` event per recorded run. */
  emit?: (event: RunEvent) => void;
  /** Told once the directory is open and the models are made, before the first run. */
  onStart?: (directory: EvalDirectory, resumed: boolean) => void;
  /** Stops the eval (Ctrl-C): runs in flight are dropped, the records so far stay; the eval then throws ABORTED. */
  signal?: AbortSignal;
  /** The clock of the records and the summary. Default: the system clock. */
  now?: () => Date;
  /** What continues this eval, named in the errors of an eval stopped early or refused (a CLI: its resume command). */
  resumeCommand?: (root: string) => string;
  /** How the refusals of another eval in `root` name settings and the folder (a CLI: its options). */
  wording?: EvalDirectoryWording;
}

export interface BenchmarkEvalResult {
  directory: EvalDirectory;
  summary: EvalSummary;
}

/** The progress stage of the eval, in a reporter's task list. */
export const BENCHMARK_EVAL_STAGE = 'eval';

/** The items an eval's settings select from its data file (INVALID_ARGUMENT when none is left). */
export function loadItems(settings: BenchmarkEvalSettings): BenchmarkItem[] {
  const { data } = settings;
  const items = loadDataset({
    path: data.path,
    format: data.format,
    ...(data.years ? { years: data.years } : {}),
    ...(data.limit === null ? {} : { limit: data.limit }),
    ...(data.fields ? { fields: data.fields } : {}),
    ...(data.benchmark ? { benchmark: data.benchmark } : {}),
  });
  if (items.length === 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${data.path}${data.years ? ` with years ${data.years.join(' to ')}` : ''}: no item is left to evaluate; check the year range.`,
      details: { path: data.path, years: data.years },
    });
  }
  return items;
}

async function pythonTools(settings: BenchmarkEvalSettings): Promise<{ tools: Tool[]; python?: PythonTool }> {
  if (!settings.python) return { tools: [] };
  const python = createPythonTool();
  const reason = await python.unavailableReason();
  if (reason) {
    throw new AgentFlowError({
      code: 'RUNTIME_ERROR',
      message: `The python tool is unavailable here: ${reason}. Install what it needs, or evaluate without it (python: false, in another eval directory).`,
      details: { reason },
    });
  }
  return { tools: [python as Tool], python };
}

/** Python (where the settings offer it) and the settings' tools block, started; `close` stops them all. */
async function openTools(settings: BenchmarkEvalSettings, warn: (text: string) => void): Promise<{ tools: Tool[]; close: () => Promise<void> }> {
  const { tools: own, python } = await pythonTools(settings);
  try {
    const alongside = [{ label: 'python (built in)', remedy: 'evaluate without python (python: false)', tools: own }];
    const configured = await createConfiguredToolSet(settings.tools, { alongside, warn });
    const close = async () => {
      try {
        await configured.close();
      } finally {
        await python?.dispose();
      }
    };
    return { tools: [...own, ...configured.tools], close };
  } catch (error) {
    await python?.dispose();
    throw error;
  }
}

/** The SQLite file (created when missing), BM25 over questions as `agentflow solve --memory` retrieves. */
function openMemory(settings: BenchmarkEvalSettings): CrossTaskMemory | undefined {
  if (settings.memory === null) return undefined;
  return createCrossTaskMemory({ store: createSqliteMemoryStore({ path: settings.memory.path }), k: settings.memory.k, mode: 'bm25' });
}

/** Why the eval stopped before every run was recorded. */
function stoppedError(cause: { role: string; error: unknown } | 'interrupted', recorded: number, total: number, root: string, resumeCommand: string): AgentFlowError {
  const resume = `${recorded} of ${total} runs are recorded in ${root}; ${resumeCommand} continues.`;
  if (cause === 'interrupted') return new AgentFlowError({ code: 'ABORTED', message: `Interrupted. ${resume}` });
  const { role, error } = cause;
  return new AgentFlowError({
    code: AgentFlowError.isInstance(error) ? error.code : 'RUNTIME_ERROR',
    message: `The ${role} failed: ${(error instanceof Error ? error.message : String(error)).replace(/\.$/, '')}. ${resume}`,
    cause: error,
    details: { role },
  });
}

/** A run that has no record yet: the item, which sample, and the ids and seed it records. */
type PendingRun = BenchmarkEvalRun & { item: BenchmarkItem; sample: number };

function pendingRuns(items: readonly BenchmarkItem[], settings: BenchmarkEvalSettings, recorded: ReadonlySet<string>): PendingRun[] {
  return items
    .flatMap((item) =>
      Array.from({ length: settings.samples }, (_, sample) => ({
        item,
        sample,
        // The file's prompt (a multiple-choice item's options, Game of 24's task) without its answer-tag instruction: the agent answers by finishing.
        question: stripAnswerInstruction(item.prompt),
        itemId: item.id,
        trajectoryId: `eval-${item.id}-${sample}`,
        // Per run, not per position: the same run gets the same seed whatever else is recorded.
        seed: createRandom(settings.seed).fork(evalRunKey(item.id, sample)).nextUint32(),
      })),
    )
    .filter((job) => !recorded.has(evalRunKey(job.itemId, job.sample)));
}

/** Runs the pending runs, `concurrency` at a time, handing each finished one to `onFinished`; stops when `signal` aborts. */
async function runPending(
  pending: readonly PendingRun[],
  agent: BenchmarkEvalAgent,
  settings: { concurrency: number; signal: AbortSignal; onFinished: (job: PendingRun, trajectory: Trajectory) => Promise<void> },
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (!settings.signal.aborted && next < pending.length) {
      const job = pending[next++]!;
      const trajectory = await agent.run(job, settings.signal);
      // Cut short (Ctrl-C, a failing model): not a result; a resume runs it again.
      if (settings.signal.aborted) return;
      await settings.onFinished(job, trajectory);
    }
  };
  await Promise.all(Array.from({ length: Math.min(settings.concurrency, pending.length) }, worker));
}

/** The agent over the opened models, and the scorer with the judge; the models are released if they cannot be made. */
async function openAgent(
  run: RunBenchmarkEvalSettings,
  tools: readonly Tool[],
  memory: CrossTaskMemory | undefined,
  onModelFailure: (role: string, error: unknown) => void,
): Promise<{ agent: BenchmarkEvalAgent; scorer: EvalScorer }> {
  const models = await run.openModels(run.settings);
  try {
    if ((run.settings.judge === null) !== (models.judge === undefined)) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `The settings name judge ${JSON.stringify(run.settings.judge)} but the models ${models.judge ? 'have' : 'lack'} a judge; open one exactly when judge is set.`,
        details: { judge: run.settings.judge },
      });
    }
    const agent = createBenchmarkEvalAgent({ settings: run.settings, models, tools, ...(memory ? { memory } : {}), onModelFailure });
    const judge = models.judge ? watched(models.judge, (error) => onModelFailure('judge', error)) : undefined;
    return { agent, scorer: createEvalScorer(run.settings, judge) };
  } catch (error) {
    await models.release?.();
    throw error;
  }
}

/**
 * Runs the agent on every (item, sample) of the data file that `root` has no record of,
 * appending each run's trajectory and then its record as it finishes, and writes `eval.json`
 * (atomic) at the end. A resumed eval sends no request for a recorded run. A model that fails
 * for good stops the eval with that error; its runs in flight are not recorded.
 */
export async function runBenchmarkEval(run: RunBenchmarkEvalSettings): Promise<BenchmarkEvalResult> {
  const { settings } = run;
  const emit = run.emit ?? (() => {});
  const now = run.now ?? (() => new Date());
  const resumeCommand = run.resumeCommand ?? defaultResumeCommand;
  const items = loadItems(settings);
  const { directory, resumed } = openEvalDirectory(run.root, settings, { connection: run.connection ?? {}, now, resumeCommand, ...(run.wording ? { wording: run.wording } : {}) });
  const records: EvalRecord[] = readEvalRecords(directory);
  const pending = pendingRuns(items, settings, new Set(records.map((record) => evalRunKey(record.itemId, record.sample))));
  const total = items.length * settings.samples;
  let completed = total - pending.length;
  let correct = records.filter((record) => record.correct).length;
  const progress = () => emit({ type: 'progress', stage: BENCHMARK_EVAL_STAGE, completed, total, metrics: { accuracy: correct / completed } });
  let failure: { role: string; error: unknown } | undefined;
  const stop = new AbortController();
  const signal = run.signal ? AbortSignal.any([run.signal, stop.signal]) : stop.signal;
  // Only when there is work: a finished eval starts no sandbox and loads no model (a local planner takes a while).
  const tools = pending.length > 0 ? await openTools(settings, (text) => emit({ type: 'log', level: 'warn', message: text.trim() })) : undefined;
  let memory: CrossTaskMemory | undefined;
  try {
    memory = pending.length > 0 ? openMemory(settings) : undefined;
    const opened =
      pending.length === 0
        ? undefined
        : await openAgent(run, tools?.tools ?? [], memory, (role, error) => {
            failure ??= { role, error };
            stop.abort();
          });
    run.onStart?.(directory, resumed);
    emit({ type: 'stage-start', stage: BENCHMARK_EVAL_STAGE, total });
    if (resumed) emit({ type: 'log', level: 'info', message: `Resuming ${directory.root}: ${completed} of ${total} runs recorded.` });
    if (completed > 0) progress();
    if (opened) {
      const { agent, scorer } = opened;
      try {
        await runPending(pending, agent, {
          concurrency: run.concurrency ?? BENCHMARK_EVAL_DEFAULTS.concurrency,
          signal,
          onFinished: async (job, trajectory) => {
            let score: Awaited<ReturnType<EvalScorer['score']>>;
            try {
              score = await scorer.score(trajectory.answer, job.item, signal);
            } catch (error) {
              // The judge failed for good (the eval stops with its error) or the eval was interrupted: not a result.
              if (signal.aborted) return;
              throw error;
            }
            if (signal.aborted) return;
            const record = evalRecordOf(job, trajectory, score.check, now(), score.judge);
            // Before the record: a run killed in between is run again, and keeping it again replaces it.
            if (record.correct) await memory?.remember(trajectory, 1);
            appendJsonl(directory.trajectories, [trajectory]);
            appendJsonl(directory.records, [record]);
            records.push(record);
            completed++;
            if (record.correct) correct++;
            progress();
          },
        });
      } finally {
        await agent.release();
      }
    }
    const ids = new Set(records.map((record) => record.trajectoryId));
    const summary = summarizeEval(settings, items.map((item) => item.id), records, readEvalTrajectories(directory, ids), now);
    writeFileAtomic(directory.summary, `${JSON.stringify(summary, null, 2)}\n`);
    writeEvalPage(directory, { summary, records, items, generatedAt: now() });
    if (failure) throw stoppedError(failure, completed, total, directory.root, resumeCommand(directory.root));
    if (run.signal?.aborted) throw stoppedError('interrupted', completed, total, directory.root, resumeCommand(directory.root));
    emit({ type: 'stage-end', stage: BENCHMARK_EVAL_STAGE, metrics: { accuracy: summary.accuracy, correct: summary.correct, total: summary.total } });
    return { directory, summary };
  } finally {
    try {
      await memory?.close();
    } finally {
      await tools?.close();
    }
  }
}

/**
 * Renders `eval.html` again from an eval directory's files (`agentflow report EVAL_DIR`): its
 * settings, `eval.json` and `eval.jsonl`, with the questions and references read from the data
 * file again (rows keep their answers when the file is gone). Returns the page's path.
 */
export function rewriteEvalPage(root: string, now: () => Date = () => new Date()): string {
  const directory = evalDirectoryOf(root);
  const { settings } = readEvalConfig(directory);
  if (!existsSync(directory.summary)) {
    throw new AgentFlowError({ code: 'NOT_FOUND', message: `${directory.summary} is missing: the eval has not finished a pass yet (continue it with \`agentflow eval --resume ${root}\`).`, details: { path: directory.summary } });
  }
  const summary = JSON.parse(readFileSync(directory.summary, 'utf8')) as EvalSummary;
  let items: EvalPageItem[] = [];
  try {
    items = loadItems(settings);
  } catch {
    // The data file moved or changed: the page still lists every recorded run.
  }
  return writeEvalPage(directory, { summary, records: readEvalRecords(directory), items, generatedAt: now() });
}
