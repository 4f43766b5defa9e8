import { AgentFlowError } from '@agentflow/core';
import type { z } from 'zod';
import { describeReplyBody } from './describe-reply';
import type { JsonReply } from './json-transport';

/** Issues an error message lists at most; the rest are counted. */
const MAX_ISSUES = 4;

/** Where a wrong-shape reply was expected to come from, and what to change. */
export interface ReplyShapeErrorSettings {
  /** What the body should have been, e.g. "an Ollama chat reply". */
  expected: string;
  /** The validation that failed. */
  error: z.ZodError;
  /** The setting to check or change, e.g. the endpoint's URL setting. */
  advice: string;
}

/**
 * A 200 whose JSON is not the reply the API documents (`{"foo": 1}` from /api/chat, a chat
 * completion with no choices): a PARSE_ERROR naming the URL, the status, the first fields that
 * are wrong, what the server answered (cut to about 200 characters) and the setting to check.
 * Not retried: a server that answers the wrong shape once answers it again.
 */
export function replyShapeError(reply: JsonReply, settings: ReplyShapeErrorSettings): AgentFlowError {
  const issues = settings.error.issues.map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
  const listed = issues.slice(0, MAX_ISSUES).join('; ') + (issues.length > MAX_ISSUES ? `; ${issues.length - MAX_ISSUES} more` : '');
  const answered = describeReplyBody(reply.body);
  return new AgentFlowError({
    code: 'PARSE_ERROR',
    message: `POST ${reply.url} answered HTTP ${reply.status} with a body that is not ${settings.expected} (${listed}): ${answered}. ${settings.advice}`,
    details: { url: reply.url, status: reply.status, answered, issues: settings.error.issues },
  });
}
