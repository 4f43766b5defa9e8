// What installing each package alone may bring, and how large it may be. `brings` is the
// exact set of AgentFlow packages in node_modules; `maxMb` the budget for all of node_modules
// (du, installed with --ignore-scripts, optional peers absent). Measured figures: docs/perf.md.

/** One consumer project: `install` packages from their tarballs, then import and type-check `imports`. */
export const CONSUMERS = [
  { install: ['core'], brings: ['core'], maxMb: 10 },
  // Trackers: core and zod only; the testing export is a loopback MLflow server and an event-file reader.
  { install: ['tracking'], imports: ['@agentflow/tracking', '@agentflow/tracking/testing'], brings: ['core', 'tracking'], maxMb: 10 },
  { install: ['tensor'], brings: ['core', 'tensor'], maxMb: 340 },
  // The testing export (a tiny Qwen3 folder) reads its tokenizer files from an optional peer, on use.
  { install: ['models'], imports: ['@agentflow/models', '@agentflow/models/testing'], brings: ['core', 'tensor', 'models'], maxMb: 340 },
  // The testing export: loopback chat servers, and a vLLM stand-in that loads models and tensor (optional peers) on use.
  { install: ['llm'], imports: ['@agentflow/llm', '@agentflow/llm/testing'], brings: ['core', 'llm'], maxMb: 12 },
  { install: ['planner'], brings: ['core', 'llm', 'planner'], maxMb: 12 },
  { install: ['executor'], brings: ['core', 'executor'], maxMb: 12 },
  { install: ['verifier'], brings: ['core', 'llm', 'verifier'], maxMb: 12 },
  { install: ['memory'], brings: ['core', 'memory'], maxMb: 12 },
  { install: ['flow'], brings: ['core', 'executor', 'llm', 'memory', 'planner', 'verifier', 'flow'], maxMb: 15 },
  // The benchmark eval runs flow's agent: flow and the small packages under it (SQLite memory is memory's optional peer).
  { install: ['eval'], brings: ['core', 'executor', 'llm', 'memory', 'planner', 'verifier', 'flow', 'tensor', 'models', 'eval'], maxMb: 340 },
  { install: ['prm'], brings: ['core', 'llm', 'tensor', 'models', 'prm'], maxMb: 340 },
  // The testing export (a tabular TrainablePolicy) needs nothing more than the main entry.
  { install: ['dapo'], imports: ['@agentflow/dapo', '@agentflow/dapo/testing'], brings: ['core', 'dapo'], maxMb: 15 },
  // The ONNX graph objective, asked for: tensor installed next to dapo.
  { install: ['dapo', 'tensor'], imports: ['@agentflow/dapo/graph'], brings: ['core', 'tensor', 'dapo'], maxMb: 340 },
];

/**
 * A few typed uses per entry point, so the type check exercises real signatures (each file
 * also imports the whole namespace: every declaration file of the entry is checked).
 */
export const TYPED_USES = {
  '@agentflow/core': `import { AgentFlowError, createRandom } from '@agentflow/core';
const random = createRandom(7);
const draw: number = random.next();
const error = new AgentFlowError({ code: 'MISSING_DEPENDENCY', message: String(draw) });
export const code: string = error.code;`,
  '@agentflow/dapo': `import { groupAdvantages, parseDapoConfig, type DapoConfig } from '@agentflow/dapo';
export const advantages: number[] = Array.from(groupAdvantages([1, 0, 1, 0], { stdEstimator: 'population', eps: 1e-6 }));
export const config: DapoConfig = parseDapoConfig({ groupSize: 4 });`,
  '@agentflow/dapo/graph': `import { clippedSurrogateObjective } from '@agentflow/dapo/graph';
import { createGraphBuilder } from '@agentflow/tensor';
export const builder = createGraphBuilder();
export const objective: typeof clippedSurrogateObjective = clippedSurrogateObjective;`,
  '@agentflow/dapo/testing': `import { createTabularPolicy, type TabularPolicy } from '@agentflow/dapo/testing';
export const policy: TabularPolicy = createTabularPolicy({ prompts: 2, actions: 3 });
export const chance: number = policy.probability(0, 1);`,
  '@agentflow/tracking': `import { createTensorBoardTracker, trackingSettingsSchema, type Tracker, type TrackingSettings } from '@agentflow/tracking';
export const settings: TrackingSettings = trackingSettingsSchema.parse({ tensorboard: { dir: 'runs/tb' } });
export const tracker: Tracker = createTensorBoardTracker({ dir: 'runs/tb/run-1', warn: (message: string) => console.warn(message) });`,
  '@agentflow/tracking/testing': `import { readScalars, startLoopbackMlflowServer, type LoopbackMlflowServer } from '@agentflow/tracking/testing';
export const server: Promise<LoopbackMlflowServer> = startLoopbackMlflowServer('ok');
export const scalars: Map<string, Array<[number, number]>> = readScalars('runs/tb/run-1');`,
  '@agentflow/llm/testing': `import { startOllamaServer, startVllmStandIn, type LoopbackChatServer, type VllmStandInSettings } from '@agentflow/llm/testing';
export const server: Promise<LoopbackChatServer> = startOllamaServer('qwen3:8b', (body) => body.model);
export const settings: VllmStandInSettings = { modelDir: 'models/Qwen3-tiny', servedModelName: 'tiny', maxLoraRank: 8 };
export const start: typeof startVllmStandIn = startVllmStandIn;`,
  '@agentflow/models/testing': `import { writeTinyQwen3Folder, type TinyQwen3FolderSettings } from '@agentflow/models/testing';
const settings: TinyQwen3FolderSettings = { seed: 1, hiddenSize: 16, layers: 1, dtype: 'float32' };
export const write: (dir: string) => Promise<string> = (dir) => writeTinyQwen3Folder(dir, settings);`,
  '@agentflow/prm': `import { renderStepInput, spearman } from '@agentflow/prm';
export const rho: number = spearman([1, 2, 3], [1, 3, 2]);
export const text: string = renderStepInput({ question: 'q', history: [], action: null });`,
};
