import type { ChatMessage, LanguageModel, Random, Tool } from '@agentflow/core';
import { AgentFlowError } from '@agentflow/core';
import { TASK_WORLD_ATTRIBUTES, type TaskWorld, type TaskWorldSplit } from '@agentflow/eval';
import { runWorldAgent } from './world-agent';

export interface DemonstrationSample {
  taskId: string;
  prompt: ChatMessage[];
  completion: string;
}

/**
 * The expert demonstrations as training samples, with each step's prompt exactly as the
 * planner renders it: the real loop runs with a scripted model that replays the expert's
 * actions and with the real tools, so the observations in later prompts are the ones a
 * rollout sees. A demonstration that does not reach its answer is an error (the world and
 * the tools disagree), never a silent bad sample.
 */
export async function demonstrationSamples(
  world: TaskWorld,
  split: TaskWorldSplit,
  tools: readonly Tool[],
  limits: { maxSteps: number; maxTokens: number },
  settings: { errors?: { rate: number; kinds?: readonly ExpertMistake[]; random: Random } } = {},
): Promise<DemonstrationSample[]> {
  const samples: DemonstrationSample[] = [];
  for (const task of world.split(split)) {
    const exact = world.demonstration(task.id).steps.map((step) => step.action);
    const errors = settings.errors;
    const actions =
      errors && errors.random.next() < errors.rate ? withMistake(world, exact, errors.random.choice(errors.kinds ?? EXPERT_MISTAKES), errors.random) : undefined;
    let next = 0;
    const expert: LanguageModel = {
      specificationVersion: 'v1',
      provider: 'demonstration',
      modelId: 'expert',
      chat: async () => {
        const action = (actions ?? exact)[next++];
        return { text: action ? JSON.stringify(action) : '', finishReason: 'stop', model: 'expert' };
      },
    };
    const trajectory = await runWorldAgent(
      task.question,
      { model: expert, tools, maxSteps: limits.maxSteps, maxTokens: limits.maxTokens, temperature: 0 },
      { taskId: task.id, trajectoryId: `demo-${task.id}`, seed: 0 },
    );
    // A deliberate mistake answers what its wrong code printed; only the exact expert must be right.
    if (!actions && !world.checkAnswer(task.id, trajectory.answer)) {
      throw new AgentFlowError({
        code: 'INTERNAL',
        message: `The demonstration of ${task.id} answered ${JSON.stringify(trajectory.answer)} instead of ${task.answer}; its tool outputs were ${JSON.stringify(trajectory.steps.map((step) => step.toolResult?.output ?? step.toolResult?.error))}.`,
      });
    }
    for (const step of trajectory.steps) samples.push({ taskId: task.id, prompt: step.prompt, completion: step.completion });
  }
  return samples;
}

type ExpertAction = ReturnType<TaskWorld['demonstration']>['steps'][number]['action'];

/** The kinds of mistake the imperfect expert makes, one per flawed demonstration. */
export const EXPERT_MISTAKES = ['operator', 'lookup'] as const;
export type ExpertMistake = (typeof EXPERT_MISTAKES)[number];

const isPython = (action: ExpertAction) => typeof action.action_input === 'object' && action.action_input !== null && 'code' in action.action_input;

/** What Python prints for the world's code: integers joined by `+`, `-` and `*`, with `*` first. */
export function evaluateWorldCode(code: string): number {
  return code.split(/(?=[-+])/).reduce((sum, term) => {
    const sign = term.startsWith('-') ? -1 : 1;
    return sum + sign * term.replace(/^[-+]/, '').split('*').reduce((product, factor) => product * Number(factor), 1);
  }, 0);
}

/**
 * The expert's actions with one mistake of the kind a weak teacher makes, and the answer
 * that mistake leads to:
 * - `operator`: the python code uses another operator (`5-3` becomes `5+3` or `5*3`);
 * - `lookup`: one search asks for another counted thing of the same entity (`Pesok dogs`
 *   for a question about hens) and the code uses the count it found.
 * Undefined when the demonstration has no such step (then it stays exact).
 */
function withMistake(world: TaskWorld, actions: readonly ExpertAction[], mistake: ExpertMistake, random: Random): ExpertAction[] | undefined {
  const python = actions.findIndex(isPython);
  if (python < 0) return undefined;
  const code = String((actions[python]!.action_input as { code: unknown }).code);
  let numbers = code.split(/[-+*]/);
  let operators = code.split(/\d+/).filter(Boolean);
  const edits = new Map<number, ExpertAction>();
  if (mistake === 'operator') {
    operators = operators.map((operator) => random.choice(['+', '-', '*'].filter((candidate) => candidate !== operator)));
  } else {
    // The searches come in the code's operand order, one per number.
    const searches = actions.flatMap((action, index) => (index < python && !isPython(action) && action.action !== 'finish' ? [index] : []));
    if (searches.length !== numbers.length) return undefined;
    const queryOf = (index: number) => String((actions[index]!.action_input as { query: unknown }).query);
    const which = random.int(0, searches.length - 1);
    const [entity, attribute] = queryOf(searches[which]!).split(' ') as [string, string];
    // Another counted thing than any this demonstration looks up for the entity (a repeated search would end the run).
    const queries = new Set(searches.map(queryOf));
    const others = TASK_WORLD_ATTRIBUTES.filter((candidate) => candidate !== attribute && !queries.has(`${entity} ${candidate}`));
    if (others.length === 0) return undefined;
    const wrongQuery = `${entity} ${random.choice(others)}`;
    const value = /\d+/.exec(world.corpus.find((document) => document.title === wrongQuery)?.text ?? '')?.[0];
    if (value === undefined) return undefined;
    numbers = numbers.map((number, index) => (index === which ? value : number));
    edits.set(searches[which]!, { ...actions[searches[which]!]!, thought: `find ${wrongQuery}`, action_input: { query: wrongQuery } });
  }
  const wrongCode = numbers.map((number, index) => (index === 0 ? number : `${operators[index - 1]}${number}`)).join('');
  edits.set(python, { ...actions[python]!, action_input: { code: wrongCode } });
  const answer = String(evaluateWorldCode(wrongCode));
  return actions.map((action, index) => edits.get(index) ?? (index > python && action.action === 'finish' ? { ...action, action_input: answer } : action));
}
