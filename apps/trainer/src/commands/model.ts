import { completionNllGradients, readCompletionFile, scoreCompletions, writeLoraAdapterFolder, writeRandomModelFolder } from '@agentflow/models';
import type { RegisterCommand } from './command-context';
import { parseChoice, parseInteger, parseNumber } from './option-values';

/**
 * `agentflow model init | init-adapter | logprobs | grad`: create Qwen3-architecture models and
 * adapters, and print log-probs and LoRA gradients for comparison with other frameworks. The
 * work is @agentflow/models' (writeRandomModelFolder, writeLoraAdapterFolder, scoreCompletions,
 * completionNllGradients); this file parses the options and prints.
 */
export const registerModelCommand: RegisterCommand = (program, context) => {
  const model = program.command('model').description('Create, inspect and check Qwen3-architecture models (init, logprobs, grad).');

  model
    .command('init')
    .description('Write a random model folder (config.json, model.safetensors, tokenizer files).')
    .option('--preset <name>', 'tiny, qwen3-0.6b-shape or tiny-qwen3-vocab', 'tiny')
    .requiredOption('--out <dir>', 'new folder to write')
    .option('--seed <n>', 'random seed', '0')
    .option('--dtype <dtype>', 'weight type: float32, bfloat16 (as Qwen3 checkpoints) or float16', 'float32')
    .option('--tokenizer <dir>', 'copy tokenizer.json, tokenizer_config.json (and vocab.json, merges.txt, ... when present) from this folder; the EOS id follows its eos_token')
    .option('--vocab-size <n>', "embedding rows (default the preset's); at least the tokenizer's id count")
    .action(async (options: { preset: string; out: string; seed: string; dtype: string; tokenizer?: string; vocabSize?: string }) => {
      const written = await writeRandomModelFolder({
        preset: options.preset,
        outDir: options.out,
        seed: parseInteger('--seed', options.seed, 0),
        dtype: parseChoice('--dtype', options.dtype, ['float32', 'bfloat16', 'float16']),
        ...(options.tokenizer === undefined ? {} : { tokenizerDir: options.tokenizer }),
        ...(options.vocabSize === undefined ? {} : { vocabSize: parseInteger('--vocab-size', options.vocabSize, 1) }),
        wording: { outDir: '--out', vocabSize: '--vocab-size' },
      });
      const tokenizer = options.tokenizer === undefined ? 'byte-level tokenizer' : `tokenizer copied from ${options.tokenizer}`;
      context.stdout(
        `wrote ${options.preset} model (${written.parameters} parameters, vocabulary ${written.config.vocabSize}, ${options.dtype}, ${tokenizer}) to ${options.out}\n`,
      );
    });

  model
    .command('init-adapter')
    .description('Write a PEFT LoRA adapter for a model folder (B = 0 unless --b-std is set).')
    .requiredOption('--model <dir>', 'model folder')
    .requiredOption('--out <dir>', 'adapter folder to write')
    .option('--rank <r>', 'LoRA rank', '8')
    .option('--alpha <a>', 'LoRA alpha', '16')
    .option('--targets <modules>', 'comma-separated target modules', 'q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj')
    .option('--seed <n>', 'random seed', '0')
    .option('--b-std <x>', 'std of random B values (0 keeps PEFT initialisation)', '0')
    .action(async (options: { model: string; out: string; rank: string; alpha: string; targets: string; seed: string; bStd: string }) => {
      const rank = parseInteger('--rank', options.rank, 1);
      const targetModules = options.targets.split(',').map((name) => name.trim());
      const adapter = await writeLoraAdapterFolder({
        modelDir: options.model,
        outDir: options.out,
        rank,
        alpha: parseNumber('--alpha', options.alpha),
        targetModules,
        seed: parseInteger('--seed', options.seed, 0),
        bStd: parseNumber('--b-std', options.bStd),
        wording: { targetModules: '--targets' },
      });
      context.stdout(`wrote a rank-${rank} adapter on ${targetModules.join(', ')} (${adapter.matrices.size} modules) to ${options.out}\n`);
    });

  model
    .command('logprobs')
    .description('Print {"logprobs": [[...]]}: log-probs of each completion token given its prompt.')
    .requiredOption('--model <dir>', 'model folder')
    .option('--adapter <dir>', 'PEFT LoRA adapter folder')
    .requiredOption('--input <file>', 'JSON {"prompt_ids": [[...]], "completion_ids": [[...]]}')
    .option('--entropy', 'also print per-token entropies')
    .option('--device <device>', 'auto, cuda or cpu', 'auto')
    .option('--dtype <dtype>', 'base weights in memory: float32, float16, bfloat16 (CUDA) or auto (policy.dtype)', 'float32')
    .action(async (options: { model: string; adapter?: string; input: string; entropy?: boolean; device: string; dtype: string }) => {
      const scores = await scoreCompletions({
        modelDir: options.model,
        dtype: parseChoice('--dtype', options.dtype, ['auto', 'float32', 'float16', 'bfloat16']),
        ...(options.adapter ? { adapterDir: options.adapter } : {}),
        device: parseChoice('--device', options.device, ['auto', 'cuda', 'cpu']),
        batch: readCompletionFile(options.input),
        entropy: options.entropy === true,
      });
      context.stdout(`${JSON.stringify(options.entropy ? scores : { logprobs: scores.logprobs })}\n`);
    });

  model
    .command('grad')
    .description('Print {"loss", "grads"}: mean NLL over all completion tokens and its LoRA gradients by PEFT key.')
    .requiredOption('--model <dir>', 'model folder')
    .requiredOption('--adapter <dir>', 'PEFT LoRA adapter folder')
    .requiredOption('--input <file>', 'JSON {"prompt_ids": [[...]], "completion_ids": [[...]]}')
    .option('--device <device>', 'auto, cuda or cpu', 'auto')
    .action(async (options: { model: string; adapter: string; input: string; device: string }) => {
      const { loss, gradients } = await completionNllGradients({
        modelDir: options.model,
        adapterDir: options.adapter,
        device: parseChoice('--device', options.device, ['auto', 'cuda', 'cpu']),
        batch: readCompletionFile(options.input),
        batchName: `--input ${options.input}`,
      });
      const grads = Object.fromEntries([...gradients].map(([key, gradient]) => [key, Array.from(gradient)]));
      context.stdout(`${JSON.stringify({ loss, grads })}\n`);
    });
};
