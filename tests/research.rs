//! The research service over real HTTP: a scripted model on loopback plays
//! recorded turns (each chosen by what the previous tool result contained)
//! and the tests assert what fabdex sent it (tool schemas, budgets,
//! messages), what it recorded (model turns and tool calls in the run's
//! ledger) and what it returned (an admitted kit, or an incomplete one that
//! says why). No network beyond 127.0.0.1.

mod common;

use std::time::Duration;

use common::{Workspace, project_root};
use fabdex_kit::KitStatus;
use fabdex_ledger::{RecordKind, RunStore};
use fabdex_query::Engine;
use fabdex_research::{Budgets, Client, Endpoint, Grants, Outcome, Request, Service};
use fabdex_scripted::{Script, ScriptedServer};
use serde_json::{Value, json};

const TASK: &str = "give me a simple list view of my email inbox";

struct Corpus {
    ws: Workspace,
    engine: Engine,
}

fn corpus() -> Corpus {
    let ws = Workspace::with_corpus();
    ws.build();
    let engine = ws.engine();
    Corpus { ws, engine }
}

impl Corpus {
    fn store(&self) -> RunStore {
        RunStore::new(self.ws.path("runs"))
    }

    fn research(&self, endpoint: Endpoint, request: &Request) -> Outcome {
        let svc = Service {
            engine: &self.engine,
            store: self.store(),
            policy: None,
            client: Client::new(endpoint).unwrap(),
            model_label: "scripted".into(),
        };
        fabdex_research::research(&svc, request).unwrap()
    }

    fn ledger(&self, run: &str) -> fabdex_ledger::Contents {
        self.store().ledger(run).unwrap().read().unwrap()
    }
}

fn inbox_script() -> Script {
    Script::load(&project_root().join("corpus/research/inbox-model.json")).unwrap()
}

fn mail_grant() -> Grants {
    Grants::load(&project_root().join("corpus/research/mail-grant.json")).unwrap()
}

fn endpoint(server: &ScriptedServer) -> Endpoint {
    let mut e = Endpoint::new(&server.base_url, "scripted-test");
    e.backoff = Duration::from_millis(10);
    e.timeout = Duration::from_secs(20);
    e
}

fn script(steps: Value) -> Script {
    serde_json::from_value(json!({"name": "test", "steps": steps})).unwrap()
}

fn request(grants: Grants) -> Request {
    let mut r = Request::new(TASK);
    r.grants = grants;
    r
}

/// The tool messages of one request, in order.
fn tool_messages(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}

fn tools_called(contents: &fabdex_ledger::Contents) -> Vec<String> {
    contents.records.iter().filter(|r| r.call.kind == RecordKind::Tool).map(|r| r.call.tool.clone()).collect()
}

#[test]
fn capstone_the_inbox_task_with_a_mail_grant_gives_a_complete_kit_running_the_inbox_with_db_bound() {
    let c = corpus();
    let server = ScriptedServer::start(inbox_script()).unwrap();
    let mut e = endpoint(&server);
    e.api_key = Some("sk-never-written-anywhere".into());
    let o = c.research(e, &request(mail_grant()));

    assert_eq!(o.status, KitStatus::Complete, "{:#?}", o.problems);
    assert_eq!(o.stopped, "kit-submitted");
    assert!(o.repair_problems.is_empty(), "no repair was needed: {:?}", o.repair_problems);
    let pattern = &o.kit.patterns[0];
    assert!(pattern.record.as_ref().unwrap()["entry"].as_str().unwrap().ends_with("mail/inbox.tsx"));
    assert_eq!(o.kit.inputs.len(), 1);
    assert_eq!((o.kit.inputs[0].name.as_str(), o.kit.inputs[0].token.as_str()), ("db", "mailDb"));
    assert!(o.kit.missing.is_empty());
    assert!(o.kit.sources.len() >= 2, "the steps and the rule cite reads: {:?}", o.kit.sources);
    assert!(o.kit.sources.iter().any(|s| s.address.contains("composition.md#calling-a-child-pattern")));
    assert_eq!(o.kit.exposure, vec!["docs", "host", "local-registry"]);

    // What fabdex sent: the registry's read-only tools and submit_kit, the budgets, the key as a bearer token.
    let received = server.received();
    assert_eq!(received.len(), 3, "three model turns");
    let first = &received[0].body;
    assert_eq!(first["tools"], json!(fabdex_research::toolset::model_tools()));
    let names: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"submit_kit") && names.contains(&"describe_handle"));
    assert!(!names.iter().any(|n| n.starts_with("ledger") || *n == "research"), "{names:?}");
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("8 model turns, 24 tool calls, 32000 chars per read, 96000 chars of tool results"),
        "{system}"
    );
    let task = first["messages"][1]["content"].as_str().unwrap();
    assert!(task.contains(&format!("Task: {TASK}")) && task.contains("Granted handles: mailDb"), "{task}");
    assert!(task.contains("search_patterns {") && task.contains("search_docs {"), "the opening pass is quoted: {task}");
    assert_eq!(received[0].authorization.as_deref(), Some("Bearer sk-never-written-anywhere"));
    let reads = tool_messages(&received[2].body);
    assert!(reads.iter().any(|m| m.contains("\"citation\":\"cit-")), "read results carry their citation ids");

    // What fabdex recorded: model turns apart from tool calls, with their figures and exposure.
    let ledger = c.ledger(&o.run);
    let turns: Vec<_> = ledger.records.iter().filter(|r| r.call.kind == RecordKind::ModelTurn).collect();
    assert_eq!(turns.len(), 3);
    let t1 = turns[0].call.turn.as_ref().unwrap();
    assert_eq!((t1.turn, t1.phase.as_str(), t1.finish.as_str()), (1, "research", "tool_calls"));
    assert!(t1.tokens_in > 0 && t1.chars_in > 0);
    assert_eq!(t1.calls.iter().map(|c| c.tool.as_str()).collect::<Vec<_>>(), ["inspect_pattern", "list_handles"]);
    assert!(t1.exposure.contains(&"local-registry".to_string()), "the opening pass was read before turn 1");
    assert_eq!(turns[2].call.turn.as_ref().unwrap().finish, "kit");
    assert_eq!(
        tools_called(&ledger),
        ["search_patterns", "search_docs", "inspect", "list_handles", "read", "read", "describe_handle"]
    );
    assert_eq!(o.spent.tool_calls, 7);
    assert_eq!(o.spent.turns, 3);

    // The outcome is under the run, and the key is written nowhere.
    let dir = c.store().dir.join(&o.run);
    let written: Outcome = serde_json::from_slice(&std::fs::read(dir.join("research.json")).unwrap()).unwrap();
    assert_eq!(written, o);
    for f in ["research.json", "kit.json", "ledger.jsonl", "run.json"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(!text.contains("sk-never-written-anywhere"), "{f} holds the key");
    }
}

#[test]
fn without_the_grant_the_same_task_is_incomplete_with_the_missing_input_and_no_invented_lookup() {
    let c = corpus();
    let server = ScriptedServer::start(inbox_script()).unwrap();
    let o = c.research(endpoint(&server), &request(Grants::none()));

    assert_eq!(o.status, KitStatus::Incomplete);
    assert!(o.kit.inputs.is_empty(), "no handle was invented: {:?}", o.kit.inputs);
    assert_eq!(o.kit.missing.len(), 1, "{:?}", o.kit.missing);
    let m = &o.kit.missing[0];
    assert_eq!((m.kind.as_str(), m.argument.as_str()), ("input", "db"));
    assert!(m.ty.contains("MailDatabase"), "{}", m.ty);
    assert!(m.resolution.contains("grant a handle"), "{}", m.resolution);
    assert!(o.problems.iter().all(|p| p.rule == "missing-input"), "{:?}", o.problems);
    // The repair turn was given the problem, and the model declined to invent a handle.
    assert!(o.repair_problems.iter().any(|p| p.rule == "missing-input"));
    let received = server.received();
    assert_eq!(received.len(), 4, "three research turns and one repair turn");
    let repair =
        received[3].body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(repair.contains("[missing-input]") && repair.contains("do not invent one"), "{repair}");
    assert_eq!(o.spent.repair_turns, 1);
    let ledger = c.ledger(&o.run);
    assert!(!tools_called(&ledger).contains(&"describe_handle".to_string()));
}

#[test]
fn rate_limits_and_server_errors_are_retried_with_backoff() {
    let c = corpus();
    let mut steps = vec![json!({"reply": {"status": 429}}), json!({"reply": {"status": 500}})];
    steps.extend(serde_json::to_value(inbox_script().steps).unwrap().as_array().unwrap().iter().cloned());
    let server = ScriptedServer::start(script(Value::Array(steps))).unwrap();
    let o = c.research(endpoint(&server), &request(mail_grant()));
    assert_eq!(o.status, KitStatus::Complete, "{:#?}", o.kit.missing);
    assert_eq!(o.spent.retries, 2);
    let ledger = c.ledger(&o.run);
    let t1 = ledger.records.iter().find_map(|r| r.call.turn.as_ref()).unwrap();
    assert_eq!(t1.attempts, 3, "the first turn took three attempts");
}

#[test]
fn an_unreachable_or_silent_model_gives_an_incomplete_kit_that_says_why() {
    let c = corpus();
    // Connection refused: a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut e = Endpoint::new(&format!("http://127.0.0.1:{port}/v1"), "nobody");
    e.backoff = Duration::from_millis(5);
    let o = c.research(e, &request(mail_grant()));
    assert_eq!((o.status, o.stopped.as_str()), (KitStatus::Incomplete, "model-error"));
    assert_eq!(o.kit.missing[0].kind, "model");
    let why = o.kit.missing[0].description.clone().unwrap();
    assert!(why.contains("cannot connect") && why.contains("after 3 attempts"), "{why}");
    assert!(o.kit.patterns.is_empty() && o.kit.steps.is_empty(), "no claim without a model");

    // A model slower than the timeout, every attempt.
    let server =
        ScriptedServer::start(script(json!([{"repeat": true, "reply": {"delay_ms": 1500, "content": "late"}}])))
            .unwrap();
    let mut e = endpoint(&server);
    e.timeout = Duration::from_millis(200);
    e.attempts = 2;
    let o = c.research(e, &request(mail_grant()));
    assert_eq!(o.stopped, "model-error");
    let why = o.kit.missing[0].description.clone().unwrap();
    assert!(why.contains("no answer within 200 ms"), "{why}");
}

#[test]
fn bad_tool_calls_come_back_to_the_model_as_errors_and_prose_gets_one_repair() {
    let c = corpus();
    let server = ScriptedServer::start(script(json!([
        {"reply": {"tool_calls": [
            {"name": "read", "arguments_text": "{\"address\": "},
            {"name": "delete_everything", "arguments": {}},
            {"name": "research", "arguments": {"task": "again"}},
            {"name": "search_docs", "arguments": {"query": "wish", "limit": 500}}
        ]}},
        {"reply": {"content": "You should use the inbox."}},
        {"reply": {"content": "Really, just use the inbox."}}
    ])))
    .unwrap();
    let o = c.research(endpoint(&server), &request(Grants::none()));
    let received = server.received();
    let errors = tool_messages(&received[1].body);
    assert!(errors[0].contains("arguments are not JSON"), "{}", errors[0]);
    assert!(errors[1].contains("no tool `delete_everything`"), "{}", errors[1]);
    assert!(errors[2].contains("research cannot call research"), "{}", errors[2]);
    assert!(errors[3].contains("\"kind\":\"invalid-argument\"") && errors[3].contains("50"), "{}", errors[3]);
    let reminder =
        received[2].body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(reminder.contains("not a kit") && reminder.contains("submit_kit"), "{reminder}");
    assert_eq!((o.status, o.stopped.as_str()), (KitStatus::Incomplete, "no-valid-kit"));
    assert_eq!(o.kit.missing[0].kind, "kit");
    assert_eq!(received.len(), 3, "one repair, then the loop ends");
    assert_eq!(o.spent.refused_calls, 3, "malformed, unknown and research calls are not made");
}

#[test]
fn a_model_that_never_stops_is_cut_at_the_turn_budget_and_repeats_are_not_made() {
    let c = corpus();
    let server = ScriptedServer::start(script(json!([
        {"repeat": true, "reply": {"tool_calls": [{"name": "search_docs", "arguments": {"query": "wish"}}]}}
    ])))
    .unwrap();
    let mut r = request(Grants::none());
    r.budgets = Budgets { turns: 3, ..Budgets::DEFAULT };
    let o = c.research(endpoint(&server), &r);
    assert_eq!((o.status, o.stopped.as_str()), (KitStatus::Incomplete, "turn-budget"));
    assert_eq!(server.received().len(), 3);
    assert_eq!(o.spent.turns, 3);
    assert!(o.kit.missing[0].description.as_ref().unwrap().contains("turn budget (3 turns)"));
    // Opening pass (2) + the first search; the two repeats were refused.
    assert_eq!(o.spent.tool_calls, 3);
    assert_eq!(o.spent.refused_calls, 2);
    let last = tool_messages(&server.received()[2].body).pop().unwrap();
    assert!(last.contains("not made again"), "{last}");
}

#[test]
fn tool_call_and_char_budgets_refuse_calls_and_cap_reads() {
    let c = corpus();
    let server = ScriptedServer::start(script(json!([
        {"reply": {"tool_calls": [
            {"name": "read", "arguments": {"address": "doc:docs/common/patterns/composition.md", "max_chars": 32000}},
            {"name": "search_docs", "arguments": {"query": "lists"}},
            {"name": "search_docs", "arguments": {"query": "forms"}}
        ]}},
        {"reply": {"content": "done"}},
        {"reply": {"content": "done"}}
    ])))
    .unwrap();
    let mut r = request(Grants::none());
    r.budgets = Budgets { tool_calls: 4, read_chars: 500, ..Budgets::DEFAULT };
    let o = c.research(endpoint(&server), &r);
    let results = tool_messages(&server.received()[1].body);
    let read: Value = serde_json::from_str(&results[0]).unwrap();
    assert_eq!(read["result"]["end"].as_u64().unwrap() - read["result"]["offset"].as_u64().unwrap(), 500);
    assert_eq!(read["result"]["truncated"], true);
    assert!(results[2].contains("tool-call budget (4 calls) is spent"), "{}", results[2]);
    assert!(o.notes.iter().any(|n| n.contains("capped at 500")), "{:?}", o.notes);
}

#[test]
fn a_kit_citing_a_source_never_read_gets_a_repair_then_the_citation_is_dropped() {
    let c = corpus();
    let mut steps = serde_json::to_value(inbox_script().steps).unwrap();
    // The granted branch of the third turn: its rule cites a made-up id.
    let kit = steps.pointer_mut("/2/choose/0/reply/tool_calls/0/arguments").unwrap();
    kit["rules"][0]["sourceIds"] = json!(["cit-00000000000000000000"]);
    let resubmit = json!({"reply": {"tool_calls": [{"name": "submit_kit", "arguments": kit.clone()}]}});
    let mut steps = steps.as_array().unwrap()[..3].to_vec();
    steps.push(resubmit);
    let server = ScriptedServer::start(script(Value::Array(steps))).unwrap();
    let o = c.research(endpoint(&server), &request(mail_grant()));
    assert!(
        o.repair_problems.iter().any(|p| p.message.contains("cit-00000000000000000000")),
        "{:?}",
        o.repair_problems
    );
    assert_eq!(o.status, KitStatus::Incomplete);
    assert!(o.kit.rules.is_empty(), "the rule citing nothing read is dropped");
    assert!(!o.kit.sources.iter().any(|s| s.id == "cit-00000000000000000000"));
    assert!(o.problems.iter().any(|p| p.rule == "rule-without-read"), "{:?}", o.problems);
    assert_eq!(o.spent.repair_turns, 1);
}

#[test]
fn a_follow_up_with_prior_extends_the_kit_without_a_second_opening_pass() {
    let c = corpus();
    let server = ScriptedServer::start(inbox_script()).unwrap();
    let first = c.research(endpoint(&server), &request(mail_grant()));
    assert_eq!(first.status, KitStatus::Complete);

    // The follow-up model re-submits the carried kit with one more step, citing the earlier read.
    let mut kit = serde_json::to_value(&first.kit).unwrap();
    let cited = first.kit.steps[0].source_ids[0].clone();
    kit["steps"]
        .as_array_mut()
        .unwrap()
        .push(json!({"text": "Select a message to see its header.", "sourceIds": [cited]}));
    for k in ["status", "sources", "missing", "run", "exposure"] {
        kit.as_object_mut().unwrap().remove(k);
    }
    let server = ScriptedServer::start(script(json!([
        {"reply": {"tool_calls": [{"name": "submit_kit", "arguments": kit}]}}
    ])))
    .unwrap();
    let mut follow = request(mail_grant());
    follow.task = "and let me pick a message to see its header".into();
    follow.prior = Some(first.run.clone());
    let o = c.research(endpoint(&server), &follow);
    assert_eq!(o.status, KitStatus::Complete, "{:#?}", o.problems);
    assert_eq!(o.kit.steps.len(), 3);
    let p = o.prior.as_ref().unwrap();
    assert!(p.carried && p.items_dropped == 0 && p.items_carried >= 3, "{p:?}");
    let ledger = c.ledger(&o.run);
    assert_eq!(tools_called(&ledger), ["carry_prior"], "no opening searches, no second pass");
    let task = server.received()[0].body["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(
        task.contains(&format!("follow-up to research run `{}`", first.run)) && !task.contains("search_patterns {")
    );

    // A changed grant inventory is not carried: fresh research, and it says so.
    let server = ScriptedServer::start(inbox_script()).unwrap();
    let mut changed = request(Grants::parse(r#"[{"token": "mailDb", "description": "another"}]"#, "g").unwrap());
    changed.prior = Some(first.run.clone());
    let o = c.research(endpoint(&server), &changed);
    let p = o.prior.as_ref().unwrap();
    assert!(!p.carried && p.note.contains("grant inventory changed"), "{p:?}");
    assert_eq!(tools_called(&c.ledger(&o.run))[..2], ["search_patterns", "search_docs"]);
}

#[test]
fn a_request_that_cannot_start_names_what_is_wrong() {
    let c = corpus();
    let server = ScriptedServer::start(inbox_script()).unwrap();
    let svc = Service {
        engine: &c.engine,
        store: c.store(),
        policy: None,
        client: Client::new(endpoint(&server)).unwrap(),
        model_label: "scripted".into(),
    };
    let mut r = request(Grants::none());
    r.budgets.turns = 99;
    let err = fabdex_research::research(&svc, &r).unwrap_err().to_string();
    assert!(err.contains("--budget-turns 99") && err.contains("1 to 32"), "{err}");
    let mut r = request(Grants::none());
    r.prior = Some("run-nothing-here".into());
    let err = format!("{:#}", fabdex_research::research(&svc, &r).unwrap_err());
    assert!(err.contains("--prior `run-nothing-here`: no research outcome"), "{err}");
    let err = fabdex_research::research(&svc, &Request::new("  ")).unwrap_err().to_string();
    assert!(err.contains("the task is empty"), "{err}");
    assert!(server.received().is_empty(), "nothing was sent for a request that could not start");
}

/// The capstone against a real OpenAI-compatible endpoint (a local llama.cpp,
/// vLLM or Ollama server): skipped unless FABDEX_RESEARCH_BASE_URL is set.
/// It records what it got under the target folder and prints it; a real
/// model's kit is not asserted complete, only well-formed and admitted.
#[test]
fn real_model_capstone_when_an_endpoint_is_named() {
    let Ok(base) = std::env::var("FABDEX_RESEARCH_BASE_URL") else {
        eprintln!("skipping: FABDEX_RESEARCH_BASE_URL is not set (a local OpenAI-compatible /v1)");
        return;
    };
    let c = corpus();
    let model = std::env::var("FABDEX_RESEARCH_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
    let mut e = Endpoint::new(&base, &model);
    e.api_key = std::env::var("OPENAI_API_KEY").ok();
    let o = c.research(e, &request(mail_grant()));
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("real-model-research.json");
    std::fs::write(&out, serde_json::to_vec_pretty(&o).unwrap()).unwrap();
    eprintln!(
        "real model {model}: {:?} ({}), {} turns; outcome in {}",
        o.status,
        o.stopped,
        o.spent.turns,
        out.display()
    );
    assert!(o.status != KitStatus::Draft);
}
