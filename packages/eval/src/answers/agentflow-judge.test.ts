/**
 * The paper's judge against an OpenAI-compatible loopback server through @agentflow/llm: the
 * prompts it sends, the two stages of multiple choice, and replies it cannot read.
 */
import { createOpenAICompatibleModel } from '@agentflow/llm';
import { type ChatRequestBody, type LoopbackChatServer, startOpenAiCompatibleServer } from '@agentflow/llm/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentFlowJudge, judgedResponse, nearestListedOption } from './agentflow-judge';

const KEY = 'judge-key';
let server: LoopbackChatServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function judgeAnswering(reply: (body: ChatRequestBody) => string) {
  server = await startOpenAiCompatibleServer('gpt-4o', KEY, reply);
  const model = createOpenAICompatibleModel({ model: 'gpt-4o', endpoints: [server.url], apiKeyEnv: 'K', env: { K: KEY }, maxRetries: 0 });
  return { judge: createAgentFlowJudge({ model }), requests: server.requests };
}

const userPrompt = (body: ChatRequestBody | undefined) => body?.messages.find((message) => message.role === 'user')?.content ?? '';

describe('createAgentFlowJudge', () => {
  it("asks the script's verification prompt once with the last <answer>, and reads its verdict", async () => {
    const { judge, requests } = await judgeAnswering(() => '{"analysis": "Both name James Madison.", "true_false": true}');
    const result = await judge.judge({ question: 'Who was president?', response: 'I think <answer>x</answer> no: <answer>James Madison</answer>', correctAnswer: 'james madison' });
    expect(result).toEqual({ status: 'ok', mode: 'direct', correct: true, analysis: 'Both name James Madison.' });
    expect(requests).toHaveLength(1);
    expect(requests[0]?.messages[0]).toEqual({ role: 'system', content: 'You are a helpful, creative, and smart assistant.' });
    expect(userPrompt(requests[0])).toContain('Question: Who was president?\nModel response: James Madison\nCorrect answer: james madison\n');
    expect(requests[0]?.temperature).toBe(0);
    expect(JSON.stringify(requests[0]?.response_format)).toContain('true_false');
  });

  it('extracts the option, matches it to a listed one as the script does, then verifies it', async () => {
    const { judge, requests } = await judgeAnswering((body) =>
      userPrompt(body).includes('## Answer Choices:')
        ? '{"analysis": "It says 0.1.", "extracted_option": "0.1"}'
        : '```json\n{"analysis": "C is not A.", "true_false": "False"}\n```',
    );
    const result = await judge.judge({ question: 'Ratio?', response: 'about 0.1', correctAnswer: 'A. 0.9', choices: ['0.9', '0.7', '0.1', '0.3'] });
    expect(result).toEqual({ status: 'ok', mode: 'extract-then-verify', correct: false, analysis: 'C is not A.', extractedOption: 'C. 0.1' });
    expect(userPrompt(requests[0])).toContain('## Answer Choices:\nA. 0.9\nB. 0.7\nC. 0.1\nD. 0.3\n');
    expect(userPrompt(requests[1])).toContain('Correct Answer: A. 0.9\nExtracted Option: C. 0.1\n');
  });

  it('reports a reply it cannot read as failed, and throws what the endpoint throws', async () => {
    const { judge } = await judgeAnswering(() => 'Looks right to me.');
    const result = await judge.judge({ question: 'q', response: 'a', correctAnswer: 'a' });
    expect(result).toMatchObject({ status: 'failed', mode: 'direct' });
    expect(result.status === 'failed' && result.reason).toContain('"Looks right to me."');
    const gone = createAgentFlowJudge({
      model: createOpenAICompatibleModel({ model: 'gpt-4o', endpoints: [server!.url], apiKeyEnv: 'K', env: { K: 'wrong key' }, maxRetries: 0 }),
    });
    await expect(gone.judge({ question: 'q', response: 'a', correctAnswer: 'a' })).rejects.toThrow();
  });
});

describe("the script's matching", () => {
  it('reads the last <answer> and finds the listed option an extraction names', () => {
    expect(judgedResponse('no tags')).toBe('no tags');
    const options = ['A. 0.9', 'B. 0.7', 'C. 0.1', 'D. 0.3'];
    expect(nearestListedOption('C. 0.1', options)).toBe('C. 0.1');
    expect(nearestListedOption('the ratio is 0.3', options)).toBe('D. 0.3');
    // As the script: nothing recognisable falls back to the first option.
    expect(nearestListedOption('none of them', options)).toBe('A. 0.9');
  });
});
