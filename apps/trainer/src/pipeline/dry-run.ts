import { existsSync } from 'node:fs';
import { checkModelFolder } from '@agentflow/models';
import { needsStepScores } from '@agentflow/dapo';
import { confidenceFeatureSet, resolvePrmTrainable } from '@agentflow/prm';
import type { RunConfig } from '../config/schema';
import { type GuardedTaskSource, guardedTaskSource } from './pipeline-context';
import { preflightProblems, runEndpoints } from './preflight';
import { probeChatEndpoints } from '@agentflow/llm';
import { runMemoryPlan } from './run-memory-plan';
import { formatMemoryPlan } from '@agentflow/models';

export interface DryRunCheck {
  ok: boolean;
  what: string;
  detail: string;
}

type Fetch = typeof fetch;

/** A preset, or a model folder that will load (@agentflow/models checkModelFolder: files, config, weights from the headers). */
async function modelFolderCheck(what: string, source: RunConfig['policy']['model']): Promise<DryRunCheck> {
  if (!('path' in source)) return { ok: true, what, detail: `preset ${source.preset}, created on the first run` };
  const check = await checkModelFolder(source.path);
  if (!check.ok) return { ok: false, what, detail: check.problem };
  return { ok: true, what, detail: `${source.path} has config, tokenizer and ${check.plan.parameters} parameters (${(check.plan.float32Bytes / 2 ** 30).toFixed(2)} GiB as float32)` };
}

/**
 * The leakage guard of the run, as the run itself applies it (a refused leak fails the check,
 * naming the pairs), then the settings the guarded source cannot run (preflightProblems).
 */
function sourceChecks(config: RunConfig): DryRunCheck[] {
  const what = 'train/test leakage';
  let guarded: GuardedTaskSource;
  try {
    guarded = guardedTaskSource(config);
  } catch (error) {
    return [{ ok: false, what, detail: error instanceof Error ? error.message : String(error) }];
  }
  const { source, leakage } = guarded;
  const compared = `${leakage.checked.train} train x ${leakage.checked.test} test items compared at threshold ${leakage.threshold}`;
  const leakageCheck =
    leakage.dropped.length > 0
      ? { ok: true, what, detail: `${compared}; ${leakage.dropped.length} leaked training item(s) will be dropped (onLeakage: drop): ${leakage.dropped.slice(0, 10).join(', ')}; ${source.split('train').length} remain` }
      : { ok: true, what, detail: `${compared}; no near-duplicates` };
  const problems = preflightProblems(config, guarded);
  return [
    leakageCheck,
    ...(problems.length === 0
      ? [{ ok: true, what: 'runnable settings', detail: 'the demonstrations fit policy.maxSteps; both splits have tasks' }]
      : problems.map((problem) => ({ ok: false, what: `runnable settings (${problem.key})`, detail: problem.message }))),
  ];
}

/**
 * What `--dry-run` checks before anything heavy runs: model folders, datasets, endpoints
 * (each named with what is wrong), and the sandbox of the python tool.
 */
export async function dryRunChecks(
  config: RunConfig,
  settings: { fetch?: Fetch; env?: NodeJS.ProcessEnv; pythonUnavailable?: () => Promise<string | undefined> } = {},
): Promise<DryRunCheck[]> {
  const fetchImpl = settings.fetch ?? fetch;
  const env = settings.env ?? process.env;
  const checks: DryRunCheck[] = [await modelFolderCheck('planner model', config.policy.model)];
  if (needsStepScores(config.train.credit)) checks.push(await modelFolderCheck('PRM backbone', config.prm.backbone));
  // The leakage check reads the data: only when every file is there.
  let dataPresent = true;
  if (config.task.kind === 'datasets') {
    for (const [name, source] of [['training data', config.task.train], ['test data', config.task.test]] as const) {
      const present = existsSync(source.path);
      dataPresent &&= present;
      checks.push(
        present
          ? { ok: true, what: name, detail: `${source.path} (${source.format})` }
          : { ok: false, what: name, detail: `dataset file ${source.path} does not exist` },
      );
    }
  } else {
    checks.push({ ok: true, what: 'tasks', detail: `generated world: ${config.task.trainTasks} train / ${config.task.testTasks} held-out tasks, seed ${config.task.seed}` });
  }
  if (dataPresent) checks.push(...sourceChecks(config));
  for (const { what, endpoint, probe } of await probeChatEndpoints(runEndpoints(config), { fetch: fetchImpl, env })) {
    if (probe.missingApiKey) checks.push({ ok: false, what: `${what} API key`, detail: probe.missingApiKey });
    checks.push({ ok: probe.ok, what: `${what} (${endpoint.kind} ${endpoint.model})`, detail: probe.detail });
  }
  checks.push(memoryPlanCheck(config));
  if (settings.pythonUnavailable) {
    const reason = await settings.pythonUnavailable();
    checks.push(reason ? { ok: false, what: 'python tool', detail: reason } : { ok: true, what: 'python tool', detail: 'bubblewrap sandbox available' });
  }
  return checks;
}

/** The memory plan's lines, or why there is none (a model folder that cannot be read is a failed check already). */
function memoryPlanLines(config: RunConfig): string[] {
  try {
    return ['  memory plan (predicted peak, @agentflow/models planMemory):', ...formatMemoryPlan(runMemoryPlan(config))];
  } catch (error) {
    return [`  memory plan: not available (${error instanceof Error ? error.message : String(error)})`];
  }
}

/** Fails when the predicted peak is over the device's memory, naming both. */
function memoryPlanCheck(config: RunConfig): DryRunCheck {
  const what = 'memory plan';
  try {
    const plan = runMemoryPlan(config);
    const figures = `predicted peak ${(plan.totalBytes / 2 ** 30).toFixed(1)} GiB of ${(plan.availableBytes / 2 ** 30).toFixed(1)} GiB on ${plan.device}`;
    return plan.fits
      ? { ok: true, what, detail: `${figures}: fits` }
      : { ok: false, what, detail: `${figures}: does not fit (lower train.microBatchTokens or microBatchRows, set policy.recompute, or use vLLM rollouts; see the plan above)` };
  } catch (error) {
    return { ok: false, what, detail: `cannot be made: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** "every weight" of the planner, and how many patterns keep some frozen. */
const everyWeight = (frozen: readonly string[]) => `every weight${frozen.length > 0 ? ` but those of ${frozen.length} frozen pattern(s)` : ''}`;

/** What DAPO trains, as the summary says it. */
function dapoTrains(config: RunConfig): string {
  const { trainable, lora } = config.train;
  if (trainable.kind === 'full') return `${everyWeight(trainable.frozen)} of the warm planner`;
  return lora ? `a fresh LoRA of rank ${lora.rank}` : "the planner's own adapter (policy.lora)";
}

/** The PRM and label lines of the plan: what trains with the PRM's head, and who labels the steps. */
function prmLines(config: RunConfig, stages: readonly string[]): string[] {
  if (!stages.includes('train-prm')) return [`  PRM: none (credit ${config.train.credit.kind} needs no step scores)`];
  const trainable = resolvePrmTrainable(config.prm);
  const trains =
    trainable.kind === 'head' ? 'head only' : trainable.kind === 'lora' ? `LoRA rank ${trainable.rank}` : `${everyWeight(trainable.frozen)} of the backbone (lr ${config.prm.backboneLearningRate}) and the head`;
  const confidence = confidenceFeatureSet(config.prm.confidence);
  const refresh = config.prm.refreshAt.length > 0 ? `, made again after DAPO step${config.prm.refreshAt.length > 1 ? 's' : ''} ${config.prm.refreshAt.join(', ')}` : '';
  return [
    `  PRM: input ${config.prm.input}${confidence ? ` + confidence (${confidence})` : ''}, ${trains}, ${config.prm.loss}, up to ${config.prm.epochs} epochs${refresh}`,
    `  label: ${config.label.kind === 'judge' ? `judge ${config.label.endpoint.model}${config.label.includeReference ? ' (with the reference answer)' : ''}` : `Monte-Carlo, ${config.label.samples} completions per step`}`,
  ];
}

export function formatDryRun(config: RunConfig, checks: readonly DryRunCheck[], stages: readonly string[]): string {
  const lines = [
    `Plan for ${config.name} (seed ${config.seed}, device ${config.device}, credit ${config.train.credit.kind}):`,
    `  stages: ${stages.join(' -> ')}`,
    ...(config.warmStart.epochs > 0 && config.task.kind === 'world'
      ? [
          `  warm start: ${config.warmStart.epochs} epochs on the demonstrations of ${config.warmStart.demonstrations ?? 'all'} training tasks${
            config.task.teacher.errorRate > 0
              ? `, ${Math.round(config.task.teacher.errorRate * 100)}% with a mistake (${config.task.teacher.mistakes.join(', ')})`
              : ''
          }, training ${config.warmStart.trainable.kind === 'full' ? everyWeight(config.warmStart.trainable.frozen) : `a LoRA of rank ${config.policy.lora.rank}`}`,
        ]
      : ['  warm start: none (the task source has no demonstrations); DAPO starts from the planner as it is']),
    ...prmLines(config, stages),
    `  DAPO: ${config.train.totalSteps} steps x ${config.train.promptsPerBatch} prompts x G=${config.train.groupSize}, lr ${config.train.learningRate}, credit ${config.train.credit.kind}, eps ${config.train.epsLow}/${config.train.epsHigh}, overlong ${config.train.overlong.enabled ? `on (L_max ${config.train.overlong.maxLength}, L_cache ${config.train.overlong.cacheLength})` : 'off'}, training ${dapoTrains(config)}`,
    ...memoryPlanLines(config),
    'Checks:',
    ...checks.map((check) => `  ${check.ok ? '✔' : '✘'} ${check.what}: ${check.detail}`),
  ];
  const failed = checks.filter((check) => !check.ok).length;
  lines.push(failed === 0 ? 'All checks passed.' : `${failed} check${failed === 1 ? '' : 's'} failed.`);
  return `${lines.join('\n')}\n`;
}
