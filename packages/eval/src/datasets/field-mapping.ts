import { AgentFlowError, describeValue } from '@agentflow/core';
import { z } from 'zod';
import { type BenchmarkItem, stripAnswerInstruction, yearFromId } from './benchmark-item';
import { readList, readText } from './value-lists';

/** Which field of a record holds what. Names are the file's own keys. */
export const fieldMappingSchema = z
  .object({
    id: z.string().min(1).default('id').describe('Field holding the item id (AgentFlow JSON uses "pid").'),
    question: z.string().min(1).default('question').describe('Field holding the problem text (the AIME CSV uses "problem").'),
    answer: z.string().min(1).default('answer').describe('Field holding the reference answer, or a list of accepted answers.'),
    prompt: z.string().min(1).optional().describe('Field holding the full prompt for the agent (AgentFlow JSON uses "query").'),
    choices: z.string().min(1).optional().describe('Field holding the answer options of a multiple-choice item.'),
    year: z.string().min(1).optional().describe('Field holding the year; without it the year is read from a leading "YYYY_" in the id.'),
  })
  .strict();

export type FieldMapping = z.input<typeof fieldMappingSchema>;

/** Turns one record into a BenchmarkItem following `mapping`; errors name the source and record. */
export function mapRecord(
  record: unknown,
  mapping: z.output<typeof fieldMappingSchema>,
  source: string,
  position: number,
): BenchmarkItem {
  const where = `${source} item ${position + 1}`;
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new AgentFlowError({
      code: 'SCHEMA_VALIDATION',
      message: `${where}: expected an object, got ${describeValue(record)}.`,
      details: { source, position },
    });
  }
  const fields = record as Record<string, unknown>;
  const required = (name: string): unknown => {
    if (!(name in fields) || fields[name] === null || fields[name] === undefined) {
      throw new AgentFlowError({
        code: 'SCHEMA_VALIDATION',
        message: `${where}: field "${name}" is missing (fields present: ${Object.keys(fields).join(', ')}). Map another field with the field mapping.`,
        details: { source, position, field: name },
      });
    }
    return fields[name];
  };
  const id = readText(required(mapping.id), `${where} field "${mapping.id}"`).trim();
  const rawQuestion = required(mapping.question);
  let numbers: number[] | undefined;
  let question: string;
  if (Array.isArray(rawQuestion) || (typeof rawQuestion === 'string' && /^\s*\[[\d\s,.-]*\]\s*$/.test(rawQuestion))) {
    // Game of 24 stores its four numbers as the question.
    numbers = readList(rawQuestion, `${where} field "${mapping.question}"`).map((value) => Number(value));
    if (numbers.some((value) => !Number.isFinite(value))) {
      throw new AgentFlowError({
        code: 'SCHEMA_VALIDATION',
        message: `${where}: field "${mapping.question}" holds a list that is not all numbers: ${describeValue(rawQuestion)}.`,
        details: { source, position },
      });
    }
    question = numbers.join(' ');
  } else {
    question = stripAnswerInstruction(readText(rawQuestion, `${where} field "${mapping.question}"`));
  }
  const references = readList(required(mapping.answer), `${where} field "${mapping.answer}"`).map((value) =>
    readText(value, `${where} field "${mapping.answer}"`).trim(),
  );
  if (references.length === 0) {
    throw new AgentFlowError({
      code: 'SCHEMA_VALIDATION',
      message: `${where}: field "${mapping.answer}" is an empty list; an item needs at least one reference answer.`,
      details: { source, position },
    });
  }
  const promptValue = mapping.prompt ? fields[mapping.prompt] : undefined;
  const prompt = typeof promptValue === 'string' && promptValue.trim() !== '' ? promptValue : question;
  const choicesValue = mapping.choices ? fields[mapping.choices] : undefined;
  const choices =
    choicesValue === undefined || choicesValue === null
      ? undefined
      : readList(choicesValue, `${where} field "${mapping.choices}"`).map((value) => readText(value, `${where} choice`));
  const yearValue = mapping.year ? fields[mapping.year] : undefined;
  const year = yearValue !== undefined && yearValue !== null && Number.isInteger(Number(yearValue)) ? Number(yearValue) : yearFromId(id);
  const used = new Set([mapping.id, mapping.question, mapping.answer, mapping.prompt, mapping.choices, mapping.year]);
  const metadata = Object.fromEntries(Object.entries(fields).filter(([key]) => !used.has(key)));
  const item: BenchmarkItem = { id, question, prompt, answer: references[0] as string, references, metadata };
  if (numbers) item.numbers = numbers;
  if (choices) item.choices = choices;
  if (year !== undefined) item.year = year;
  return item;
}

/**
 * What a loader does with an id that appears more than once: `refuse` (the default: a typo in
 * a file of your own), or `by-position` for a published file whose ids repeat (AgentFlow's
 * medqa.json repeats 100 of its 300 pids, on other questions): the first item keeps its id, and
 * each later one becomes `ID@POSITION` (its 0-based position in the file, as AgentFlow's
 * `solve.py --index` counts), with the file's id kept in `metadata.fileId`.
 */
export type DuplicateIdPolicy = 'refuse' | 'by-position';

/** Throws when two items share an id: dedup reports, splits and eval records are keyed by id. */
export function assertUniqueIds(items: readonly BenchmarkItem[], source: string): void {
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.id)) {
      throw new AgentFlowError({
        code: 'SCHEMA_VALIDATION',
        message: `${source}: id ${describeValue(item.id)} appears more than once; ids must be unique (a published file whose ids repeat can be read with duplicateIds 'by-position').`,
        details: { source, id: item.id },
      });
    }
    seen.add(item.id);
  }
}

/** The items with unique ids under `policy` (see {@link DuplicateIdPolicy}); throws when they still repeat. */
export function withUniqueIds(items: BenchmarkItem[], source: string, policy: DuplicateIdPolicy = 'refuse'): BenchmarkItem[] {
  if (policy === 'by-position') {
    const seen = new Set<string>();
    items = items.map((item, position) => {
      const repeated = seen.has(item.id);
      seen.add(item.id);
      return repeated ? { ...item, id: `${item.id}@${position}`, metadata: { ...item.metadata, fileId: item.id } } : item;
    });
  }
  assertUniqueIds(items, source);
  return items;
}
