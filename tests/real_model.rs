//! The research service against a model server someone else wrote:
//! llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct
//! (8,192 tokens of context), on loopback, behind a recording proxy. The
//! tests assert fabdex's behaviour on whatever the real model does, not the
//! model's wisdom: every request accepted, the context never exceeded, tool
//! calls run through the registry and answered by id, bad calls and prose
//! answered as docs/research.md says, the server's token counts the ones
//! counted, and an outcome that cites only reads the ledger holds.
//!
//! Skips, saying why, when the server or the model is not installed
//! (`scripts/get-chat-model.sh`); fails then under `FABDEX_REQUIRE_REAL_MODEL`
//! (which `.ci/run` sets).

mod common;

use std::collections::BTreeSet;

use common::real_model::{self, CONTEXT_TOKENS, RealModel};
use common::{Workspace, fabdex_command, project_root};
use fabdex_kit::KitStatus;
use fabdex_ledger::{RecordKind, RunStore};
use fabdex_research::{Budgets, Client, Grants, Request, Service};
use serde_json::Value;

const TASK: &str = "give me a simple list view of my email inbox";

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

#[test]
fn research_on_the_inbox_task_against_a_real_server_fits_its_context_and_accounts_what_it_says() {
    if !real_model::available_or_skip("the real-model research test") {
        return;
    }
    let ws = Workspace::with_corpus();
    ws.build();
    let engine = ws.engine();
    let model = RealModel::start();
    // The window is not configured: llama-cpp-python states none, so the
    // first refusal must teach it (the path a new user takes).
    let endpoint = model.endpoint();
    let store = RunStore::new(ws.path("runs"));
    let svc = Service {
        engine: &engine,
        store: store.clone(),
        policy: None,
        client: Client::new(endpoint).unwrap(),
        model_label: "SmolLM2-135M".into(),
    };
    let mut request = Request::new(TASK);
    request.grants = Grants::load(&project_root().join("corpus/research/mail-grant.json")).unwrap();
    request.budgets = Budgets { turns: 6, tool_calls: 16, seconds: 1_500, ..Budgets::DEFAULT };
    let outcome = fabdex_research::research(&svc, &request).unwrap();
    let exchanges = model.completions();
    let shown = || format!("{:#?}", outcome.notes);

    // Every request but a context refusal (each followed by a smaller one
    // that was accepted) is accepted: no 4xx from the shape of what we send.
    assert!(!exchanges.is_empty());
    for (i, e) in exchanges.iter().enumerate() {
        if e.status == 400 && e.response.contains("context_length_exceeded") {
            let next = exchanges.get(i + 1).expect("a refusal is retried");
            assert_eq!(next.status, 200, "the smaller retry is accepted: {}", next.response);
            assert!(next.request.len() < e.request.len());
            continue;
        }
        assert_eq!(e.status, 200, "request {i} refused: {}", e.response);
    }
    let answered: Vec<(Value, Value)> =
        exchanges.iter().filter(|e| e.status == 200).map(|e| (json(&e.request), json(&e.response))).collect();
    assert!(answered.len() >= 2 || outcome.stopped == "kit-submitted", "got past the first turn: {}", shown());

    // The whole run fits the context: each accepted prompt plus the answer's reserve.
    for (req, resp) in &answered {
        let prompt = resp["usage"]["prompt_tokens"].as_u64().unwrap();
        let reserve = req["max_tokens"].as_u64().expect("max_tokens is sent once the window is known");
        assert!(prompt + reserve <= u64::from(CONTEXT_TOKENS), "{prompt} + {reserve} tokens");
    }

    // The server's usage is what the outcome and the ledger count.
    let usage_in: u64 = answered.iter().map(|(_, r)| r["usage"]["prompt_tokens"].as_u64().unwrap()).sum();
    let usage_out: u64 = answered.iter().map(|(_, r)| r["usage"]["completion_tokens"].as_u64().unwrap()).sum();
    assert_eq!((outcome.spent.tokens_in, outcome.spent.tokens_out), (usage_in, usage_out));
    let ledger = store.ledger(&outcome.run).unwrap().read().unwrap();
    let turns: Vec<_> = ledger.records.iter().filter_map(|r| r.call.turn.as_ref()).collect();
    assert_eq!(turns.iter().map(|t| t.tokens_in).sum::<u64>(), usage_in);
    assert!(turns.iter().all(|t| t.context.as_ref().is_some_and(|c| c.window == CONTEXT_TOKENS)), "{turns:#?}");

    // Each call the model made was answered, by its id, in the next request,
    // the way docs/research.md says: a result, or a tool error naming why.
    for (n, pair) in answered.windows(2).enumerate() {
        let (reply, next) = (&pair[0].1["choices"][0]["message"], &pair[1].0["messages"]);
        let answers: Vec<&Value> = next.as_array().unwrap().iter().filter(|m| m["role"] == "tool").collect();
        for call in reply["tool_calls"].as_array().into_iter().flatten() {
            let id = call["id"].as_str().unwrap();
            let answer = answers
                .iter()
                .find(|m| m["tool_call_id"] == id)
                .unwrap_or_else(|| panic!("turn {n}: call {id} unanswered"));
            let text = answer["content"].as_str().unwrap();
            let name = call["function"]["name"].as_str().unwrap();
            let args = call["function"]["arguments"].as_str().unwrap_or("{}");
            let known = fabdex_research::toolset::READ_ONLY.contains(&name) || name == "submit_kit";
            if !known {
                assert!(text.contains("unknown-tool"), "unknown tool {name}: {text}");
            } else if !args.trim().is_empty() && serde_json::from_str::<Value>(args).is_err() {
                assert!(text.contains("invalid-argument"), "malformed arguments of {name}: {text}");
            } else {
                assert!(
                    text.contains("\"result\"") || text.contains("\"error\"") || text.contains("\"received\""),
                    "{text}"
                );
            }
        }
        // Prose instead of a call is answered by the one format repair.
        let prose = reply["tool_calls"].as_array().is_none_or(|c| c.is_empty());
        if prose && n + 2 < answered.len() {
            let last_user = next.as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap();
            assert!(last_user["content"].as_str().unwrap().contains("Your answer was not a kit"), "turn {n}");
        }
    }

    // Tool calls ran through the registry: one ledger record per call made.
    let made = turns.iter().flat_map(|t| &t.calls).filter(|c| c.outcome == "ok" || c.outcome == "tool-error").count();
    let tool_records = ledger.records.iter().filter(|r| r.call.kind == RecordKind::Tool).count();
    assert_eq!(tool_records, made + 2, "the host's two opening searches and the model's calls");

    // An admitted kit, or an incomplete one saying what is missing; either
    // way every citation is a read this run made.
    match outcome.status {
        KitStatus::Complete => assert!(!outcome.kit.sources.is_empty()),
        _ => assert!(!outcome.kit.missing.is_empty(), "an incomplete kit says why: {:?}", outcome.kit),
    }
    let cited: BTreeSet<&str> = outcome.kit.sources.iter().map(|s| s.id.as_str()).collect();
    let verify = fabdex_command()
        .current_dir(ws.dir.path())
        .args(["--index", "index", "--runs", "runs", "ledger", "verify", &outcome.run])
        .output()
        .unwrap();
    assert!(verify.status.success(), "ledger verify: {}", String::from_utf8_lossy(&verify.stderr));
    for id in cited {
        let read = ledger.records.iter().flat_map(|r| &r.call.items).any(|i| i.citation.as_deref() == Some(id));
        assert!(read, "{id} cited but never read");
    }
}
