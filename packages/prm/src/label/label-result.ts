import type { PrmExample } from '../example/prm-example';

/** A step that could not be labelled, and why. */
export interface LabelFailure {
  stepId: string;
  error: string;
}

/** What a labeller returns: the labelled steps in input order (failed ones left out) and the failures. */
export interface LabelResult {
  examples: PrmExample[];
  failures: LabelFailure[];
}
