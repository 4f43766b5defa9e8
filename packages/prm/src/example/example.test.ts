import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../__fixtures__/trajectories';
import { extractSteps } from './extract-steps';
import { prmExampleSchema } from './prm-example';
import { renderStepInput } from './render-input';

describe('extractSteps', () => {
  it('gives one step per decision with the parsed earlier decisions as history', () => {
    const steps = extractSteps(makeTrajectory());
    expect(steps.map((step) => step.id)).toEqual(['traj-1:0', 'traj-1:1', 'traj-1:2', 'traj-1:3']);
    expect(steps.map((step) => step.history.length)).toEqual([0, 1, 1, 2]);
    expect(steps[1]?.action).toBeNull();
    expect(steps[3]?.history.map((action) => action.action)).toEqual(['search', 'python']);
    expect(steps.every((step) => step.taskId === 'task-7' && step.outcomeReward === 1)).toBe(true);
    // Each step also carries the planner's prompt and raw completion, for a PRM with input 'chat'.
    const trajectory = makeTrajectory();
    expect(steps.map((step) => step.completion)).toEqual(trajectory.steps.map((step) => step.completion));
    expect(steps[2]?.prompt).toEqual(trajectory.steps[2]?.prompt);
  });

  it('rejects something that is not a trajectory, naming the field', () => {
    expect(() => extractSteps({ id: 'x' } as never)).toThrow(/Not a trajectory \(x\): question: Invalid input: expected string/);
  });
});

describe('renderStepInput', () => {
  it("shows what earlier decisions' tools returned, never the scored decision's own result", () => {
    const trajectory = makeTrajectory();
    const steps = extractSteps(trajectory);
    for (const step of steps) {
      const text = renderStepInput(step);
      // The scored step's own tool output is absent even though the decision is present.
      expect(text).not.toContain(trajectory.steps[step.stepIndex]?.toolResult?.output ?? 'unreachable');
    }
    // The python step (index 2) sees the lookup's result; the format error before it had no action.
    expect(renderStepInput(steps[2]!)).toContain('-> TOOL-OUTPUT-MARKER-0: Lyon has 522,250 inhabitants.');
    expect(renderStepInput(steps[2]!)).not.toContain('MARKER-1');
    expect(renderStepInput(steps[3]!)).toContain('-> TOOL-OUTPUT-MARKER-2: 1044500');
    expect(steps[3]?.observations).toEqual(['TOOL-OUTPUT-MARKER-0: Lyon has 522,250 inhabitants.', 'TOOL-OUTPUT-MARKER-2: 1044500']);
  });

  it('cuts a long observation in the middle and keeps it on one line', () => {
    const long = `start\n${'x'.repeat(1000)}\nend`;
    const text = renderStepInput({ question: 'q', history: [{ thought: 't', action: 'python', action_input: { code: '1' } }], observations: [long], action: null });
    const line = text.split('\n').find((row) => row.startsWith('1. '))!;
    expect(line).toContain('-> start | xxx');
    expect(line).toContain(' ... ');
    expect(line.endsWith('xx | end')).toBe(true);
    expect(line.length).toBeLessThan(400);
  });

  it('shows the question, the history in order and the decision last', () => {
    const text = renderStepInput(extractSteps(makeTrajectory())[2]!);
    expect(text).toContain('What is the population of Lyon times 2?');
    expect(text).toMatch(/1\. thought: Look up Lyon first\. \| action: search \| input: \{"query":"Lyon population"\} -> /);
    expect(text.trimEnd().endsWith('thought: Double it. | action: python | input: {"code":"522250 * 2"}')).toBe(true);
  });

  it('renders a format error explicitly', () => {
    expect(renderStepInput(extractSteps(makeTrajectory())[1]!)).toContain('(format error');
  });
});

describe('prmExampleSchema', () => {
  it('accepts a labelled step and rejects a label outside [0, 1]', () => {
    const step = extractSteps(makeTrajectory())[0]!;
    const example = { ...step, label: 0.75, provenance: { labeller: 'judge', judgeModel: 'deepseek-chat', costUsd: 0.0001 } };
    expect(prmExampleSchema.parse(JSON.parse(JSON.stringify(example)))).toEqual(example);
    expect(prmExampleSchema.safeParse({ ...example, label: 1.5 }).success).toBe(false);
    expect(prmExampleSchema.safeParse({ ...example, provenance: { labeller: 'oracle' } }).success).toBe(false);
  });
});
