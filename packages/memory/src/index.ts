export * from './in-task/index';

/** Opens the embedded cross-task memory on one SQLite file (WAL, FTS5 BM25, sqlite-vec, RRF). */
export { createSqliteMemoryStore } from './cross-task/sqlite/sqlite-memory-store';
/** Settings of {@link createSqliteMemoryStore}, as a zod schema and as the type users write. */
export { sqliteMemoryStoreSettingsSchema, type SqliteMemoryStoreSettings } from './cross-task/sqlite/sqlite-settings';
/** Opens the cross-task memory on a Qdrant server, behind the same interface. */
export { createQdrantMemoryStore } from './cross-task/qdrant/qdrant-memory-store';
/** Settings of {@link createQdrantMemoryStore}, as a zod schema and as the type users write. */
export { qdrantMemoryStoreSettingsSchema, type QdrantMemoryStoreSettings } from './cross-task/qdrant/qdrant-settings';
/** Reciprocal rank fusion (Cormack et al. 2009) and its default constant k = 60. */
export {
  reciprocalRankFusion,
  RECIPROCAL_RANK_FUSION_K,
  type FusedItem,
} from './cross-task/reciprocal-rank-fusion';
/** Validation of records and queries at a store's edge, for other MemoryStore implementations. */
export { memoryRecordSchema, parseMemoryQuery, parseMemoryRecords } from './cross-task/memory-record-schema';
/** The embedder interface and helpers to check and batch what a back end returns. */
export { checkEmbeddings, embedInBatches, normalizeVector, type Embedder } from './embedders/embedder';
/** An embedder around an injected function (the local Qwen3 model), and mean pooling. */
export {
  createFunctionEmbedder,
  meanPoolHiddenStates,
  type FunctionEmbedderSettings,
} from './embedders/function-embedder';
/** An embedder on an OpenAI-compatible `/embeddings` endpoint. */
export { createOpenAiEmbedder, type OpenAiEmbedderSettings } from './embedders/openai-embedder';
/** An embedder on @huggingface/transformers feature extraction from a local folder. */
export {
  createTransformersEmbedder,
  type TransformersEmbedderSettings,
  type TransformersModule,
} from './embedders/transformers-embedder';
/** The planner's retrieval of solved tasks as examples, and its config schema. */
export {
  createExampleRetriever,
  exampleRetrievalConfigSchema,
  type ExampleRetrievalConfig,
  type ExampleRetriever,
  type ExampleRetrieverSettings,
} from './retrieval/example-retriever';
/** Renders retrieved examples for a prompt within a character budget. */
export { renderExamples } from './retrieval/render-examples';
