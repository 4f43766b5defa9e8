import { AgentFlowError, type ChatRequest, type LanguageModel, readLimitedBody } from '@agentflow/core';
import { z } from 'zod';
import type { ChatTokenizer } from '../policy/policy-model';
import type { HttpEnvironment } from '../transport/http-settings';
import { createJsonTransport, type JsonTransport } from '../transport/json-transport';
import { parseModelSettings } from '../transport/split-environment';
import { vllmChat, vllmHttpSettingsSchema, vllmRequestSettingsSchema } from './vllm-completion';
import { vllmErrorMessage, vllmModelListSchema } from './vllm-wire';

export const vllmServersSettingsSchema = vllmHttpSettingsSchema
  .extend(vllmRequestSettingsSchema.shape)
  .extend({
    urls: z
      .array(z.url())
      .min(1)
      .describe('The vLLM servers, each its root URL (http://host:8000; a trailing /v1 is accepted); completions are spread over them round-robin with failover.'),
    adminTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(300_000)
      .describe('Limit of one adapter load or unload (5 minutes: a rank-64 adapter of an 8B model is read from disk and moved to every GPU of the server).'),
  })
  .strict();

/** Settings of {@link createVllmServers}: the data, the chat tokenizer, a warning sink and the injected outside world. */
export type VllmServersSettings = z.input<typeof vllmServersSettingsSchema> &
  HttpEnvironment & {
    /** Renders the chat template to prompt ids: the planner's own tokenizer, so prompts are token-exact. */
    tokenizer: ChatTokenizer;
    /** Told when a server leaves the rotation (default console.warn). */
    warn?: (message: string) => void;
  };

/** What one adapter load did: the servers that have it now, and those taken out of rotation. */
export interface AdapterLoadReport {
  loaded: string[];
  failed: Array<{ url: string; reason: string }>;
}

/**
 * Several vLLM servers as one rollout back end: a chat model whose completions come back as
 * token ids with log-probs, and the runtime LoRA endpoints to hot-swap the adapter they sample
 * with (the servers need `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True` and `--enable-lora`).
 */
export interface VllmServers {
  /** Completions on the servers in rotation, under the adapter in use (or the base model). */
  readonly languageModel: LanguageModel;
  /** The servers in rotation, in the order given. */
  readonly urls: readonly string[];
  /** The adapter requests name now, or undefined for the base model. */
  readonly adapter: string | undefined;
  /** Every later request names this adapter (or the base model with undefined). */
  useAdapter(name: string | undefined): void;
  /**
   * Loads the PEFT folder `path` as `name` on every server in rotation. A server that fails is
   * taken out of rotation with a warning; when none is left, throws RUNTIME_ERROR naming each failure.
   */
  loadAdapter(name: string, path: string): Promise<AdapterLoadReport>;
  /** Unloads `name` from every server in rotation; an adapter a server does not have is no failure. Returns the servers that failed, with a warning. */
  unloadAdapter(name: string): Promise<Array<{ url: string; reason: string }>>;
  /** The LoRA adapters loaded on `url` (the `/v1/models` entries other than the base model). */
  listAdapters(url: string): Promise<string[]>;
  /** Takes a server out of rotation, with a warning naming `reason`; throws when none would be left. */
  removeServer(url: string, reason: string): void;
}

const rootOf = (url: string) => url.replace(/\/+$/, '').replace(/\/v1$/, '');

/** Creates the rollout back end over `settings.urls`. */
export function createVllmServers(input: VllmServersSettings): VllmServers {
  const { settings, environment, extra } = parseModelSettings(vllmServersSettingsSchema, { ...input }, 'vLLM servers', ['tokenizer', 'warn']);
  const tokenizer = extra.tokenizer as ChatTokenizer;
  const warn = (extra.warn as ((message: string) => void) | undefined) ?? ((message: string) => console.warn(message));
  const fetchImpl = environment.fetch ?? globalThis.fetch;
  const { urls: _urls, adminTimeoutMs, model, guidedDecoding, returnTokenIds, maxTokens, temperature, ...http } = settings;
  const requestSettings = { model, guidedDecoding, returnTokenIds, maxTokens, temperature };
  let rotation = [...new Set(settings.urls.map(rootOf))];
  let transport: JsonTransport = createJsonTransport({ ...http, endpoints: rotation }, environment);
  let adapter: string | undefined;

  function removeServer(url: string, reason: string): void {
    const root = rootOf(url);
    if (!rotation.includes(root)) return;
    const left = rotation.filter((entry) => entry !== root);
    if (left.length === 0) {
      throw new AgentFlowError({
        code: 'RUNTIME_ERROR',
        message: `No vLLM server is left in rotation: the last one, ${root}, failed (${reason}). Check the servers (vllm serve with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True) and resume the run.`,
        details: { url: root, reason },
      });
    }
    rotation = left;
    transport = createJsonTransport({ ...http, endpoints: rotation }, environment);
    warn(`vLLM server ${root} taken out of rotation: ${reason}. ${left.length} server(s) left: ${left.join(', ')}.`);
  }

  /** One admin request; never throws for HTTP or network failures, which come back as a reason. */
  async function admin(method: 'GET' | 'POST', url: string, body?: unknown): Promise<{ ok: boolean; status?: number; text: string }> {
    try {
      const response = await fetchImpl(url, {
        method,
        headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(adminTimeoutMs),
      });
      const text = await readLimitedBody(response, { maxBytes: http.maxResponseBytes, url: `${method} ${url}`, setting: 'maxResponseBytes' });
      return { ok: response.ok, status: response.status, text };
    } catch (error) {
      return { ok: false, text: error instanceof Error ? error.message : String(error) };
    }
  }

  const reasonOf = (reply: { status?: number; text: string }) =>
    `${reply.status === undefined ? 'no response' : `HTTP ${reply.status}`} (${vllmErrorMessage(reply.text) || 'empty body'})`;

  async function loadAdapter(name: string, path: string): Promise<AdapterLoadReport> {
    const targets = [...rotation];
    const replies = await Promise.all(targets.map((url) => admin('POST', `${url}/v1/load_lora_adapter`, { lora_name: name, lora_path: path })));
    const report: AdapterLoadReport = { loaded: [], failed: [] };
    replies.forEach((reply, index) => {
      if (reply.ok) report.loaded.push(targets[index]!);
      else report.failed.push({ url: targets[index]!, reason: reasonOf(reply) });
    });
    if (report.loaded.length === 0) {
      throw new AgentFlowError({
        code: 'RUNTIME_ERROR',
        message: `No vLLM server could load adapter ${name} from ${path}: ${report.failed.map((failure) => `${failure.url}: ${failure.reason}`).join('; ')}. A server reads lora_path from its own disk (share the run directory), needs --enable-lora with --max-lora-rank at least the adapter's rank, and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True.`,
        details: { name, path, failed: report.failed },
      });
    }
    for (const failure of report.failed) removeServer(failure.url, `it failed to load adapter ${name} from ${path}: ${failure.reason}`);
    return report;
  }

  async function unloadAdapter(name: string): Promise<Array<{ url: string; reason: string }>> {
    const targets = [...rotation];
    const replies = await Promise.all(targets.map((url) => admin('POST', `${url}/v1/unload_lora_adapter`, { lora_name: name })));
    const failed: Array<{ url: string; reason: string }> = [];
    replies.forEach((reply, index) => {
      // vLLM answers 404 (older: 400) for an adapter it does not have: already the wanted state.
      if (reply.ok || ((reply.status === 404 || reply.status === 400) && /not found|cannot be found|does not exist/i.test(reply.text))) return;
      failed.push({ url: targets[index]!, reason: reasonOf(reply) });
    });
    for (const failure of failed) warn(`vLLM server ${failure.url} could not unload adapter ${name}: ${failure.reason}.`);
    return failed;
  }

  async function listAdapters(url: string): Promise<string[]> {
    const root = rootOf(url);
    const reply = await admin('GET', `${root}/v1/models`);
    if (!reply.ok) {
      throw new AgentFlowError({ code: 'HTTP_ERROR', message: `GET ${root}/v1/models failed: ${reasonOf(reply)}.`, details: { url: root } });
    }
    let body: unknown;
    try {
      body = JSON.parse(reply.text);
    } catch {
      body = undefined;
    }
    const parsed = vllmModelListSchema.safeParse(body);
    if (!parsed.success) {
      throw new AgentFlowError({ code: 'PARSE_ERROR', message: `GET ${root}/v1/models did not return a model list: ${reply.text.slice(0, 200)}`, details: { url: root } });
    }
    return parsed.data.data.filter((entry) => entry.id !== model && (entry.parent === undefined || entry.parent !== null)).map((entry) => entry.id);
  }

  const languageModel: LanguageModel = {
    specificationVersion: 'v1',
    provider: 'vllm',
    modelId: model,
    chat: (request: ChatRequest) =>
      vllmChat({ transport, model: adapter ?? model, ...(adapter === undefined ? {} : { policyVersion: adapter }) }, tokenizer, requestSettings, request),
  };

  return {
    languageModel,
    get urls() {
      return [...rotation];
    },
    get adapter() {
      return adapter;
    },
    useAdapter(name) {
      adapter = name;
    },
    loadAdapter,
    unloadAdapter,
    listAdapters,
    removeServer,
  };
}
