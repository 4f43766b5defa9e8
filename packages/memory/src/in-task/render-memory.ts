import { assertNever } from '@agentflow/core';
import { cutMiddle } from './cut-middle';
import type { MemoryEntry } from './step-entry';

/** How the step log is shown to a model. */
export interface MemoryRenderSettings {
  /** Hard cap on the rendered text, in characters (default 4000). */
  budgetChars?: number;
  /** `full`: a block per step (LLM prompts); `compact`: one line per step (tiny local policies). Default `full`. */
  style?: 'full' | 'compact';
  /** Cap on each tool output (and thought) before the budget applies (default 1500 full, 60 compact). */
  maxOutputChars?: number;
  /** Text when there are no steps yet (default "(no steps yet)"). */
  emptyText?: string;
}

function inputText(input: MemoryEntry['actionInput']): string {
  if (input === null) return '';
  return JSON.stringify(input);
}

function outcome(entry: MemoryEntry, maxOutputChars: number, style: 'full' | 'compact'): string {
  if (entry.parseError !== undefined) {
    return style === 'full' ? `Format error: ${cutMiddle(entry.parseError, maxOutputChars)}` : 'format error';
  }
  if (entry.toolError !== undefined) {
    const output = entry.toolOutput ? `${entry.toolOutput}\n` : '';
    return `${style === 'full' ? 'Error' : 'error'}: ${cutMiddle(output + entry.toolError, maxOutputChars)}`;
  }
  if (entry.toolOutput !== undefined) {
    const text = cutMiddle(entry.toolOutput.trimEnd(), maxOutputChars);
    return style === 'full' ? `Result: ${text}` : text.replace(/\s*\n\s*/g, ' | ');
  }
  return style === 'full' ? 'Result: (none)' : '-';
}

function renderEntry(entry: MemoryEntry, style: 'full' | 'compact', maxOutputChars: number): string {
  switch (style) {
    case 'full': {
      const lines = [`Step ${entry.index + 1}:`];
      if (entry.thought) lines.push(`Thought: ${cutMiddle(entry.thought, maxOutputChars)}`);
      if (entry.action !== null) lines.push(`Action: ${entry.action} ${cutMiddle(inputText(entry.actionInput), maxOutputChars)}`);
      lines.push(outcome(entry, maxOutputChars, style));
      return lines.join('\n');
    }
    case 'compact': {
      const call = entry.action === null ? '?' : `${entry.action} ${cutMiddle(inputText(entry.actionInput), maxOutputChars)}`;
      return `${entry.index + 1}. ${call} -> ${outcome(entry, maxOutputChars, style)}`;
    }
    default:
      return assertNever(style, 'memory render style');
  }
}

/**
 * Renders the step log within `budgetChars`: long outputs are cut in the middle first,
 * then the oldest steps are dropped (with a line saying how many), and as a last resort
 * the text itself is cut in the middle. The result never exceeds the budget.
 */
export function renderMemory(entries: readonly MemoryEntry[], settings: MemoryRenderSettings = {}): string {
  const style = settings.style ?? 'full';
  const budget = settings.budgetChars ?? 4000;
  const maxOutputChars = settings.maxOutputChars ?? (style === 'full' ? 1500 : 60);
  const separator = style === 'full' ? '\n\n' : '\n';
  if (entries.length === 0) return cutMiddle(settings.emptyText ?? '(no steps yet)', budget);
  const blocks = entries.map((entry) => renderEntry(entry, style, maxOutputChars));
  let kept = blocks.length;
  let text = blocks.join(separator);
  while (text.length > budget && kept > 1) {
    kept--;
    const omitted = blocks.length - kept;
    text = [`(${omitted} earlier step${omitted === 1 ? '' : 's'} omitted)`, ...blocks.slice(-kept)].join(separator);
  }
  return cutMiddle(text, budget);
}
