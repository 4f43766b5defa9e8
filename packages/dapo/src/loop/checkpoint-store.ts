import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, type RandomState, type TrainablePolicy, writeFileAtomic } from '@agentflow/core';
import type { DataCursorState } from './data-cursor';

/** Everything besides the policy's own files (adapter and optimiser) that a resume needs. */
export interface TrainerState {
  version: 1;
  /** Training steps completed. */
  step: number;
  random: RandomState;
  cursor: DataCursorState;
  /** The config the run was started with (JSON), to refuse a resume that changes the math. */
  config: Record<string, unknown>;
  /** The metrics of the steps this checkpoint commits (those since the previous one). */
  committed?: unknown[];
  /** Set on load: whether `markCommitted` recorded their delivery (a kill may come between). */
  delivered?: boolean;
}

const LATEST = 'latest.json';
const STATE = 'trainer-state.json';
const POLICY = 'policy';
const stepFolder = (step: number) => `step-${String(step).padStart(6, '0')}`;

/**
 * Writes a checkpoint as a folder built under a temporary name and renamed into place,
 * then points `latest.json` at it (an atomic write). A crash at any moment leaves the
 * previous checkpoint as the latest. Keeps the newest `keep` checkpoints.
 */
export async function saveCheckpoint(dir: string, policy: TrainablePolicy, state: TrainerState, keep: number): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const name = stepFolder(state.step);
  const temporary = join(dir, `${name}.tmp-${process.pid}`);
  rmSync(temporary, { recursive: true, force: true });
  mkdirSync(temporary, { recursive: true });
  try {
    await policy.save(join(temporary, POLICY));
    writeFileAtomic(join(temporary, STATE), `${JSON.stringify(state)}\n`);
  } catch (cause) {
    rmSync(temporary, { recursive: true, force: true });
    throw new AgentFlowError({ code: 'CHECKPOINT_ERROR', message: `Saving checkpoint ${name} in ${dir} failed: ${(cause as Error).message}`, cause });
  }
  const target = join(dir, name);
  rmSync(target, { recursive: true, force: true });
  renameSync(temporary, target);
  writeFileAtomic(join(dir, LATEST), `${JSON.stringify({ step: state.step, folder: name, delivered: false })}\n`);
  const older = readdirSync(dir)
    .filter((entry) => /^step-\d{6}$/.test(entry) && entry !== name)
    .sort();
  for (const entry of older.slice(0, Math.max(0, older.length - (keep - 1)))) rmSync(join(dir, entry), { recursive: true, force: true });
  return target;
}

/** Records in `latest.json` that the latest checkpoint's committed steps were delivered. */
export function markCommitted(dir: string): void {
  const latestPath = join(dir, LATEST);
  const latest = JSON.parse(readFileSync(latestPath, 'utf8')) as { step: number; folder: string; delivered?: boolean };
  if (latest.delivered === true) return;
  writeFileAtomic(latestPath, `${JSON.stringify({ ...latest, delivered: true })}\n`);
}

/** Loads the latest checkpoint into the policy and returns the trainer state, or null when there is none. */
export async function loadLatestCheckpoint(dir: string, policy: TrainablePolicy): Promise<TrainerState | null> {
  const latestPath = join(dir, LATEST);
  if (!existsSync(latestPath)) return null;
  let folder: string;
  let state: TrainerState;
  try {
    const latest = JSON.parse(readFileSync(latestPath, 'utf8')) as { folder: string; delivered?: boolean };
    folder = latest.folder;
    // A checkpoint written before `delivered` existed counts as delivered.
    state = { ...(JSON.parse(readFileSync(join(dir, folder, STATE), 'utf8')) as TrainerState), delivered: latest.delivered !== false };
  } catch (cause) {
    throw new AgentFlowError({ code: 'CHECKPOINT_ERROR', message: `Checkpoint in ${dir} is unreadable: ${(cause as Error).message}`, cause });
  }
  if (state.version !== 1 || !Number.isInteger(state.step) || !Array.isArray(state.random) || state.cursor === undefined) {
    throw new AgentFlowError({ code: 'CHECKPOINT_ERROR', message: `${join(dir, folder, STATE)} is not a DAPO trainer state (version 1).` });
  }
  await policy.load(join(dir, folder, POLICY));
  return state;
}
