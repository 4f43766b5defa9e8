/**
 * Test helpers of `@agentflow/tracking`: an MLflow tracking server on loopback that speaks the
 * REST API the tracker uses (or answers 500, or hangs), and a TensorBoard event-file reader
 * written apart from the writer (its own CRC-32C and protobuf parsing), so tests read back the format.
 */
export { type LoopbackMlflowMode, type LoopbackMlflowRun, type LoopbackMlflowServer, startLoopbackMlflowServer } from './loopback-mlflow-server';
export { type DecodedEvent, decodeEvent, decodeSessionStartHparams, readEventFiles, readScalars, readTfRecords } from './read-event-files';
