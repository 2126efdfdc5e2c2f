//! Kit admission on the corpus: a real research run (search patterns, inspect
//! the inbox building blocks, read their files and the composition docs under
//! one run) and a hand-written kit citing those reads is admitted complete;
//! the same kit mutated in each way a model gets it wrong is incomplete with
//! the precise problem; without the database grant it reports the missing
//! input instead of claiming a working result.

mod common;

use common::Workspace;
use fabdex_kit::{Handle, Kit, KitStatus, admit};
use fabdex_ledger::{RunStore, Session};
use fabdex_query::{Engine, PatternQuery};
use serde_json::{Value, json};

struct Research {
    ws: Workspace,
    run: String,
    reader: String,
    list: String,
    inbox: String,
    team_inbox: String,
    /// Citation ids by what was read.
    cite: std::collections::BTreeMap<&'static str, String>,
}

fn research() -> Research {
    let ws = Workspace::with_registry();
    ws.build();
    let engine = ws.engine();
    let store = RunStore::new(ws.path("runs"));
    let run = store.new_run(Some(engine.snapshot_id())).unwrap().run;
    let mut s = Session::new(&engine);
    s.ledger = Some(store.ledger(&run).unwrap());
    let hits = s
        .search_patterns(&PatternQuery {
            text: "give me a simple list view of my email inbox".into(),
            ..Default::default()
        })
        .unwrap();
    let id_of = |suffix: &str| hits.hits.iter().find(|h| h.entry.ends_with(suffix)).map(|h| h.pattern_id.clone());
    let inbox = id_of("mail/inbox.tsx").unwrap();
    let reader = engine.inspect("patterns/mail/mail-reader.tsx").unwrap().pattern_id;
    let list = engine.inspect("patterns/mail/message-list.tsx").unwrap().pattern_id;
    let team_inbox = engine
        .snapshot()
        .patterns
        .programs
        .iter()
        .find(|p| p.description.as_deref().is_some_and(|d| d.starts_with("A shared inbox")))
        .unwrap()
        .pattern_id
        .clone();
    for id in [&reader, &list, &inbox, &team_inbox] {
        s.inspect(id).unwrap();
    }
    let mut cite = std::collections::BTreeMap::new();
    let mut read = |key: &'static str, address: String| {
        let env = s.read(&address, None, None, None).unwrap();
        cite.insert(key, fabdex_ledger::citation_id(&env.address, Some(env.offset), Some(env.end), &env.digest));
    };
    read("reader", format!("pattern:{reader}/mail/mail-reader.tsx"));
    read("types", format!("pattern:{reader}/mail/types.ts#MessageHeader"));
    read("list", format!("pattern:{list}/mail/message-list.tsx"));
    read("compose", "doc:docs/common/patterns/composition.md#calling-a-child-pattern".into());
    read("reach", "doc:docs/common/patterns/composition.md#reaching-into-a-child".into());
    drop(s);
    Research { ws, run, reader, list, inbox, team_inbox, cite }
}

fn source(r: &Research) -> String {
    format!(
        r#"import {{ NAME, pattern, UI, type VNode, Writable }} from "commonfabric";
import MailReader from "cf:pattern:{reader}";
import MessageList from "cf:pattern:{list}";

interface SimpleInboxInput {{
  db: Writable<unknown>;
}}

interface SimpleInboxOutput {{
  [NAME]: string;
  [UI]: VNode;
}}

export default pattern<SimpleInboxInput, SimpleInboxOutput>(({{ db }}) => {{
  const reader = MailReader({{ db }});
  return {{
    [NAME]: "Inbox",
    [UI]: <MessageList messages={{reader.messages}} />,
  }};
}});
"#,
        reader = r.reader,
        list = r.list
    )
}

fn kit(r: &Research) -> Value {
    json!({
        "task": "give me a simple list view of my email inbox",
        "summary": "Compose the mail reader (one month of headers from the granted mail database) with the reusable message list.",
        "recommendation": {"kind": "compose", "rationale": "The reader returns the headers and the list renders them; together they are the view."},
        "inputs": [{"name": "db", "token": "mailDb", "purpose": "the user's mail database, read by the reader"}],
        "patterns": [
            {"patternId": r.reader, "role": "loads one month of message headers"},
            {"patternId": r.list, "role": "renders the headers"}
        ],
        "steps": [
            {"text": "Call the reader with the database handle.", "sourceIds": [r.cite["reader"], r.cite["compose"]]},
            {"text": "Render its messages with the message list.", "sourceIds": [r.cite["list"], r.cite["types"]]}
        ],
        "example": {"kind": "pattern-source", "content": source(r), "sourceIds": [r.cite["reader"], r.cite["list"]], "syntax": "tsx"},
        "rules": [
            {"rule": "Call a child pattern as a function and read its result fields.", "sourceIds": [r.cite["compose"], r.cite["reach"]]}
        ],
        "verification": ["The list shows the headers of the current month, newest first."],
        "sources": [{"id": "made-up", "address": "doc:nowhere", "origin": "x", "kind": "read", "digest": "d", "seq": 1}]
    })
}

fn handles() -> Vec<Handle> {
    vec![Handle {
        token: "mailDb".into(),
        description: "The user's mail database".into(),
        schema: Some(json!({"type": "object"})),
    }]
}

fn run_admit(r: &Research, kit: &Value, handles: &[Handle]) -> fabdex_kit::Admission {
    let engine: Engine = r.ws.engine();
    let contents = RunStore::new(r.ws.path("runs")).ledger(&r.run).unwrap().read().unwrap();
    let kit: Kit = serde_json::from_value(kit.clone()).unwrap();
    admit(&engine, &contents, handles, &kit)
}

fn rules(a: &fabdex_kit::Admission) -> Vec<&str> {
    a.problems.iter().map(|p| p.rule.as_str()).collect()
}

#[test]
fn a_kit_citing_the_runs_reads_is_admitted_complete() {
    let r = research();
    let a = run_admit(&r, &kit(&r), &handles());
    assert_eq!(a.problems, vec![], "{:#?}", a.problems);
    assert_eq!(a.status, KitStatus::Complete);
    assert!(a.kit.missing.is_empty());
    // Sources come from the ledger, not from the proposal.
    assert_eq!(a.kit.sources.len(), 5);
    assert!(a.kit.sources.iter().all(|s| s.id.starts_with("cit-") && s.digest.starts_with("blake3:")));
    assert!(!a.kit.sources.iter().any(|s| s.id == "made-up"));
    // Patterns carry the host's record.
    let record = a.kit.patterns[0].record.as_ref().unwrap();
    assert_eq!(record["identity"], "verified");
    assert_eq!(record["argumentSchema"]["required"], json!(["db"]));
    assert_eq!(a.kit.run.as_deref(), Some(r.run.as_str()));
    assert_eq!(a.kit.exposure, ["docs", "local-registry", "remote-index"]);
}

#[test]
fn without_the_database_grant_the_kit_reports_the_missing_input() {
    let r = research();
    let a = run_admit(&r, &kit(&r), &[]);
    assert_eq!(a.status, KitStatus::Incomplete);
    assert!(rules(&a).contains(&"unknown-handle"));
    assert_eq!(a.kit.missing.len(), 1, "{:#?}", a.kit.missing);
    let m = &a.kit.missing[0];
    assert_eq!((m.kind.as_str(), m.argument.as_str(), m.pattern_id.as_str()), ("input", "db", r.reader.as_str()));
    assert!(m.ty.contains("MailDatabase"), "{}", m.ty);
    assert!(m.resolution.contains("grant a handle"), "{}", m.resolution);
    assert!(m.description.as_deref().unwrap().contains("database"));
}

/// Apply a change to the good kit and expect exactly these problem rules.
fn mutated(r: &Research, change: impl FnOnce(&mut Value), expect: &[&str], message: &str) {
    let mut k = kit(r);
    change(&mut k);
    let a = run_admit(r, &k, &handles());
    assert_eq!(a.status, KitStatus::Incomplete, "{expect:?}");
    let got = rules(&a);
    for e in expect {
        assert!(got.contains(e), "expected {e} in {got:?}");
    }
    assert!(a.problems.iter().any(|p| p.message.contains(message)), "no problem says `{message}`: {:#?}", a.problems);
}

#[test]
fn each_mistake_makes_the_kit_incomplete_with_the_precise_problem() {
    let r = research();
    let list = r.list.clone();
    let inbox = r.inbox.clone();
    let team = r.team_inbox.clone();
    let reader = r.reader.clone();
    // A citation the run never made; the rule is then dropped.
    mutated(
        &r,
        |k| k["rules"][0]["sourceIds"] = json!(["cit-00000000000000000000"]),
        &["sources", "rule-without-read"],
        "is not a citation in run",
    );
    // A rule citing only a search hit, not a read.
    mutated(&r, |k| k["rules"][0]["sourceIds"] = json!([]), &["rule-without-read"], "cites no text the run read");
    // A pattern the run never inspected.
    let note = r.ws.engine().inspect("patterns/note.tsx").unwrap().pattern_id;
    mutated(&r, |k| k["patterns"][1]["patternId"] = json!(note), &["pattern-not-inspected"], "never inspected");
    // A pattern whose identity does not verify.
    mutated(&r, |k| k["patterns"][1]["patternId"] = json!(team), &["pattern-unverified"], "has identity `mismatch`");
    // A token that is not granted.
    mutated(
        &r,
        |k| k["inputs"][0]["token"] = json!("someoneElsesDb"),
        &["unknown-handle", "missing-input"],
        "is not a granted handle",
    );
    // Source that does not parse.
    mutated(
        &r,
        |k| {
            let c = k["example"]["content"].as_str().unwrap().replace("return {", "return {{");
            k["example"]["content"] = json!(c);
        },
        &["syntax"],
        ":",
    );
    // Importing an inspected pattern that is not selected.
    mutated(
        &r,
        |k| {
            let c = k["example"]["content"].as_str().unwrap().replace(&list, &inbox);
            k["example"]["content"] = json!(c);
        },
        &["import-not-selected"],
        "not a selected (admitted) pattern",
    );
    // An invented id.
    mutated(
        &r,
        |k| {
            let c = k["example"]["content"].as_str().unwrap().replace(&list, "abc123");
            k["example"]["content"] = json!(c);
        },
        &["import-not-selected", "placeholder"],
        "invented",
    );
    // A name the pattern does not export.
    mutated(
        &r,
        |k| {
            let c = k["example"]["content"]
                .as_str()
                .unwrap()
                .replace("import MailReader from", "import { MailReader } from");
            k["example"]["content"] = json!(c);
        },
        &["import-name"],
        "exports no `MailReader`",
    );
    // A result field the reader does not return.
    mutated(
        &r,
        |k| {
            let c = k["example"]["content"].as_str().unwrap().replace("reader.messages", "reader.bodies");
            k["example"]["content"] = json!(c);
        },
        &["result-field"],
        "has no `bodies`",
    );
    // Placeholders.
    mutated(&r, |k| k["steps"][1]["text"] = json!("TODO: render them"), &["placeholder"], "TODO");
    mutated(&r, |k| k["inputs"][0]["purpose"] = json!("x".repeat(1001)), &["bounds"], "at most 1000");
    mutated(&r, |k| k["inputs"][0]["name"] = json!("d".repeat(1001)), &["bounds"], "1001 chars, at most 1000");
    mutated(
        &r,
        |k| {
            let c = k["example"]["content"]
                .as_str()
                .unwrap()
                .replace("const reader = MailReader({ db });", "const reader = MailReader({ ... });");
            k["example"]["content"] = json!(c);
        },
        &["placeholder"],
        "elided",
    );
    // The recommendation's requirement.
    mutated(
        &r,
        |k| k["recommendation"]["kind"] = json!("direct-run"),
        &["recommendation"],
        "needs a `run-pattern-input` example",
    );
    let _ = reader;
}

#[test]
fn a_direct_run_kit_checks_its_json_arguments() {
    let r = research();
    let mut k = kit(&r);
    k["recommendation"]["kind"] = json!("direct-run");
    k["patterns"] = json!([{"patternId": r.reader, "role": "the reader itself"}]);
    k["example"] = json!({
        "kind": "run-pattern-input",
        "content": json!({"patternId": r.reader, "argument": {"db": {"$handle": "mailDb"}, "month": "2026-10"}}).to_string(),
        "sourceIds": [r.cite["reader"]],
        "syntax": "json"
    });
    k["inputs"] = json!([]);
    let a = run_admit(&r, &k, &handles());
    assert_eq!(a.problems, vec![], "{:#?}", a.problems);
    assert_eq!(a.status, KitStatus::Complete);

    let with = |argument: Value| {
        let mut k = k.clone();
        k["example"]["content"] = json!(json!({"patternId": r.reader, "argument": argument}).to_string());
        run_admit(&r, &k, &handles())
    };
    let a = with(json!({"db": {"$handle": "mailDb"}, "folder": "INBOX"}));
    assert!(a.problems.iter().any(|p| p.rule == "example-argument" && p.message.contains("no argument `folder`")));
    let a = with(json!({"month": "2026-10"}));
    assert_eq!(a.kit.missing[0].argument, "db", "the required database is not bound");
    let a = with(json!({"db": {"$handle": "stolenDb"}}));
    assert!(rules(&a).contains(&"unknown-handle"));
    let mut bad = k.clone();
    bad["example"]["content"] = json!("{\"patternId\": ");
    assert!(rules(&run_admit(&r, &bad, &handles())).contains(&"example-json"));
}

#[test]
fn the_cli_admits_a_kit_under_the_global_run() {
    let r = research();
    std::fs::write(r.ws.path("kit.json"), kit(&r).to_string()).unwrap();
    std::fs::write(r.ws.path("handles.json"), json!({"handles": handles()}).to_string()).unwrap();
    let fabdex = |args: &[&str]| {
        common::fabdex_command()
            .args(["--index", r.ws.index_dir().to_str().unwrap(), "--runs", r.ws.path("runs").to_str().unwrap()])
            .args(args)
            .output()
            .unwrap()
    };
    let kit_path = r.ws.path("kit.json");
    let handles_path = r.ws.path("handles.json");
    let out = fabdex(&[
        "--run",
        &r.run,
        "kit",
        "admit",
        kit_path.to_str().unwrap(),
        "--handles",
        handles_path.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let admission: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(admission["status"], "complete");
    // Without the grant: exit 1, and only the admission JSON on stdout.
    let out = fabdex(&["--run", &r.run, "kit", "admit", kit_path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let admission: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(admission["kit"]["missing"][0]["argument"], "db");
    let out = fabdex(&["kit", "admit", kit_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "no run: {}", String::from_utf8_lossy(&out.stderr));
    let out = fabdex(&["kit", "schema"]);
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        schema["properties"]["example"]["anyOf"][0]["$ref"].as_str().map(|s| s.ends_with("Example")),
        Some(true)
    );
}
