import { describe, expect, it } from 'vitest';
import { formatMcpServerSpec, parseMcpCommandSpec, parseMcpServerSpec, parseMcpUrlSpec } from './mcp-server-spec';

const commandFlag = (text: string) => parseMcpCommandSpec(text, { option: '--mcp' });
const urlFlag = (text: string) => parseMcpUrlSpec(text, { option: '--mcp-url' });

describe('MCP server specs (as --mcp and --mcp-url take them)', () => {
  it('reads an optional lower-case NAME= before the command line or the URL', () => {
    expect(commandFlag("node 'my server.js' --verbose")).toEqual({
      option: '--mcp',
      spec: "node 'my server.js' --verbose",
      target: { type: 'stdio', command: 'node', args: ['my server.js', '--verbose'] },
    });
    const named = commandFlag('files=npx -y @modelcontextprotocol/server-filesystem /tmp');
    expect(named).toMatchObject({ name: 'files', target: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] } });
    expect(formatMcpServerSpec({ ...named, name: 'files2' })).toBe('--mcp "files2=npx -y @modelcontextprotocol/server-filesystem /tmp"');
    expect(urlFlag('docs=http://127.0.0.1:3000/mcp')).toEqual({
      option: '--mcp-url',
      spec: 'http://127.0.0.1:3000/mcp',
      name: 'docs',
      target: { type: 'http', url: 'http://127.0.0.1:3000/mcp' },
    });
    expect(urlFlag('https://example.com/mcp')).not.toHaveProperty('name');
  });

  it('refuses environment assignments, an empty command and a URL that is not http(s)', () => {
    expect(() => commandFlag('DEBUG=1 node server.js')).toThrow(
      /^--mcp "DEBUG=1 node server.js": DEBUG= is not a server name \(those are lower case.*\), and environment assignments are not supported; set a variable with env, e\.g\. --mcp "env VAR=value node server\.js"\.$/,
    );
    expect(() => commandFlag('files=DEBUG=1 node server.js')).toThrow(/environment assignments \("DEBUG=1"\) are not supported/);
    expect(() => commandFlag('  ')).toThrow('--mcp "  " names no command; expected --mcp "[NAME=]COMMAND [ARG...]"');
    expect(() => urlFlag('docs=ftp://example.com/mcp')).toThrow('--mcp-url must be an http:// or https:// URL, got "ftp://example.com/mcp".');
  });

  it('tells a URL from a command line by its scheme, and names the option it is given (or "MCP server")', () => {
    expect(parseMcpServerSpec('docs=HTTPS://example.com/mcp', { option: 'tools.mcp' })).toEqual({
      option: 'tools.mcp',
      spec: 'HTTPS://example.com/mcp',
      name: 'docs',
      target: { type: 'http', url: 'HTTPS://example.com/mcp' },
    });
    expect(parseMcpServerSpec('uvx mcp-server-time')).toEqual({
      option: 'MCP server',
      spec: 'uvx mcp-server-time',
      target: { type: 'stdio', command: 'uvx', args: ['mcp-server-time'] },
    });
    expect(() => parseMcpServerSpec('node server.js > log', { option: 'tools.mcp' })).toThrow(/^tools\.mcp "node server\.js > log": ">" at character 16\./);
  });
});
