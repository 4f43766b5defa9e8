import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { createLoraAdapter } from '../lora/lora-adapter';
import { loadLoraAdapter, saveLoraAdapter } from '../lora/peft-format';
import { loadModel, saveModelFolder } from './model-folder';
import { createRandomModel } from './random-model';

// A full disk while a run's model folder is written (issue 33: the run was lost, every later
// --resume refused it with NOT_FOUND). On a tmpfs that holds one version of a tiny model but not
// two, the second save is DISK_FULL naming the folder, the first still loads, nothing is left
// beside it; with space freed the save succeeds. Mounting needs root; elsewhere this is skipped.

const root = mkdtempSync(join(tmpdir(), 'model-disk-full-'));
const disk = join(root, 'small-disk');
let mountFailure: string | undefined = 'not mounted yet';
const config = getModelPreset('tiny');
const first = createRandomModel(config, 1);
const second = createRandomModel(config, 2);
/** Bytes of the tiny model's folder, measured by saving it on the ordinary disk. */
let folderBytes = 0;

function mountSmallDisk(bytes: number, remount: boolean): void {
  const size = `size=${Math.ceil(bytes / 4096) * 4}k`;
  execFileSync('mount', remount ? ['-o', `remount,${size}`, disk] : ['-t', 'tmpfs', '-o', size, 'tmpfs', disk], { stdio: 'pipe' });
}

beforeAll(async () => {
  const measured = join(root, 'measured');
  await saveModelFolder(measured, first);
  for (const entry of readdirSync(measured)) folderBytes += Math.ceil(statSync(join(measured, entry)).size / 4096) * 4096;
  mkdirSync(disk);
  try {
    mountSmallDisk(folderBytes * 1.5, false);
    mountFailure = undefined;
  } catch (error) {
    mountFailure = `mount -t tmpfs failed (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}); a full disk needs root to simulate`;
  }
});

afterAll(() => {
  if (mountFailure === undefined) execFileSync('umount', ['-l', disk]);
  rmSync(root, { recursive: true, force: true });
});

describe('saveModelFolder on a full disk', () => {
  it('is DISK_FULL naming the folder; the previous folder still loads and nothing is left beside it; once space is freed the save succeeds', async (context) => {
    if (mountFailure !== undefined) {
      console.warn(`skipped: ${mountFailure}`);
      context.skip(mountFailure);
      return;
    }
    const dir = join(disk, 'policy');
    await saveModelFolder(dir, first);
    const error = await saveModelFolder(dir, second).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(AgentFlowError.isInstance(error), String(error)).toBe(true);
    const diskFull = error as AgentFlowError;
    expect(diskFull.code).toBe('DISK_FULL');
    const weightBytes = [...second.weights.values()].reduce((sum, tensor) => sum + tensor.data.length * 4, 0);
    expect(diskFull.message).toMatch(
      new RegExp(`^No space left on the device \\(ENOSPC\\) of ${disk} while writing [0-9.]+ KiB \\(${weightBytes} bytes\\) to ${dir}; the previous folder ${dir} is intact\\.`),
    );
    expect(readdirSync(disk)).toEqual(['policy']);
    const kept = await loadModel(dir);
    const name = 'model.layers.0.self_attn.q_proj.weight';
    expect(kept.weights.get(name)!.data).toEqual(first.weights.get(name)!.data);

    mountSmallDisk(folderBytes * 3, true);
    await saveModelFolder(dir, second);
    expect((await loadModel(dir)).weights.get(name)!.data).toEqual(second.weights.get(name)!.data);
    expect(readdirSync(disk)).toEqual(['policy']);
  });

  it('saving a LoRA adapter on a full disk is DISK_FULL too, and leaves the previous adapter loadable', async (context) => {
    if (mountFailure !== undefined) {
      context.skip(mountFailure);
      return;
    }
    const dir = join(disk, 'adapter');
    const before = createLoraAdapter(config, { rank: 4 }, 1);
    await saveLoraAdapter(dir, before);
    // Fill what is left but less than the new adapter's weights.
    const after = createLoraAdapter(config, { rank: 4 }, 2);
    const free = Number(execFileSync('df', ['--output=avail', '-B1', disk], { encoding: 'utf8' }).split('\n')[1]);
    writeFileSync(join(disk, 'filler'), Buffer.alloc(Math.max(0, free - 8192)));
    const error = await saveLoraAdapter(dir, after).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'DISK_FULL', message: expect.stringContaining(`the previous adapter in ${dir} is intact`) });
    const path = [...before.matrices.keys()][0]!;
    expect((await loadLoraAdapter(dir, config)).matrices.get(path)!.a).toEqual(before.matrices.get(path)!.a);
    expect(readdirSync(dir).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    rmSync(join(disk, 'filler'));
    await saveLoraAdapter(dir, after);
    expect((await loadLoraAdapter(dir, config)).matrices.get(path)!.a).toEqual(after.matrices.get(path)!.a);
  });
});
