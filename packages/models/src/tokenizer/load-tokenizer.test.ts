import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { createByteLevelTokenizerFiles, writeTokenizerFiles } from './byte-level-tokenizer';
import { loadTokenizer } from './load-tokenizer';

describe('byte-level tokenizer', () => {
  it('loads offline with AutoTokenizer: bytes round-trip, ChatML template, special tokens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokenizer-'));
    writeTokenizerFiles(dir);
    const tokenizer = await loadTokenizer(dir);
    const text = 'héllo {"a": 1}\n';
    const ids = tokenizer.encode(text);
    expect(ids).toEqual([...new TextEncoder().encode(text)]);
    expect(tokenizer.decode(ids)).toBe(text);
    expect(tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }])).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');
    expect(tokenizer.encodeChat([{ role: 'user', content: 'hi' }])).toEqual([257, 117, 115, 101, 114, 10, 104, 105, 258, 10, 257, ...new TextEncoder().encode('assistant\n')]);
    expect(tokenizer.encode('<|im_end|>')).toEqual([258]);
    expect(tokenizer.eosTokenIds.sort()).toEqual([256, 258]);
    expect(tokenizer.decode([104, 258, 105])).toBe('hi');
    const bytes = tokenizer.tokenBytes();
    expect(bytes).toHaveLength(259);
    expect([...bytes[0xe9]!]).toEqual([0xe9]);
    expect(bytes[257]).toBeUndefined();
  });

  it('passes chat template kwargs to the template and refuses apply_chat_template options', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokenizer-'));
    const files = createByteLevelTokenizerFiles();
    files.tokenizerConfig.chat_template = "{{- messages[0]['content'] }}{%- if greeting is defined %}|{{ greeting }}{%- endif %}";
    writeTokenizerFiles(dir, files);
    const messages = [{ role: 'user' as const, content: 'hi' }];
    expect((await loadTokenizer(dir)).applyChatTemplate(messages)).toBe('hi');
    const tokenizer = await loadTokenizer(dir, { chatTemplateKwargs: { greeting: 'hello' } });
    expect(tokenizer.applyChatTemplate(messages)).toBe('hi|hello');
    expect(tokenizer.encodeChat(messages)).toEqual(tokenizer.encode('hi|hello'));
    expect(tokenizer.applyChatTemplate(messages, { chatTemplateKwargs: { greeting: 'hey' } })).toBe('hi|hey');
    await expect(loadTokenizer(dir, { chatTemplateKwargs: { add_generation_prompt: false } })).rejects.toThrow(/use addGenerationPrompt/);
  });

  it('says which tokenizer file is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokenizer-'));
    const error = await loadTokenizer(dir).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'NOT_FOUND')).toBe(true);
    expect((error as Error).message).toMatch(/tokenizer\.json is missing/);
  });
});
