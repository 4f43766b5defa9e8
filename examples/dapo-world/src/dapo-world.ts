import { join } from 'node:path';
import { createRandom, type LanguageModel, type Trajectory } from '@agentflow/core';
import { createDapoTrainer } from '@agentflow/dapo';
import { clippedSurrogateObjective } from '@agentflow/dapo/graph';
import { createOutcomeScorer, createTaskWorld, createWorldPlannerFolder, createWorldTaskSource, type TaskItem, type TaskSource } from '@agentflow/eval';
import { createAgent, createRolloutSampler, demonstrationSamples } from '@agentflow/flow';
import { createPolicyModel } from '@agentflow/llm';
import { cloneLoraAdapter, type LoraAdapter, openFullPolicy, openLoraPolicy, runSupervisedWarmStart } from '@agentflow/models';
import { createCompactPromptTemplate } from '@agentflow/planner';

/** The world's random planner at half the embedded default's width (transformers' initialisation). */
const shape = { hiddenSize: 64, layers: 2, heads: 4, keyValueHeads: 2, intermediateSize: 128, ropeTheta: 10000, bpeMerges: 300 };

/** The task source; the warm start's samples and epochs; DAPO's steps and every rollout it sampled; DAPO's adapter before and after it trained. */
export interface DapoWorldResult {
  source: TaskSource;
  samples: number;
  epochs: number;
  steps: number;
  trajectories: Trajectory[];
  warm: LoraAdapter;
  trained: LoraAdapter;
}

/** A full warm start on the embedded world's imperfect teacher, then two DAPO steps of a LoRA with outcome credit; files go under `dir`. */
export async function trainOnWorld(dir: string, log: (line: string) => void = () => {}): Promise<DapoWorldResult> {
  // Numbers up to 3: even a briefly taught planner answers some tasks, so groups have mixed rewards.
  const world = createTaskWorld({ seed: 7, entities: 8, trainTasks: 48, testTasks: 4, levels: [1, 2], maxValue: 3 });
  const source = createWorldTaskSource(world, { teacher: { errorRate: 0.4, mistakes: ['lookup'], seed: 1 } });
  const tools = source.createTools({ pythonSlots: 2 });
  const template = createCompactPromptTemplate({ maxPromptChars: 480, maxOutputChars: 120 });
  const agentOf = (model: LanguageModel) => createAgent({ model, tools: tools.tools, template, actionSchemaStyle: 'tied', maxRepairs: 0, maxSteps: 4 });
  const [modelDir, warmDir] = [join(dir, 'planner'), join(dir, 'planner-warm')];
  // The warm start trains every weight of the random planner (LoRA cannot reach its embeddings,
  // norms or tied head); each epoch's checkpoint is a whole Hugging Face folder.
  const openWarm = (seed: number) => openFullPolicy({ modelDir, seed, checkpoint: warmDir, device: 'cpu' });
  try {
    // The teacher's demonstrations replayed through the agent: every prompt as the planner will see it.
    const samples = await demonstrationSamples(source.split('train'), source, agentOf);
    // Checkpointed every epoch (a rerun resumes); `check` would test the result on held-back tasks.
    const warm = await runSupervisedWarmStart({
      samples,
      epochs: 8,
      batchSize: 16,
      learningRate: 0.01,
      warmupSteps: 2,
      schedule: 'cosine',
      seed: 1,
      check: null,
      checkpointDir: warmDir,
      progressPath: join(dir, 'warm-start.json'),
      // A random planner drawn with the seed, its tokenizer learned from the samples.
      prepare: (seed) => createWorldPlannerFolder(modelDir, samples, shape, seed),
      openPolicy: openWarm,
    });
    log(`warm start: ${samples.length} samples, ${warm.losses.length} epochs`);
    // DAPO trains a fresh LoRA on the warm planner, as it would on a pretrained model.
    const { policy, tokenizer } = await openLoraPolicy({ modelDir: warmDir, lora: { rank: 16, alpha: 32 }, seed: 1, device: 'cpu', objectives: [clippedSurrogateObjective] });
    const before = cloneLoraAdapter(policy.adapter);
    const sample = createRolloutSampler({ run: agentOf(createPolicyModel({ policy, tokenizer, maxTokens: 40, temperature: 1, maxBatchSize: 16 })).run });
    const trajectories: Trajectory[] = [];
    const trainer = createDapoTrainer<TaskItem>({
      // The outcome broadcast to every step (no PRM); a group whose four rewards agree is replaced by a new one.
      config: { groupSize: 4, promptsPerBatch: 2, promptsPerMiniBatch: 2, learningRate: 0.002, warmupSteps: 0, totalSteps: 2, credit: { kind: 'outcome' }, dynamicSampling: { kind: 'refill', maxRounds: 16 } },
      policy,
      prompts: source.split('train'),
      sampleRollouts: async (prompt, count, random) => {
        const group = await sample(prompt, count, random);
        trajectories.push(...group);
        return group;
      },
      scoreOutcome: createOutcomeScorer(source),
      random: createRandom(1).fork('dapo'),
      onMetrics: (metrics) => log(`DAPO step ${metrics.step} done`),
    });
    await trainer.run();
    await policy.release();
    return { source, samples: samples.length, epochs: warm.losses.length, steps: trainer.step, trajectories, warm: before, trained: policy.adapter };
  } finally {
    await tools.dispose();
  }
}
