import type { MemoryRecord } from '@agentflow/core';

function renderExample(record: MemoryRecord, number: number): string {
  return `Example ${number}\nQuestion: ${record.question}\nSteps: ${record.trajectory}\nAnswer: ${record.answer}\n`;
}

/**
 * Renders retrieved examples for the planner's prompt within `budgetChars` characters.
 * Examples are kept whole and in rank order; one that would overflow the budget is skipped
 * and a shorter one after it may still fit. Returns '' when none fits.
 */
export function renderExamples(records: readonly MemoryRecord[], budgetChars: number): string {
  const parts: string[] = [];
  let used = 0;
  for (const record of records) {
    const separator = parts.length > 0 ? 1 : 0; // the blank line between examples
    const text = renderExample(record, parts.length + 1);
    if (used + separator + text.length > budgetChars) continue;
    parts.push(text);
    used += separator + text.length;
  }
  return parts.join('\n');
}
