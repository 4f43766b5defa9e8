import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { AgentFlowError } from '../errors/agentflow-error';
import { formatZodIssues } from '../errors/format-zod-issues';
import { writeFileAtomic } from '../jsonl/write-file-atomic';
import type { RunEventListener } from '../schemas/run-event';

/** What a stage ledger's file (a run directory's `state.json`) records: the stages that finished, and what each returned. */
export interface StageState {
  version: 1;
  /** When the ledger was created (ISO 8601). */
  createdAt: string;
  stages: Record<string, { finishedAt: string; result?: unknown }>;
}

/** What a ledger file must hold; a stage's result is its own business. */
export const stageStateSchema = z
  .object({
    version: z.literal(1).describe('Layout version of state.json.'),
    createdAt: z.string().describe('When the run started (ISO 8601).'),
    stages: z
      .record(
        z.string(),
        z.object({ finishedAt: z.string().describe('When the stage finished (ISO 8601).'), result: z.unknown().optional() }).passthrough(),
      )
      .describe('The stages that finished, by name.'),
  })
  .passthrough();

/**
 * The finished stages of a resumable run, kept in one JSON file replaced atomically: a process
 * killed at any moment leaves the file as it was before or after a stage finished, never half.
 */
export interface StageLedger {
  readonly path: string;
  /** The whole state, read and checked afresh (another process may have written it). */
  read(): StageState;
  isDone(stage: string): boolean;
  /** What the stage returned when it finished, or undefined. */
  result<T>(stage: string): T | undefined;
  /** Records `stage` as finished with its result (a JSON value), replacing the file atomically. */
  markDone(stage: string, result?: unknown): void;
}

/** Settings for {@link openStageLedger}. */
export interface StageLedgerSettings {
  /**
   * Reads and checks the file's content against {@link stageStateSchema}. Default: JSON.parse,
   * then the schema, each failure an INVALID_CONFIG naming the file and the key. A caller with
   * its own config reader passes it, so a damaged ledger reads like any damaged config file.
   */
  parse?: (path: string) => StageState;
}

function parseLedgerFile(path: string): StageState {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new AgentFlowError({ code: 'INVALID_CONFIG', message: `${path}: not valid JSON: ${(cause as Error).message}`, cause, details: { path } });
  }
  const parsed = stageStateSchema.safeParse(raw);
  if (!parsed.success) {
    throw new AgentFlowError({ code: 'INVALID_CONFIG', message: formatZodIssues(parsed.error).map((line) => `${path}: ${line}`).join('\n'), cause: parsed.error, details: { path } });
  }
  return parsed.data as StageState;
}

/** Opens the ledger at `path`, creating it (no stage finished) when it does not exist; an existing file is checked now. */
export function openStageLedger(path: string, settings: StageLedgerSettings = {}): StageLedger {
  const parse = settings.parse ?? parseLedgerFile;
  const read = (): StageState => (existsSync(path) ? parse(path) : { version: 1, createdAt: new Date().toISOString(), stages: {} });
  if (existsSync(path)) read();
  else writeFileAtomic(path, JSON.stringify(read(), null, 2));
  return {
    path,
    read,
    isDone: (stage) => stage in read().stages,
    result: <T>(stage: string) => read().stages[stage]?.result as T | undefined,
    markDone(stage, result) {
      const state = read();
      state.stages[stage] = { finishedAt: new Date().toISOString(), ...(result === undefined ? {} : { result }) };
      writeFileAtomic(path, JSON.stringify(state, null, 2));
    },
  };
}

/** One stage of a resumable run. `run` may be interrupted at any moment and run again. */
export interface Stage<Context> {
  name: string;
  run(context: Context, emit: RunEventListener): Promise<unknown>;
}

/**
 * Runs stages in order, skipping those the ledger records as finished (`stage-end` is still
 * emitted for them). A stage is recorded only after it returns, so a killed stage runs again on
 * resume; a stage that does long work checkpoints inside itself, so that running it again
 * repeats nothing it finished. With `only`, the other stages are passed over.
 */
export async function runStages<Context>(
  stages: ReadonlyArray<Stage<Context>>,
  ledger: Pick<StageLedger, 'isDone' | 'markDone'>,
  context: Context,
  emit: RunEventListener,
  only?: ReadonlySet<string>,
): Promise<void> {
  for (const stage of stages) {
    if (only && !only.has(stage.name)) continue;
    if (ledger.isDone(stage.name)) {
      emit({ type: 'stage-end', stage: stage.name });
      continue;
    }
    emit({ type: 'stage-start', stage: stage.name });
    const result = await stage.run(context, emit);
    ledger.markDone(stage.name, result);
    emit({ type: 'stage-end', stage: stage.name });
  }
}
