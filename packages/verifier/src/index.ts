/** @agentflow/verifier: decides whether the agent loop continues. */

/** The verifier: rules first, then an optional LLM verdict. */
export { createVerifier, type Verifier, type VerifierInput, type VerifierSettings } from './verifier';
/** The rule verdict as a pure function. */
export { ruleVerdict, type RuleInput, type VerifiedStep } from './rules/rule-verdict';
/** Settings of the rules (zod, with documented defaults). */
export { ruleSettingsSchema, type RuleSettings, type RuleSettingsInput } from './rules/rule-settings';
/** The LLM verdict `{analysis, stop}` through generateObject. */
export { llmVerdict, type LlmVerdictInput, type LlmVerdictSettings } from './llm/llm-verdict';
