import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFinishedStages } from '@agentflow/core';
import type { RunConfig } from '../config/schema';
import { stageNamesOf } from '../pipeline/pipeline';

/** The config as the stages before DAPO see it: everything but the credit, the name and the directory. */
function withoutCredit(config: RunConfig): string {
  const { out: _out, name: _name, train, ...rest } = config;
  const { credit: _credit, ...dapo } = train;
  return JSON.stringify({ ...rest, train: dapo });
}

/**
 * The stages before DAPO that a run can take over from another of the same seed, in pipeline
 * order, with what each wrote: none of them reads the credit, and each draws from its own fork of
 * the seed, so a copy is what the run would have computed itself.
 */
const SHAREABLE_STAGES: readonly { stage: string; paths: readonly string[] }[] = [
  { stage: 'warm-start', paths: ['models/policy', 'checkpoints/policy-warm', 'checkpoints/warm-start.json', 'leakage.json'] },
  { stage: 'eval-before', paths: [] },
  { stage: 'collect', paths: ['trajectories.jsonl'] },
  { stage: 'label', paths: ['labels.jsonl', 'label-summary.json', 'judge-cache.jsonl'] },
  { stage: 'train-prm', paths: ['checkpoints/prm'] },
];

/**
 * The stages `config`'s run can take over from `source`: the longest run of shareable stages,
 * in pipeline order, that `source` has finished and `config` runs (outcome credit runs no label
 * or train-prm), when the two configs differ in `train.credit` alone. Empty otherwise.
 */
export function shareableStages(source: string, config: RunConfig): string[] {
  const configPath = join(source, 'config.json');
  const statePath = join(source, 'state.json');
  if (!existsSync(configPath) || !existsSync(statePath)) return [];
  if (withoutCredit(JSON.parse(readFileSync(configPath, 'utf8')) as RunConfig) !== withoutCredit(config)) return [];
  const finished = (JSON.parse(readFileSync(statePath, 'utf8')) as { stages: Record<string, unknown> }).stages;
  const runs = new Set(stageNamesOf(config));
  const shared: string[] = [];
  for (const { stage } of SHAREABLE_STAGES) {
    if (!runs.has(stage)) continue;
    if (finished[stage] === undefined) break;
    shared.push(stage);
  }
  // The evaluation before DAPO is the first result a run reports: without it, share nothing.
  return shared.includes('eval-before') ? shared : [];
}

/**
 * Starts the run `config` in `dir` from `stages` of the run `source` (what `shareableStages`
 * gave for them; core's copyFinishedStages: the planner, its checkpoint and progress, the
 * trajectories, labels and PRM, the stages' results and metrics rows), so that resuming `dir`
 * goes on from the first stage not copied as a fresh run would: every later stage draws from its
 * own fork of the seed. Returns the stages copied; empty, writing nothing, when there is nothing to share.
 */
export function startFromSharedStages(source: { dir: string; stages: readonly string[] }, dir: string, config: RunConfig): string[] {
  const stages = [...source.stages];
  if (stages.length === 0) return [];
  const paths = SHAREABLE_STAGES.filter((entry) => stages.includes(entry.stage)).flatMap((entry) => entry.paths);
  return copyFinishedStages(source.dir, dir, { stages, paths, config }) ? stages : [];
}
