import { type ChatMessage, FINISH_ACTION } from '@agentflow/core';
import type { PromptContext, PromptTemplate } from './prompt-template';

export interface CompactPromptTemplateSettings {
  /** Hard cap on the whole prompt in characters (default 400: a byte-level policy with a 512-token context). */
  maxPromptChars?: number;
  /** Cap on the question; a longer one is cut in the middle (default 160). */
  maxQuestionChars?: number;
  /** Cap on each step's tool output in the memory lines (default: the memory's own, 60). */
  maxOutputChars?: number;
}

function cutMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const head = Math.ceil((maxChars - 1) / 2);
  return `${text.slice(0, head)}~${text.slice(text.length - (maxChars - 1 - head))}`;
}

/**
 * The prompt for a tiny local policy (byte-level tokens, small context): one user message
 * with the question, a one-line tool list and one line per step, a few hundred characters:
 *
 * ```
 * Q: What is the population of Brisk times 2?
 * Tools: corpus_search(query) python(code) finish(answer)
 * 1. corpus_search {"query":"Brisk population"} -> Brisk has 5120 people.
 * JSON:
 * ```
 * The step lines get whatever room the rest leaves, newest first.
 */
export function createCompactPromptTemplate(settings: CompactPromptTemplateSettings = {}): PromptTemplate {
  const maxPromptChars = settings.maxPromptChars ?? 400;
  const maxQuestionChars = settings.maxQuestionChars ?? 160;
  return {
    name: 'compact',
    render(context: PromptContext): ChatMessage[] {
      const head = [
        `Q: ${cutMiddle(context.question, maxQuestionChars)}`,
        `Tools: ${[...context.tools.map((tool) => tool.signature), `${FINISH_ACTION}(answer)`].join(' ')}`,
      ].join('\n');
      const tail = 'JSON:';
      const room = maxPromptChars - head.length - tail.length - 2;
      const memory = room > 0 ? context.memory.render({
              budgetChars: room,
              style: 'compact',
              emptyText: '',
              ...(settings.maxOutputChars === undefined ? {} : { maxOutputChars: settings.maxOutputChars }),
            }) : '';
      const lines = memory ? [head, memory, tail] : [head, tail];
      return [{ role: 'user', content: cutMiddle(lines.join('\n'), maxPromptChars) }];
    },
  };
}
