// A throwaway Verdaccio registry on loopback for scripts/registry-check.mjs: its own config,
// storage, htpasswd and log in a temporary folder, a port the system picks, one user created
// through the registry's adduser API. @agentflow/* is served only from what is published to
// it (no uplink: a name taken on the public registry can never stand in for ours); every
// other package is proxied from the upstream registry, as a company's registry would.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const serverScript = join(dirname(fileURLToPath(import.meta.url)), 'verdaccio-server.mjs');

/** Verdaccio's config as an object (written as JSON, which its YAML parser reads). */
export function verdaccioConfig({ dir, upstream }) {
  return {
    storage: join(dir, 'storage'),
    auth: { htpasswd: { file: join(dir, 'htpasswd'), max_users: 1 } },
    // Proxied tarballs stream through without being stored: the storage holds only ours.
    uplinks: { upstream: { url: upstream, timeout: '60s', cache: false } },
    packages: {
      '@agentflow/*': { access: '$all', publish: '$authenticated', unpublish: '$authenticated' },
      '**': { access: '$all', publish: '$authenticated', proxy: 'upstream' },
    },
    // JWT tokens: the legacy token makes every request re-check the bcrypt password (~0.3 s).
    security: { api: { legacy: false, jwt: { sign: { expiresIn: '2h' } } } },
    web: { enable: false },
    middlewares: { audit: { enabled: false } },
    // ONNX Runtime's package is the largest tarball anything here publishes or proxies.
    max_body_size: '500mb',
    log: { type: 'file', path: join(dir, 'verdaccio.log'), format: 'json', level: 'warn' },
  };
}

/**
 * Starts Verdaccio in a child process and resolves once it listens. `stop()` ends it (and is
 * safe to call twice); `logTail()` returns the end of its log for error messages.
 */
export async function startVerdaccio({ dir, upstream, startTimeoutMs = 30_000 }) {
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, `${JSON.stringify(verdaccioConfig({ dir, upstream }), null, 2)}\n`);
  const child = spawn(process.execPath, [serverScript, configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-8000);
  });
  const logTail = () => {
    const path = join(dir, 'verdaccio.log');
    const log = existsSync(path) ? readFileSync(path, 'utf8').slice(-4000) : '';
    return `${stderr}${log}`.trim() || '(no output)';
  };
  const port = await new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`Verdaccio did not listen within ${startTimeoutMs / 1000} s:\n${logTail()}`));
    }, startTimeoutMs);
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      for (const line of buffered.split('\n')) {
        const port = /^\{"port":(\d+)\}$/.exec(line.trim())?.[1];
        if (port) {
          clearTimeout(timer);
          resolve(Number(port));
        }
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`Verdaccio exited before listening (code ${code}, signal ${signal}):\n${logTail()}`));
    });
  });
  child.removeAllListeners('exit');
  const url = `http://127.0.0.1:${port}/`;
  let stopped = false;
  const stop = () =>
    new Promise((resolve) => {
      if (stopped || child.exitCode !== null) return resolve();
      stopped = true;
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });
  return { url, port, stop, logTail, addUser: (name) => addUser(url, name), packument: (name) => packument(url, name) };
}

/**
 * Creates a user through the registry's adduser API (what `npm adduser` calls) with a random
 * password, and returns its token: it lives only in the temporary .npmrc files of the run.
 */
export async function addUser(url, name) {
  const password = randomBytes(18).toString('base64url');
  const response = await fetch(`${url}-/user/org.couchdb.user:${encodeURIComponent(name)}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ _id: `org.couchdb.user:${name}`, name, password, type: 'user', roles: [], date: new Date().toISOString() }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok || typeof body.token !== 'string') {
    throw new Error(`adduser ${JSON.stringify(name)} at ${url} answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return body.token;
}

/** The registry's document for `name`, or undefined when it answers 404. */
export async function packument(url, name) {
  const response = await fetch(`${url}${name.replace('/', '%2f')}`, { headers: { accept: 'application/json' } });
  if (response.status === 404) return undefined;
  if (!response.ok) throw new Error(`GET ${url}${name} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  return response.json();
}
