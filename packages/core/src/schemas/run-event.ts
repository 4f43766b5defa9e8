import { z } from 'zod';
import { toolResultSchema } from './planner-action';
import { stepSchema } from './step';
import { verdictSchema } from './verdict';

/**
 * Events emitted while the agent runs or a training stage progresses, for progress
 * displays and JSON-lines logs. A discriminated union on `type`.
 */
export const runEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stage-start'), stage: z.string(), total: z.number().int().nonnegative().optional() }),
  z.object({
    type: z.literal('progress'),
    stage: z.string(),
    completed: z.number().int().nonnegative(),
    total: z.number().int().nonnegative().optional(),
    metrics: z.record(z.string(), z.number()).optional(),
  }),
  z.object({ type: z.literal('stage-end'), stage: z.string(), metrics: z.record(z.string(), z.number()).optional() }),
  z.object({ type: z.literal('step-start'), trajectoryId: z.string(), index: z.number().int().nonnegative() }),
  z.object({
    type: z.literal('tool-result'),
    trajectoryId: z.string(),
    index: z.number().int().nonnegative(),
    tool: z.string(),
    result: toolResultSchema,
  }),
  z.object({
    type: z.literal('verdict'),
    trajectoryId: z.string(),
    index: z.number().int().nonnegative(),
    verdict: verdictSchema,
  }),
  z.object({ type: z.literal('step-end'), trajectoryId: z.string(), step: stepSchema }),
  z.object({
    type: z.literal('log'),
    level: z.enum(['debug', 'info', 'warn', 'error']),
    message: z.string(),
  }),
]);
export type RunEvent = z.infer<typeof runEventSchema>;

/** Receives run events; must not throw. */
export type RunEventListener = (event: RunEvent) => void;
