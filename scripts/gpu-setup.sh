#!/usr/bin/env bash
# Downloads the CUDA 12 execution provider of onnxruntime-node (skipped by the default
# install, whose machines cannot reach the host it comes from). Run once on a GPU machine.
set -euo pipefail
cd "$(dirname "$0")/../packages/tensor"
ort_dir=$(node -p "require('path').dirname(require.resolve('onnxruntime-node/package.json'))")
cd "$ort_dir"
ONNXRUNTIME_NODE_INSTALL=cuda12 node script/install.js
echo "CUDA provider installed in $ort_dir/bin"
