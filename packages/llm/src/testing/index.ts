/**
 * @agentflow/llm/testing: servers on 127.0.0.1 that speak the back ends' wire formats, for
 * tests of code that talks to Ollama, an OpenAI-compatible API or vLLM through this package.
 * The vLLM stand-in samples with `@agentflow/models` and `@agentflow/tensor` (optional peers,
 * loaded on its first request); the chat servers need nothing more.
 */
export {
  type ChatRequestBody,
  type LoopbackChatServer,
  startHeldOllamaServer,
  startOllamaServer,
  startOpenAiCompatibleServer,
} from './loopback-model-servers';
export { type StandInEvent, startVllmStandIn, type VllmStandIn, type VllmStandInSettings } from './vllm-stand-in';
