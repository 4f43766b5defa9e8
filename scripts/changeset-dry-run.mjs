#!/usr/bin/env node
// Runs `changeset version` on a copy of the repository and checks the result: every package
// with a pending changeset gets a new version, none reaches 1.0.0 unless a changeset asked
// for a major bump of it, each bumped package gets a CHANGELOG.md headed by its new version,
// the private app stays as it is, and no changeset is left over. Run by .ci/run.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const copy = mkdtempSync(join(tmpdir(), 'agentflow-changeset-'));
const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' }).split('\0');
for (const file of files.filter((name) => name !== '' && existsSync(join(root, name)))) {
  mkdirSync(dirname(join(copy, file)), { recursive: true });
  cpSync(join(root, file), join(copy, file));
}
symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));

const manifests = (dir) =>
  Object.fromEntries(
    ['packages', 'apps'].flatMap((group) =>
      readdirSync(join(dir, group))
        .filter((name) => existsSync(join(dir, group, name, 'package.json')))
        .map((name) => {
          const manifest = JSON.parse(readFileSync(join(dir, group, name, 'package.json'), 'utf8'));
          return [manifest.name, { ...manifest, dir: join(dir, group, name) }];
        }),
    ),
  );
/** Per package, the bump types its pending changesets ask for. */
function pendingBumps(dir) {
  const bumps = {};
  for (const file of readdirSync(join(dir, '.changeset')).filter((name) => name.endsWith('.md') && name !== 'README.md')) {
    const front = /^---\n([\s\S]*?)\n---/.exec(readFileSync(join(dir, '.changeset', file), 'utf8'))?.[1] ?? '';
    for (const [, name, type] of front.matchAll(/^["']?([^"':]+)["']?\s*:\s*(major|minor|patch)\s*$/gm)) {
      bumps[name] = [...(bumps[name] ?? []), type];
    }
  }
  return bumps;
}

const before = manifests(copy);
const bumps = pendingBumps(copy);
execFileSync(process.execPath, [join(root, 'node_modules', '@changesets', 'cli', 'bin.js'), 'version'], { cwd: copy, stdio: 'pipe' });
const after = manifests(copy);
const problems = [];
const leftover = readdirSync(join(copy, '.changeset')).filter((name) => name.endsWith('.md') && name !== 'README.md');
if (leftover.length > 0) problems.push(`changesets left after versioning: ${leftover.join(', ')}`);
console.log('changeset version (dry run):');
for (const [name, manifest] of Object.entries(before)) {
  const next = after[name].version;
  const asked = bumps[name] ?? [];
  if (manifest.private) {
    if (next !== manifest.version) problems.push(`${name} is private but was bumped to ${next}`);
    continue;
  }
  console.log(`  ${name}: ${manifest.version} -> ${next} (${asked.length} changesets)`);
  if (asked.length > 0 && next === manifest.version) problems.push(`${name} has ${asked.length} changesets but kept ${next}`);
  if (Number(next.split('.')[0]) > Number(manifest.version.split('.')[0]) && !asked.includes('major')) {
    problems.push(`${name} went from ${manifest.version} to ${next} though no changeset asked for a major bump`);
  }
  if (next !== manifest.version) {
    const changelog = join(after[name].dir, 'CHANGELOG.md');
    const heading = existsSync(changelog) ? /^## (.+)$/m.exec(readFileSync(changelog, 'utf8'))?.[1] : undefined;
    if (heading !== next) problems.push(`${name}: CHANGELOG.md should start with "## ${next}", found ${heading ?? 'no changelog'}`);
  }
}
rmSync(copy, { recursive: true, force: true });
if (problems.length > 0) {
  console.error(`changeset dry run failed:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  process.exit(1);
}
console.log('changeset dry run passed.');
