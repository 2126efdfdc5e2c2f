#!/usr/bin/env bash
# Run every cargo-fuzz target of crates/fabdex-fuzz for a fixed budget and
# print executions and crashes per target (a Markdown table).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 600 s, all targets)
#        SECONDS_PER_TARGET 0 runs each target over its seeds only, once (CI's smoke).
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# Seeds: corpus/ Markdown and TS/TSX, the published records' lines, and
# crates/fabdex-fuzz/seeds/. A crash is left in
# crates/fabdex-fuzz/artifacts/<target>/; turn it into a file under
# crates/fabdex-fuzz/regressions/ named <target>-<what>.txt and fix it.
set -euo pipefail
cd "$(dirname "$0")/.."
budget="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(markdown typescript address cf_specifier published_line run_artifacts kit tool_call)
fi
if ! cargo +nightly --version >/dev/null 2>&1 || ! cargo fuzz --version >/dev/null 2>&1; then
  echo "skipping fuzzing: needs the nightly toolchain and cargo-fuzz"
  exit 0
fi
# `-O` builds with the workspace's release profile, whose fat LTO and single
# codegen unit are for the shipped binary; each fuzz target would pay a
# whole-program link under the sanitizer. The fuzz builds keep the release
# optimisations without them.
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
fuzz=(cargo +nightly fuzz run --fuzz-dir crates/fabdex-fuzz --features libfuzzer -O)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

seed() {
  local target="$1" dir="$work/corpus-$1"
  mkdir -p "$dir"
  case "$target" in
    markdown) find corpus -name '*.md' -exec cp --backup=numbered -t "$dir" {} + ;;
    typescript) find corpus/patterns \( -name '*.ts' -o -name '*.tsx' \) -exec cp --backup=numbered -t "$dir" {} + ;;
    published_line) split -l 1 corpus/published/registry.jsonl "$dir/line-" ;;
    *) cp crates/fabdex-fuzz/seeds/"$target"/* "$dir"/ ;;
  esac
  echo "$dir"
}

echo "| target | budget | executions | crashes |"
echo "|---|---|---|---|"
failed=0
for t in "${targets[@]}"; do
  corpus_dir="$(seed "$t")"
  log="$work/$t.log"
  mkdir -p "crates/fabdex-fuzz/artifacts/$t"
  set +e
  if [ "$budget" = 0 ]; then limit=(-runs=0); else limit=(-max_total_time="$budget"); fi
  "${fuzz[@]}" "$t" "$corpus_dir" -- "${limit[@]}" -print_final_stats=1 \
    -artifact_prefix="crates/fabdex-fuzz/artifacts/$t/" >"$log" 2>&1
  status=$?
  set -e
  runs="$(grep -a -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)"
  crashes="$(find "crates/fabdex-fuzz/artifacts/$t" -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' \) | wc -l)"
  if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then
    echo "$t: cargo fuzz failed (exit $status); its log:" >&2
    tail -20 "$log" >&2
    failed=1
  fi
  [ "$crashes" -gt 0 ] && failed=1
  echo "| $t | ${budget} s | ${runs:-?} | $crashes |"
done
exit "$failed"
