import { AgentFlowError, formatZodIssues, type Verdict } from '@agentflow/core';
import { type LlmVerdictSettings, llmVerdict } from './llm/llm-verdict';
import { type RuleSettingsInput, ruleSettingsSchema } from './rules/rule-settings';
import { type VerifiedStep, ruleVerdict } from './rules/rule-verdict';

export interface VerifierSettings {
  rules?: RuleSettingsInput;
  /** When set, a model is asked after each tool step that the rules let continue. */
  llm?: LlmVerdictSettings;
}

export interface VerifierInput {
  question: string;
  steps: readonly VerifiedStep[];
  elapsedMs: number;
  /** The in-task memory as text, for the LLM verdict. */
  memoryText?: string;
  signal?: AbortSignal;
}

export interface Verifier {
  readonly maxSteps: number;
  readonly timeLimitMs: number;
  /** True when `verify` reads `memoryText` (an LLM verdict is configured), so callers render it only then. */
  readonly needsMemoryText: boolean;
  verify(input: VerifierInput): Promise<Verdict>;
}

/** Creates the verifier: rule verdicts first, then the optional LLM verdict. */
export function createVerifier(settings: VerifierSettings = {}): Verifier {
  const parsed = ruleSettingsSchema.safeParse(settings.rules ?? {});
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid verifier rules:\n${formatZodIssues(parsed.error, 'rules').join('\n')}`,
    });
  }
  const rules = parsed.data;
  return {
    maxSteps: rules.maxSteps,
    timeLimitMs: rules.timeLimitMs,
    needsMemoryText: settings.llm !== undefined,
    async verify(input) {
      const verdict = ruleVerdict(input, rules);
      const last = input.steps[input.steps.length - 1];
      // Only a tool step can bring new information worth asking about.
      if (verdict.stop || !settings.llm || !last?.action || last.toolResult === undefined) return verdict;
      return llmVerdict(
        {
          question: input.question,
          memoryText: input.memoryText ?? '',
          ...(input.signal ? { signal: input.signal } : {}),
        },
        settings.llm,
      );
    },
  };
}
