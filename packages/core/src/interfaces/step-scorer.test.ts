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
  it("gives each step the earlier parsed decisions with their results, never its own, and the planner's own prompt and completion", () => {
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
  });
});
