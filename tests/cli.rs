//! The `fabdex` binary: commands, `--json` output, exit codes and error text.

mod common;

use std::process::Command;

use common::Workspace;

fn fabdex(ws: &Workspace, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fabdex"))
        .current_dir(ws.dir.path())
        .env_remove("FABDEX_INDEX")
        .args(args)
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

#[test]
fn index_search_open_outline_related_from_the_command_line() {
    let ws = Workspace::with_corpus();
    // No ROOT and no --config: ./fabdex.toml is used, the index goes to ./.fabdex.
    let (code, out, err) = fabdex(&ws, &["index", "--json"]);
    assert_eq!(code, 0, "{err}");
    let report = json(&out);
    assert!(report["counts"]["files"].as_u64().unwrap() >= 28);
    assert!(ws.path(".fabdex/CURRENT").exists());

    let (code, out, _) = fabdex(&ws, &["search", "docs", "what does a wish give back", "--json", "--limit", "3"]);
    assert_eq!(code, 0);
    let hits = json(&out)["hits"].as_array().unwrap().clone();
    assert_eq!(hits.len(), 3);
    let address = hits[0]["address"].as_str().unwrap().to_string();

    let (code, out, _) = fabdex(&ws, &["open", &address, "--max-chars", "50", "--json"]);
    assert_eq!(code, 0);
    let env = json(&out);
    assert_eq!(env["end"], 50);
    assert_eq!(env["truncated"], true);
    let next = env["next"].as_str().unwrap();
    assert_eq!(next, format!("{address}@50"));
    let (code, out, _) = fabdex(&ws, &["open", next, "--json"]);
    assert_eq!(code, 0);
    assert_eq!(json(&out)["offset"], 50);

    // Text mode says where the window is and how to continue.
    let (code, out, err) = fabdex(&ws, &["open", &address, "--max-chars", "20"]);
    assert_eq!(code, 0);
    assert!(out.trim_end_matches('\n').chars().count() <= 20, "{out}");
    assert!(err.contains("continue with: fabdex open"), "{err}");

    let (code, out, _) = fabdex(&ws, &["outline", "docs/common/concepts", "--json"]);
    assert_eq!(code, 0);
    assert!(json(&out)["files"].as_u64().unwrap() >= 5);
    let (code, out, _) = fabdex(&ws, &["related", "doc:docs/common/conventions/wish.md#result-shape", "--json"]);
    assert_eq!(code, 0);
    assert!(!json(&out)["backlinks"].as_array().unwrap().is_empty());
}

#[test]
fn errors_have_exit_codes_and_json_bodies() {
    let ws = Workspace::with_corpus();
    let (code, _, err) = fabdex(&ws, &["search", "docs", "wish"]);
    assert_eq!(code, 4, "no snapshot yet: {err}");
    assert!(err.contains("run `fabdex index` first"), "{err}");
    assert_eq!(fabdex(&ws, &["index"]).0, 0);
    let (code, out, err) = fabdex(&ws, &["open", "doc:docs/../secret.md", "--json"]);
    assert_eq!(code, 2);
    assert_eq!(json(&out)["error"]["kind"], "invalid-argument");
    assert!(err.contains("doc:docs/../secret.md"), "the error names the address: {err}");
    let (code, out, _) = fabdex(&ws, &["open", "doc:docs/FAQ.md#nope", "--json"]);
    assert_eq!(code, 3);
    assert_eq!(json(&out)["error"]["kind"], "not-found");
    let (code, _, err) = fabdex(&ws, &["index", "does-not-exist"]);
    assert_eq!(code, 1);
    assert!(err.contains("does-not-exist") && err.contains("does not exist"), "{err}");
}
