import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAICompatibleModel } from '@agentflow/llm';
import { afterEach, describe, expect, it } from 'vitest';
import { type ChatCompletionsBody, type LoopbackServer, startOpenAiServer } from '../__fixtures__/openai-server';
import { makeTrajectory } from '../__fixtures__/trajectories';
import { extractSteps } from '../example/extract-steps';
import { createJudgeLabeller } from './judge-labeller';

/** A judge that likes python calls and dislikes everything else; 1000 prompt and 50 completion tokens per call. */
function gradingJudge(body: ChatCompletionsBody) {
  const step = body.messages.find((message) => message.content.includes('Decision to score:'))?.content ?? '';
  const decision = step.slice(step.indexOf('Decision to score:'));
  const score = decision.includes('action: python') ? 0.9 : 0.2;
  return { content: JSON.stringify({ score, rationale: `graded ${score}` }), promptTokens: 1000, completionTokens: 50 };
}

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function judgeModel(url: string) {
  return createOpenAICompatibleModel({ model: 'deepseek-chat', endpoints: [url], responseFormat: 'json_object', maxRetries: 0 });
}

describe('createJudgeLabeller against a loopback OpenAI-compatible server', () => {
  it("labels each step with the judge score, never sends a step's own tool output, and prices the tokens", async () => {
    server = await startOpenAiServer(gradingJudge);
    const labeller = createJudgeLabeller({ model: judgeModel(server.url), concurrency: 2 });
    const steps = extractSteps(makeTrajectory());
    const { examples, failures } = await labeller.label(steps);
    expect(failures).toEqual([]);
    expect(examples.map((example) => example.label)).toEqual([0.2, 0, 0.9, 0.2]);
    expect(examples[2]?.provenance).toEqual({ labeller: 'judge', judgeModel: 'deepseek-chat', costUsd: expect.any(Number), rationale: 'graded 0.9' });
    // The format-error step is not sent: three calls for four steps.
    expect(server.requests).toHaveLength(3);
    expect(server.requests[0]?.response_format).toEqual({ type: 'json_object' });
    // Earlier results are context; the judged step's own result never is (the last step's
    // output, and the format error's, appear in no request at all).
    const sent = server.requests.map((request) => JSON.stringify(request));
    expect(sent.join('')).not.toMatch(/TOOL-OUTPUT-MARKER-[13]/);
    const python = sent.find((request) => request.indexOf('522250 * 2') > request.indexOf('Decision to score'));
    expect(python).toContain('TOOL-OUTPUT-MARKER-0');
    expect(python).not.toContain('TOOL-OUTPUT-MARKER-2');
    // 3 calls x (1000 x $0.28 + 50 x $0.42) / 1e6.
    const expected = (3 * (1000 * 0.28 + 50 * 0.42)) / 1e6;
    expect(labeller.stats().costUsd).toBeCloseTo(expected, 12);
    expect(examples.reduce((sum, example) => sum + (example.provenance.costUsd ?? 0), 0)).toBeCloseTo(expected, 12);
  });

  it('shows the judge the reference answer when given, and keys the cache on it', async () => {
    server = await startOpenAiServer(gradingJudge);
    const cachePath = join(mkdtempSync(join(tmpdir(), 'prm-judge-')), 'judge-cache.jsonl');
    const steps = extractSteps(makeTrajectory());
    const withReference = createJudgeLabeller({ model: judgeModel(server.url), cachePath, referenceAnswer: () => 'REFERENCE-1234' });
    await withReference.label(steps);
    expect(server.requests).toHaveLength(3);
    for (const request of server.requests) expect(JSON.stringify(request)).toContain('Reference answer of the task (the agent does not see it): REFERENCE-1234');
    // The same steps without the reference are other judge inputs: the cache does not answer them.
    const without = createJudgeLabeller({ model: judgeModel(server.url), cachePath });
    await without.label(steps);
    expect(server.requests).toHaveLength(6);
    expect(JSON.stringify(server.requests.slice(3))).not.toContain('REFERENCE-1234');
  });

  it('never judges a step twice: identical steps share a call, and the JSONL cache survives a restart', async () => {
    server = await startOpenAiServer(gradingJudge);
    const cachePath = join(mkdtempSync(join(tmpdir(), 'prm-judge-')), 'judge-cache.jsonl');
    const steps = [...extractSteps(makeTrajectory('a')), ...extractSteps(makeTrajectory('b'))];
    const first = createJudgeLabeller({ model: judgeModel(server.url), cachePath, concurrency: 4 });
    const labelled = await first.label(steps);
    // Trajectories a and b render identically step by step: 3 distinct decisions, 3 calls.
    expect(server.requests).toHaveLength(3);
    expect(readFileSync(cachePath, 'utf8').trim().split('\n')).toHaveLength(3);

    const second = createJudgeLabeller({ model: judgeModel(server.url), cachePath, prices: { inputUsdPerMillion: 1 } });
    const again = await second.label(steps);
    expect(server.requests).toHaveLength(3);
    expect(second.stats()).toMatchObject({ calls: 0, costUsd: 0, cacheHits: 6 });
    expect(again.examples.map((example) => example.label)).toEqual(labelled.examples.map((example) => example.label));
  });

  it('repairs a malformed reply, and records a step whose judge never answers properly as a failure', async () => {
    let calls = 0;
    server = await startOpenAiServer((body) => {
      calls++;
      const decision = body.messages.find((message) => message.role === 'user')?.content ?? '';
      if (decision.includes('action: finish')) return { content: 'I think it is fine!', promptTokens: 10, completionTokens: 5 };
      // The first reply to the python step is out of range; the repair is valid.
      if (decision.includes('action: python') && body.messages.length === 2) {
        return { content: '{"score": 7, "rationale": "great"}', promptTokens: 10, completionTokens: 5 };
      }
      return gradingJudge(body);
    });
    const labeller = createJudgeLabeller({ model: judgeModel(server.url), maxRepairs: 1, concurrency: 1 });
    const { examples, failures } = await labeller.label(extractSteps(makeTrajectory()));
    expect(examples.map((example) => [example.stepIndex, example.label])).toEqual([
      [0, 0.2],
      [1, 0],
      [2, 0.9],
    ]);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.stepId).toBe('traj-1:3');
    expect(failures[0]?.error).toMatch(/I think it is fine/);
    // search: 1 call, python: 2, finish: 2 (maxRepairs 1).
    expect(calls).toBe(5);
    expect(labeller.stats().calls).toBe(5);
  });

  it('labels a step in one call when the reply carries keys beyond {score, rationale}, counting the dropped keys', async () => {
    server = await startOpenAiServer((body) => {
      const { content, ...usage } = gradingJudge(body);
      const reply = JSON.parse(content) as Record<string, unknown>;
      return { ...usage, content: JSON.stringify({ ...reply, analysis: 'looked at the decision', confidence: 0.8 }) };
    });
    const labeller = createJudgeLabeller({ model: judgeModel(server.url), maxRepairs: 2 });
    const { examples, failures } = await labeller.label(extractSteps(makeTrajectory()));
    expect(failures).toEqual([]);
    expect(examples.map((example) => example.label)).toEqual([0.2, 0, 0.9, 0.2]);
    expect(examples[2]?.provenance.rationale).toBe('graded 0.9');
    // One call per judged step (the format error needs none): no repair for the extra keys.
    expect(server.requests).toHaveLength(3);
    expect(labeller.stats()).toMatchObject({ calls: 3, droppedKeys: 6 });
  });

  it('still repairs a score out of range when the reply also carries extra keys', async () => {
    server = await startOpenAiServer((body) =>
      body.messages.length === 2
        ? { content: '{"score": 1.5, "rationale": "great", "analysis": "ok"}', promptTokens: 10, completionTokens: 5 }
        : gradingJudge(body),
    );
    const labeller = createJudgeLabeller({ model: judgeModel(server.url), maxRepairs: 1, concurrency: 1 });
    const { examples, failures } = await labeller.label(extractSteps(makeTrajectory()));
    expect(failures).toEqual([]);
    expect(examples.map((example) => example.label)).toEqual([0.2, 0, 0.9, 0.2]);
    expect(server.requests).toHaveLength(6);
    // The repair request names the real problem, not the dropped key.
    const repair = server.requests[1]?.messages.at(-1)?.content ?? '';
    expect(repair).toMatch(/score: Too big/);
    expect(repair).not.toMatch(/analysis|Unrecognized/);
    expect(labeller.stats().droppedKeys).toBe(0);
  });

  it('keeps at most `concurrency` judge calls in flight', async () => {
    server = await startOpenAiServer(gradingJudge, { delayMs: 40 });
    const labeller = createJudgeLabeller({ model: judgeModel(server.url), concurrency: 2 });
    const steps = ['a', 'b', 'c', 'd'].flatMap((id) =>
      extractSteps({ ...makeTrajectory(id), question: `question ${id}` }),
    );
    const { examples } = await labeller.label(steps);
    expect(examples).toHaveLength(16);
    expect(server.requests).toHaveLength(12);
    expect(server.maxInFlight).toBe(2);
  });

  it('reports an unreachable judge per step instead of crashing', async () => {
    server = await startOpenAiServer(gradingJudge);
    const url = server.url;
    await server.close();
    server = undefined;
    const labeller = createJudgeLabeller({ model: judgeModel(url) });
    const { examples, failures } = await labeller.label(extractSteps(makeTrajectory()));
    expect(examples).toHaveLength(1); // only the format error, which needs no call
    expect(failures).toHaveLength(3);
  });
});
