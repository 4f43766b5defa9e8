import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, collectOverrides } from '@agentflow/core';
import { resolveConfig, stamp } from '../pipeline/open-run';
import { runSweep, sweepRuns } from '../sweep/run-sweep';
import { shareableStages, startFromSharedStages } from '../sweep/shared-stages';
import { readPlan, recordPlan, sweepPlanOf } from '../sweep/sweep-plan';
import type { RegisterCommand } from './command-context';
import { runPipelineCommand } from './run';

interface SweepOptions {
  seeds?: string;
  credit?: string;
  config?: string;
  set?: string[];
  out?: string;
  resume?: string;
  quiet?: boolean;
  json?: boolean;
}

export const registerSweepCommand: RegisterCommand = (program, context) => {
  program
    .command('sweep')
    .description('Run the pipeline once per seed (and per credit), one after another, resumable; write a table (sweep.md) and a page (sweep.html).')
    .option('--seeds <list>', 'seeds to run: 0-4, 0,2,7 or 3')
    .option('--credit <list>', 'credits to compare, each over every seed, e.g. outcome,process-sum,process-min,gigpo (default: the config\'s own)')
    .option('--config <file>', 'YAML or JSON config (default: the embedded default)')
    .option('--set <key=value>', 'override one config value in every run (repeatable)', collectOverrides)
    .option('--out <dir>', 'sweep directory (default runs/sweep-<date-time>); re-running the same command with it continues the sweep')
    .option('--resume <dir>', 'continue the sweep recorded in DIR/sweep.json')
    .option('--quiet', "print the sweep's lines, warnings and errors only")
    .option('--json', 'print progress as JSON lines on stdout')
    .action(async (options: SweepOptions) => {
      if (options.resume && (options.seeds || options.credit || options.config || options.set || options.out)) {
        throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: '--resume DIR continues the sweep recorded there; drop --seeds, --credit, --config, --set and --out.' });
      }
      if (!options.resume && !options.seeds) throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'sweep needs --seeds (e.g. --seeds 0-4), or --resume DIR.' });
      const dir = options.resume ?? options.out ?? join('runs', `sweep-${stamp(new Date())}`);
      const plan = options.resume ? readPlan(dir) : sweepPlanOf({ ...options, seeds: options.seeds as string });
      mkdirSync(dir, { recursive: true });
      if (!options.resume) recordPlan(dir, plan);
      const command = `agentflow sweep --resume ${dir}`;
      const outcome = await runSweep(plan, dir, {
        command: `agentflow sweep --seeds ${plan.seeds.join(',')}${plan.credits ? ` --credit ${plan.credits.join(',')}` : ''}${plan.config ? ` --config ${plan.config}` : ''}${plan.set.map((text) => ` --set ${text}`).join('')} --out ${dir}`,
        log: context.stderr,
        runOne: async (spec, how) => {
          const progress = { ...(options.quiet ? { quiet: true } : {}), ...(options.json ? { json: true } : {}) };
          if (how.resume) return void (await runPipelineCommand({ resume: spec.dir, ...progress }, context));
          const settings = { ...(plan.config ? { config: plan.config } : {}), set: [...plan.set, `seed=${spec.seed}`], ...(spec.credit ? { credit: spec.credit } : {}) };
          // A later credit of the same seed starts from the stages before DAPO already run: from
          // the run that finished the most of them (process credit's label and PRM serve PURE's too).
          const config = { ...resolveConfig(settings), out: spec.dir };
          const source = sweepRuns(plan, dir)
            .filter((other) => other.seed === spec.seed && other.dir !== spec.dir)
            .map((other) => ({ dir: other.dir, stages: shareableStages(other.dir, config) }))
            .reduce<{ dir: string; stages: string[] } | undefined>((best, other) => (other.stages.length > (best?.stages.length ?? 0) ? other : best), undefined);
          const copied = source ? startFromSharedStages(source, spec.dir, config) : [];
          if (source && copied.length > 0) {
            context.stderr(`sweep: ${spec.arm}, seed ${spec.seed} starts from the ${describeStages(copied)} of ${source.dir}\n`);
            await runPipelineCommand({ resume: spec.dir, ...progress }, context);
          } else await runPipelineCommand({ ...settings, out: spec.dir, ...progress }, context);
        },
      });
      context.stdout(`Sweep table: ${outcome.paths.markdown}\nSweep page:  ${outcome.paths.html}\n`);
      if (outcome.failed.length > 0) {
        throw new AgentFlowError({
          code: 'RUNTIME_ERROR',
          message: `${outcome.failed.length} of the sweep's runs failed (${outcome.failed.map((spec) => `${spec.arm} seed ${spec.seed}`).join(', ')}); their reasons are in the table. Continue with \`${command}\` once fixed.`,
        });
      }
    });
};

/** `warm-start, eval-before` as the sweep's log says it: "warm start and eval-before", "warm start, eval-before, collect, label and train-prm". */
function describeStages(stages: readonly string[]): string {
  const names = stages.map((stage) => (stage === 'warm-start' ? 'warm start' : stage));
  return names.length <= 2 ? names.join(' and ') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}
