import { describe, expect, it } from 'vitest';
import { type AdapterSyncState, createAdapterSync } from './adapter-sync';
import type { VllmServers } from './vllm-servers';

/** vLLM servers in memory: the adapters each holds, and loads that fail on demand. */
function fakeServers(urls: string[], failLoadsOn: Set<string> = new Set()) {
  const held = new Map(urls.map((url) => [url, new Set<string>()]));
  let rotation = [...urls];
  let adapter: string | undefined;
  const calls: string[] = [];
  const servers: VllmServers = {
    languageModel: { specificationVersion: 'v1', provider: 'vllm', modelId: 'm', chat: async () => ({ text: '', finishReason: 'stop', model: 'm' }) },
    get urls() {
      return [...rotation];
    },
    get adapter() {
      return adapter;
    },
    useAdapter: (name) => {
      adapter = name;
    },
    async loadAdapter(name) {
      const loaded = rotation.filter((url) => !failLoadsOn.has(url));
      for (const url of loaded) {
        if (held.get(url)!.has(name)) throw new Error(`${url} already has ${name}`);
        held.get(url)!.add(name);
        calls.push(`load ${name} ${url}`);
      }
      const failed = rotation.filter((url) => failLoadsOn.has(url)).map((url) => ({ url, reason: 'HTTP 500 (out of memory)' }));
      for (const failure of failed) servers.removeServer(failure.url, failure.reason);
      return { loaded, failed };
    },
    async unloadAdapter(name) {
      for (const url of rotation) if (held.get(url)!.delete(name)) calls.push(`unload ${name} ${url}`);
      return [];
    },
    listAdapters: async (url) => [...held.get(url)!],
    removeServer(url) {
      rotation = rotation.filter((entry) => entry !== url);
      if (rotation.length === 0) throw new Error('none left');
    },
  };
  return { servers, held, calls };
}

function syncOver(servers: VllmServers, store: { state?: AdapterSyncState }, saved: number[], kill?: number) {
  return createAdapterSync({
    servers,
    prefix: 'run',
    pathOf: (version) => `/adapters/step-${version}`,
    saveAdapter: async (version) => {
      saved.push(version);
    },
    readState: () => store.state,
    writeState: (state) => {
      // A kill right after the pending version is recorded, before any server loads it.
      if (kill !== undefined && state.pending?.version === kill) {
        store.state = structuredClone(state);
        throw new Error('killed');
      }
      store.state = structuredClone(state);
    },
    removeOldFolders: false,
  });
}

describe('createAdapterSync', () => {
  it('loads each version on every server before it is used and unloads the one before', async () => {
    const { servers, held, calls } = fakeServers(['a', 'b']);
    const store: { state?: AdapterSyncState } = {};
    const sync = syncOver(servers, store, []);
    await sync.recover();
    const names = await Promise.all([sync.ensure(0), sync.ensure(0), sync.ensure(0)]);
    expect(names).toEqual(['run-step0', 'run-step0', 'run-step0']);
    await sync.ensure(1);
    expect(calls).toEqual(['load run-step0 a', 'load run-step0 b', 'load run-step1 a', 'load run-step1 b', 'unload run-step0 a', 'unload run-step0 b']);
    expect([...held.get('a')!]).toEqual(['run-step1']);
    expect(servers.adapter).toBe('run-step1');
    expect(store.state).toEqual({ loaded: { version: 1, name: 'run-step1', path: '/adapters/step-1' } });
  });

  it('after a kill between the save and the load, a resume leaves every server on the resumed version', async () => {
    const { servers, held } = fakeServers(['a', 'b']);
    const store: { state?: AdapterSyncState } = {};
    const saved: number[] = [];
    const first = syncOver(servers, store, saved, 2);
    await first.recover();
    await first.ensure(1);
    await expect(first.ensure(2)).rejects.toThrow('killed');
    expect(store.state?.pending?.version).toBe(2);
    // Some server half-loaded step 2 before the kill; and a stray adapter of another run stays.
    held.get('a')!.add('run-step2');
    held.get('b')!.add('other-step9');
    // Resumed from the checkpoint of step 2: its adapter is saved again and loaded everywhere.
    const resumed = syncOver(servers, store, saved);
    await resumed.recover();
    expect(resumed.current?.version).toBe(1);
    await resumed.ensure(2);
    expect([...held.get('a')!]).toEqual(['run-step2']);
    expect([...held.get('b')!].sort()).toEqual(['other-step9', 'run-step2']);
    expect(saved).toEqual([1, 2, 2]);
    expect(store.state).toEqual({ loaded: { version: 2, name: 'run-step2', path: '/adapters/step-2' } });
  });

  it('a resume from an earlier checkpoint unloads the newer versions and reloads the older one', async () => {
    const { servers, held } = fakeServers(['a', 'b']);
    const store: { state?: AdapterSyncState } = {};
    const sync = syncOver(servers, store, []);
    await sync.recover();
    await sync.ensure(3);
    const resumed = syncOver(servers, store, []);
    await resumed.recover();
    await resumed.ensure(2);
    expect([...held.get('a')!]).toEqual(['run-step2']);
    expect([...held.get('b')!]).toEqual(['run-step2']);
  });

  it('goes on with the servers that loaded the adapter', async () => {
    const { servers, held } = fakeServers(['a', 'b'], new Set(['b']));
    const sync = syncOver(servers, {}, []);
    await sync.recover();
    await sync.ensure(0);
    expect(servers.urls).toEqual(['a']);
    expect([...held.get('a')!]).toEqual(['run-step0']);
  });
});
