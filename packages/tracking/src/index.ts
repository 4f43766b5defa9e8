/**
 * Experiment trackers for AgentFlow runs, each optional and off the training path: TensorBoard
 * event files written by this package (TFRecord framing, `Event` protobufs) and MLflow over its
 * REST API. `trackRunDirectory` attaches the trackers a config's `tracking` block asks for to a
 * core run directory: every `metrics.jsonl` row as scalars at its step, the config as params,
 * the summary and `report.html` at the end.
 */
export { type RunTracking, trackRunDirectory, type TrackRunDirectorySettings } from './track-run-directory';
export { type TrackingSettings, trackingSettingsSchema } from './tracking-settings';
export {
  flattenParams,
  metricsRowScalars,
  type ParamValue,
  type Scalar,
  summaryScalars,
  type TrackedRunStatus,
  type Tracker,
} from './tracker';
export { createTensorBoardTracker, type TensorBoardTrackerSettings } from './tensorboard/tensorboard-tracker';
export { EVENT_FILE_VERSION, fileVersionEvent, hparamsEndEvent, hparamsStartEvent, scalarsEvent, tfRecord } from './tensorboard/event-file';
export { crc32c, maskedCrc32c } from './tensorboard/crc32c';
export { createMlflowTracker, MLFLOW_BATCH_LIMITS, type MlflowTrackerSettings, mlflowKey, proxiedArtifactPath } from './mlflow/mlflow-tracker';
export { type MlflowRestSettings, mlflowRequest } from './mlflow/mlflow-rest';
