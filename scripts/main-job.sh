#!/usr/bin/env bash
# The main job on the bundled corpus: build fabdex, index corpus/ with the
# bundled fabdex.toml, then answer a sample research question the way the
# research agent would: search, open the best section, follow its neighbours,
# look up the contract of a component it would compose, and run the research
# service on the inbox task (a scripted model unless an endpoint is named by
# FABDEX_RESEARCH_BASE_URL, with FABDEX_RESEARCH_MODEL and the key in
# OPENAI_API_KEY).
set -euo pipefail
cd "$(dirname "$0")/.."
QUESTION="${1:-how do I tell whether looking up another piece by hashtag found nothing}"

cargo build --release --locked -p fabdex
fabdex=target/release/fabdex

echo "== fabdex index   (bundled fabdex.toml: corpus/docs, corpus/skills, corpus/patterns, corpus/published)"
"$fabdex" index

echo
echo "== fabdex search docs \"$QUESTION\""
"$fabdex" search docs "$QUESTION" --limit 5

# JSON goes to a file first: no pipeline whose reader can exit before fabdex
# finishes writing (under pipefail that SIGPIPE would end the job).
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
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
if [ -n "${FABDEX_RESEARCH_BASE_URL:-}" ]; then
  echo "== fabdex research \"$TASK\" --grants $GRANTS   (model endpoint $FABDEX_RESEARCH_BASE_URL)"
  model=(--base-url "$FABDEX_RESEARCH_BASE_URL" ${FABDEX_RESEARCH_MODEL:+--model "$FABDEX_RESEARCH_MODEL"})
else
  echo "== fabdex research \"$TASK\" --grants $GRANTS --scripted corpus/research/inbox-model.json"
  echo "   No model endpoint is configured, so a SCRIPTED model on loopback plays recorded turns."
  echo "   Set FABDEX_RESEARCH_BASE_URL to an OpenAI-compatible /v1 (llama.cpp, vLLM, Ollama, OpenAI) for a real one."
  model=(--scripted corpus/research/inbox-model.json)
fi
# A real model may end incomplete (the outcome says why); the scripted one must not.
"$fabdex" research "$TASK" --grants "$GRANTS" "${model[@]}" | tee /tmp/fabdex-research.txt || [ -n "${FABDEX_RESEARCH_BASE_URL:-}" ]
run=$(head -1 /tmp/fabdex-research.txt | sed -E 's/^research ([^:]+):.*/\1/')
echo
echo "== fabdex ledger show $run   (model turns apart from tool calls)"
"$fabdex" ledger show "$run"
echo
echo "   the outcome (admitted kit, admission report, usage): .fabdex/runs/$run/research.json; the kit alone: kit.json"
