import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitCommandLine } from './command-line-words';

const split = (text: string) => splitCommandLine(text, { option: '--mcp', home: '/home/ada' });

/** How sh users quote a word: in single quotes, a quote inside as '\''. */
const shellQuote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

describe('splitCommandLine', () => {
  it('splits on blanks and honours quotes and backslashes as sh does', () => {
    expect(split('  node   server.js\t--port 8080 ')).toEqual(['node', 'server.js', '--port', '8080']);
    expect(split(`node 'my server.js' "a \\"b\\" \\\\ c" d\\ e '' x"y"'z'`)).toEqual(['node', 'my server.js', 'a "b" \\ c', 'd e', '', 'xyz']);
    expect(split(`uvx --from 'pkg[cli]' "*.py" \\$HOME 'it''s'`)).toEqual(['uvx', '--from', 'pkg[cli]', '*.py', '$HOME', 'its']);
    expect(split('node \\\n  server.js')).toEqual(['node', 'server.js']);
    expect(split('node ~/servers/x.js ~ a~b "~/q"')).toEqual(['node', '/home/ada/servers/x.js', '/home/ada', 'a~b', '~/q']);
  });

  it('gives back any words quoted the way sh users quote them', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 6 }), (words) => {
        expect(split(words.map(shellQuote).join(' '))).toEqual(words);
      }),
    );
  });

  it('refuses what a shell would expand or treat as an operator, naming the option and the place', () => {
    expect(() => split('node server.js | tee log')).toThrow(/^--mcp "node server.js \| tee log": "\|" at character 16\. The command runs without a shell: quote it/);
    expect(() => split('node $SERVER')).toThrow(/"\$" at character 6/);
    expect(() => split('node "$SERVER"')).toThrow(/"\$" \(an expansion inside double quotes\) at character 7/);
    expect(() => split('node *.js')).toThrow(/"\*" at character 6/);
    expect(() => split('node x.js # a comment')).toThrow(/"#" \(a comment in a shell\)/);
    expect(() => split('node ~bob/x.js')).toThrow(/"~USER"/);
    expect(() => split("node 'server.js")).toThrow(/an unterminated single quote at character 6/);
    expect(() => split('node "server.js')).toThrow(/an unterminated double quote at character 6/);
    expect(() => split('node x\\')).toThrow(/a trailing backslash/);
  });
});
