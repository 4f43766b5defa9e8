import { AgentFlowError } from '@agentflow/core';
import { Environment, Template } from '@huggingface/jinja';
import { BoundedInterpreter, type ChatTemplateLimits, TemplateLimitError } from './bounded-interpreter';

export type { ChatTemplateLimits } from './bounded-interpreter';

/**
 * The limits of {@link compileChatTemplate}: 2^18 steps (some 5,000 messages of Qwen3's template;
 * about a second on a busy 2-core machine), 4 Mi characters (a million tokens, eight 128k-token
 * contexts), 65,536 items, two seconds.
 */
export const CHAT_TEMPLATE_LIMITS: ChatTemplateLimits = {
  maxSteps: 2 ** 18,
  maxChars: 2 ** 22,
  maxItems: 2 ** 16,
  maxMilliseconds: 2000,
};

/** A compiled chat template, rendered under {@link ChatTemplateLimits}. */
export interface ChatTemplate {
  /** The template's output for these variables (`messages`, `add_generation_prompt`, ...). */
  render(variables: Readonly<Record<string, unknown>>): string;
  /**
   * Whether the template names `name` anywhere (a variable it reads or sets, or a filter), e.g.
   * whether it has Qwen3's thinking switch `enable_thinking`. A template that never names a
   * variable renders the same with or without it.
   */
  mentions(name: string): boolean;
}

/** Every identifier in a parsed template (an acyclic tree of plain objects). */
function identifiersOf(node: unknown, names: Set<string> = new Set()): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) identifiersOf(item, names);
  } else if (typeof node === 'object' && node !== null) {
    const { type, value } = node as { type?: unknown; value?: unknown };
    if (type === 'Identifier' && typeof value === 'string') names.add(value);
    for (const child of Object.values(node)) identifiersOf(child, names);
  }
  return names;
}

/** Settings of {@link compileChatTemplate}; all optional. */
export interface ChatTemplateSettings {
  limits?: ChatTemplateLimits;
  /** Milliseconds of a monotonic clock, for the time limit (default `performance.now`). */
  now?: () => number;
  /** The date `strftime_now` formats (default the current one). */
  today?: () => Date;
}

class TemplateRaised extends Error {}

/** Python's strftime for the codes @huggingface/jinja knows (%Y %m %d %b %B %H %M %%), as it formats them. */
function strftime(date: Date, format: string): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return format.replace(/%[YmdbBHM%]/g, (code) => {
    switch (code) {
      case '%Y':
        return String(date.getFullYear());
      case '%m':
        return pad(date.getMonth() + 1);
      case '%d':
        return pad(date.getDate());
      case '%b':
        return new Intl.DateTimeFormat(undefined, { month: 'short' }).format(date);
      case '%B':
        return new Intl.DateTimeFormat(undefined, { month: 'long' }).format(date);
      case '%H':
        return pad(date.getHours());
      case '%M':
        return pad(date.getMinutes());
      default:
        return '%';
    }
  });
}

/**
 * Compiles the chat template `source` of `file` (tokenizer_config.json or chat_template.jinja)
 * with @huggingface/jinja, the engine transformers.js renders with, and renders it under
 * `limits`: every evaluation counted, every string, list and object sized (lists and objects by
 * the text they would print as; `range(n)` before it is made; `join`, `replace`, `indent` and
 * `tojson` from their inputs), and the time bounded. A template that does
 * not parse is INVALID_CONFIG; one that raises, fails or runs past a limit is RUNTIME_ERROR,
 * each naming the file.
 */
export function compileChatTemplate(source: string, file: string, settings: ChatTemplateSettings = {}): ChatTemplate {
  const limits = settings.limits ?? CHAT_TEMPLATE_LIMITS;
  const now = settings.now ?? (() => performance.now());
  const today = settings.today ?? (() => new Date());
  let template: Template;
  try {
    template = new Template(source);
  } catch (cause) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `${file}: the chat template does not parse: ${(cause as Error).message}`,
      cause,
      details: { path: file },
    });
  }
  const range = (start: number, stop?: number, step = 1): number[] => {
    const [from, to] = stop === undefined ? [0, start] : [start, stop];
    if (step === 0) throw new Error('range() step must not be zero');
    const count = Math.max(0, Math.ceil((to - from) / step));
    if (!(count <= limits.maxItems)) {
      throw new TemplateLimitError(`asked range() for ${Number.isNaN(count) ? 'a list of non-numbers' : `${count} items`}, more than ${limits.maxItems}`);
    }
    // The library's loop, so that fractional steps add up as before.
    const items: number[] = [];
    for (let value = from; step > 0 ? value < to : value > to; value += step) items.push(value);
    return items;
  };
  let identifiers: Set<string> | undefined;
  return {
    mentions(name) {
      identifiers ??= identifiersOf(template.parsed);
      return identifiers.has(name);
    },
    render(variables) {
      // Template.render's globals, with range bounded and the date injected.
      const environment = new Environment();
      const globals: Record<string, unknown> = {
        false: false,
        true: true,
        none: null,
        raise_exception: (message: string) => {
          throw new TemplateRaised(message);
        },
        range,
        strftime_now: (format: string) => strftime(today(), format),
        True: true,
        False: false,
        None: null,
      };
      for (const [name, value] of Object.entries(globals)) environment.set(name, value);
      try {
        for (const [name, value] of Object.entries(variables)) environment.set(name, value);
        const output = new BoundedInterpreter(environment, limits, now).run(template.parsed);
        return output.value as string;
      } catch (cause) {
        const message = (cause as Error).message;
        const [what, fix] =
          cause instanceof TemplateLimitError
            ? [`the chat template ${message}`, 'a chat template renders a chat in a few thousand steps; fix or replace the template']
            : cause instanceof TemplateRaised
              ? [`the chat template raised: ${message}`, 'the messages do not fit what the template expects']
              : [`the chat template failed: ${message}`, 'fix the template or the messages'];
        throw new AgentFlowError({ code: 'RUNTIME_ERROR', message: `${file}: ${what}; ${fix}.`, cause, details: { path: file } });
      }
    },
  };
}
