import { assertNever } from '@agentflow/core';
import { z } from 'zod';
import { createCompactPromptTemplate } from './compact-template';
import { createFullPromptTemplate } from './full-template';
import type { PromptTemplate } from './prompt-template';

/**
 * The planner's prompt template as a config block names it: `compact` (one short message, for
 * a small planner trained from scratch) or `full` (system message with the tool catalogue, for
 * pretrained LLMs), with each one's budget. Default `{ kind: 'compact' }`.
 */
export const promptTemplateConfigSchema = z
  .discriminatedUnion('kind', [
    z
      .object({
        kind: z.literal('compact'),
        maxPromptChars: z.number().int().positive().default(480).describe('Character budget of the whole prompt.'),
        maxOutputChars: z.number().int().positive().default(120).describe('Characters of each tool output shown.'),
      })
      .strict()
      .describe('One short message with each tool output on one line: for a small planner trained from scratch (the embedded default).'),
    z
      .object({
        kind: z.literal('full'),
        memoryBudgetChars: z.number().int().positive().default(6000).describe('Character budget of the rendered step log (about 1.5k tokens).'),
      })
      .strict()
      .describe('A system message with the tool catalogue and a user message with the task: for pretrained LLMs (Qwen3).'),
  ])
  .prefault({ kind: 'compact' })
  .describe("The planner's prompt template (@agentflow/planner).");

export type PromptTemplateConfig = z.output<typeof promptTemplateConfigSchema>;

/** The prompt template a parsed {@link promptTemplateConfigSchema} block names. */
export function createPromptTemplate(config: PromptTemplateConfig): PromptTemplate {
  switch (config.kind) {
    case 'compact':
      return createCompactPromptTemplate({ maxPromptChars: config.maxPromptChars, maxOutputChars: config.maxOutputChars });
    case 'full':
      return createFullPromptTemplate({ memoryBudgetChars: config.memoryBudgetChars });
    default:
      return assertNever(config, 'prompt kind');
  }
}

/**
 * Tokens of one planner prompt at most, estimated from the template's character budgets (what a
 * memory plan needs before any prompt exists): the compact prompt is at most `maxPromptChars`
 * characters, a token per character at worst (a tokenizer learned from a small world); the full
 * one is a system message with the tool catalogue (about 4,000 characters) and the step log's
 * budget, at about 4 characters per token (Qwen3's tokenizer on English and code).
 */
export function promptTokenEstimate(config: PromptTemplateConfig): number {
  return config.kind === 'compact' ? config.maxPromptChars : Math.ceil((4000 + config.memoryBudgetChars) / 4);
}
