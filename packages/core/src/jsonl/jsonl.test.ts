import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { appendJsonl, readJsonl, writeFileAtomic } from './jsonl';

const temporaryFile = (name: string) => join(mkdtempSync(join(tmpdir(), 'agentflow-jsonl-')), name);

describe('JSONL helpers', () => {
  it('appends and reads back records in order', () => {
    const path = temporaryFile('a/b/metrics.jsonl');
    appendJsonl(path, [{ step: 1 }, { step: 2 }]);
    appendJsonl(path, [{ step: 3 }]);
    expect(readJsonl(path)).toEqual([{ step: 1 }, { step: 2 }, { step: 3 }]);
  });

  it('ignores a partial last line left by a crash and repairs it on the next append', () => {
    const path = temporaryFile('t.jsonl');
    appendJsonl(path, [{ id: 'a' }]);
    appendFileSync(path, '{"id": "b", "ste'); // a write cut short
    expect(readJsonl(path)).toEqual([{ id: 'a' }]);
    appendJsonl(path, [{ id: 'c' }]);
    expect(readFileSync(path, 'utf8')).toBe('{"id":"a"}\n{"id":"c"}\n');
  });

  it('names the line of a malformed record', () => {
    const path = temporaryFile('bad.jsonl');
    writeFileSync(path, '{"ok": 1}\nnot json\n');
    expect(() => readJsonl(path)).toThrow(/bad\.jsonl:2: not valid JSON/);
  });

  it('validates records with a schema and reports the field', () => {
    const path = temporaryFile('s.jsonl');
    appendJsonl(path, [{ score: 0.5 }, { score: 'high' }]);
    const schema = z.object({ score: z.number() });
    expect(() => readJsonl(path, { schema })).toThrow(/s\.jsonl:2: score:/);
  });

  it('reports a missing file unless allowed', () => {
    const path = temporaryFile('missing.jsonl');
    expect(() => readJsonl(path)).toThrow(/JSONL file not found/);
    expect(readJsonl(path, { allowMissing: true })).toEqual([]);
  });

  it('writes files atomically', () => {
    const path = temporaryFile('state.json');
    writeFileAtomic(path, '{"v":1}');
    writeFileAtomic(path, '{"v":2}');
    expect(readFileSync(path, 'utf8')).toBe('{"v":2}');
  });
});
