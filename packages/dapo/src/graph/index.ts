/**
 * @agentflow/dapo/graph: DAPO's clipped surrogate as ONNX graph nodes on @agentflow/tensor,
 * for policies that train in ONNX Runtime (the local Qwen3 policy of @agentflow/models).
 * Needs the optional peer `@agentflow/tensor` (its types; the graph builder is the caller's).
 */
export {
  addClippedSurrogate,
  clippedSurrogateObjective,
  clippedSurrogateTerms,
  type ClippedSurrogateObjectiveGraph,
  type ClippedSurrogateObjectiveOutputs,
  type ClippedSurrogatePolicyObjective,
  type ObjectiveGraphTensors,
  type SurrogateGraph,
  type SurrogateGraphSettings,
  type SurrogateGraphTerms,
  type SurrogateTensors,
} from './clipped-surrogate-graph';
