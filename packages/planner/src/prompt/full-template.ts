import { type ChatMessage, FINISH_ACTION } from '@agentflow/core';
import { renderToolInput } from '../catalogue/tool-catalogue';
import type { PromptContext, PromptTemplate } from './prompt-template';

export interface FullPromptTemplateSettings {
  /** Character budget of the rendered step log (default 6000, about 1.5k tokens). */
  memoryBudgetChars?: number;
  /** Character budget of the retrieved examples (default 3000). */
  examplesBudgetChars?: number;
}

function cut(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, Math.max(0, maxChars - 16))}\n...[cut]`;
}

/** The prompt for real LLMs: a system message with the tool catalogue, a user message with the task. */
export function createFullPromptTemplate(settings: FullPromptTemplateSettings = {}): PromptTemplate {
  const memoryBudgetChars = settings.memoryBudgetChars ?? 6000;
  const examplesBudgetChars = settings.examplesBudgetChars ?? 3000;
  return {
    name: 'full',
    render(context: PromptContext): ChatMessage[] {
      const tools = context.tools
        .map((tool) => `- ${tool.name}: ${tool.description}\n  Input (a JSON object):\n${renderToolInput(tool)}`)
        .concat(`- ${FINISH_ACTION}: Ends the task. Input: the final answer, as a short string.`)
        .join('\n');
      const system = [
        'You are the planner of an agent that answers questions by calling tools.',
        'At each step choose exactly one action: call one tool, or finish with the final answer once it is known.',
        'Reply with one JSON object and nothing else:',
        '{"thought": "<brief reasoning>", "action": "<tool name or finish>", "action_input": <the tool input object, or the final answer string>}',
        '',
        'Tools:',
        tools,
      ].join('\n');
      const parts = [`Question: ${context.question}`];
      if (context.examples) parts.push(`Solved examples of similar questions:\n${cut(context.examples, examplesBudgetChars)}`);
      const stepLine =
        context.maxSteps === undefined
          ? `This is step ${context.stepIndex + 1}.`
          : `This is step ${context.stepIndex + 1} of at most ${context.maxSteps}.`;
      parts.push(
        `Steps so far:\n${context.memory.render({ budgetChars: memoryBudgetChars, style: 'full' })}`,
        `${stepLine} Decide the next action.`,
      );
      return [
        { role: 'system', content: system },
        { role: 'user', content: parts.join('\n\n') },
      ];
    },
  };
}
