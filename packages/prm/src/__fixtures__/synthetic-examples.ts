import { createRandom } from '@agentflow/core';
import type { PrmExample } from '../example/prm-example';

const TOOLS = ['python', 'search', 'finish'] as const;
/** The label a decision earns, from its tool: learnable from the decision text alone. */
export const TOOL_LABEL: Record<(typeof TOOLS)[number], number> = { python: 0.85, search: 0.2, finish: 0.5 };

/**
 * Labelled steps whose label depends on the decision's tool (plus a little noise):
 * `count` trajectories of three steps each, with varied questions and inputs.
 */
export function syntheticExamples(count: number, seed: number): PrmExample[] {
  const random = createRandom(seed);
  const examples: PrmExample[] = [];
  for (let t = 0; t < count; t++) {
    const question = `What is ${random.int(2, 99)} times ${random.int(2, 99)} plus the population of town ${random.int(1, 500)}?`;
    const history: PrmExample['history'] = [];
    for (let stepIndex = 0; stepIndex < 3; stepIndex++) {
      const tool = random.choice(TOOLS);
      const action = {
        thought: `Step ${stepIndex + 1}: use ${tool}.`,
        action: tool,
        action_input: tool === 'python' ? { code: `${random.int(1, 999)} * ${random.int(1, 999)}` } : `${random.int(1, 99999)}`,
      };
      const noise = (random.next() - 0.5) * 0.1;
      examples.push({
        id: `s${seed}-t${t}:${stepIndex}`,
        trajectoryId: `s${seed}-t${t}`,
        taskId: `task-${t % 10}`,
        stepIndex,
        question,
        history: [...history],
        action,
        outcomeReward: random.next() < 0.5 ? 1 : 0,
        label: Math.min(1, Math.max(0, TOOL_LABEL[tool] + noise)),
        provenance: { labeller: 'judge', judgeModel: 'synthetic' },
      });
      history.push(action);
    }
  }
  return examples;
}
