import type { Tool } from '@agentflow/core';
import { createCorpusSearchTool, createPythonTool } from '@agentflow/executor';

export interface SolveToolsSettings {
  /** Leave the python tool out. */
  noPython?: boolean;
  /** A JSONL corpus (`{id, title, text}` per line) for the corpus_search tool. */
  corpus?: string;
  /** Where notes about unavailable tools go. */
  warn: (text: string) => void;
}

/**
 * The tools `agentflow solve` gives the planner. The one place to add tools: today the
 * sandboxed python tool of @agentflow/executor and, with a corpus file, corpus_search
 * (BM25, offline). Network tools (web_search, wikipedia) are not offered by default.
 */
export async function createSolveTools(settings: SolveToolsSettings): Promise<Tool[]> {
  const tools: Tool[] = [];
  if (!settings.noPython) {
    const python = createPythonTool();
    const reason = await python.unavailableReason();
    if (reason) settings.warn(`note: the python tool is unavailable here: ${reason}\n`);
    else tools.push(python as Tool);
  }
  if (settings.corpus !== undefined) tools.push(createCorpusSearchTool({ path: settings.corpus }) as Tool);
  return tools;
}
