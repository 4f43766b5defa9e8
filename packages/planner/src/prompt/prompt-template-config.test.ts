import { describe, expect, it } from 'vitest';
import { createPromptTemplate, promptTemplateConfigSchema, promptTokenEstimate } from './prompt-template-config';

import type { PromptContext } from './prompt-template';

const context: PromptContext = {
  question: 'What is the capital of France?',
  tools: [],
  memory: { render: ({ emptyText }) => emptyText ?? '' },
  stepIndex: 0,
};

describe('promptTemplateConfigSchema and createPromptTemplate', () => {
  it('defaults to the compact template with its budgets, and builds the template a block names', () => {
    const compact = promptTemplateConfigSchema.parse(undefined);
    expect(compact).toEqual({ kind: 'compact', maxPromptChars: 480, maxOutputChars: 120 });
    expect(promptTemplateConfigSchema.parse({ kind: 'full' })).toEqual({ kind: 'full', memoryBudgetChars: 6000 });
    const short = createPromptTemplate(compact).render(context);
    const long = createPromptTemplate(promptTemplateConfigSchema.parse({ kind: 'full' })).render(context);
    // The compact template is one message; the full one has a system message with the catalogue.
    expect(short).toHaveLength(1);
    expect(long.map((message) => message.role)).toEqual(['system', 'user']);
    expect(JSON.stringify(short).length).toBeLessThanOrEqual(480 + 200);
  });

  it("refuses a budget that is not a positive integer and a key of the other kind's", () => {
    expect(promptTemplateConfigSchema.safeParse({ kind: 'compact', maxPromptChars: 0 }).success).toBe(false);
    expect(promptTemplateConfigSchema.safeParse({ kind: 'compact', memoryBudgetChars: 10 }).success).toBe(false);
  });

  it('estimates the tokens of a prompt from its budgets: at least the characters of a rendered compact prompt, about a quarter of a full one', () => {
    const compact = promptTemplateConfigSchema.parse({ kind: 'compact', maxPromptChars: 300 });
    expect(promptTokenEstimate(compact)).toBe(300);
    const rendered = createPromptTemplate(compact).render({ ...context, question: 'x'.repeat(1000) });
    expect(rendered.map((message) => message.content).join('').length).toBeLessThanOrEqual(promptTokenEstimate(compact));
    expect(promptTokenEstimate(promptTemplateConfigSchema.parse({ kind: 'full' }))).toBe(2500);
    expect(promptTokenEstimate(promptTemplateConfigSchema.parse({ kind: 'full', memoryBudgetChars: 12_000 }))).toBe(4000);
  });
});
