//! The doors that need an index: the tool API's request bodies (what
//! `POST /v1/tools/{name}` hands the registry) and kit admission. Both run
//! against one fixture per process: the project's `corpus/` (docs, skills,
//! patterns and the published records) built into a temporary index, and a
//! research run whose ledger holds real searches, inspections and reads.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use fabdex_ledger::{Contents, RunStore, Session};
use fabdex_model::address::Address;
use fabdex_query::{Engine, PatternQuery, SearchDocs};
use serde_json::Value;

/// The built corpus, a run over it, and what the run cited.
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub engine: Engine,
    /// The run's ledger as admission reads it.
    pub contents: Contents,
    /// Citation ids of the run's reads, in the order they were made.
    pub citations: Vec<String>,
    /// Pattern ids the run inspected.
    pub patterns: Vec<String>,
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus")
}

/// The fixture, built on first use.
pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(build_fixture)
}

fn build_fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("a temporary folder for the fuzz index");
    let corpus = corpus().canonicalize().expect("the project's corpus/ folder");
    let root = |name: &str, path: PathBuf, kind: &str, origin: &str| {
        format!(
            "[[root]]\nname = \"{name}\"\npath = \"{}\"\nkind = \"{kind}\"\norigin = \"{origin}\"\n\n",
            path.display()
        )
    };
    let config = [
        root("docs", corpus.join("docs"), "docs", "docs"),
        root("skills", corpus.join("skills"), "skills", "skill"),
        root("patterns", corpus.join("patterns"), "patterns", "local-registry"),
        root("registry", corpus.join("published/registry.jsonl"), "published", "remote-index"),
    ]
    .concat();
    let config_path = dir.path().join("fabdex.toml");
    std::fs::write(&config_path, config).expect("the fuzz index's config");
    let config = fabdex_index::Config::load(&config_path).expect("the fuzz index's config loads");
    let index_dir = dir.path().join("index");
    fabdex_index::build(&config, &fabdex_index::BuildOptions::new(index_dir.clone())).expect("the corpus indexes");
    let engine = Engine::open_index(&index_dir).expect("the corpus index opens");
    let store = RunStore::new(dir.path().join("runs"));
    let run = store.new_run(Some(engine.snapshot_id())).expect("a run").run;
    let (citations, patterns) = research(&engine, &store, &run);
    let contents = store.ledger(&run).and_then(|l| l.read()).expect("the run's ledger reads back");
    Fixture { _dir: dir, engine, contents, citations, patterns }
}

/// What a research run does before it proposes a kit: search, inspect the
/// first pattern hits, read the first doc hits and one file of each pattern.
fn research(engine: &Engine, store: &RunStore, run: &str) -> (Vec<String>, Vec<String>) {
    let mut session = Session::new(engine);
    session.ledger = Some(store.ledger(run).expect("the run's ledger"));
    let task = "give me a simple list view of my email inbox";
    let found = session.search_patterns(&PatternQuery { text: task.into(), ..Default::default() }).expect("search");
    let patterns: Vec<String> = found.hits.iter().take(3).map(|h| h.pattern_id.clone()).collect();
    let mut addresses = Vec::new();
    for id in &patterns {
        session.inspect(id).expect("inspect a pattern hit");
        let listing = engine.pattern_files(id).expect("a pattern hit's files");
        let main = listing.files.first().map(|f| f.name.trim_start_matches('/')).unwrap_or_default();
        addresses.push(format!("pattern:{id}/{main}"));
    }
    let docs = session.search_docs(&SearchDocs { query: "calling a child pattern".into(), ..Default::default() });
    addresses.extend(docs.expect("search docs").hits.iter().take(3).map(|h| h.address.clone()));
    let citations = addresses
        .iter()
        .filter_map(|a| session.read(a, None, None, None).inspect_err(|e| eprintln!("{a}: {e}")).ok())
        .map(|env| fabdex_ledger::citation_id(&env.address, Some(env.offset), Some(env.end), &env.digest))
        .collect();
    (citations, patterns)
}

/// Error kinds a tool may answer with on a healthy snapshot. `corrupt`
/// (the snapshot is sound) and `internal` would be defects.
const CALLER_ERRORS: [&str; 4] = ["unknown-tool", "invalid-argument", "not-found", "denied"];

/// A tool call as the HTTP API makes it: the first line names the tool, the
/// rest is the request body.
///
/// - Nothing panics; a body that is not JSON is refused before any tool runs.
/// - Every error is a caller's error (never `corrupt` or `internal`).
/// - Every address in an answer parses and prints back as itself.
/// - A read answer's digest is the digest of its text; a search hit's
///   address reads, and holds as many chars as the hit says.
pub fn tool_call(text: &str) {
    let (name, body) = text.split_once('\n').unwrap_or((text, ""));
    let mut input: Value = if body.trim().is_empty() {
        serde_json::json!({})
    } else {
        match serde_json::from_str(body) {
            Ok(v) => v,
            Err(_) => return,
        }
    };
    let fixture = fixture();
    let run = match fabdex_tools::take_run(&mut input) {
        Ok(run) => run,
        Err(e) => return assert_caller_error(name, &e),
    };
    let session = Session::new(&fixture.engine);
    let ctx = fabdex_tools::Context { session, runs: None, grants: None };
    if run.is_some() {
        // The server refuses a run it has no folder for before calling; the
        // registry alone has none either.
        return;
    }
    match fabdex_tools::call(&ctx, name.trim(), input) {
        Ok(answer) => check_answer(&fixture.engine, name, &answer),
        Err(e) => assert_caller_error(name, &e),
    }
}

fn assert_caller_error(name: &str, e: &fabdex_tools::ToolError) {
    assert!(CALLER_ERRORS.contains(&e.kind.as_str()), "tool `{name}` answered a defect: [{}] {}", e.kind, e.message);
    assert!(!e.message.is_empty(), "tool `{name}`: an error without a message");
}

fn check_answer(engine: &Engine, name: &str, answer: &Value) {
    let mut stack = vec![answer];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for key in ["address", "next"] {
                    if let Some(Value::String(a)) = map.get(key) {
                        let parsed = Address::parse(a).unwrap_or_else(|e| panic!("`{name}` answered `{a}`: {e}"));
                        assert_eq!(&parsed.to_string(), a, "`{name}` answered an address that prints otherwise");
                    }
                }
                if let (Some(Value::String(text)), Some(Value::String(digest))) = (map.get("text"), map.get("digest")) {
                    assert_eq!(
                        &fabdex_model::digest_text(text),
                        digest,
                        "`{name}`: a read whose digest is not its text's"
                    );
                }
                if let (Some(Value::String(a)), Some(chars), Some(_)) =
                    (map.get("address"), map.get("chars").and_then(Value::as_u64), map.get("heading_path"))
                {
                    let env = engine
                        .read(a, Some(0), None)
                        .unwrap_or_else(|e| panic!("`{name}` hit `{a}` does not read: {e}"));
                    assert_eq!(env.total, chars, "`{name}` hit `{a}`: the hit's chars are not the read's");
                    assert_eq!(env.digest, fabdex_model::digest_text(&env.text));
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
}

/// A proposed kit, admitted against the fixture's run. `$CITE0`… and
/// `$PATTERN0`… in the text stand for the run's citations and inspected
/// patterns, so that seeds can cite real reads.
///
/// - Admission never panics, whatever the kit says.
/// - A complete kit has no problems; every problem names a rule and a JSON
///   pointer (empty or starting with `/`).
/// - The admitted kit cites only the run's ledger, and keeps only patterns
///   that were proposed.
pub fn kit(text: &str) {
    let fixture = fixture();
    let mut text = text.to_string();
    for (i, id) in fixture.citations.iter().enumerate().rev() {
        text = text.replace(&format!("$CITE{i}"), id);
    }
    for (i, id) in fixture.patterns.iter().enumerate().rev() {
        text = text.replace(&format!("$PATTERN{i}"), id);
    }
    let Ok(proposed) = serde_json::from_str::<fabdex_kit::Kit>(&text) else { return };
    let handles = [fabdex_kit::Handle {
        token: "mailDb".into(),
        description: "The user's mail database".into(),
        schema: Some(serde_json::json!({"type": "object"})),
    }];
    let admission = fabdex_kit::admit(&fixture.engine, &fixture.contents, &handles, &proposed);
    if admission.status == fabdex_kit::KitStatus::Complete {
        assert!(admission.problems.is_empty(), "a complete kit with problems: {:?}", admission.problems);
    }
    for p in &admission.problems {
        assert!(!p.rule.is_empty() && !p.message.is_empty(), "a problem without a rule or message: {p:?}");
        assert!(p.pointer.is_empty() || p.pointer.starts_with('/'), "not a JSON pointer: {p:?}");
    }
    let ledger: Vec<String> = fixture
        .contents
        .records
        .iter()
        .flat_map(|r| r.call.items.iter())
        .filter_map(|item| item.citation.clone())
        .collect();
    for source in &admission.kit.sources {
        assert!(ledger.contains(&source.id), "admitted source `{}` is not a citation of the run", source.id);
    }
    for p in &admission.kit.patterns {
        assert!(
            proposed.patterns.iter().any(|q| q.pattern_id == p.pattern_id
                || fixture.engine.inspect(&q.pattern_id).is_ok_and(|i| i.pattern_id == p.pattern_id)),
            "admitted pattern `{}` was not proposed",
            p.pattern_id
        );
    }
    serde_json::to_string(&admission).expect("an admission serialises");
}
