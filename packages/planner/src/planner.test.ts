import { type PolicyGeneration, parseModelReply, type TrainablePolicy } from '@agentflow/core';
import { createOllamaModel, createOpenAICompatibleModel, createPolicyModel } from '@agentflow/llm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type LoopbackServer, ollamaReply, openAIReply, startLoopbackServer } from '../../llm/src/testing/loopback-server';
import { createActionSchema } from './action/action-schema';
import { describeTools } from './catalogue/tool-catalogue';
import { createPlanner } from './planner';
import { createCompactPromptTemplate } from './prompt/compact-template';
import type { PlannerMemoryView } from './prompt/prompt-template';

const tools = [
  {
    name: 'python',
    description: 'Runs Python code and prints the value of the last expression.',
    inputSchema: z.object({ code: z.string().describe('Python source to run') }),
  },
  {
    name: 'corpus_search',
    description: 'Searches the local corpus.',
    inputSchema: z.object({ query: z.string().describe('Search words'), k: z.number().int().optional() }),
  },
];

/** A memory view over fixed lines, recording the budgets it was asked for. */
function memoryOf(lines: string[]) {
  const calls: Array<{ budgetChars: number; style: string }> = [];
  const view: PlannerMemoryView = {
    render(settings) {
      calls.push(settings);
      const separator = settings.style === 'full' ? '\n\n' : '\n';
      let kept = [...lines];
      while (kept.join(separator).length > settings.budgetChars && kept.length > 0) kept = kept.slice(1);
      return kept.length === 0 ? (settings.emptyText ?? '(no steps yet)') : kept.join(separator);
    },
  };
  return { view, calls };
}

describe('createPlanner with a loopback Ollama model', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => server.close());
  const model = () => createOllamaModel({ model: 'qwen3:8b', endpoints: [server.url] });

  it('sends the tool catalogue, restricts action to the tools plus finish, and records the exact exchange', async () => {
    const completion = '{"thought":"compute it","action":"python","action_input":{"code":"6*7"}}';
    server.push(ollamaReply(completion));
    const planner = createPlanner({ model: model(), tools, temperature: 0 });
    const { view } = memoryOf(['Step 1:\nThought: x\nAction: corpus_search {"query":"a"}\nResult: b']);
    const decision = await planner.decide({
      question: 'What is 6*7?',
      memory: view,
      examples: 'Q: 2*3? -> python {"code":"2*3"} -> 6',
      stepIndex: 1,
      maxSteps: 5,
    });
    const sent = server.requests[0]!.body as {
      messages: Array<{ role: string; content: string }>;
      format: { properties: { action: { enum: string[] }; action_input: { anyOf: Array<Record<string, unknown>> } } };
    };
    expect(sent.format.properties.action.enum).toEqual(['python', 'corpus_search', 'finish']);
    // action_input: the answer string, or one of the tools' input objects.
    const inputs = sent.format.properties.action_input.anyOf;
    expect(inputs[0]).toEqual({ type: 'string' });
    expect(inputs.slice(1).map((input) => input.required)).toEqual([['code'], ['query']]);
    expect(sent.messages[0]!.content).toContain('- python: Runs Python code');
    expect(sent.messages[0]!.content).toContain('"code": string (required) - Python source to run');
    expect(sent.messages[0]!.content).toContain('"k": integer (optional)');
    expect(sent.messages[1]!.content).toContain('Question: What is 6*7?');
    expect(sent.messages[1]!.content).toContain('Solved examples of similar questions:\nQ: 2*3?');
    expect(sent.messages[1]!.content).toContain('This is step 2 of at most 5.');
    expect(decision).toEqual({
      prompt: sent.messages,
      completion,
      truncated: false,
      action: { thought: 'compute it', action: 'python', action_input: { code: '6*7' } },
      calls: 1,
      degraded: false,
    });
  });

  it('turns output that never parses into a format-error decision instead of throwing', async () => {
    server.push(ollamaReply('{"thought": "hm", "action": "search", "action_input": "x"}'), ollamaReply('{"thought": '));
    const planner = createPlanner({ model: model(), tools });
    const decision = await planner.decide({ question: 'q', memory: memoryOf([]).view, stepIndex: 0 });
    expect(decision.action).toBeNull();
    expect(decision.parseError).toMatch(/not valid JSON/);
    expect(decision.completion).toBe('{"thought": ');
    expect(decision.calls).toBe(2);
    // The recorded prompt is the conversation of the last call, repair request included.
    expect(decision.prompt.at(-1)?.content).toMatch(/action: Invalid option: expected one of "python"\|"corpus_search"\|"finish"/);
    expect(decision.prompt).toEqual((server.requests[1]!.body as { messages: unknown }).messages);
  });

  it('flags a reply cut by the token limit as truncated', async () => {
    server.push(ollamaReply('{"thought":"a","action":"finish","action_input":"42"}', 'length'));
    const planner = createPlanner({ model: model(), tools, maxTokens: 16 });
    const decision = await planner.decide({ question: 'q', memory: memoryOf([]).view, stepIndex: 0 });
    expect(decision.truncated).toBe(true);
    expect((server.requests[0]!.body as { options: { num_predict: number } }).options.num_predict).toBe(16);
  });

  it('rejects a tool named finish', () => {
    expect(() => createPlanner({ model: model(), tools: [{ ...tools[0]!, name: 'finish' }] })).toThrow(/reserved/);
  });
});

describe('createPlanner with a tiny local policy and the compact template', () => {
  it('keeps the one-message prompt within a few hundred characters and records token ids and log-probs', async () => {
    const reply = '{"thought":"","action":"finish","action_input":"Brisk"}';
    const seenPrompts: number[][] = [];
    const policy: TrainablePolicy = {
      async generate(requests) {
        return requests.map((request): PolicyGeneration => {
          seenPrompts.push(request.promptIds);
          const tokenIds = [...Buffer.from(reply)];
          return { tokenIds, text: reply, logprobs: tokenIds.map(() => -0.5), finishReason: 'stop' };
        });
      },
      logprobs: async () => [],
      accumulateGradients: async () => ({ loss: 0, tokens: 0 }),
      applyGradients: async () => ({ gradNorm: 0 }),
      save: async () => {},
      load: async () => {},
    };
    const tokenizer = {
      encodeChat: (messages: ReadonlyArray<{ content: string }>) => [...Buffer.from(messages.map((m) => m.content).join('\n'))],
      decode: (ids: readonly number[]) => Buffer.from(ids).toString('utf8'),
    };
    const planner = createPlanner({
      model: createPolicyModel({ policy, tokenizer }),
      tools,
      template: createCompactPromptTemplate({ maxPromptChars: 300 }),
      maxRepairs: 0,
    });
    const longOutput = 'x'.repeat(5000);
    const { view, calls } = memoryOf(
      Array.from({ length: 20 }, (_, i) => `${i + 1}. python {"code":"print(${i})"} -> ${longOutput.slice(0, 40)}`),
    );
    const decision = await planner.decide({ question: 'What is the capital of Veloria?', memory: view, stepIndex: 20 });
    expect(decision.prompt).toHaveLength(1);
    const content = decision.prompt[0]!.content;
    expect(content.length).toBeLessThanOrEqual(300);
    expect(content).toMatch(/^Q: What is the capital of Veloria\?\nTools: python\(code\) corpus_search\(query,k\?\) finish\(answer\)\n/);
    expect(content).toMatch(/20\. python \{"code":"print\(19\)"\}.*\nJSON:$/);
    expect(calls[0]).toMatchObject({ style: 'compact' });
    expect(decision.promptTokenIds).toEqual(seenPrompts[0]);
    expect(tokenizer.decode(decision.promptTokenIds ?? [])).toBe(content);
    expect(decision.completionTokenIds).toHaveLength(reply.length);
    expect(decision.completionLogprobs).toEqual(new Array(reply.length).fill(-0.5));
    expect(decision.action).toEqual({ thought: '', action: 'finish', action_input: 'Brisk' });
  });

  it('passes the output cap of the compact template to the memory', () => {
    const { view, calls } = memoryOf(['1. corpus_search {"query":"Riri"} -> Riri has 4 cats, 15 dogs and 3 hens.']);
    const context = { question: 'q', tools: describeTools(tools), memory: view, stepIndex: 1 };
    createCompactPromptTemplate({ maxOutputChars: 120 }).render(context);
    createCompactPromptTemplate().render(context);
    expect(calls[0]).toMatchObject({ style: 'compact', maxOutputChars: 120 });
    expect(calls[1]).not.toHaveProperty('maxOutputChars');
  });

  it('uses an injected template verbatim', async () => {
    const policyReply = '{"thought":"t","action":"corpus_search","action_input":{"query":"a"}}';
    const model = {
      specificationVersion: 'v1' as const,
      provider: 'test',
      modelId: 'echo',
      chat: async () => ({ text: policyReply, finishReason: 'stop' as const, model: 'echo' }),
    };
    const planner = createPlanner({
      model,
      tools,
      template: { name: 'mine', render: (context) => [{ role: 'user', content: `ASK ${context.question}` }] },
    });
    const decision = await planner.decide({ question: 'q?', memory: memoryOf([]).view, stepIndex: 0 });
    expect(decision.prompt).toEqual([{ role: 'user', content: 'ASK q?' }]);
    expect(decision.action?.action).toBe('corpus_search');
  });
});

describe('createActionSchema', () => {
  it('ties each action to its own input in the tied style', () => {
    const { jsonSchema, schema } = createActionSchema(describeTools(tools), 'tied');
    const branches = (jsonSchema as { anyOf: Array<{ properties: Record<string, Record<string, unknown>> }> }).anyOf;
    expect(branches.map((branch) => branch.properties.action?.const)).toEqual(['python', 'corpus_search', 'finish']);
    expect(branches[0]?.properties.action_input).toMatchObject({ required: ['code'], additionalProperties: false });
    expect(branches[2]?.properties.action_input).toEqual({ type: 'string' });
    // Validation is the same in both styles.
    expect(schema.safeParse({ thought: '', action: 'finish', action_input: '4' }).success).toBe(true);
    expect(schema.safeParse({ thought: '', action: 'search', action_input: '4' }).success).toBe(false);
  });
});

describe('a planner reply with keys the action schema does not name', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => server.close());
  const backEnds = {
    ollama: () => createOllamaModel({ model: 'qwen3:8b', endpoints: [server.url], maxRetries: 0 }),
    openai: () => createOpenAICompatibleModel({ model: 'deepseek-chat', endpoints: [server.url], responseFormat: 'json_object', maxRetries: 0 }),
  };
  const replyOf = { ollama: (text: string) => ollamaReply(text), openai: (text: string) => openAIReply(text) };
  const decide = (backEnd: keyof typeof backEnds) =>
    createPlanner({ model: backEnds[backEnd](), tools, temperature: 0, maxRepairs: 0 }).decide({
      question: 'What is 6*7?',
      memory: memoryOf([]).view,
      stepIndex: 1,
      maxSteps: 5,
    });

  for (const backEnd of ['ollama', 'openai'] as const) {
    it(`is accepted with the extra keys dropped (${backEnd})`, async () => {
      server.push(replyOf[backEnd]('{"thought":"done","action":"finish","action_input":"42","confidence":0.9,"notes":{"a":1}}'));
      const decision = await decide(backEnd);
      expect(decision.parseError).toBeUndefined();
      expect(decision.action).toEqual({ thought: 'done', action: 'finish', action_input: '42' });
      expect(decision.droppedKeys).toEqual(['confidence', 'notes']);
      expect(decision.degraded).toBe(false);
      // One call: no repair, no retry.
      expect(decision.calls).toBe(1);
      expect(server.requests).toHaveLength(1);
    });

    it(`is still a format error without action, or with action of the wrong type (${backEnd})`, async () => {
      server.push(replyOf[backEnd]('{"thought":"done","action_input":"42","extra":true}'));
      const missing = await decide(backEnd);
      expect(missing.action).toBeNull();
      expect(missing.parseError).toMatch(/action/);
      // The extra key is dropped, not reported: only the real problem is.
      expect(missing.parseError).not.toMatch(/extra|Unrecognized/);
      server.push(replyOf[backEnd]('{"thought":"done","action":7,"action_input":"42"}'));
      const wrongType = await decide(backEnd);
      expect(wrongType.action).toBeNull();
      expect(wrongType.parseError).toMatch(/action/);
    });
  }

  it('still asks the model for a closed object (constrained decoding never invents keys)', () => {
    const { jsonSchema, schema } = createActionSchema([{ name: 'python', inputJsonSchema: { type: 'object', properties: { code: { type: 'string' } } } }]);
    expect(jsonSchema).toMatchObject({ additionalProperties: false });
    // The zod schema is closed too; the shared rule (core parseModelReply, in generateObject) drops the key.
    const reply = { thought: 't', action: 'python', action_input: { code: '1' }, extra: 1 };
    expect(schema.safeParse(reply).success).toBe(false);
    expect(parseModelReply(schema, reply)).toEqual({
      ok: true,
      value: { thought: 't', action: 'python', action_input: { code: '1' } },
      droppedKeys: ['extra'],
    });
  });
});

