#!/usr/bin/env bash
# Installs everything AgentFlow needs on a fresh Debian machine with Node 20, then builds.
# Idempotent: safe to run again. See ../shared/TOOLCHAIN.md for why each step is here.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n[setup] %s\n' "$*"; }

SUDO=''
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO='sudo'; fi

# Debian packages: bubblewrap isolates the Python tool; python3 with sympy and numpy runs it.
need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if ! python3 -c 'import sympy, numpy' >/dev/null 2>&1; then need_apt+=(python3-sympy python3-numpy); fi
if [ ${#need_apt[@]} -gt 0 ]; then
  log "installing Debian packages: ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Best effort: Debian's PyTorch (python3-torch 1.13) under /usr/bin/python3, the independent
# reader that packages/models/src/weights/pytorch-reference.test.ts compares against (the test
# skips without it) and the other side of `pnpm --filter @agentflow/models bench:pytorch`.
# About 190 MB to download and 850 MB on disk; took 66 s here with most archives cached.
# AGENTFLOW_SKIP_TORCH=1 skips it; without apt (or root/sudo) it is skipped with a note.
if [ "${AGENTFLOW_SKIP_TORCH:-0}" != 1 ] && ! /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; }; then
    log 'installing python3-torch (best effort)'
    if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-torch >/dev/null; }; then
      log 'python3-torch did not install; the PyTorch comparison tests will be skipped'
    fi
  else
    log 'no apt-get (or no root): python3-torch not installed; the PyTorch comparison tests will be skipped'
  fi
fi

# pnpm, pinned (newer releases refuse this lockfile on Node 20).
PNPM_VERSION=$(node -p "require('./package.json').packageManager.split('@')[1]")
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version)" != "$PNPM_VERSION" ]; then
  log "installing pnpm $PNPM_VERSION"
  $SUDO npm install -g "pnpm@$PNPM_VERSION" >/dev/null
fi

# better-sqlite3 compiles against Node's headers; pnpm ignores nodedir in .npmrc.
log 'installing dependencies'
export npm_config_nodedir="${npm_config_nodedir:-$(dirname "$(dirname "$(command -v node)")")}"
pnpm install --frozen-lockfile

log 'building packages'
pnpm build
log 'done'
