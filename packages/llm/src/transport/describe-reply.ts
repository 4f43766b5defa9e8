import { describeValue } from '@agentflow/core';

/** How much of what a server answered an error message quotes. */
export const REPLY_EXCERPT_CHARS = 200;

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();
const cut = (text: string) => (text.length > REPLY_EXCERPT_CHARS ? `${text.slice(0, REPLY_EXCERPT_CHARS - 3)}...` : text);

/** The text an HTML page shows (its title and body, tags, scripts and styles dropped), collapsed. */
function htmlText(html: string): string {
  return collapse(
    html
      .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<[^>]*>/g, ' ')
      .replace(/&nbsp;/g, ' ')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&'),
  );
}

/**
 * What a server answered, for an error message, at most about {@link REPLY_EXCERPT_CHARS}
 * characters: the message of `{"error": "..."}` (Ollama) or `{"error": {"message": ...}}`
 * (OpenAI), the visible text of an HTML page (a proxy's or a web server's error page says more
 * there than in its markup), or the body itself; text is quoted, its whitespace collapsed, and cut.
 */
export function describeReplyText(text: string, contentType?: string | null): string {
  const trimmed = text.trim();
  if (trimmed === '') return '(empty body)';
  try {
    const error = (JSON.parse(trimmed) as { error?: unknown } | null)?.error;
    if (typeof error === 'string') return cut(error) || '(empty error)';
    const message = error && typeof error === 'object' ? (error as { message?: unknown }).message : undefined;
    if (typeof message === 'string') return cut(message);
  } catch {
    // Not JSON: described as text below.
  }
  if (/html/i.test(contentType ?? '') || /^<(!doctype html|html|head|body)\b/i.test(trimmed)) {
    return `an HTML page: "${cut(htmlText(trimmed)) || '(no text)'}"`;
  }
  return `"${cut(collapse(trimmed))}"`;
}

/** A parsed JSON body as an error message quotes it: compact JSON, cut to about {@link REPLY_EXCERPT_CHARS} characters. */
export function describeReplyBody(body: unknown): string {
  return describeValue(body, REPLY_EXCERPT_CHARS);
}
