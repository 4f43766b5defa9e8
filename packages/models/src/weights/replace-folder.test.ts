import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { folderSiblings, restoreInterruptedFolder, writeFolderAtomic } from './replace-folder';

const write = (text: string) => async (partial: string) => {
  mkdirSync(join(partial, 'nested'));
  writeFileSync(join(partial, 'nested', 'file.txt'), text);
};
const read = (dir: string) => readFileSync(join(dir, 'nested', 'file.txt'), 'utf8');

describe('writeFolderAtomic', () => {
  it('creates the folder and its parents, then replaces it whole', async () => {
    const root = mkdtempSync(join(tmpdir(), 'atomic-'));
    const dir = join(root, 'a', 'b');
    await writeFolderAtomic(dir, write('one'));
    expect(read(dir)).toBe('one');
    writeFileSync(join(dir, 'stale.txt'), 'x');
    await writeFolderAtomic(dir, async (partial) => {
      // The old folder is still whole while the new one is written.
      expect(read(dir)).toBe('one');
      await write('two')(partial);
    });
    expect(readdirSync(dir)).toEqual(['nested']);
    expect(read(dir)).toBe('two');
    expect(readdirSync(join(root, 'a'))).toEqual(['b']);
  });

  it('removes a stale partial folder, and puts back a folder whose replacement was killed between its renames', async () => {
    const root = mkdtempSync(join(tmpdir(), 'atomic-'));
    const dir = join(root, 'model');
    const { partial, previous } = folderSiblings(dir);
    await writeFolderAtomic(dir, write('old'));
    // The state a kill between `dir -> previous` and `partial -> dir` leaves.
    mkdirSync(partial);
    renameSync(dir, previous);
    let seen: string | undefined;
    await writeFolderAtomic(dir, async (next) => {
      seen = read(dir);
      expect(readdirSync(next)).toEqual([]);
      throw new Error('disk full');
    }).catch((error: Error) => expect(error.message).toBe('disk full'));
    expect(seen).toBe('old');
    expect(read(dir)).toBe('old');
    expect(existsSync(partial) || existsSync(previous)).toBe(false);
  });

  it('puts the old folder back over an empty one made after the kill (a checkpoint folder created before it is read), and leaves a written one alone', async () => {
    const root = mkdtempSync(join(tmpdir(), 'atomic-'));
    const dir = join(root, 'checkpoint');
    const { previous } = folderSiblings(dir);
    await writeFolderAtomic(dir, write('old'));
    renameSync(dir, previous);
    mkdirSync(dir);
    restoreInterruptedFolder(dir);
    expect(read(dir)).toBe('old');
    expect(existsSync(previous)).toBe(false);
    // A new folder in place: `previous` is a leftover of a finished replacement, not restored.
    mkdirSync(previous);
    restoreInterruptedFolder(dir);
    expect(read(dir)).toBe('old');
    await writeFolderAtomic(dir, write('new'));
    expect(read(dir)).toBe('new');
    expect(existsSync(previous)).toBe(false);
  });

  it('refuses a path that is a file', async () => {
    const root = mkdtempSync(join(tmpdir(), 'atomic-'));
    writeFileSync(join(root, 'file'), 'x');
    await expect(writeFolderAtomic(join(root, 'file'), write('x'))).rejects.toThrow(/file is a file; expected a folder to write/);
  });
});
