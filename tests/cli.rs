//! The `fabdex` binary: commands, `--json` output, exit codes and error text.

mod common;

use common::Workspace;

fn fabdex(ws: &Workspace, args: &[&str]) -> (i32, String, String) {
    let out =
        common::fabdex_command().current_dir(ws.dir.path()).env_remove("FABDEX_INDEX").args(args).output().unwrap();
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

#[test]
fn pattern_search_files_read_and_deps_from_the_command_line() {
    let ws = Workspace::with_registry();
    assert_eq!(fabdex(&ws, &["index"]).0, 0);
    let (code, out, err) = fabdex(&ws, &["search", "patterns", "simple list view of my email inbox", "--json"]);
    assert_eq!(code, 0, "{err}");
    let top = json(&out)["hits"][0].clone();
    assert!(top["entry"].as_str().unwrap().ends_with("mail/inbox.tsx"));
    assert_eq!(top["fit"]["missing"][0]["input"], "db");
    let id = top["patternId"].as_str().unwrap().to_string();

    let (code, out, _) = fabdex(&ws, &["search", "patterns", "inbox", "--have", "db:MailDatabase"]);
    assert_eq!(code, 0);
    assert!(out.contains("input db: Writable<MailDatabase> ← db"), "{out}");

    let (code, out, _) = fabdex(&ws, &["files", &id, "--json"]);
    assert_eq!(code, 0);
    let files = json(&out)["files"].as_array().unwrap().clone();
    let types = files.iter().find(|f| f["name"] == "mail/types.ts").unwrap();
    let (code, out, err) = fabdex(&ws, &["read", &format!("{}:L1-L3", types["address"].as_str().unwrap())]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(err.contains("lines 1–3"), "{err}");

    let (code, out, _) = fabdex(&ws, &["deps", &id, "--json"]);
    assert_eq!(code, 0);
    assert_eq!(json(&out)["root"]["patternId"], id.as_str());

    let (code, out, _) = fabdex(&ws, &["export", "records"]);
    assert_eq!(code, 0);
    assert!(out.lines().count() >= 25);
    assert!(out.lines().all(|l| json(l)["patternId"].is_string()));

    let (code, _, err) = fabdex(&ws, &["search", "patterns", "inbox", "--kind", "widget"]);
    assert_eq!(code, 2);
    assert!(err.contains("--kind `widget`"), "{err}");
    let (code, _, err) = fabdex(&ws, &["read", &format!("pattern:{id}/nope.tsx")]);
    assert_eq!(code, 3);
    assert!(err.contains("`nope.tsx` is not a file of pattern"), "{err}");
    let (code, _, err) = fabdex(&ws, &["read", "doc:docs/FAQ.md", "--max-line-chars", "5"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn the_model_computes_in_the_faster_precision_here_unless_one_is_set_and_the_report_says_which() {
    let ws = Workspace::with_corpus();
    let model = ws.path("tiny-model");
    fabdex_embed::tiny::write_tiny_model(&model, &["wish", "cell", "pattern"], 3).unwrap();
    let model = model.to_str().unwrap();
    let fastest = fabdex_embed::Precision::fastest_here().as_str();
    let kernel = fabdex_embed::int8_kernel().as_str();

    let (code, out, err) = fabdex(&ws, &["--embeddings", model, "index", "--json", "--out", "auto"]);
    assert_eq!(code, 0, "{err}");
    let auto = json(&out);
    assert_eq!(auto["embeddings"]["precision"], fastest, "unset: the faster on this CPU");
    assert_eq!(auto["embeddings"]["precision_chosen"], "fastest-here", "{}", auto["embeddings"]);

    let args = ["--embeddings", model, "index", "--json", "--out", "int8", "--embedding-precision", "int8"];
    let (code, out, err) = fabdex(&ws, &args);
    assert_eq!(code, 0, "{err}");
    let int8 = json(&out);
    assert_eq!(int8["embeddings"]["precision"], "int8");
    assert_eq!(int8["embeddings"]["precision_chosen"], "set");
    assert_eq!(int8["embeddings"]["int8_kernel"], kernel, "the report names the loop that ran");

    let args = ["--embeddings", model, "index", "--json", "--out", "f32", "--embedding-precision", "f32"];
    let (code, out, err) = fabdex(&ws, &args);
    assert_eq!(code, 0, "{err}");
    let f32 = json(&out);
    assert_eq!(f32["embeddings"]["precision"], "f32");
    assert_eq!(f32["embeddings"]["precision_chosen"], "set");
    assert!(f32["embeddings"].get("int8_kernel").is_none(), "{}", f32["embeddings"]);
    assert_ne!(f32["snapshot_id"], int8["snapshot_id"], "other vectors, another snapshot");
    let same = if fastest == "int8" { &int8 } else { &f32 };
    assert_eq!(auto["snapshot_id"], same["snapshot_id"], "the choice is the same vectors as setting it");

    // The text report says the same.
    let (code, out, err) = fabdex(&ws, &["--embeddings", model, "index", "--out", "text"]);
    assert_eq!(code, 0, "{err}");
    let said = match fastest {
        "int8" => format!("int8 on {kernel}, the faster on this CPU;"),
        _ => "f32, the faster on this CPU;".to_string(),
    };
    assert!(out.contains(&said), "{out}");

    let (code, _, err) = fabdex(&ws, &["--embeddings", model, "index", "--out", "bad", "--embedding-precision", "f16"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("f16") && err.contains("int8") && err.contains("f32"), "{err}");
    assert!(!ws.path("bad").exists(), "a refused argument writes nothing");
}
