import { resolve } from 'node:path';
import { AgentFlowError, loadConfig, type Trajectory } from '@agentflow/core';
import { answerFormatFor, checkAnswer } from '@agentflow/eval';
import { createAgent, createCrossTaskMemory } from '@agentflow/flow';
import { createToolSet } from '@agentflow/executor';
import { type ChatModelConnection, createChatModelFromSpec, createDeadline, parseChatModelSpec, parsePlannerSpec } from '@agentflow/llm';
import { createSqliteMemoryStore } from '@agentflow/memory';
import { createCompactPromptTemplate, createFullPromptTemplate } from '@agentflow/planner';
import { runConfigSchema } from '../config/schema';
import type { CommandContext, RegisterCommand } from './command-context';
import { createPlannerModel } from './solve/cli-models';
import { parseChoice, parsePositiveInteger, parsePositiveSeconds } from './option-values';
import { formatOutcome, formatStep } from './solve/print-step';
import { resolveSolveToolFlags, type SolveToolFlags } from './solve/solve-tool-flags';

interface SolveOptions extends SolveToolFlags {
  maxResponseBytes?: string;
  planner: string;
  fixedModules?: string;
  memory?: string;
  memoryK: string;
  reference?: string;
  ollamaUrl: string;
  openaiBaseUrl: string;
  apiKeyEnv: string;
  maxSteps: string;
  timeLimit: string;
  template?: string;
  json?: boolean;
  config?: string;
}

async function solve(question: string, options: SolveOptions, context: CommandContext): Promise<void> {
  const seed = options.config ? loadConfig(options.config, runConfigSchema).seed : 0;
  const spec = parsePlannerSpec(options.planner);
  const maxSteps = parsePositiveInteger('--max-steps', options.maxSteps);
  const timeLimitMs = parsePositiveSeconds('--time-limit', options.timeLimit) * 1000;
  const template = parseChoice('--template', options.template ?? (spec.kind === 'local' ? 'compact' : 'full'), ['full', 'compact']);
  const toolSettings = resolveSolveToolFlags(options, process.env);
  // The fixed verifier and generator: an HTTP model at the planner's URLs.
  const connection: ChatModelConnection = {
    ...options,
    maxResponseBytes: options.maxResponseBytes === undefined ? undefined : parsePositiveInteger('--max-response-bytes', options.maxResponseBytes),
  };
  const fixedModel = options.fixedModules === undefined ? undefined : createChatModelFromSpec(parseChatModelSpec('--fixed-modules', options.fixedModules), connection);
  const memoryK = parsePositiveInteger('--memory-k', options.memoryK);
  // Everything above only read flags; from here on, what starts is stopped in `finally`,
  // on an error and on Ctrl-C alike (a second Ctrl-C kills the process as usual).
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  // --time-limit counts from the start of the command (the CLI's process start): loading, tools and servers spend it too.
  const deadline = createDeadline({
    timeLimitMs,
    ...(context.startedAt === undefined ? {} : { startedAt: context.startedAt }),
    parent: controller.signal,
    what: 'the --time-limit',
  });
  const cleanups: Array<() => Promise<unknown>> = [];
  cleanups.push(async () => deadline.dispose());
  try {
    const { tools, close } = await createToolSet({ ...toolSettings, signal: deadline.signal, warn: context.stderr });
    cleanups.push(close);
    const { model, release, actionSchemaStyle } = await createPlannerModel(options.planner, connection);
    cleanups.push(release);
    // Cross-task memory on request: solved questions of earlier solves as examples; this one is kept when --reference says it is right.
    const memory = options.memory === undefined ? undefined : createCrossTaskMemory({ store: createSqliteMemoryStore({ path: resolve(options.memory) }), k: memoryK });
    if (memory) cleanups.push(() => memory.close());
    const agent = createAgent({
      model,
      tools,
      temperature: 0,
      template: template === 'compact' ? createCompactPromptTemplate() : createFullPromptTemplate(),
      // The local policy's grammar handles a root union; HTTP servers get the flat schema.
      actionSchemaStyle,
      // Without --fixed-modules the planner's model writes the answer when the run ends without one.
      fixedModules: { verifierModel: fixedModel, generatorModel: fixedModel ?? model },
      maxSteps,
      timeLimitMs,
      memory,
    });
    const trajectory = await agent.run(question, {
      seed,
      // The command's deadline bounds the run: its TIMEOUT ends the run as a timeout, Ctrl-C as a cancellation.
      signal: deadline.signal,
      listener: (event) => {
        if (!options.json && event.type === 'step-end') context.stdout(formatStep(event.step));
      },
    });
    context.stdout(options.json ? `${JSON.stringify(trajectory, null, 2)}\n` : formatOutcome(trajectory));
    if (options.reference !== undefined) {
      const references = [options.reference];
      const correct = checkAnswer(trajectory.answer ?? '', references, answerFormatFor({ references })).correct;
      const kept = (await memory?.remember(trajectory, correct ? 1 : 0)) ?? false;
      context.stderr(`reference ${JSON.stringify(options.reference)}: ${correct ? 'correct' : 'wrong'}${memory ? (kept ? '; kept in memory' : '; not kept in memory') : ''}\n`);
    }
    if (trajectory.answer === null) throw noAnswerError(trajectory);
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    process.removeListener('SIGTERM', onInterrupt);
    await Promise.allSettled(cleanups.map((cleanup) => cleanup()));
  }
}

/** Why `solve` exits non-zero: the run ended without an answer (TIMEOUT past --time-limit). */
function noAnswerError(trajectory: Trajectory): AgentFlowError {
  const steps = `${trajectory.steps.length} step${trajectory.steps.length === 1 ? '' : 's'}`;
  const byTermination: Record<Trajectory['termination'], string> = {
    timeout: `${trajectory.error ?? `the time limit ran out after ${steps}`} Raise --time-limit to give it longer.`,
    error: trajectory.error ?? `The run failed after ${steps} without an answer.`,
    max_steps: `No answer after ${steps} (--max-steps): the planner did not finish${trajectory.error ? ` and ${trajectory.error}` : ' and no answer was written'}; raise --max-steps or add --fixed-modules.`,
    finished: `The run finished after ${steps} without an answer (an empty finish input).`,
  };
  return new AgentFlowError({
    code: trajectory.termination === 'timeout' ? 'TIMEOUT' : 'RUNTIME_ERROR',
    message: byTermination[trajectory.termination],
    details: { termination: trajectory.termination, steps: trajectory.steps.length },
  });
}

/** Repeatable string options; absent until given once. */
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export const registerSolveCommand: RegisterCommand = (program, context) => {
  program
    .command('solve')
    .description('Answer one question with the agent and print its steps.')
    .argument('<question>', 'the question to answer')
    .option('--planner <spec>', 'ollama:MODEL, openai:MODEL or local:DIR', 'ollama:qwen3:8b')
    .option('--ollama-url <url>', 'Ollama base URL', 'http://127.0.0.1:11434')
    .option('--openai-base-url <url>', 'OpenAI-compatible base URL (ends before /chat/completions)', 'https://api.openai.com/v1')
    .option('--api-key-env <name>', 'environment variable with the OpenAI-compatible API key ("" for none)', 'OPENAI_API_KEY')
    .option('--max-steps <n>', 'planner steps at most', '10')
    .option('--max-response-bytes <n>', 'cap on one reply body of the HTTP models (their maxResponseBytes; default 8 MiB)')
    .option('--time-limit <seconds>', 'wall-clock limit of the whole command, every model call, retry and wait included (a positive number; exits 1 when it runs out before an answer)', '300')
    .option('--no-python', 'leave the sandboxed python tool out')
    .option('--corpus <file>', 'JSONL corpus ({id, title, text} per line) for the corpus_search tool')
    .option('--web-search', 'add web_search (Tavily; reaches the network; needs the key of --tavily-key-env)')
    .option('--tavily-key-env <name>', 'environment variable holding the Tavily API key', 'TAVILY_API_KEY')
    .option('--tavily-url <url>', 'Tavily API root, with --web-search (default https://api.tavily.com)')
    .option('--wikipedia', 'add wikipedia (MediaWiki action API; reaches the network)')
    .option('--wikipedia-url <url>', 'MediaWiki action API endpoint, with --wikipedia (default https://en.wikipedia.org/w/api.php)')
    .option('--mcp <command line>', 'add the tools of a stdio MCP server, "[NAME=]COMMAND [ARG...]" split as a shell would, as NAME__TOOL (NAME: the server\'s own by default; repeatable)', collect)
    .option('--mcp-url <url>', 'add the tools of a Streamable HTTP MCP server, "[NAME=]URL", as NAME__TOOL (repeatable)', collect)
    .option('--fixed-modules <spec>', 'fixed verifier (LLM verdict) and generator: ollama:MODEL or openai:MODEL at the same URLs (default: rules, and the planner writes the answer)')
    .option('--memory <file>', 'cross-task memory: a SQLite file of solved questions, the most similar shown to the planner as examples (created when missing)')
    .option('--memory-k <n>', 'solved examples shown from --memory', '3')
    .option('--reference <answer>', 'the expected answer: the answer is checked against it, and with --memory a right one is kept')
    .option('--template <name>', 'prompt template: full (LLMs) or compact (tiny local policies); default by planner')
    .option('--json', 'print the trajectory as JSON (the final answer in `answer`)')
    .option('--config <file>', 'YAML or JSON config (its seed seeds the planner)')
    .action((question: string, options: SolveOptions) => solve(question, options, context));
};
