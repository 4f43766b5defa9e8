import { rmSync } from 'node:fs';
import type { VllmServers } from './vllm-servers';

/** One adapter version as the servers know it: its name there and its PEFT folder. */
export interface AdapterVersion {
  version: number;
  name: string;
  path: string;
}

/**
 * What an adapter sync keeps in the run's state: the version every server in rotation holds
 * (`loaded`), and the one being loaded (`pending`), written before any server is asked to load
 * it, so that a run killed mid-swap knows on resume which adapters may be half loaded.
 */
export interface AdapterSyncState {
  loaded?: AdapterVersion;
  pending?: AdapterVersion;
}

export interface AdapterSyncSettings {
  servers: VllmServers;
  /** Adapters are named `${prefix}-step${version}` on the servers; other names are left alone. */
  prefix: string;
  /** Where the PEFT folder of `version` is written (a path every server can read). */
  pathOf(version: number): string;
  /** Writes the policy's adapter after `version` updates as a PEFT folder at `path` (base_model_name_or_path set). */
  saveAdapter(version: number, path: string): Promise<void>;
  readState(): AdapterSyncState | undefined;
  writeState(state: AdapterSyncState): void;
  /** Told what happens (loads, unloads, what a resume found). */
  log?(message: string): void;
  /** Delete the folder of a version once no server holds it (default true; the checkpoints keep the adapter). */
  removeOldFolders?: boolean;
}

export interface AdapterSync {
  /**
   * Once per run, before the first `ensure`: reads each server's adapters, unloads every adapter
   * of this run (`prefix`) that is not the recorded, fully loaded version (a pending load of a
   * killed run among them), and takes servers that do not answer out of rotation.
   */
  recover(): Promise<void>;
  /**
   * Makes `version` the adapter every server in rotation samples with: saves it, records it as
   * pending, loads it everywhere (a server that fails leaves the rotation), switches requests to
   * it, unloads the previous one, records it as loaded. Returns its name; concurrent calls for
   * one version share one swap, and a version already in use costs nothing.
   */
  ensure(version: number): Promise<string>;
  /** The version in use now, if any. */
  readonly current: AdapterVersion | undefined;
}

/** Keeps vLLM servers on the policy's adapter version, resumably. */
export function createAdapterSync(settings: AdapterSyncSettings): AdapterSync {
  const { servers, prefix } = settings;
  const log = settings.log ?? (() => {});
  const nameOf = (version: number) => `${prefix}-step${version}`;
  const ours = (name: string) => name.startsWith(`${prefix}-step`) && /^\d+$/.test(name.slice(prefix.length + 5));
  let current: AdapterVersion | undefined;
  let swapping: { version: number; done: Promise<string> } | undefined;
  let chain: Promise<unknown> = Promise.resolve();

  async function recover(): Promise<void> {
    const state = settings.readState() ?? {};
    const keep = state.loaded && state.loaded.name !== state.pending?.name ? state.loaded : undefined;
    const stale = new Set<string>();
    let everyServerHasIt = keep !== undefined;
    for (const url of servers.urls) {
      let names: string[];
      try {
        names = await servers.listAdapters(url);
      } catch (error) {
        servers.removeServer(url, `it did not list its adapters (${(error as Error).message.replace(/\.$/, '')})`);
        continue;
      }
      for (const name of names) if (ours(name) && name !== keep?.name) stale.add(name);
      if (keep && !names.includes(keep.name)) everyServerHasIt = false;
    }
    if (keep && !everyServerHasIt) stale.add(keep.name);
    if (state.pending) log(`vLLM: the run stopped while loading adapter ${state.pending.name}; it is unloaded and the adapter of the resumed step loaded again.`);
    for (const name of stale) {
      await servers.unloadAdapter(name);
      log(`vLLM: unloaded stale adapter ${name} from ${servers.urls.join(', ')}.`);
    }
    current = keep && everyServerHasIt ? keep : undefined;
    servers.useAdapter(current?.name);
    settings.writeState(current ? { loaded: current } : {});
  }

  async function swap(version: number): Promise<string> {
    if (current?.version === version) return current.name;
    const next: AdapterVersion = { version, name: nameOf(version), path: settings.pathOf(version) };
    await settings.saveAdapter(version, next.path);
    settings.writeState({ ...(current ? { loaded: current } : {}), pending: next });
    // A half-finished load of the same name (a killed run) would make vLLM refuse this one.
    await servers.unloadAdapter(next.name);
    const report = await servers.loadAdapter(next.name, next.path);
    servers.useAdapter(next.name);
    const previous = current;
    current = next;
    if (previous && previous.name !== next.name) {
      await servers.unloadAdapter(previous.name);
      if (settings.removeOldFolders ?? true) rmSync(previous.path, { recursive: true, force: true });
    }
    settings.writeState({ loaded: next });
    log(`vLLM: adapter ${next.name} loaded on ${report.loaded.join(', ')}${previous ? `; ${previous.name} unloaded` : ''}.`);
    return next.name;
  }

  return {
    recover,
    ensure(version) {
      if (current?.version === version && swapping === undefined) return Promise.resolve(current.name);
      if (swapping?.version === version) return swapping.done;
      const done = chain.then(() => swap(version));
      const entry = { version, done };
      swapping = entry;
      chain = done
        .catch(() => undefined)
        .finally(() => {
          if (swapping === entry) swapping = undefined;
        });
      return done;
    },
    get current() {
      return current;
    },
  };
}
