//! The tool registry behind its shells: `fabdex tools` descriptors, every
//! tool over HTTP (`POST /v1/tools/{name}`) with auth on and off, the error
//! statuses, MCP driven by the official Python SDK, and `docs/tools.md`
//! generated from the registry.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Server, Workspace};
use serde_json::{Value, json};

fn serve(ws: &Workspace, token: Option<&str>, extra: &[&str]) -> Server {
    let mut cmd = common::fabdex_command();
    cmd.args(["--index", ws.index_dir().to_str().unwrap(), "--runs", ws.path("runs").to_str().unwrap()])
        .args(extra)
        .args(["serve", "--http", "127.0.0.1:0"])
        .env_remove("FABDEX_SERVE_TOKEN");
    if let Some(t) = token {
        cmd.env("FABDEX_SERVE_TOKEN", t);
    }
    Server::start(cmd)
}

/// One HTTP request; returns status and parsed JSON body.
fn request(server: &Server, method: &str, path: &str, body: &str, token: Option<&str>) -> (u16, Value) {
    server.request(method, path, body, token)
}

/// The registry's tools, then `research`: what both serve shells list.
fn served_names() -> Vec<String> {
    let mut names: Vec<String> = fabdex_tools::names().into_iter().map(str::to_string).collect();
    names.push("research".into());
    assert_eq!(names, fabdex_serve::descriptors().into_iter().map(|d| d.name).collect::<Vec<_>>());
    names
}

fn tool(server: &Server, name: &str, input: Value) -> (u16, Value) {
    request(server, "POST", &format!("/v1/tools/{name}"), &input.to_string(), None)
}

#[test]
fn every_tool_answers_over_http_and_errors_have_statuses() {
    let ws = Workspace::with_registry();
    ws.build();
    let engine = ws.engine();
    let run = fabdex_ledger::RunStore::new(ws.path("runs")).new_run(None).unwrap().run;
    let server = serve(&ws, None, &[]);
    let (status, tools) = request(&server, "GET", "/v1/tools", "", None);
    assert_eq!(status, 200);
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, served_names());
    let (status, health) = request(&server, "GET", "/health", "", None);
    assert_eq!((status, health["snapshot"].as_str()), (200, Some(engine.snapshot_id())));

    let reader = engine.inspect("patterns/mail/mail-reader.tsx").unwrap().pattern_id;
    let calls: Vec<(&str, Value)> = vec![
        ("search_docs", json!({"query": "wish result shape", "limit": 2, "run": run})),
        ("read", json!({"address": "doc:docs/common/conventions/wish.md#result-shape", "max_chars": 50, "run": run})),
        ("outline", json!({"prefix": "docs/common/conventions", "run": run})),
        ("related", json!({"address": "doc:docs/common/conventions/wish.md#result-shape", "run": run})),
        (
            "search_patterns",
            json!({"text": "email inbox", "returns": [{"name": "messages", "type": "array"}], "run": run}),
        ),
        ("inspect_pattern", json!({"id": reader, "run": run})),
        ("list_pattern_files", json!({"id": reader, "run": run})),
        ("read_source", json!({"pattern_id": reader, "path": "mail/types.ts", "symbol": "MessageHeader", "run": run})),
        ("pattern_deps", json!({"id": reader, "run": run})),
        ("pattern_contract", json!({"id": reader, "run": run})),
        ("list_handles", json!({"run": run})),
        ("ledger_exposure", json!({"run": run})),
        ("ledger_show", json!({"run": run})),
    ];
    let mut answers = std::collections::BTreeMap::new();
    for (name, input) in calls {
        let (status, body) = tool(&server, name, input);
        assert_eq!(status, 200, "{name}: {body}");
        answers.insert(name, body);
    }
    assert_eq!(answers["read"]["end"], 50);
    assert!(answers["read_source"]["text"].as_str().unwrap().starts_with("export interface MessageHeader"));
    assert_eq!(answers["search_patterns"]["hits"][0]["fit"]["returns"][0]["field"], "messages");
    assert!(answers["pattern_contract"]["typescript"].as_str().unwrap().contains("type Argument"));
    let recorded = answers["ledger_show"]["records"].as_array().unwrap().len();
    assert_eq!(recorded, 11, "every query call before it was recorded (ledger tools are not)");
    assert_eq!(answers["list_handles"]["handles"], json!([]), "a server has no grants");
    let (status, body) = tool(&server, "describe_handle", json!({"token": "mailDb"}));
    assert_eq!((status, body["error"]["kind"].as_str()), (404, Some("not-found")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("no granted handle `mailDb` (granted: none)"));
    let read_item = &answers["ledger_show"]["records"][1]["items"][0];
    let citation = read_item["citation"].as_str().unwrap();
    let (status, cite) = tool(&server, "ledger_cite", json!({"citation": citation, "run": run}));
    assert_eq!(status, 200, "{cite}");
    assert_eq!(cite["check"]["status"], "identical");
    assert!(answers["ledger_exposure"]["origins"].as_array().unwrap().iter().any(|o| o == "docs"));
    // Every registry tool was exercised.
    let mut exercised: Vec<&str> = answers.keys().copied().collect();
    exercised.push("ledger_cite");
    exercised.push("describe_handle");
    exercised.sort();
    let mut all = fabdex_tools::names();
    all.sort();
    assert_eq!(exercised, all);

    // Errors: bad input 400 with the message, unknown tool 404, not found 404, oversize 413.
    let (status, body) = tool(&server, "read", json!({"adress": "doc:docs/FAQ.md"}));
    assert_eq!(status, 400);
    assert!(body["error"]["message"].as_str().unwrap().contains("unknown field `adress`"), "{body}");
    let (status, body) = tool(&server, "read", json!({"address": "doc:docs/../x.md"}));
    assert_eq!((status, body["error"]["kind"].as_str()), (400, Some("invalid-argument")));
    let (status, body) = tool(&server, "nope", json!({}));
    assert_eq!((status, body["error"]["kind"].as_str()), (404, Some("unknown-tool")));
    let (status, _) = tool(&server, "read", json!({"address": "doc:docs/missing.md"}));
    assert_eq!(status, 404);
    let (status, body) = request(&server, "POST", "/v1/tools/search_docs", "{not json", None);
    assert_eq!(status, 400, "{body}");
    let big = json!({"query": "a".repeat(2 * 1024 * 1024)}).to_string();
    let (status, body) = request(&server, "POST", "/v1/tools/search_docs", &big, None);
    assert_eq!(status, 413);
    assert_eq!(body["error"]["kind"], "too-large", "axum's own errors use the JSON envelope: {body}");
    let (status, body) = tool(&server, "ledger_show", json!({}));
    assert_eq!(status, 400, "no run: {body}");
}

#[test]
fn research_is_a_tool_over_http_with_its_run_in_the_result() {
    let ws = Workspace::with_corpus();
    ws.build();
    let root = common::project_root();
    let script = fabdex_scripted::Script::load(&root.join("corpus/research/inbox-model.json")).unwrap();
    let model = fabdex_scripted::ScriptedServer::start(script).unwrap();
    let server = serve(&ws, None, &[]);
    let (status, body) = tool(&server, "research", json!({"task": "give me a simple list view of my email inbox"}));
    assert_eq!((status, body["error"]["kind"].as_str()), (400, Some("invalid-argument")), "{body}");
    drop(server);

    let mut cmd = common::fabdex_command();
    cmd.args(["--index", ws.index_dir().to_str().unwrap(), "--runs", ws.path("runs").to_str().unwrap()]).args([
        "serve",
        "--http",
        "127.0.0.1:0",
        "--research-base-url",
        &model.base_url,
    ]);
    let server = Server::start(cmd);
    let grants: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("corpus/research/mail-grant.json")).unwrap()).unwrap();
    let input = json!({"task": "give me a simple list view of my email inbox", "grants": grants["handles"],
                       "budgets": {"turns": 6}});
    let (status, outcome) = tool(&server, "research", input);
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["status"], "complete", "{outcome}");
    assert_eq!(outcome["budgets"]["turns"], 6);
    let run = outcome["run"].as_str().unwrap();
    assert_eq!(outcome["kit"]["run"], run);
    let ledger = fabdex_ledger::RunStore::new(ws.path("runs")).ledger(run).unwrap().read().unwrap();
    assert!(ledger.records.iter().any(|r| r.call.kind == fabdex_ledger::RecordKind::ModelTurn));
    let (status, body) = tool(&server, "research", json!({"task": "x", "budgets": {"turns": 0}}));
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("--budget-turns 0"), "{body}");
}

#[test]
fn auth_and_policy_apply_to_every_tool() {
    let ws = Workspace::with_registry();
    ws.build();
    ws.deny_policy("docs");
    let server = serve(&ws, Some("t0ken"), &["--policy", ws.path("policy.toml").to_str().unwrap()]);
    let body = json!({"address": "doc:docs/common/conventions/wish.md#result-shape"}).to_string();
    let (status, _) = request(&server, "POST", "/v1/tools/read", &body, None);
    assert_eq!(status, 401);
    let (status, _) = request(&server, "GET", "/v1/tools", "", Some("wrong"));
    assert_eq!(status, 401);
    let (status, denied) = request(&server, "POST", "/v1/tools/read", &body, Some("t0ken"));
    assert_eq!(status, 403, "{denied}");
    assert_eq!(denied["error"]["kind"], "denied");
    assert!(!denied.to_string().contains("Result Shape\n"), "no text in a denial");
    let (status, hits) =
        request(&server, "POST", "/v1/tools/search_docs", &json!({"query": "wish"}).to_string(), Some("t0ken"));
    assert_eq!(status, 200);
    for h in hits["hits"].as_array().unwrap() {
        if h["origin"] == "docs" {
            assert_eq!(h["snippet"], "");
            assert!(h["denied"].is_string());
        }
    }
}

fn python_has_mcp() -> bool {
    Command::new("python3").args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success())
}

#[test]
fn an_official_mcp_client_lists_tools_and_calls_search_and_read() {
    if !python_has_mcp() {
        assert!(
            std::env::var_os("FABDEX_REQUIRE_MCP_CLIENT").is_none(),
            "FABDEX_REQUIRE_MCP_CLIENT is set but the Python `mcp` SDK is not importable (pip install mcp)"
        );
        eprintln!("skipping: the Python `mcp` SDK is not installed (pip install mcp); CI installs it");
        return;
    }
    let ws = Workspace::with_registry();
    ws.build();
    let run = fabdex_ledger::RunStore::new(ws.path("runs")).new_run(None).unwrap().run;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let out = Command::new("python3")
        .arg(script)
        .args([env!("CARGO_BIN_EXE_fabdex"), ws.index_dir().to_str().unwrap(), ws.path("runs").to_str().unwrap(), &run])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["server"], "fabdex");
    let names: Vec<&str> = r["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(names, served_names());
    assert_eq!(r["research_error"], true);
    assert!(
        r["research_text"].as_str().unwrap().contains("this server has no model endpoint"),
        "{}",
        r["research_text"]
    );
    assert_eq!(r["has_output_schemas"], true);
    assert_eq!(r["search_error"], false);
    assert_eq!(r["search"]["hits"].as_array().unwrap().len(), 3);
    assert_eq!(r["read_error"], false);
    assert_eq!(r["read"]["end"], 120);
    assert_eq!(r["missing_error"], true);
    assert!(
        r["missing_text"].as_str().unwrap().starts_with("not-found: no indexed file `docs/nope.md`"),
        "{}",
        r["missing_text"]
    );
    let tools: Vec<&str> =
        r["ledger"]["records"].as_array().unwrap().iter().map(|x| x["tool"].as_str().unwrap()).collect();
    assert_eq!(tools, ["search_docs", "read", "read"], "the server's run recorded the MCP calls");
}

#[test]
fn the_tool_reference_is_generated_from_the_one_listing() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tools.md")).unwrap();
    let listing = fabdex_research::tool::listing();
    assert_eq!(
        doc,
        fabdex_tools::markdown(listing),
        "docs/tools.md is stale: run `fabdex tools --format markdown > docs/tools.md`"
    );
    for d in listing {
        assert_eq!(d.input_schema["type"], "object", "{}", d.name);
        // Every registry tool takes `run`; research makes its own.
        assert_eq!(d.input_schema["properties"]["run"].is_object(), d.name != "research", "{}", d.name);
        assert!(d.output_schema.is_object(), "{}", d.name);
        assert!(!d.bounds.is_empty());
    }
    assert!(doc.contains("## `research`"), "the reference documents research too");
    let openai = fabdex_tools::openai(listing);
    assert_eq!(openai[0]["type"], "function");
    assert_eq!(openai[0]["function"]["name"], "search_docs");
    // The CLI's listing is the same one, research included.
    let out = common::fabdex_command().args(["tools", "--format", "json"]).output().unwrap();
    let cli: Vec<fabdex_tools::Descriptor> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli, listing.to_vec());
    // The research model gets the read-only tools from it, never research.
    let model: Vec<Value> = fabdex_research::toolset::model_tools();
    let names: Vec<&str> = model.iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert!(!names.contains(&"research") && names.contains(&"search_docs"), "{names:?}");
    for t in model.iter().filter(|t| t["function"]["name"] != "submit_kit") {
        let listed = listing.iter().find(|d| d.name == t["function"]["name"]).unwrap();
        assert_eq!(t["function"]["description"], listed.openai()["function"]["description"]);
    }
}

#[test]
fn a_snapshot_published_while_serving_is_picked_up() {
    let ws = Workspace::with_registry();
    let first = ws.build();
    let server = serve(&ws, None, &[]);
    let (_, health) = request(&server, "GET", "/health", "", None);
    assert_eq!(health["snapshot"], first.snapshot_id.as_str());
    let path = ws.path("docs/FAQ.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}\n## Served later\n\nA section published while the server ran.\n")).unwrap();
    let second = ws.build();
    assert_ne!(second.snapshot_id, first.snapshot_id);
    let (_, health) = request(&server, "GET", "/health", "", None);
    assert_eq!(health["snapshot"], second.snapshot_id.as_str());
    let (status, env) = tool(&server, "read", json!({"address": "doc:docs/FAQ.md#served-later"}));
    assert_eq!(status, 200, "{env}");
    assert!(env["text"].as_str().unwrap().contains("published while the server ran"));
}
