import { AgentFlowError, describeValue } from '@agentflow/core';
import { parseHttpUrl } from '../tool-set/http-url';
import { splitCommandLine } from './command-line-words';
import type { McpServerTarget } from './connect-mcp-tools';

/** One MCP server as a user wrote it: `[NAME=]COMMAND [ARG...]` or `[NAME=]http(s)://...`. */
export interface McpServerSpec {
  /** Where it was written, named in messages: an option or config key (`--mcp`, `tools.mcp`). */
  option: string;
  /** The text after `NAME=`: the command line or the URL as written. */
  spec: string;
  /** The `NAME=` given; without one the server's own announced name prefixes its tools. */
  name?: string;
  target: McpServerTarget;
}

export interface McpServerSpecSettings {
  /** Where the text came from, named in messages and in {@link formatMcpServerSpec}. Default `MCP server`. */
  option?: string;
}

/** `NAME=` at the start: a server name, lower case so that it cannot pass for an environment variable. */
const NAMED = /^([a-z][a-z0-9_-]*)=(.*)$/s;
/** What a shell would read as an environment assignment (`VAR=value`). */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const DEFAULT_OPTION = 'MCP server';

/** The spec as the user wrote it (or would write it with another name), for messages: `--mcp "vault=node vault.js"`. */
export function formatMcpServerSpec(spec: Pick<McpServerSpec, 'option' | 'spec' | 'name'>): string {
  return `${spec.option} ${describeValue(spec.name === undefined ? spec.spec : `${spec.name}=${spec.spec}`, 200)}`;
}

function splitName(option: string, text: string): { name?: string; spec: string } {
  const named = NAMED.exec(text);
  if (named) return { name: named[1]!, spec: named[2]! };
  const assignment = ASSIGNMENT.exec(text.trimStart());
  if (assignment) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} ${describeValue(text, 200)}: ${assignment[0]} is not a server name (those are lower case: letters, digits, "_" and "-", starting with a letter), and environment assignments are not supported; set a variable with env, e.g. ${option} "env VAR=value node server.js".`,
      details: { option, value: text },
    });
  }
  return { spec: text };
}

/**
 * Parses `[NAME=]COMMAND [ARG...]`: a stdio MCP server, its command line split as a shell
 * splits it ({@link splitCommandLine}) and run without a shell. An environment assignment
 * (`DEBUG=1 node server.js`), an empty command or what a shell would expand is an
 * INVALID_ARGUMENT naming the option and the text.
 */
export function parseMcpCommandSpec(text: string, settings: McpServerSpecSettings = {}): McpServerSpec {
  const option = settings.option ?? DEFAULT_OPTION;
  const { name, spec } = splitName(option, text);
  const [command, ...args] = splitCommandLine(spec, { option });
  if (command === undefined || command === '') {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} ${describeValue(text, 200)} names no command; expected ${option} "[NAME=]COMMAND [ARG...]", e.g. ${option} "node server.js".`,
      details: { option, value: text },
    });
  }
  if (ASSIGNMENT.test(command)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} ${describeValue(text, 200)}: environment assignments (${describeValue(command)}) are not supported; set a variable with env, e.g. ${option} "env VAR=value node server.js".`,
      details: { option, value: text },
    });
  }
  return { option, spec, ...(name === undefined ? {} : { name }), target: { type: 'stdio', command, args } };
}

/** Parses `[NAME=]URL`: a Streamable HTTP MCP server; a URL that is not http(s) is an INVALID_ARGUMENT. */
export function parseMcpUrlSpec(text: string, settings: McpServerSpecSettings = {}): McpServerSpec {
  const option = settings.option ?? DEFAULT_OPTION;
  const { name, spec } = splitName(option, text);
  parseHttpUrl(spec, { option });
  return { option, spec, ...(name === undefined ? {} : { name }), target: { type: 'http', url: spec } };
}

/** Parses either form: `[NAME=]http(s)://...` is a Streamable HTTP server, anything else a command line. */
export function parseMcpServerSpec(text: string, settings: McpServerSpecSettings = {}): McpServerSpec {
  const spec = NAMED.exec(text)?.[2] ?? text;
  return /^https?:\/\//i.test(spec.trim()) ? parseMcpUrlSpec(text, settings) : parseMcpCommandSpec(text, settings);
}
