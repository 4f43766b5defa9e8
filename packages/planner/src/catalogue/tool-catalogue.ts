import { AgentFlowError, FINISH_ACTION, type Tool } from '@agentflow/core';
import { z } from 'zod';

/** What the planner knows of one tool: enough to write its prompt line and its JSON schema. */
export interface ToolCatalogueEntry {
  name: string;
  description: string;
  /** JSON schema of the tool input (from its zod schema). */
  inputJsonSchema: Record<string, unknown>;
  /** A one-word-per-field signature, e.g. `corpus_search(query,k?)`. */
  signature: string;
}

interface ObjectSchema {
  properties?: Record<string, { type?: unknown; description?: string }>;
  required?: string[];
}

/** Builds catalogue entries from tools' zod schemas, and rejects names the planner cannot use. */
export function describeTools(tools: readonly Pick<Tool, 'name' | 'description' | 'inputSchema'>[]): ToolCatalogueEntry[] {
  const seen = new Set<string>();
  return tools.map((tool) => {
    if (tool.name === FINISH_ACTION || seen.has(tool.name) || !/^[A-Za-z0-9_.-]+$/.test(tool.name)) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `Tool name ${JSON.stringify(tool.name)} is ${
          tool.name === FINISH_ACTION ? 'reserved for the finish action' : seen.has(tool.name) ? 'used twice' : 'not made of letters, digits, "_", "." or "-"'
        }; give each tool a unique name.`,
        details: { name: tool.name },
      });
    }
    seen.add(tool.name);
    const { $schema: _ignored, ...inputJsonSchema } = z.toJSONSchema(tool.inputSchema, {
      unrepresentable: 'any',
      io: 'input',
    }) as Record<string, unknown>;
    const { properties = {}, required = [] } = inputJsonSchema as ObjectSchema;
    const fields = Object.keys(properties).map((key) => (required.includes(key) ? key : `${key}?`));
    return {
      name: tool.name,
      description: tool.description,
      inputJsonSchema,
      signature: `${tool.name}(${fields.join(',')})`,
    };
  });
}

function typeName(property: { type?: unknown }): string {
  if (typeof property.type === 'string') return property.type;
  if (Array.isArray(property.type)) return property.type.join(' | ');
  return 'any';
}

/** The input of a tool as `{"field": type (required) - description, ...}` lines for LLM prompts. */
export function renderToolInput(entry: ToolCatalogueEntry): string {
  const { properties, required = [] } = entry.inputJsonSchema as ObjectSchema;
  if (!properties || Object.keys(properties).length === 0) return JSON.stringify(entry.inputJsonSchema);
  return Object.entries(properties)
    .map(([key, property]) => {
      const flag = required.includes(key) ? 'required' : 'optional';
      const description = property.description ? ` - ${property.description}` : '';
      return `    "${key}": ${typeName(property)} (${flag})${description}`;
    })
    .join('\n');
}
