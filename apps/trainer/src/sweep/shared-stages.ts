import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFinishedStages } from '@agentflow/core';
import type { RunConfig } from '../config/schema';

/** The config as the warm start and eval-before see it: everything but the credit, the name and the directory. */
function withoutCredit(config: RunConfig): string {
  const { out: _out, name: _name, train, ...rest } = config;
  const { credit: _credit, ...dapo } = train;
  return JSON.stringify({ ...rest, train: dapo });
}

/**
 * Starts the run `config` in `dir` from the warm start and eval-before of `source`, a run whose
 * config differs only in `train.credit` (core's copyFinishedStages: the planner, its checkpoint
 * and progress, the stages' results and metrics rows), so that resuming `dir` goes on from the
 * collect stage as a fresh run would: every later stage draws from its own fork of the seed. False, writing nothing, when `source` differs in more or has not finished them.
 */
export function startFromSharedStages(source: string, dir: string, config: RunConfig): boolean {
  const configPath = join(source, 'config.json');
  if (!existsSync(configPath) || withoutCredit(JSON.parse(readFileSync(configPath, 'utf8')) as RunConfig) !== withoutCredit(config)) return false;
  return copyFinishedStages(source, dir, {
    stages: ['warm-start', 'eval-before'],
    paths: ['models/policy', 'checkpoints/policy-warm', 'checkpoints/warm-start.json', 'leakage.json'],
    config,
  });
}
