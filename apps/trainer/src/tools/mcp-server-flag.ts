import { AgentFlowError, describeValue } from '@agentflow/core';
import type { McpServerTarget } from '@agentflow/executor';
import { splitCommandLine } from './command-line-words';
import { parseHttpUrl } from './http-url';

/** One `--mcp` or `--mcp-url` of `agentflow solve`. */
export interface McpServerFlag {
  option: '--mcp' | '--mcp-url';
  /** The value after `NAME=`: the command line or the URL as typed. */
  spec: string;
  /** The `NAME=` given; without one the server's own announced name prefixes its tools. */
  name?: string;
  target: McpServerTarget;
}

/** `NAME=` at the start: a server name, lower case so that it cannot pass for an environment variable. */
const NAMED = /^([a-z][a-z0-9_-]*)=(.*)$/s;
/** What a shell would read as an environment assignment (`VAR=value`). */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** The flag as the user typed it (or would type it with another name), for messages. */
export function formatMcpServerFlag(flag: Pick<McpServerFlag, 'option' | 'spec' | 'name'>): string {
  return `${flag.option} ${describeValue(flag.name === undefined ? flag.spec : `${flag.name}=${flag.spec}`, 200)}`;
}

function splitName(option: McpServerFlag['option'], text: string): { name?: string; spec: string } {
  const named = NAMED.exec(text);
  if (named) return { name: named[1]!, spec: named[2]! };
  const assignment = ASSIGNMENT.exec(text.trimStart());
  if (assignment) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} ${describeValue(text, 200)}: ${assignment[0]} is not a server name (those are lower case: letters, digits, "_" and "-", starting with a letter), and environment assignments are not supported; set a variable with env, e.g. --mcp "env VAR=value node server.js".`,
      details: { option, value: text },
    });
  }
  return { spec: text };
}

/**
 * Parses `--mcp "[NAME=]COMMAND [ARG...]"`: a stdio MCP server, its command line split as a
 * shell splits it (see splitCommandLine) and run without a shell.
 */
export function parseMcpCommandFlag(text: string): McpServerFlag {
  const { name, spec } = splitName('--mcp', text);
  const [command, ...args] = splitCommandLine(spec, { option: '--mcp' });
  if (command === undefined || command === '') {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--mcp ${describeValue(text, 200)} names no command; expected --mcp "[NAME=]COMMAND [ARG...]", e.g. --mcp "node server.js".`,
      details: { option: '--mcp', value: text },
    });
  }
  if (ASSIGNMENT.test(command)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--mcp ${describeValue(text, 200)}: environment assignments (${describeValue(command)}) are not supported; set a variable with env, e.g. --mcp "env VAR=value node server.js".`,
      details: { option: '--mcp', value: text },
    });
  }
  return { option: '--mcp', spec, ...(name === undefined ? {} : { name }), target: { type: 'stdio', command, args } };
}

/** Parses `--mcp-url "[NAME=]URL"`: a Streamable HTTP MCP server. */
export function parseMcpUrlFlag(text: string): McpServerFlag {
  const { name, spec } = splitName('--mcp-url', text);
  parseHttpUrl('--mcp-url', spec);
  return { option: '--mcp-url', spec, ...(name === undefined ? {} : { name }), target: { type: 'http', url: spec } };
}

/** An MCP server as a config names it (`tools.mcp`): `[NAME=]http(s)://...` is a Streamable HTTP server, anything else a command line. */
export function parseMcpServerSpec(text: string): McpServerFlag {
  const spec = NAMED.exec(text)?.[2] ?? text;
  return /^https?:\/\//i.test(spec.trim()) ? parseMcpUrlFlag(text) : parseMcpCommandFlag(text);
}
