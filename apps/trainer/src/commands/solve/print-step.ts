import type { Step, Trajectory } from '@agentflow/core';

function oneLine(text: string, maxChars: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ⏎ ').trim();
  return flat.length <= maxChars ? flat : `${flat.slice(0, maxChars - 1)}…`;
}

/** A step as a few human-readable lines for the terminal. */
export function formatStep(step: Step): string {
  const lines: string[] = [];
  const number = `[${step.index + 1}]`;
  if (!step.action) {
    lines.push(`${number} format error: ${oneLine(step.parseError ?? 'unparsable output', 200)}`);
    lines.push(`    output: ${oneLine(step.completion, 200)}`);
    return `${lines.join('\n')}\n`;
  }
  lines.push(`${number} ${step.action.action} ${oneLine(JSON.stringify(step.action.action_input), 200)}`);
  if (step.action.thought) lines.push(`    thought: ${oneLine(step.action.thought, 200)}`);
  if (step.toolResult) {
    if (step.toolResult.output) lines.push(`    => ${oneLine(step.toolResult.output, 300)}`);
    if (step.toolResult.error) lines.push(`    error: ${oneLine(step.toolResult.error, 300)}`);
  }
  if (step.verdict?.analysis) lines.push(`    verifier: ${oneLine(step.verdict.analysis, 200)}`);
  return `${lines.join('\n')}\n`;
}

/** The closing lines: the answer and how the run ended. */
export function formatOutcome(trajectory: Trajectory): string {
  const seconds = (trajectory.durationMs / 1000).toFixed(2);
  const lines = [
    `Answer: ${trajectory.answer ?? '(none)'}`,
    `(${trajectory.termination} after ${trajectory.steps.length} step${trajectory.steps.length === 1 ? '' : 's'}, ${seconds} s)`,
  ];
  if (trajectory.error) lines.push(`(${trajectory.error})`);
  return `${lines.join('\n')}\n`;
}
