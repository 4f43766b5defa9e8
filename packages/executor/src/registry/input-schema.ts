import type { Tool } from '@agentflow/core';
import { z } from 'zod';

/** A JSON schema object, as the planner's catalogue and MCP show it. */
export type JsonSchema = Record<string, unknown>;

/**
 * A tool whose input schema came as JSON schema (an external MCP tool): the registry shows
 * that schema as is instead of converting its zod schema.
 */
export interface JsonSchemaTool<Input = unknown> extends Tool<Input> {
  readonly inputJsonSchema: JsonSchema;
}

function hasJsonSchema(tool: Tool<unknown>): tool is JsonSchemaTool {
  const candidate = (tool as Partial<JsonSchemaTool>).inputJsonSchema;
  return typeof candidate === 'object' && candidate !== null;
}

/** The JSON schema of a tool's input (zod 4 `z.toJSONSchema`, input side). */
export function toolInputJsonSchema(tool: Tool<unknown>): JsonSchema {
  if (hasJsonSchema(tool)) return tool.inputJsonSchema;
  try {
    const schema = z.toJSONSchema(tool.inputSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    const { $schema: _ignored, ...rest } = schema;
    return rest;
  } catch {
    // A schema zod cannot express (a transform, a custom check): say "any object".
    return { type: 'object' };
  }
}

/**
 * The name of the only required field when it is a string (python's `code`, a search's
 * `query`), so a bare string `action_input` can fill it.
 */
export function soleStringField(schema: JsonSchema): string | undefined {
  if (schema.type !== 'object') return undefined;
  const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : [];
  if (required.length !== 1 || typeof required[0] !== 'string') return undefined;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return properties[required[0]]?.type === 'string' ? required[0] : undefined;
}

/**
 * Turns the planner's `action_input` into the tool's input: a string holding a JSON object
 * is parsed; any other string fills the tool's sole required string field.
 */
export function coerceToolInput(input: unknown, schema: JsonSchema): unknown {
  if (typeof input !== 'string') return input;
  const trimmed = input.trim();
  if (trimmed.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed;
    } catch {
      // Not JSON after all: treat it as the text of the sole field below.
    }
  }
  const field = soleStringField(schema);
  return field === undefined ? input : { [field]: input };
}
