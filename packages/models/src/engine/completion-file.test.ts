import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCompletionFile } from './completion-file';

const dir = mkdtempSync(join(tmpdir(), 'completion-file-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('readCompletionFile', () => {
  it('reads prompt and completion token ids as a batch', () => {
    expect(readCompletionFile(file('ok.json', '{"prompt_ids": [[1, 2]], "completion_ids": [[3]]}'))).toEqual({ promptIds: [[1, 2]], completionIds: [[3]] });
  });

  it('names the option, the file and what is wrong', () => {
    expect(() => readCompletionFile(file('bad.json', '{"prompt_ids": [[1, -2]], "completion_ids": [[3]]}'))).toThrow(/^--input .*bad\.json: expected \{"prompt_ids".*prompt_ids\.0\.1: /);
    expect(() => readCompletionFile(file('rows.json', '{"prompt_ids": [[1]], "completion_ids": []}'), '--batch')).toThrow(/^--batch .*rows\.json: prompt_ids has 1 rows but completion_ids has 0\.$/);
    expect(() => readCompletionFile(file('junk.json', '{"prompt_ids":'))).toThrow(/^--input .*junk\.json is not a readable JSON file/);
    expect(() => readCompletionFile(join(dir, 'missing.json'))).toThrow(/is not a readable JSON file/);
  });
});
