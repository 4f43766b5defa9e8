import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepScoringInput } from '@agentflow/core';
import { byteLevelVocabSize, createByteLevelTokenizerFiles, createRandomModel, getModelPreset, loadTokenizer, saveModelFolder } from '@agentflow/models';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadPrm, savePrm } from './checkpoint';
import { createPrm } from './prm';

/** A planner-like folder backbone: the tiny preset with a byte-level tokenizer and its chat template. */
let backbone: string;
beforeAll(async () => {
  backbone = join(mkdtempSync(join(tmpdir(), 'prm-chat-')), 'planner');
  const model = createRandomModel({ ...getModelPreset('tiny'), vocabSize: byteLevelVocabSize([]) }, 3);
  await saveModelFolder(backbone, model, { tokenizer: createByteLevelTokenizerFiles() });
});

const step: StepScoringInput = {
  question: 'How many more cats does Riri have than Vone?',
  history: [{ thought: 'find Riri cats', action: 'corpus_search', action_input: { query: 'Riri cats' } }],
  observations: ['Riri cats: Riri has 3 cats.'],
  action: { thought: 'compute', action: 'python', action_input: { code: '3-2' } },
  prompt: [{ role: 'user', content: 'Q: How many more cats does Riri have than Vone?\n1. corpus_search {"query":"Riri cats"} -> Riri cats: Riri has 3 cats.\nJSON:' }],
  completion: '{"thought":"compute","action":"python","action_input":{"code":"3-2"}}',
};

describe("PRM input 'chat'", () => {
  it('reads the planner prompt through the chat template, then the completion, and keeps that format in its checkpoint', async () => {
    const prm = await createPrm({ backbone: { kind: 'folder', path: backbone }, input: 'chat', device: 'cpu', intraOpThreads: 1 });
    const tokenizer = await loadTokenizer(backbone);
    expect(prm.encodeStep(step)).toEqual([...tokenizer.encodeChat(step.prompt!), ...tokenizer.encode(step.completion!)]);
    // The plain-text format of the same step is another sequence.
    const text = await createPrm({ backbone: { kind: 'folder', path: backbone }, device: 'cpu', intraOpThreads: 1 });
    expect(text.encodeStep(step)).not.toEqual(prm.encodeStep(step));
    const dir = join(mkdtempSync(join(tmpdir(), 'prm-chat-ckpt-')), 'prm');
    await savePrm(prm, dir);
    const loaded = await loadPrm(dir, { device: 'cpu' });
    expect(loaded.config.input).toBe('chat');
    expect(await loaded.score([step])).toEqual(await prm.score([step]));
    await Promise.all([prm.release(), text.release(), loaded.release()]);
  });

  it('names the step that lacks its prompt, and refuses a backbone without a chat template', async () => {
    const prm = await createPrm({ backbone: { kind: 'folder', path: backbone }, input: 'chat', device: 'cpu', intraOpThreads: 1 });
    const { prompt: _prompt, ...withoutPrompt } = step;
    await expect(prm.score([withoutPrompt])).rejects.toThrow(/input 'chat' needs each step's prompt and completion.*no prompt/);
    await prm.release();
    await expect(createPrm({ input: 'chat', device: 'cpu' })).rejects.toThrow(/random backbone has none/);
  });

  it('with stepResult reads the next prompt, which shows the decision and its result; the last decision as without; a step without its result is refused', async () => {
    const tokenizer = await loadTokenizer(backbone);
    const nextPrompt = [{ role: 'user' as const, content: `${step.prompt![0]!.content.replace(/\nJSON:$/, '')}\n2. python {"code":"3-2"} -> 1\nJSON:` }];
    const withResult: StepScoringInput = { ...step, result: '1', nextPrompt };
    const prm = await createPrm({ backbone: { kind: 'folder', path: backbone }, input: 'chat', stepResult: true, headHidden: 4, device: 'cpu', intraOpThreads: 1 });
    expect(prm.encodeStep(withResult)).toEqual(tokenizer.encodeChat(nextPrompt));
    // The last decision of a trajectory has no next prompt: its own prompt and completion.
    const { nextPrompt: _next, ...last } = withResult;
    expect(prm.encodeStep(last)).toEqual([...tokenizer.encodeChat(step.prompt!), ...tokenizer.encode(step.completion!)]);
    expect(() => prm.encodeStep(step)).toThrow(/stepResult reads what each decision's tool returned, but step .* has no result .*relabel/);
    // Text input puts the result after the decision, as it does the earlier ones'.
    const text = await createPrm({ backbone: { kind: 'folder', path: backbone }, stepResult: true, device: 'cpu', intraOpThreads: 1 });
    const plain = await createPrm({ backbone: { kind: 'folder', path: backbone }, device: 'cpu', intraOpThreads: 1 });
    expect(Buffer.from(text.encodeStep(withResult)).toString('utf8')).toMatch(/Decision to score:\n.*action: python .*-> 1$/);
    expect(Buffer.from(plain.encodeStep(withResult)).toString('utf8')).not.toContain('-> 1');
    // The setting and the head's hidden layer travel with the checkpoint.
    const dir = join(mkdtempSync(join(tmpdir(), 'prm-result-ckpt-')), 'prm');
    await savePrm(prm, dir);
    const loaded = await loadPrm(dir, { device: 'cpu' });
    expect(loaded.config).toMatchObject({ stepResult: true, headHidden: 4 });
    expect(await loaded.score([withResult, last])).toEqual(await prm.score([withResult, last]));
    await Promise.all([prm.release(), text.release(), plain.release(), loaded.release()]);
  });
});
