import { homedir } from 'node:os';
import { AgentFlowError, describeValue } from '@agentflow/core';

export interface CommandLineWordsSettings {
  /** Where the text came from, named first in error messages: an option or config key (`--mcp`, `tools.mcp`). Default `command line`. */
  option?: string;
  /** What an unquoted leading `~` stands for. Default: the user's home folder (`os.homedir()`). */
  home?: string;
}

/** Characters a shell would treat as operators or expansions when unquoted. */
const SHELL_SPECIAL = new Set(['|', '&', ';', '<', '>', '(', ')', '$', '`', '*', '?', '[']);
/** The characters a backslash escapes inside double quotes (POSIX sh). */
const DOUBLE_QUOTE_ESCAPES = new Set(['"', '\\', '$', '`']);

/**
 * Splits a command line into words as POSIX sh does with its quoting: blanks separate
 * words, '...' is literal, "..." is literal but for \" \\ \$ \`, a backslash outside
 * quotes takes the next character literally, and an unquoted `~` or `~/` starting a word
 * is the home folder. No shell runs: what a shell would expand or treat as an operator
 * (unquoted `| & ; < > ( ) * ? [`, `$` or a backquote outside single quotes, a word
 * starting with `#`) is refused rather than passed on with another meaning; quote it to
 * pass it literally. Each refusal is an INVALID_ARGUMENT naming the option, the text, what was
 * found and its place (1-based character).
 */
export function splitCommandLine(text: string, settings: CommandLineWordsSettings = {}): string[] {
  const option = settings.option ?? 'command line';
  const refuse = (what: string, position: number): never => {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} ${describeValue(text, 200)}: ${what} at character ${position + 1}. The command runs without a shell: quote it to pass it literally, or run a shell yourself (sh -c '...').`,
      details: { option, value: text, position },
    });
  };
  const words: string[] = [];
  let word: string | null = null;
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    if (char === ' ' || char === '\t' || char === '\n') {
      if (word !== null) words.push(word);
      word = null;
      index += 1;
      continue;
    }
    const starting = word === null;
    word ??= '';
    if (char === "'") {
      const end = text.indexOf("'", index + 1);
      if (end < 0) refuse('an unterminated single quote', index);
      word += text.slice(index + 1, end);
      index = end + 1;
    } else if (char === '"') {
      let cursor = index + 1;
      for (;;) {
        if (cursor >= text.length) refuse('an unterminated double quote', index);
        const inner = text[cursor]!;
        if (inner === '"') break;
        if (inner === '\\' && cursor + 1 < text.length && DOUBLE_QUOTE_ESCAPES.has(text[cursor + 1]!)) {
          word += text[cursor + 1];
          cursor += 2;
        } else if (inner === '\\' && text[cursor + 1] === '\n') {
          cursor += 2;
        } else if (inner === '$' || inner === '`') {
          refuse(`${describeValue(inner)} (an expansion inside double quotes)`, cursor);
        } else {
          word += inner;
          cursor += 1;
        }
      }
      index = cursor + 1;
    } else if (char === '\\' && text[index + 1] === '\n') {
      // Backslash-newline continues the line, as in sh.
      if (starting) word = null;
      index += 2;
    } else if (char === '\\') {
      if (index + 1 >= text.length) refuse('a trailing backslash', index);
      word += text[index + 1];
      index += 2;
    } else if (starting && char === '#') {
      refuse('"#" (a comment in a shell)', index);
    } else if (starting && char === '~' && (index + 1 === text.length || /[\s/]/.test(text[index + 1]!))) {
      word += settings.home ?? homedir();
      index += 1;
    } else if (starting && char === '~') {
      refuse('"~USER" (another user\'s home folder)', index);
    } else if (SHELL_SPECIAL.has(char)) {
      refuse(describeValue(char), index);
    } else {
      word += char;
      index += 1;
    }
  }
  if (word !== null) words.push(word);
  return words;
}
