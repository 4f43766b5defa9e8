import { describe, expect, it } from 'vitest';
import { plannerActionSchema } from './planner-action';
import { runEventSchema } from './run-event';
import { trajectorySchema } from './trajectory';

describe('core schemas', () => {
  it('accepts a planner action with an object or string input', () => {
    expect(plannerActionSchema.parse({ thought: 't', action: 'python', action_input: { code: '1+1' } }).action).toBe(
      'python',
    );
    expect(plannerActionSchema.parse({ thought: 't', action: 'finish', action_input: '42' }).action_input).toBe('42');
  });

  it('rejects unknown keys and empty actions', () => {
    expect(plannerActionSchema.safeParse({ thought: 't', action: '', action_input: 'x' }).success).toBe(false);
    expect(plannerActionSchema.safeParse({ thought: 't', action: 'a', action_input: 'x', extra: 1 }).success).toBe(
      false,
    );
  });

  it('round-trips a trajectory with a format-error step', () => {
    const trajectory = {
      id: 't1',
      question: 'What is 2+2?',
      steps: [
        {
          index: 0,
          prompt: [{ role: 'user', content: 'What is 2+2?' }],
          completion: '{oops',
          truncated: false,
          action: null,
          parseError: 'Unexpected token',
          timings: { plannerMs: 1, toolMs: 0, verifierMs: 0 },
        },
      ],
      answer: null,
      termination: 'max_steps',
      startedAt: new Date(0).toISOString(),
      durationMs: 5,
    };
    expect(trajectorySchema.parse(JSON.parse(JSON.stringify(trajectory)))).toEqual(trajectory);
    expect(trajectorySchema.safeParse({ ...trajectory, termination: 'gave_up' }).success).toBe(false);
  });

  it('discriminates run events by type', () => {
    expect(runEventSchema.parse({ type: 'progress', stage: 'collect', completed: 3, total: 10 }).type).toBe('progress');
    expect(runEventSchema.safeParse({ type: 'progress', stage: 'collect' }).success).toBe(false);
  });
});
