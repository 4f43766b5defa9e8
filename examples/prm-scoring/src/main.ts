import { createPrm, createPrmScorer, evaluatePrm } from '@agentflow/prm';
import { labelledSteps, stepAction } from './labelled-steps.js';

// A tiny Qwen3-architecture backbone with random weights (no download), frozen: its features
// are computed once and only the sigmoid regression head trains, in seconds, on the CPU.
const prm = await createPrm({ backbone: { kind: 'random', preset: 'tiny', seed: 0 }, device: 'cpu', intraOpThreads: 1, maxTokens: 256 });
const training = labelledSteps(60, 1);
const heldOut = labelledSteps(20, 2);
const report = await prm.train(training, { epochs: 300, patience: 30 });
const evaluation = evaluatePrm(heldOut, await prm.score(heldOut), { trainingLabelMean: report.trainingLabelMean });
console.log(`trained on ${training.length} labelled steps, evaluated on ${heldOut.length} held-out steps`);
console.log(`held-out MSE below the constant predictor's: ${evaluation.mse < evaluation.constantPredictorMse}`);

// The trainer's view: a core StepScorer. The scored decision's own tool result is never shown.
const scorer = createPrmScorer(prm);
const question = 'What is 37 times 41?';
const [python, search, finish, unparsed] = await scorer.score([
  { question, history: [], action: stepAction('python', 37, 41, 0) },
  { question, history: [], action: stepAction('search', 37, 41, 0) },
  { question, history: [], action: stepAction('finish', 37, 41, 1500) },
  { question, history: [], action: null },
]);
console.log(`python step > search step > blind finish: ${python! > search! && search! > finish!}`);
console.log(`a step whose output did not parse scores ${unparsed}`);
await prm.release();
