// A throwaway release checkout for scripts/registry-check.mjs: the files a release job has
// (the workspace's tracked and unignored files that publishing reads, plus each package's
// built dist/ from `pnpm build`), its own git repository (so `changeset publish` can tag), and
// its own `pnpm install` from the store. The repository itself is only read.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What publishing reads: the workspace's manifests and settings, the changesets, the packages. */
const PATHSPECS = ['package.json', 'pnpm-workspace.yaml', 'pnpm-lock.yaml', '.npmrc', '.gitignore', 'LICENSE', '.changeset', 'packages', 'apps/*/package.json'];

/** The packages that `changeset publish` publishes (not private), as they are in `dir`. */
export function publishablePackages(dir) {
  return readdirSync(join(dir, 'packages'))
    .filter((name) => existsSync(join(dir, 'packages', name, 'package.json')))
    .map((name) => ({ short: name, dir: join(dir, 'packages', name), manifest: JSON.parse(readFileSync(join(dir, 'packages', name, 'package.json'), 'utf8')) }))
    .filter((pkg) => pkg.manifest.private !== true);
}

/** Copies the publishable state of `root` into `copy`; fails naming a package without dist/. */
export async function copyWorkspace(root, copy) {
  for (const pkg of publishablePackages(root)) {
    if (!existsSync(join(pkg.dir, 'dist', 'index.js'))) {
      throw new Error(`${pkg.manifest.name} has no dist/index.js in ${pkg.dir}: run \`pnpm build\` first.`);
    }
  }
  const { stdout } = await run('git', ['ls-files', '-co', '--exclude-standard', '-z', '--', ...PATHSPECS], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  const files = stdout.split('\0').filter((file) => file !== '' && existsSync(join(root, file)));
  for (const file of files) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(root, file), join(copy, file));
  }
  for (const pkg of publishablePackages(root)) cpSync(join(pkg.dir, 'dist'), join(copy, 'packages', pkg.short, 'dist'), { recursive: true });
  return files.length;
}

/** `pnpm install` in the copy as a release job does, from the store, without build scripts. */
export async function installCopy(copy) {
  const started = performance.now();
  try {
    await run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline', '--ignore-scripts'], { cwd: copy, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    throw new Error(`pnpm install --frozen-lockfile failed in the release copy ${copy}:\n${error.stdout ?? ''}${error.stderr ?? error.message}`);
  }
  return (performance.now() - started) / 1000;
}

/**
 * Makes the copy a git repository with one commit, as the release commit a real release
 * publishes from; `changeset publish` tags it. Everything runs with the copy's own .git.
 */
export async function commitCopy(copy, message) {
  const git = (args) => run('git', args, { cwd: copy, env: { ...process.env, GIT_DIR: join(copy, '.git'), GIT_WORK_TREE: copy } });
  await git(['init', '--quiet', '--initial-branch=main']);
  await git(['add', '--all']);
  await git(['-c', 'user.name=registry-check', '-c', 'user.email=registry-check@localhost', '-c', 'commit.gpgsign=false', 'commit', '--quiet', '--no-verify', '-m', message]);
}

/** The tags of the copy's repository. */
export async function copyTags(copy) {
  const { stdout } = await run('git', ['tag', '--list'], { cwd: copy, env: { ...process.env, GIT_DIR: join(copy, '.git') } });
  return stdout.split('\n').filter(Boolean);
}
