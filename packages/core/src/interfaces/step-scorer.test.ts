import { describe, expect, it } from 'vitest';
import type { Step } from '../schemas/step';
import { stepScoringInputs } from './step-scorer';

const step = (action: Step['action'], completion: string, output?: string, error?: string): Pick<Step, 'action' | 'toolResult' | 'prompt' | 'completion'> => ({
  action,
  prompt: [{ role: 'user', content: `prompt before ${completion}` }],
  completion,
  ...(output === undefined && error === undefined ? {} : { toolResult: { output: output ?? '', truncated: false, durationMs: 1, ...(error ? { error } : {}) } }),
});

describe('stepScoringInputs', () => {
  it("gives each step the earlier parsed decisions with their results, its own result and the next prompt apart, and the planner's own prompt and completion", () => {
    const search = { thought: 'find', action: 'corpus_search', action_input: { query: 'Riri cats' } };
    const python = { thought: 'compute', action: 'python', action_input: { code: '1/0' } };
    const finish = { thought: 'done', action: 'finish', action_input: '3' };
    const inputs = stepScoringInputs({
      question: 'q',
      steps: [step(search, 'a', 'Riri has 3 cats.'), step(null, '{oops'), step(python, 'c', '', 'ZeroDivisionError'), step(finish, 'd')],
    });
    expect(inputs.map((input) => input.history.length)).toEqual([0, 1, 1, 2]);
    expect(inputs[3]?.observations).toEqual(['Riri has 3 cats.', 'error: ZeroDivisionError']);
    expect(inputs[0]?.observations).toEqual([]);
    expect(inputs[1]?.action).toBeNull();
    expect(inputs.map((input) => input.completion)).toEqual(['a', '{oops', 'c', 'd']);
    expect(inputs[2]?.prompt).toEqual([{ role: 'user', content: 'prompt before c' }]);
    expect(inputs[0]?.historyLogprobs).toEqual([]);
    expect(inputs[2]?.completionLogprobs).toBeUndefined();
    // A decision's own result and the next step's prompt, for a PRM told to read them.
    expect(inputs.map((input) => input.result)).toEqual(['Riri has 3 cats.', undefined, 'error: ZeroDivisionError', '']);
    expect(inputs.map((input) => input.nextPrompt?.[0]?.content)).toEqual(['prompt before {oops', 'prompt before c', 'prompt before d', undefined]);
  });

  it("carries each decision's sampling log-probs and those of the parsed decisions before it, until one was not recorded", () => {
    const search = { thought: 'find', action: 'corpus_search', action_input: { query: 'Riri cats' } };
    const python = { thought: 'compute', action: 'python', action_input: { code: '3+4' } };
    const finish = { thought: 'done', action: 'finish', action_input: '7' };
    const withLogprobs = (base: ReturnType<typeof step>, completionLogprobs?: number[]) => ({
      ...base,
      ...(completionLogprobs ? { completionLogprobs } : {}),
    });
    const inputs = stepScoringInputs({
      question: 'q',
      steps: [
        withLogprobs(step(search, 'a', 'Riri has 3 cats.'), [-0.1, -0.2]),
        withLogprobs(step(null, '{oops'), [-3]),
        withLogprobs(step(python, 'c', '7'), [-1.5]),
        withLogprobs(step(finish, 'd'), [-0.01]),
      ],
    });
    expect(inputs.map((input) => input.completionLogprobs)).toEqual([[-0.1, -0.2], [-3], [-1.5], [-0.01]]);
    // The format error is no decision of the history, and its log-probs are not either.
    expect(inputs[3]?.historyLogprobs).toEqual([[-0.1, -0.2], [-1.5]]);
    expect(inputs[3]?.historyLogprobs?.length).toBe(inputs[3]?.history.length);

    const unrecorded = stepScoringInputs({ question: 'q', steps: [step(search, 'a', 'Riri has 3 cats.'), withLogprobs(step(finish, 'd'), [-0.01])] });
    expect(unrecorded[1]?.completionLogprobs).toEqual([-0.01]);
    expect(unrecorded[1]?.historyLogprobs).toBeUndefined();
  });
});
