/** One problem of a benchmark, whatever file it came from. */
export interface BenchmarkItem {
  /** The id in the file: the CSV's `id`, the JSON's `pid`, or the mapped JSONL field. */
  id: string;
  /** The problem text, without any answer-format instruction that the file appended. */
  question: string;
  /** What to send to the agent: the file's `query` when it has one, else `question`. */
  prompt: string;
  /** The reference answer (the first one when the file lists several). */
  answer: string;
  /** Every accepted reference answer (Game of 24 lists several expressions). */
  references: string[];
  /** The four input numbers of a Game of 24 item. */
  numbers?: number[];
  /** Answer options of a multiple-choice item, in order (A, B, C...). */
  choices?: string[];
  /** Multiple choice: the position of the right option in `choices` (0 is A), when the loader resolved it (the AgentFlow benchmarks' do). */
  answerIndex?: number;
  /** Year of the problem when the id or a field says so (AIME ids start with it). */
  year?: number;
  /** Every other field of the record, untouched. */
  metadata: Record<string, unknown>;
}

/**
 * The instruction that AgentFlow's benchmark files append to some questions. It is not part
 * of the problem, so it is cut from `question` (it stays in `prompt`).
 */
const APPENDED_INSTRUCTION = /\s*When ready, output the final answer enclosed in <answer>[\s\S]*$/;

export function stripAnswerInstruction(text: string): string {
  return text.replace(APPENDED_INSTRUCTION, '').trim();
}

/** Reads a leading 4-digit year from an id such as `2024_AIME_II_3`. */
export function yearFromId(id: string): number | undefined {
  const match = /^(1[89]\d\d|2\d\d\d)(?!\d)/.exec(id);
  return match ? Number(match[1]) : undefined;
}
