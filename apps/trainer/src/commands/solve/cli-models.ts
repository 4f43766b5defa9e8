// The planner that `agentflow solve` and `agentflow eval` name on the command line (`--planner`).
import { assertNever } from '@agentflow/core';
import { type ChatModelConnection, createChatModelFromSpec, parsePlannerSpec } from '@agentflow/llm';
import { createLocalPlannerModel, type LocalPlannerModel } from './local-planner';

/**
 * The planner of `--planner`: an HTTP model, or the local ONNX policy of a model folder
 * (loaded lazily, released at the end). `flat` actions for HTTP servers, whose JSON-schema
 * support stops short of a root union; `tied` for the local grammar.
 */
export async function createPlannerModel(planner: string, connection: ChatModelConnection): Promise<LocalPlannerModel & { actionSchemaStyle: 'flat' | 'tied' }> {
  const spec = parsePlannerSpec(planner);
  switch (spec.kind) {
    case 'ollama':
    case 'openai':
      return { model: createChatModelFromSpec(spec, connection), release: async () => {}, actionSchemaStyle: 'flat' };
    case 'local':
      return { ...(await createLocalPlannerModel(spec.dir)), actionSchemaStyle: 'tied' };
    default:
      return assertNever(spec, 'planner kind');
  }
}
