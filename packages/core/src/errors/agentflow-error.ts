/**
 * Every failure AgentFlow reports on purpose. `code` says what kind of failure it is, so
 * callers branch on data rather than on message text.
 */
export type AgentFlowErrorCode =
  | 'INVALID_ARGUMENT'
  | 'INVALID_CONFIG'
  | 'NOT_FOUND'
  | 'NOT_IMPLEMENTED'
  | 'PARSE_ERROR'
  | 'SCHEMA_VALIDATION'
  | 'SHAPE_MISMATCH'
  | 'UNSUPPORTED_OPERATOR'
  | 'RUNTIME_ERROR'
  | 'DEVICE_UNAVAILABLE'
  | 'NETWORK_ERROR'
  | 'HTTP_ERROR'
  /** A server sent more bytes than the caller's cap allows (the setting that raises it is named). */
  | 'RESPONSE_TOO_LARGE'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'TOOL_ERROR'
  | 'SANDBOX_VIOLATION'
  | 'DATA_LEAKAGE'
  | 'CHECKPOINT_ERROR'
  /** Dynamic sampling found too few groups whose rewards differ within its round cap: training cannot go on. */
  | 'DYNAMIC_SAMPLING_EXHAUSTED'
  /** An optional peer dependency a feature needs is not installed (the package is named). */
  | 'MISSING_DEPENDENCY'
  /** A record (a JSONL line) is longer than the reader's cap (the setting that raises it is named). */
  | 'RECORD_TOO_LARGE'
  /** No space left on the device (ENOSPC) or the quota is used up (EDQUOT); the directory and the bytes are named. */
  | 'DISK_FULL'
  /** A run directory is locked by a live process (its pid, purpose and since when are named). */
  | 'RUN_LOCKED'
  | 'INTERNAL';

const marker = Symbol.for('agentflow.error');

export interface AgentFlowErrorSettings {
  code: AgentFlowErrorCode;
  message: string;
  cause?: unknown;
  /** Structured context (offending value, key path, URL...) for logs and tests. */
  details?: Record<string, unknown>;
}

export class AgentFlowError extends Error {
  protected readonly [marker] = true;
  readonly code: AgentFlowErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor({ code, message, cause, details }: AgentFlowErrorSettings) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AgentFlowError';
    this.code = code;
    this.details = details;
  }

  /**
   * True for any AgentFlowError, including one thrown by another copy of this package
   * (two versions installed side by side), where `instanceof` would say false.
   */
  static isInstance(value: unknown): value is AgentFlowError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }

  /** True when `value` is an AgentFlowError with the given code. */
  static hasCode(value: unknown, code: AgentFlowErrorCode): value is AgentFlowError {
    return AgentFlowError.isInstance(value) && value.code === code;
  }
}

/** Formats a value for an error message: short, unambiguous, never throws. */
export function describeValue(value: unknown, maxLength = 80): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    // JSON.stringify throws on cycles, BigInts and nesting deeper than the stack; String() of a
    // deeply nested array recurses as deep, so an array is only named.
    text = Array.isArray(value) ? `[an array of ${value.length}]` : String(value);
  }
  return text.length > maxLength ? `${text.slice(0, maxLength - 3)}...` : text;
}

/** Exhaustiveness check for discriminated unions. */
export function assertNever(value: never, what = 'variant'): never {
  throw new AgentFlowError({
    code: 'INTERNAL',
    message: `Unhandled ${what}: ${describeValue(value)}`,
  });
}
