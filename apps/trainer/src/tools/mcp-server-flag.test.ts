import { describe, expect, it } from 'vitest';
import { formatMcpServerFlag, parseMcpCommandFlag, parseMcpUrlFlag } from './mcp-server-flag';

describe('--mcp and --mcp-url', () => {
  it('reads an optional lower-case NAME= before the command line or the URL', () => {
    expect(parseMcpCommandFlag("node 'my server.js' --verbose")).toEqual({
      option: '--mcp',
      spec: "node 'my server.js' --verbose",
      target: { type: 'stdio', command: 'node', args: ['my server.js', '--verbose'] },
    });
    const named = parseMcpCommandFlag('files=npx -y @modelcontextprotocol/server-filesystem /tmp');
    expect(named).toMatchObject({ name: 'files', target: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] } });
    expect(formatMcpServerFlag({ ...named, name: 'files2' })).toBe('--mcp "files2=npx -y @modelcontextprotocol/server-filesystem /tmp"');
    expect(parseMcpUrlFlag('docs=http://127.0.0.1:3000/mcp')).toEqual({
      option: '--mcp-url',
      spec: 'http://127.0.0.1:3000/mcp',
      name: 'docs',
      target: { type: 'http', url: 'http://127.0.0.1:3000/mcp' },
    });
    expect(parseMcpUrlFlag('https://example.com/mcp')).not.toHaveProperty('name');
  });

  it('refuses environment assignments, an empty command and a URL that is not http(s)', () => {
    expect(() => parseMcpCommandFlag('DEBUG=1 node server.js')).toThrow(
      /^--mcp "DEBUG=1 node server.js": DEBUG= is not a server name \(those are lower case.*\), and environment assignments are not supported; set a variable with env, e\.g\. --mcp "env VAR=value node server\.js"\.$/,
    );
    expect(() => parseMcpCommandFlag('files=DEBUG=1 node server.js')).toThrow(/environment assignments \("DEBUG=1"\) are not supported/);
    expect(() => parseMcpCommandFlag('  ')).toThrow('--mcp "  " names no command; expected --mcp "[NAME=]COMMAND [ARG...]"');
    expect(() => parseMcpUrlFlag('docs=ftp://example.com/mcp')).toThrow('--mcp-url must be an http:// or https:// URL, got "ftp://example.com/mcp".');
  });
});
