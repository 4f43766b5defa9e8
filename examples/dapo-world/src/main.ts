import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trainOnWorld } from './dapo-world.js';

const dir = mkdtempSync(join(tmpdir(), 'dapo-world-'));
try {
  const { warm, trained } = await trainOnWorld(dir, (line) => console.log(line));
  const moved = [...trained.matrices].some(([key, { b }]) => b.some((value, index) => value !== warm.matrices.get(key)?.b[index]));
  console.log(`the planner's adapter moved: ${moved}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
