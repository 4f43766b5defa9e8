// Child process of the PRM's full-training test: a fresh process that loads a saved PRM
// checkpoint and prints its scores of the given steps (JSON on stdout), to compare with the
// scores of the PRM that saved it.
import type { StepScoringInput } from '@agentflow/core';
import { loadPrm } from '../model/checkpoint';

const [dir, inputsJson] = process.argv.slice(2);
const prm = await loadPrm(dir ?? '', { device: 'cpu', intraOpThreads: 1 });
const scores = await prm.score(JSON.parse(inputsJson ?? '[]') as StepScoringInput[]);
await prm.release();
process.stdout.write(`${JSON.stringify(scores)}\n`);
