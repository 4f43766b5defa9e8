import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readSweepPlan, recordSweepPlan, sweepPlanPath } from './sweep-plan-file';

const schema = z.object({ seeds: z.array(z.number().int()) }).strict();
const settings = { command: 'agentflow sweep' };

describe('a sweep directory holds one plan', () => {
  it('records a plan, continues with the same one and refuses another, naming how to continue', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sweep-plan-'));
    recordSweepPlan(dir, { seeds: [0, 1] }, schema, settings);
    expect(readSweepPlan(dir, schema, settings)).toEqual({ seeds: [0, 1] });
    recordSweepPlan(dir, { seeds: [0, 1] }, schema, settings);
    expect(() => recordSweepPlan(dir, { seeds: [2] }, schema, settings)).toThrow(
      `${sweepPlanPath(dir)} records another sweep ({"seeds":[0,1]}); continue it with \`agentflow sweep --resume ${dir}\`, or choose another --out.`,
    );
  });

  it('names a missing, unreadable or malformed plan', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sweep-plan-'));
    expect(() => readSweepPlan(dir, schema, settings)).toThrow(/sweep\.json is missing; expected a directory written by `agentflow sweep`/);
    writeFileSync(sweepPlanPath(dir), '{"seeds": [1,');
    expect(() => readSweepPlan(dir, schema, settings)).toThrow(/cannot be read as JSON .*; it should hold the plan `agentflow sweep` wrote\./);
    writeFileSync(sweepPlanPath(dir), '{"seeds": ["a"]}');
    expect(() => readSweepPlan(dir, schema, settings)).toThrow(/sweep\.json: seeds\.0: .*; it should hold the plan `agentflow sweep` wrote\./);
  });
});
