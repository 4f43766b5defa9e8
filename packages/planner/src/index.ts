/**
 * @agentflow/planner: the prompt, the tool catalogue, the action schema and a record of
 * every decision for training.
 */

/** The planner factory and what one decision records. */
export {
  createPlanner,
  type Planner,
  type PlannerDecision,
  type PlannerInput,
  type PlannerSettings,
} from './planner';
/** The injectable prompt template contract, and the memory view it renders. */
export type { PlannerMemoryView, PromptContext, PromptTemplate } from './prompt/prompt-template';
/** The prompt for real LLMs: system message with the catalogue, user message with the task. */
export { createFullPromptTemplate, type FullPromptTemplateSettings } from './prompt/full-template';
/** The one-message, few-hundred-character prompt for a tiny local policy. */
export { createCompactPromptTemplate, type CompactPromptTemplateSettings } from './prompt/compact-template';
/** The template as a config block names it (`policy.prompt` of `agentflow run`), and the template it names. */
export { createPromptTemplate, type PromptTemplateConfig, promptTemplateConfigSchema, promptTokenEstimate } from './prompt/prompt-template-config';
/** Catalogue entries (name, description, JSON schema, signature) from tools' zod schemas. */
export { describeTools, renderToolInput, type ToolCatalogueEntry } from './catalogue/tool-catalogue';
/** The action schema for a tool set: zod for validation, JSON schema for constrained decoding. */
export {
  createActionSchema,
  type ActionSchemaStyle,
  type ActionSchemaTool,
} from './action/action-schema';
