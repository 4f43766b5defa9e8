/**
 * @agentflow/dapo/testing: a real, tiny `TrainablePolicy` in plain TypeScript (a table of
 * logits per prompt, exact gradients, Adam), for tests and examples of the DAPO loop that need
 * no model and no tensor engine.
 */
export { createTabularPolicy, type TabularPolicy, type TabularPolicySettings } from './tabular-policy';
