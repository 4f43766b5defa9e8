#!/usr/bin/env bash
# `pnpm gpu:setup`: installs ONNX Runtime's CUDA execution provider (1.29.0, CUDA 13) from the
# npm registry alone, beside onnxruntime-node's libonnxruntime.so.1. Options and exit codes:
# scripts/gpu/setup.mjs. Run once on a Linux x64 machine with an NVIDIA GPU, after `pnpm setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
exec node scripts/gpu/setup.mjs "$@"
