import { AgentFlowError, collectOverrides } from '@agentflow/core';
import { isEvalDirectory } from '@agentflow/eval';
import type { Command } from 'commander';
import type { RegisterCommand } from './command-context';
import { runBenchmarkCommand } from './eval/benchmark-command';
import { BENCHMARK_OPTIONS, type BenchmarkOptions, type EvalCommandOptions } from './eval/eval-options';
import { EVAL_DEFAULTS } from './eval/eval-settings';
import { runPipelineCommand } from './run';

/** The benchmark options this command line gives: commander's defaults (`--no-python`'s true) do not count. */
function givenBenchmarkOptions(options: EvalCommandOptions, command: Command): BenchmarkOptions {
  const given: BenchmarkOptions = {};
  for (const key of Object.keys(BENCHMARK_OPTIONS) as Array<keyof typeof BENCHMARK_OPTIONS>) {
    if (key === 'out' || command.getOptionValueSource(key) !== 'cli') continue;
    Object.assign(given, { [key]: options[key] });
  }
  return given;
}

/**
 * Two modes. `--resume RUN_DIR`: the held-out stages of a training run (eval-before,
 * eval-after), as `agentflow run` runs them. `--planner SPEC --data FILE --out DIR`: any
 * planner on any benchmark file, resumable (`--resume EVAL_DIR`, or the same command again).
 */
export const registerEvalCommand: RegisterCommand = (program, context) => {
  program
    .command('eval')
    .description(
      'Evaluate a planner: the held-out stages of a training run (--resume RUN_DIR), or any planner on a benchmark file (--planner SPEC --data FILE --out DIR).',
    )
    .option('--resume <dir>', 'a run directory (created by `agentflow run`): run its eval stages; or an eval directory: continue that eval')
    .option('--set <key=value>', 'stage mode: override one value of the run\'s recorded config, parsed as YAML (repeatable); config.json records the result', collectOverrides)
    .option('--planner <spec>', 'benchmark mode: the planner, ollama:MODEL, openai:MODEL or local:DIR')
    .option('--data <file>', "the benchmark file (aime24.json, aime_1983_2024.csv, a JSONL file), or one of AgentFlow's ten benchmarks by name (bamboogle, 2wiki, hotpotqa, musique, gaia, gpqa, medqa, aime24, amc23, gameof24)")
    .option('--datasets-dir <dir>', 'where --data NAME finds NAME.json (default $AGENTFLOW_DATASETS, else ./datasets)')
    .option('--format <format>', 'agentflow-json, aime-csv or jsonl (default by extension: .json, .csv, .jsonl)')
    .option('--years <from,to>', 'keep items of these years, inclusive (e.g. 1983,2023; items without a year are dropped)')
    .option('--limit <n>', 'keep the first N items (after --years)')
    .option('--fields <mapping>', "the file's field names, e.g. id=pid,question=problem,answer=solution (also prompt, choices, year)")
    .option('--fixed-modules <spec>', 'the fixed verifier and generator, ollama:MODEL or openai:MODEL (default: rules, and the finish input as the answer)')
    .option('--judge <spec>', "an LLM judge scoring every answer beside the rule checker, as AgentFlow's paper scored: ollama:MODEL or openai:MODEL (default: the rule checker alone)")
    .option('--ollama-url <url>', `Ollama base URL (default ${EVAL_DEFAULTS.ollamaUrl})`)
    .option('--openai-base-url <url>', `OpenAI-compatible base URL, ending before /chat/completions (default ${EVAL_DEFAULTS.openaiBaseUrl})`)
    .option('--api-key-env <name>', `environment variable with the OpenAI-compatible API key, "" for none (default ${EVAL_DEFAULTS.apiKeyEnv})`)
    .option('--response-format <kind>', 'how the OpenAI-compatible server is asked for JSON: json_schema (default), json_object (DeepSeek) or none')
    .option('--samples <k>', 'runs per item; pass@k and avg@k are reported when k > 1 (default 1)')
    .option('--max-steps <n>', `planner steps per run at most (default ${EVAL_DEFAULTS.maxSteps})`)
    .option('--max-tokens <n>', `completion tokens per planner decision (default ${EVAL_DEFAULTS.maxTokens})`)
    .option(
      '--temperature <t>',
      `planner temperature (default ${EVAL_DEFAULTS.temperatureOneSample}, or ${EVAL_DEFAULTS.temperatureSeveralSamples} with --samples > 1)`,
    )
    .option('--seed <n>', `seed of the per-run sampling seeds (default ${EVAL_DEFAULTS.seed})`)
    .option('--time-limit <seconds>', `wall-clock limit of one run (default ${EVAL_DEFAULTS.timeLimitS})`)
    .option('--template <name>', 'prompt template: full (LLMs) or compact (tiny local policies); default by planner')
    .option('--no-python', 'leave the sandboxed python tool out')
    .option('--tools <yaml>', "tools beside python, as a run config's tools block in YAML, e.g. '{wikipedia: {}, webSearch: {apiKeyEnv: TAVILY_API_KEY}}' (default none)")
    .option('--memory <file>', 'cross-task memory (SQLite, created when missing; may be shared): similar solved items shown to the planner, right runs kept')
    .option('--memory-k <n>', `solved examples shown per question with --memory (default ${EVAL_DEFAULTS.memoryK})`)
    .option('--concurrency <n>', `runs in flight at once (default ${EVAL_DEFAULTS.concurrency})`)
    .option('--out <dir>', 'benchmark mode: the eval directory (eval-config.json, eval.jsonl, trajectories.jsonl, eval.json); an existing one is continued')
    .option('--quiet', 'print warnings and errors only')
    .option('--json', 'print progress as JSON lines on stdout')
    .action(async (options: EvalCommandOptions, command: Command) => {
      const given = givenBenchmarkOptions(options, command);
      const benchmark = given.planner !== undefined || options.out !== undefined || (options.resume !== undefined && isEvalDirectory(options.resume));
      if (benchmark) {
        await runBenchmarkCommand(options, given, context);
        return;
      }
      if (options.resume === undefined) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: 'agentflow eval needs --resume RUN_DIR (the eval stages of a training run) or --planner SPEC --data FILE --out DIR (a benchmark).',
        });
      }
      const stray = Object.keys(given).map((key) => BENCHMARK_OPTIONS[key as keyof BenchmarkOptions]);
      if (stray.length > 0) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `${stray.join(', ')}: benchmark options, but --resume ${options.resume} is a run directory (its eval stages take the run's config; change it with --set).`,
        });
      }
      const { resume, set, quiet, json } = options;
      const root = await runPipelineCommand({ resume, set, quiet, json }, context, new Set(['eval-before', 'eval-after']));
      context.stdout(`Done: ${root}\n`);
    });
};
