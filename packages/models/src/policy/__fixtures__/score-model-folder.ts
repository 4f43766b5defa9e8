// Child process of the full-parameter policy test: a fresh process that loads a saved model
// folder and prints the log-probs of a batch (JSON on stdout), to compare with the trainer's.
import { createRuntime } from '@agentflow/tensor';
import { createCausalLm } from '../../engine/causal-lm';
import { loadModel } from '../../weights/model-folder';

const [dir, batchJson] = process.argv.slice(2);
const model = await loadModel(dir ?? '');
const lm = await createCausalLm({ model, runtime: createRuntime({ device: 'cpu', intraOpThreads: 1 }) });
const { logprobs } = await lm.logprobs(JSON.parse(batchJson ?? '{}'));
await lm.release();
process.stdout.write(`${JSON.stringify(logprobs)}\n`);
