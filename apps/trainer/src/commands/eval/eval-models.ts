import type { BenchmarkEvalModels, BenchmarkEvalSettings } from '@agentflow/eval';
import { createChatModelFromSpec, parseChatModelSpec } from '@agentflow/llm';
import { createPlannerModel } from '../solve/cli-models';
import type { EvalConnection } from './eval-settings';

/**
 * The models an eval's settings name, as `agentflow solve` opens them: `planner` (HTTP, or a
 * local folder loaded now), `fixedModules` and `judge`, the HTTP ones first, so a missing API
 * key fails before a local planner is loaded.
 */
export async function openEvalModels(settings: BenchmarkEvalSettings, connection: EvalConnection): Promise<BenchmarkEvalModels> {
  const fixedModules = settings.fixedModules ? createChatModelFromSpec(parseChatModelSpec('--fixed-modules', settings.fixedModules), connection) : undefined;
  const judge = settings.judge ? createChatModelFromSpec(parseChatModelSpec('--judge', settings.judge), connection) : undefined;
  const planner = await createPlannerModel(settings.planner, connection);
  return {
    planner: planner.model,
    actionSchemaStyle: planner.actionSchemaStyle,
    ...(fixedModules ? { fixedModules } : {}),
    ...(judge ? { judge } : {}),
    release: () => planner.release(),
  };
}
