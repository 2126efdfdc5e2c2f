#!/usr/bin/env bash
# Rebuild corpus/published/registry.jsonl from the programs in
# corpus/published-src/ and their registry metadata (meta.json). Each program
# is indexed on its own, exported as a record (so its patternId is its content
# identity), then joined with its metadata.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet
bin=target/debug/fabdex
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for dir in corpus/published-src/*/; do
  name=$(basename "$dir")
  "$bin" index "$dir" --out "$tmp/idx-$name" --json >/dev/null
  "$bin" --index "$tmp/idx-$name" export records >"$tmp/$name.jsonl"
done
python3 scripts/published_meta.py corpus/published-src/meta.json "$tmp" >corpus/published/registry.jsonl
wc -l corpus/published/registry.jsonl
