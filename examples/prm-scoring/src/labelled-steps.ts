import { type PlannerAction, createRandom } from '@agentflow/core';
import type { PrmExample } from '@agentflow/prm';

/**
 * Labelled planner steps for arithmetic questions: computing with python is a good decision
 * (label near 0.9), answering at once with finish is a guess (near 0.2), searching for the
 * numbers in between (near 0.5). In a real run the labels come from an LLM judge
 * (createJudgeLabeller) or Monte-Carlo completions (createMonteCarloLabeller).
 */
export function labelledSteps(trajectories: number, seed: number): PrmExample[] {
  const random = createRandom(seed);
  const examples: PrmExample[] = [];
  for (let t = 0; t < trajectories; t++) {
    const [a, b] = [random.int(2, 99), random.int(2, 99)];
    const question = `What is ${a} times ${b}?`;
    const history: PlannerAction[] = [];
    for (let stepIndex = 0; stepIndex < 2; stepIndex++) {
      const kind = random.choice(['python', 'search', 'finish'] as const);
      const action = stepAction(kind, a, b, random.int(100, 9999));
      const label = { python: 0.9, search: 0.5, finish: 0.2 }[kind] + (random.next() - 0.5) * 0.1;
      examples.push({
        id: `t${seed}-${t}:${stepIndex}`,
        trajectoryId: `t${seed}-${t}`,
        stepIndex,
        question,
        history: [...history],
        action,
        label,
        provenance: { labeller: 'judge', judgeModel: 'example' },
      });
      history.push(action);
    }
  }
  return examples;
}

export function stepAction(kind: 'python' | 'search' | 'finish', a: number, b: number, guess: number): PlannerAction {
  switch (kind) {
    case 'python':
      return { thought: 'Compute the product exactly.', action: 'python', action_input: { code: `${a} * ${b}` } };
    case 'search':
      return { thought: 'Look the numbers up.', action: 'search', action_input: { query: `${a} ${b}` } };
    case 'finish':
      return { thought: 'I think I know it.', action: 'finish', action_input: String(guess) };
  }
}
