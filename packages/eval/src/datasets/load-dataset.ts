import { AgentFlowError, assertNever } from '@agentflow/core';
import { type AgentFlowBenchmarkName, loadAgentFlowBenchmark } from './agentflow-benchmarks';
import type { BenchmarkItem } from './benchmark-item';
import type { DuplicateIdPolicy, FieldMapping } from './field-mapping';
import { loadAgentFlowJson, loadCsvBenchmark, loadJsonlBenchmark } from './load-benchmark';
import type { DatasetReadLimits } from './read-dataset-file';
import { selectItems } from './select-items';

/** A dataset as a run config names it (the trainer's `task.train` / `task.test`). */
export interface DatasetSource {
  path: string;
  format: 'agentflow-json' | 'aime-csv' | 'jsonl';
  /** Inclusive year range, e.g. `[1983, 2023]`. */
  years?: readonly [number, number];
  /** Keep the first N items after filtering. */
  limit?: number;
  /** Field names, when the file's differ from the format's defaults. */
  fields?: FieldMapping;
  /** What the file is checked against before it is parsed (size, JSONL line length, nesting); defaults in `datasetReadLimitsSchema`. */
  limits?: DatasetReadLimits;
  /** One of AgentFlow's ten benchmarks (format `agentflow-json`): read as `loadAgentFlowBenchmark` reads it, its own fields and id rule. */
  benchmark?: AgentFlowBenchmarkName;
  /** What a repeated id does (default `refuse`); a benchmark brings its own. */
  duplicateIds?: DuplicateIdPolicy;
}

/** Loads (checked as `readDatasetText` and the loaders check), filters by year and truncates a dataset named in a config. */
export function loadDataset(source: DatasetSource): BenchmarkItem[] {
  let items: BenchmarkItem[];
  if (source.benchmark !== undefined && (source.format !== 'agentflow-json' || source.fields !== undefined || source.duplicateIds !== undefined)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${source.path}: the benchmark ${source.benchmark} is read with its own format (agentflow-json), fields and id rule; leave format ${source.format}${source.fields ? ', fields' : ''}${source.duplicateIds ? ', duplicateIds' : ''} out, or the benchmark.`,
      details: { path: source.path, benchmark: source.benchmark },
    });
  }
  switch (source.format) {
    case 'agentflow-json':
      items =
        source.benchmark === undefined
          ? loadAgentFlowJson(source.path, source.fields, source.limits, source.duplicateIds)
          : loadAgentFlowBenchmark(source.path, source.benchmark, source.limits);
      break;
    case 'aime-csv':
      items = loadCsvBenchmark(source.path, source.fields, source.limits, source.duplicateIds);
      break;
    case 'jsonl':
      items = loadJsonlBenchmark(source.path, source.fields, source.limits, source.duplicateIds);
      break;
    default:
      return assertNever(source.format, 'dataset format');
  }
  if (source.years) items = selectItems(items, { years: { from: source.years[0], to: source.years[1] } });
  return source.limit === undefined ? items : items.slice(0, source.limit);
}
