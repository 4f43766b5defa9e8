import { FINISH_ACTION, plannerActionSchema } from '@agentflow/core';
import { z } from 'zod';

/**
 * How tightly the JSON schema sent to the model ties `action_input` to `action`:
 * - `flat`: one object; `action_input` is the answer string or any tool's input object.
 *   The root stays an object, as OpenAI's structured outputs require.
 * - `tied`: a root `anyOf` with one branch per tool (`action` const, that tool's input)
 *   plus `finish` with a string; for grammar-constrained local policies and servers that
 *   accept a root union.
 */
export type ActionSchemaStyle = 'flat' | 'tied';

/** A tool as the action schema needs it. */
export interface ActionSchemaTool {
  name: string;
  inputJsonSchema: Record<string, unknown>;
}

// Undeclared keys are never useful to a tool; closing them keeps a small policy from inventing any.
function closeObject(input: Record<string, unknown>): Record<string, unknown> {
  return input.type === 'object' && input.additionalProperties === undefined ? { ...input, additionalProperties: false } : input;
}

/**
 * The planner's output schema for a tool set: core's `PlannerAction` with `action`
 * restricted to the registered names plus `finish` (zod, for validation), and the JSON
 * schema for constrained decoding (Ollama `format`, OpenAI `response_format`, the local
 * policy's grammar). Both are closed (`.strict()`, `additionalProperties: false`): a
 * reply with keys the schema does not name is accepted by core's `parseModelReply` (which
 * `generateObject` applies), the keys dropped and reported, not by the schema itself.
 * Validation stays lenient on `action_input`; the tool runner checks it.
 */
export function createActionSchema(tools: readonly ActionSchemaTool[], style: ActionSchemaStyle = 'flat') {
  const [first, ...rest] = [...tools.map((tool) => tool.name), FINISH_ACTION];
  const schema = z
    .object({
      thought: plannerActionSchema.shape.thought,
      action: z.enum([first!, ...rest]).describe('A tool name, or "finish" to give the final answer.'),
      action_input: plannerActionSchema.shape.action_input,
    })
    .strict();
  const { $schema: _ignored, ...flat } = z.toJSONSchema(schema) as Record<string, unknown>;
  if (tools.length === 0) return { schema, jsonSchema: flat };
  if (style === 'tied') {
    const branch = (action: string, input: Record<string, unknown>) => ({
      type: 'object',
      properties: { thought: { type: 'string' }, action: { const: action }, action_input: input },
      required: ['thought', 'action', 'action_input'],
      additionalProperties: false,
    });
    const branches = tools.map((tool) => branch(tool.name, closeObject(tool.inputJsonSchema)));
    return { schema, jsonSchema: { anyOf: [...branches, branch(FINISH_ACTION, { type: 'string' })] } };
  }
  const properties = flat.properties as Record<string, Record<string, unknown>>;
  const inputs = tools.map((tool) => closeObject(tool.inputJsonSchema));
  const distinct = [...new Map(inputs.map((input) => [JSON.stringify(input), input])).values()];
  properties.action_input = { description: properties.action_input?.description, anyOf: [{ type: 'string' }, ...distinct] };
  return { schema, jsonSchema: flat };
}
