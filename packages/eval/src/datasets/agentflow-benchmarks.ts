import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { AgentFlowError, describeValue } from '@agentflow/core';
import type { AgentFlowJudgeMode } from '../answers/agentflow-judge';
import type { BenchmarkCheckerName } from '../answers/benchmark-checker';
import { choiceIndexOf, letteredOptions } from '../answers/choice-options';
import type { BenchmarkItem } from './benchmark-item';
import type { DuplicateIdPolicy, FieldMapping } from './field-mapping';
import { loadAgentFlowJson } from './load-benchmark';
import type { DatasetReadLimits } from './read-dataset-file';

/** The ten benchmarks of AgentFlow's paper (Li et al. 2025), by the names of their folders in lupantech/AgentFlow's `test/`. */
export const AGENTFLOW_BENCHMARK_NAMES = ['aime24', 'amc23', 'gameof24', 'bamboogle', '2wiki', 'hotpotqa', 'musique', 'gaia', 'gpqa', 'medqa'] as const;
export type AgentFlowBenchmarkName = (typeof AGENTFLOW_BENCHMARK_NAMES)[number];

/** A tool of `@agentflow/executor` that a benchmark's questions call for. */
export type BenchmarkTool = 'python' | 'web_search' | 'wikipedia';

/** One benchmark: where its file comes from, how it is read and checked, and what solving it takes. */
export interface AgentFlowBenchmark {
  name: AgentFlowBenchmarkName;
  /** The paper's group of results: search, agentic, math or science. */
  domain: 'search' | 'agentic' | 'math' | 'science';
  /** The file's name in a datasets folder (`--data NAME` looks for it there). */
  file: string;
  /** Where lupantech/AgentFlow (MIT) publishes it. */
  source: string;
  /** Its records' field names. */
  fields: FieldMapping;
  /** The rule checker (`checkBenchmarkAnswer`). */
  checker: BenchmarkCheckerName;
  /** How the paper's judge asks (`createAgentFlowJudge`): two stages for multiple choice, as `calculate_score_unified.py`. */
  judge: AgentFlowJudgeMode;
  /** The tools its questions call for (the paper enabled python, Google search, Wikipedia search and a base generator for all ten). */
  tools: readonly BenchmarkTool[];
  /** What the loader does with a repeated id. */
  duplicateIds: DuplicateIdPolicy;
  /** The items the paper's run evaluates: the first N (`INDICES` of `test/<name>/run.sh`); `--limit N` repeats it. */
  paperItems: number;
}

const WITH_QUESTION: FieldMapping = { id: 'pid', question: 'question', answer: 'answer', prompt: 'query' };
/** 2wiki and musique have no `question`: the query is the question. */
const QUERY_ONLY: FieldMapping = { id: 'pid', question: 'query', answer: 'answer' };
const SEARCH: readonly BenchmarkTool[] = ['web_search', 'wikipedia'];

const benchmark = (
  name: AgentFlowBenchmarkName,
  rest: Omit<AgentFlowBenchmark, 'name' | 'file' | 'source' | 'duplicateIds' | 'judge'> & Partial<Pick<AgentFlowBenchmark, 'duplicateIds' | 'judge'>>,
): AgentFlowBenchmark => ({ name, file: `${name}.json`, source: `test/${name}/data/data.json`, duplicateIds: 'refuse', judge: 'direct', ...rest });

/** The ten, by name. */
export const AGENTFLOW_BENCHMARKS: Readonly<Record<AgentFlowBenchmarkName, AgentFlowBenchmark>> = {
  aime24: benchmark('aime24', { domain: 'math', fields: WITH_QUESTION, checker: 'math', tools: ['python'], paperItems: 30 }),
  amc23: benchmark('amc23', { domain: 'math', fields: WITH_QUESTION, checker: 'math', tools: ['python'], paperItems: 40 }),
  gameof24: benchmark('gameof24', { domain: 'math', fields: WITH_QUESTION, checker: 'game_of_24', tools: ['python'], paperItems: 100 }),
  bamboogle: benchmark('bamboogle', { domain: 'search', fields: WITH_QUESTION, checker: 'exact_match_f1', tools: SEARCH, paperItems: 125 }),
  '2wiki': benchmark('2wiki', { domain: 'search', fields: QUERY_ONLY, checker: 'exact_match_f1', tools: SEARCH, paperItems: 100 }),
  hotpotqa: benchmark('hotpotqa', { domain: 'search', fields: WITH_QUESTION, checker: 'exact_match_f1', tools: SEARCH, paperItems: 100 }),
  musique: benchmark('musique', { domain: 'search', fields: QUERY_ONLY, checker: 'exact_match_f1', tools: SEARCH, paperItems: 100 }),
  gaia: benchmark('gaia', { domain: 'agentic', fields: WITH_QUESTION, checker: 'quasi_exact_match', tools: [...SEARCH, 'python'], paperItems: 127 }),
  gpqa: benchmark('gpqa', {
    domain: 'science',
    fields: { ...WITH_QUESTION, choices: 'choices' },
    checker: 'choice_letter',
    judge: 'extract-then-verify',
    tools: ['python', ...SEARCH],
    paperItems: 100,
  }),
  medqa: benchmark('medqa', {
    domain: 'science',
    fields: { ...WITH_QUESTION, choices: 'options' },
    checker: 'choice_letter',
    judge: 'extract-then-verify',
    tools: SEARCH,
    duplicateIds: 'by-position',
    paperItems: 100,
  }),
};

/** True for one of the ten names (`bamboogle`, `2wiki`...). */
export function isAgentFlowBenchmarkName(text: string): text is AgentFlowBenchmarkName {
  return (AGENTFLOW_BENCHMARK_NAMES as readonly string[]).includes(text);
}

/**
 * The benchmark a file is by its path: `NAME.json` (a datasets folder) or `NAME/data/data.json`
 * (AgentFlow's `test/` tree); null for any other file.
 */
export function benchmarkOfPath(path: string): AgentFlowBenchmarkName | null {
  const file = basename(path);
  const byFile = file.endsWith('.json') ? file.slice(0, -'.json'.length) : '';
  if (isAgentFlowBenchmarkName(byFile)) return byFile;
  const folder = basename(dirname(dirname(path)));
  return file === 'data.json' && basename(dirname(path)) === 'data' && isAgentFlowBenchmarkName(folder) ? folder : null;
}

/** The environment variable naming the folder of the benchmark files, when `datasetsDir` is not given. */
export const DATASETS_DIR_ENV = 'AGENTFLOW_DATASETS';

export interface BenchmarkDataSettings {
  /** The folder of the benchmark files (`bamboogle.json`...); default `$AGENTFLOW_DATASETS`, else `datasets` in `cwd`. */
  datasetsDir?: string;
  /** Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Default `process.cwd()`. */
  cwd?: string;
}

/**
 * What `--data` names: one of the ten names (`bamboogle`) is that benchmark's file in the
 * datasets folder (`datasetsDir`, else `$AGENTFLOW_DATASETS`, else `./datasets`), refused with
 * NOT_FOUND when it is not there; anything else is a path (made absolute), a benchmark when its
 * name says so (`benchmarkOfPath`).
 */
export function resolveBenchmarkData(text: string, settings: BenchmarkDataSettings = {}): { path: string; benchmark: AgentFlowBenchmarkName | null } {
  const cwd = settings.cwd ?? process.cwd();
  if (!isAgentFlowBenchmarkName(text)) {
    const path = resolve(cwd, text);
    return { path, benchmark: benchmarkOfPath(path) };
  }
  const env = settings.env ?? process.env;
  const folder = resolve(cwd, settings.datasetsDir ?? env[DATASETS_DIR_ENV] ?? 'datasets');
  const entry = AGENTFLOW_BENCHMARKS[text];
  const path = join(folder, entry.file);
  if (!existsSync(path)) {
    const from = settings.datasetsDir !== undefined ? 'the datasets folder given' : env[DATASETS_DIR_ENV] !== undefined ? `$${DATASETS_DIR_ENV}` : `./datasets, the default when neither a datasets folder nor $${DATASETS_DIR_ENV} is given`;
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `${text} names an AgentFlow benchmark, but ${path} is missing (${from}). Put lupantech/AgentFlow's ${entry.source} there as ${entry.file}, point --datasets-dir or $${DATASETS_DIR_ENV} at the folder that holds it, or give the file's path.`,
      details: { benchmark: text, path },
    });
  }
  return { path, benchmark: text };
}

function invalidItem(path: string, item: BenchmarkItem, problem: string): AgentFlowError {
  return new AgentFlowError({ code: 'SCHEMA_VALIDATION', message: `${path} item ${describeValue(item.id)}: ${problem}`, details: { source: path, id: item.id } });
}

/**
 * Reads a benchmark's file as that benchmark (checked as `readDatasetText` checks any file):
 * its fields, its id rule (medqa's repeated pids made unique by position), multiple-choice
 * options with their letters split off and the right one resolved (`answerIndex`; an answer that
 * names no option, or several, is refused), and for GAIA its text items only (an item whose
 * `file_name` names an attachment is left out: the file does not hold it).
 */
export function loadAgentFlowBenchmark(path: string, name: AgentFlowBenchmarkName, limits?: DatasetReadLimits): BenchmarkItem[] {
  const entry = AGENTFLOW_BENCHMARKS[name];
  const items = loadAgentFlowJson(path, entry.fields, limits, entry.duplicateIds);
  if (name === 'gaia') return items.filter((item) => typeof item.metadata.file_name !== 'string' || item.metadata.file_name.trim() === '');
  if (entry.checker !== 'choice_letter') return items;
  return items.map((item) => {
    const listed = (item.choices ?? []).map((choice) => choice.trim());
    if (listed.length < 2) throw invalidItem(path, item, `a multiple-choice item needs at least two options in "${entry.fields.choices}", got ${listed.length}.`);
    const answerIndex = choiceIndexOf(item.answer, listed);
    if (answerIndex === undefined) throw invalidItem(path, item, `the answer ${describeValue(item.answer)} names none (or several) of the options ${describeValue(listed)}.`);
    return { ...item, choices: letteredOptions(listed).map((option) => option.text), answerIndex };
  });
}
