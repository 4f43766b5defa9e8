// What `changeset publish` left on the registry, read back as npm reads it: the document of
// each package (the version, `latest` pointing at it), its tarball (integrity as announced),
// the package.json inside (no workspace: range, every @agentflow/* it names published too)
// and every file its exports, main and types point at.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Every relative file a manifest's exports, main and types name (wildcards and ./package.json aside). */
export function exportTargets(manifest) {
  const targets = new Set();
  const visit = (value) => {
    if (typeof value === 'string') {
      if (value.startsWith('./') && !value.includes('*') && value !== './package.json') targets.add(value.slice(2));
    } else if (value && typeof value === 'object') {
      for (const nested of Object.values(value)) visit(nested);
    }
  };
  visit(manifest.exports);
  for (const field of ['main', 'types']) if (typeof manifest[field] === 'string') targets.add(manifest[field].replace(/^\.\//, ''));
  return [...targets].sort();
}

/**
 * Checks each published package; resolves with `published` (name -> { version, integrity,
 * tarball }) and the problems found, each naming the package and the offending value.
 */
export async function readBackPublished({ registry, packages, dir }) {
  const published = new Map();
  const problems = [];
  for (const pkg of packages) {
    const { name, version } = pkg.manifest;
    const document = await registry.packument(name);
    const entry = document?.versions?.[version];
    if (!entry) {
      problems.push(`${name}@${version} is not on the registry (versions there: ${Object.keys(document?.versions ?? {}).join(', ') || 'none'})`);
      continue;
    }
    if (document['dist-tags']?.latest !== version) problems.push(`${name}: dist-tag latest is ${document['dist-tags']?.latest}, not ${version}`);
    const response = await fetch(entry.dist.tarball);
    if (!response.ok) {
      problems.push(`${name}: GET ${entry.dist.tarball} answered ${response.status}`);
      continue;
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
    if (integrity !== entry.dist.integrity) problems.push(`${name}: the tarball's integrity ${integrity} is not the announced ${entry.dist.integrity}`);
    const file = join(dir, `${pkg.short}-${version}.tgz`);
    writeFileSync(file, bytes);
    const listing = new Set((await run('tar', ['-tzf', file])).stdout.split('\n'));
    const packed = (await run('tar', ['-xzf', file, '-O', 'package/package.json'])).stdout;
    const manifest = JSON.parse(packed);
    for (const [line, text] of packed.split('\n').entries()) {
      if (text.includes('workspace:')) problems.push(`${name}: the published package.json still has a workspace: range at line ${line + 1}: ${text.trim()}`);
    }
    for (const target of exportTargets(manifest)) {
      if (!listing.has(`package/${target}`)) problems.push(`${name}: exports name ./${target}, which is not in the tarball (check "files")`);
    }
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const dep of Object.keys(manifest[field] ?? {})) {
        if (dep.startsWith('@agentflow/') && !packages.some((other) => other.manifest.name === dep)) {
          problems.push(`${name}: ${field} names ${dep}, which was not published`);
        }
      }
    }
    published.set(name, { version, integrity: entry.dist.integrity, tarball: entry.dist.tarball, bytes: bytes.length });
  }
  return { published, problems };
}
