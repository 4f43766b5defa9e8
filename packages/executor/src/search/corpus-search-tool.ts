import { existsSync, readFileSync } from 'node:fs';
import { AgentFlowError, type Tool, type ToolResult, describeValue, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';
import { type Bm25Settings, createBm25Index } from './bm25-index';
import { searchInputSchema, type SearchInput } from './search-input';

/** One document of a local corpus. */
export const corpusDocumentSchema = z.object({
  id: z.union([z.string(), z.number()]).transform(String).describe('Stable id, shown with each hit.'),
  title: z.string().default('').describe('Title; searched together with the text.'),
  text: z.string().describe('Body text.'),
});
export type CorpusDocument = z.output<typeof corpusDocumentSchema>;

export interface CorpusSearchToolSettings extends Bm25Settings {
  /** A JSONL file with one `{id, title, text}` per line. */
  path?: string;
  /** Or the documents themselves. */
  documents?: ReadonlyArray<z.input<typeof corpusDocumentSchema>>;
  /** Tool name; default `corpus_search`. */
  name?: string;
  /** Hits returned when the input gives no `k`. Default 3. */
  defaultK?: number;
  /** Characters of each hit's text shown. Default 600. */
  maxTextChars?: number;
  /**
   * How each hit starts: `full` (default) `[rank] title (id ..., score ...)` on its own line;
   * `title` just `title: text` on one line, for small planners that would otherwise read the
   * rank, id and score as numbers to copy.
   */
  hitHeader?: 'full' | 'title';
}

/** Reads a JSONL corpus; every bad line is reported with its number (a last line without newline counts). */
export function loadCorpus(path: string): CorpusDocument[] {
  if (!existsSync(path)) {
    throw new AgentFlowError({ code: 'NOT_FOUND', message: `Corpus file not found: ${path}`, details: { path } });
  }
  const documents: CorpusDocument[] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, index) => {
      if (line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (cause) {
        throw new AgentFlowError({ code: 'PARSE_ERROR', message: `${path}:${index + 1}: not valid JSON (${(cause as Error).message}).`, cause });
      }
      const parsed = corpusDocumentSchema.safeParse(value);
      if (!parsed.success) {
        throw new AgentFlowError({
          code: 'SCHEMA_VALIDATION',
          message: `${path}:${index + 1}: expected {id, title, text}: ${formatZodIssues(parsed.error).join('; ')}, found ${describeValue(value)}`,
          cause: parsed.error,
        });
      }
      documents.push(parsed.data);
    });
  return documents;
}

/** Creates `corpus_search`: offline BM25 over a local corpus, top k with scores. */
export function createCorpusSearchTool(settings: CorpusSearchToolSettings): Tool<SearchInput> {
  if ((settings.path === undefined) === (settings.documents === undefined)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: 'createCorpusSearchTool needs exactly one of `path` (a JSONL file) or `documents` (an array).',
    });
  }
  const documents = settings.path !== undefined ? loadCorpus(settings.path) : parseDocuments(settings.documents ?? []);
  const index = createBm25Index(
    documents.map((document) => `${document.title}\n${document.text}`),
    settings,
  );
  const maxTextChars = settings.maxTextChars ?? 600;
  const hitHeader = settings.hitHeader ?? 'full';
  if (hitHeader !== 'full' && hitHeader !== 'title') {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `hitHeader must be 'full' or 'title', got ${describeValue(hitHeader)}.` });
  }
  return {
    name: settings.name ?? 'corpus_search',
    description: `Searches a local corpus of ${documents.length} documents by keywords (BM25) and returns the best matches with their text.`,
    inputSchema: searchInputSchema,
    async execute(input): Promise<ToolResult> {
      const started = performance.now();
      const hits = index.search(input.query, input.k ?? settings.defaultK ?? 3);
      const output =
        hits.length === 0
          ? `No document matches ${JSON.stringify(input.query)}.`
          : hits
              .map(({ index: position, score }, rank) => {
                const document = documents[position]!;
                const text = document.text.length > maxTextChars ? `${document.text.slice(0, maxTextChars)}...` : document.text;
                if (hitHeader === 'title') return `${document.title}: ${text.replace(/\s*\n\s*/g, ' ')}`;
                return `[${rank + 1}] ${document.title} (id ${document.id}, score ${score.toFixed(3)})\n${text}`;
              })
              .join(hitHeader === 'title' ? '\n' : '\n\n');
      return { output, truncated: false, durationMs: performance.now() - started };
    },
  };
}

function parseDocuments(documents: ReadonlyArray<unknown>): CorpusDocument[] {
  return documents.map((document, index) => {
    const parsed = corpusDocumentSchema.safeParse(document);
    if (!parsed.success) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `documents[${index}]: expected {id, title, text}: ${formatZodIssues(parsed.error).join('; ')}, found ${describeValue(document)}`,
      });
    }
    return parsed.data;
  });
}
