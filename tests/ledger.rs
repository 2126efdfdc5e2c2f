//! Research runs: the ledger records every call, the exposure set is the union
//! of the origins read, a withheld read leaks no text, verification notices an
//! edited source, a torn last line is reported while earlier records stay
//! readable, and concurrent appends never interleave.

mod common;

use std::fs;

use common::Workspace;
use fabdex_ledger::audit::{self, Status};
use fabdex_ledger::{NewRecord, Policy, RunStore, Session};
use fabdex_query::{Engine, PatternQuery, QueryError, SearchDocs};

fn store(ws: &Workspace) -> RunStore {
    RunStore::new(ws.path("runs"))
}

fn session<'a>(ws: &Workspace, engine: &'a Engine, run: &str, policy: Option<&str>) -> Session<'a> {
    let mut s = Session::new(engine);
    s.ledger = Some(store(ws).ledger(run).unwrap());
    s.policy = policy.map(|p| Policy::parse(p, "policy.toml").unwrap());
    s
}

/// A pattern id of the published registry whose program has source.
fn registry_program(engine: &Engine) -> String {
    let p = engine.snapshot().patterns.programs.iter().find(|p| p.origin == "remote-index" && p.has_source).unwrap();
    p.pattern_id.clone()
}

#[test]
fn exposure_is_the_union_of_the_origins_read_and_only_grows() {
    let ws = Workspace::with_registry();
    ws.build();
    let engine = ws.engine();
    let run = store(&ws).new_run(Some(engine.snapshot_id())).unwrap().run;
    let s = session(&ws, &engine, &run, None);
    let exposure = || audit::exposure(&store(&ws).ledger(&run).unwrap().read().unwrap()).origins;

    s.read("doc:docs/common/conventions/wish.md#result-shape", None, Some(200), None).unwrap();
    assert_eq!(exposure(), ["docs"]);
    let q = SearchDocs { query: "skill".into(), path_prefix: Some("skills/".into()), ..Default::default() };
    let hits = s.search_docs(&q).unwrap();
    assert!(hits.hits.iter().all(|h| h.origin == "skill") && !hits.hits.is_empty());
    assert_eq!(exposure(), ["docs", "skill"]);
    s.inspect("patterns/mail/inbox.tsx").unwrap();
    s.read(&format!("pattern:{}", registry_program(&engine)), None, None, None).unwrap();
    assert_eq!(exposure(), ["docs", "local-registry", "remote-index", "skill"]);
    // A failed call adds a record but no exposure.
    assert!(s.read("doc:docs/nope.md", None, None, None).is_err());
    assert_eq!(exposure(), ["docs", "local-registry", "remote-index", "skill"]);

    let contents = store(&ws).ledger(&run).unwrap().read().unwrap();
    let seqs: Vec<u64> = contents.records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
    assert!(contents.records[4].call.error.as_deref().unwrap().starts_with("not-found"));
    let read = &contents.records[0].call.items[0];
    assert_eq!(
        read.digest.as_deref(),
        Some(
            fabdex_model::digest_text(
                &engine.read("doc:docs/common/conventions/wish.md#result-shape", None, Some(200)).unwrap().text
            )
            .as_str()
        )
    );
    assert_eq!(read.snapshot_free_citation(), read.citation.clone().unwrap());

    // Every read cited by the run reopens identically.
    let (_, check) = audit::cite(&engine, &store(&ws), read.citation.as_deref().unwrap(), None).unwrap();
    assert_eq!(check.status, Status::Identical);
    assert_eq!(check.text.unwrap().chars().count(), 200);
    let v = audit::verify(&engine, &contents).unwrap();
    assert!(v.ok(), "{v:#?}");
    assert!(v.identical >= 4);
}

trait CitationOf {
    fn snapshot_free_citation(&self) -> String;
}

impl CitationOf for fabdex_ledger::Item {
    fn snapshot_free_citation(&self) -> String {
        fabdex_ledger::citation_id(&self.address, self.offset, self.end, self.digest.as_deref().unwrap())
    }
}

#[test]
fn a_withheld_origin_leaks_no_text_and_the_policy_alone_flips_it() {
    let ws = Workspace::with_registry();
    ws.build();
    let engine = ws.engine();
    let run = store(&ws).new_run(None).unwrap().run;
    let deny = "default = \"allow\"\n[[deny]]\norigins = [\"remote-index\"]\nconsumers = [\"research\"]\n";
    let allow = "default = \"allow\"\n";
    let id = registry_program(&engine);
    let address = format!("pattern:{id}");
    let secret = engine.read(&address, None, None).unwrap().text;
    let marker: String = secret.lines().find(|l| l.len() > 30).unwrap().to_string();

    let denied = session(&ws, &engine, &run, Some(deny));
    let err = denied.read(&address, None, None, None).unwrap_err();
    let err = err.downcast_ref::<QueryError>().unwrap();
    assert!(matches!(err, QueryError::Denied(m) if m.contains("[[deny]] rule 1") && !m.contains(&marker)));
    let hits = denied.search_patterns(&PatternQuery { text: "email template".into(), ..Default::default() }).unwrap();
    let withheld = hits.hits.iter().find(|h| h.origin == "remote-index").unwrap();
    assert!(withheld.description.is_none() && withheld.denied.is_some());
    assert!(withheld.hashtags.is_empty() && withheld.why.is_empty(), "nothing drawn from its text: {withheld:?}");
    assert_eq!(withheld.fit.verdict, "withheld");
    assert!(denied.inspect(&id).is_err());

    let ledger_text = fs::read_to_string(store(&ws).ledger(&run).unwrap().path).unwrap();
    assert!(!ledger_text.contains(&marker), "the ledger holds no withheld text");
    let contents = store(&ws).ledger(&run).unwrap().read().unwrap();
    let item = &contents.records[0].call.items[0];
    assert!(!item.released && item.digest.is_none() && item.citation.is_none() && item.denied_by.is_some());
    let exposure = audit::exposure(&contents);
    assert!(!exposure.origins.contains(&"remote-index".to_string()));
    assert!(exposure.withheld["remote-index"] >= 2);

    // Same request, same source; only the policy changed.
    let allowed = session(&ws, &engine, &run, Some(allow));
    let env = allowed.read(&address, None, None, None).unwrap();
    assert_eq!(env.text, secret);
    let contents = store(&ws).ledger(&run).unwrap().read().unwrap();
    let last = contents.records.last().unwrap();
    assert!(last.call.items[0].released && last.call.policy.starts_with("policy.toml blake3:"));
    assert!(audit::exposure(&contents).origins.contains(&"remote-index".to_string()));
}

#[test]
fn verify_notices_an_edited_and_reindexed_source() {
    let ws = Workspace::with_registry();
    ws.build();
    let run = store(&ws).new_run(None).unwrap().run;
    {
        let engine = ws.engine();
        let s = session(&ws, &engine, &run, None);
        s.read("doc:docs/common/conventions/wish.md#result-shape", None, None, None).unwrap();
        s.read("doc:docs/FAQ.md", None, Some(300), None).unwrap();
        s.read("pattern:patterns/mail/mail-reader.tsx/mail/types.ts#MessageHeader", None, None, None).unwrap_err();
        let reader = engine.inspect("patterns/mail/mail-reader.tsx").unwrap().pattern_id;
        s.read(&format!("pattern:{reader}/mail/types.ts#MessageHeader"), None, None, None).unwrap();
    }
    let path = ws.path("docs/common/conventions/wish.md");
    let text = fs::read_to_string(&path).unwrap();
    let edited = text.replacen("## Result Shape\n", "## Result Shape\n\nEdited after the run read it.\n", 1);
    assert_ne!(edited, text, "the heading is in the corpus");
    fs::write(&path, edited).unwrap();
    ws.build();
    let engine = ws.engine();
    let v = audit::verify(&engine, &store(&ws).ledger(&run).unwrap().read().unwrap()).unwrap();
    assert!(!v.ok());
    assert_eq!(v.changed_since, 1, "{v:#?}");
    let changed = v.checks.iter().find(|c| c.status == Status::ChangedSince).unwrap();
    assert!(changed.address.ends_with("#result-shape"));
    assert_eq!(v.identical, 2, "the FAQ window and the unchanged pattern type read the same");
}

fn record(tool: &str) -> NewRecord {
    NewRecord {
        kind: fabdex_ledger::RecordKind::Tool,
        turn: None,
        tool: tool.into(),
        arguments: serde_json::json!({}),
        snapshot: None,
        consumer: "research".into(),
        policy: "none".into(),
        items: vec![],
        error: None,
    }
}

#[test]
fn a_torn_last_line_is_reported_and_earlier_records_stay_readable() {
    let dir = tempfile::tempdir().unwrap();
    let store = RunStore::new(dir.path());
    let run = store.new_run(None).unwrap().run;
    let ledger = store.ledger(&run).unwrap();
    for i in 0..3 {
        assert_eq!(ledger.append(record(&format!("t{i}"))).unwrap().seq, i + 1);
    }
    // A crash in the middle of the third append.
    let bytes = fs::read(&ledger.path).unwrap();
    let cut = bytes.len() - 20;
    fs::write(&ledger.path, &bytes[..cut]).unwrap();
    let contents = ledger.read().unwrap();
    assert_eq!(contents.records.len(), 2);
    assert_eq!(contents.problems.len(), 1);
    assert_eq!(contents.problems[0].line, 3);
    assert!(contents.problems[0].problem.contains("torn last line"));
    // The next append starts a fresh line and continues the sequence.
    assert_eq!(ledger.append(record("after")).unwrap().seq, 3);
    let contents = ledger.read().unwrap();
    assert_eq!(contents.records.iter().map(|r| r.call.tool.as_str()).collect::<Vec<_>>(), ["t0", "t1", "after"]);
    assert_eq!(contents.problems.len(), 1, "the torn line stays reported: {:?}", contents.problems);
    assert!(contents.problems[0].problem.contains("not a ledger record"));
}

#[test]
fn concurrent_appends_never_interleave() {
    let dir = tempfile::tempdir().unwrap();
    let store = RunStore::new(dir.path());
    let run = store.new_run(None).unwrap().run;
    std::thread::scope(|scope| {
        for w in 0..8 {
            let ledger = store.ledger(&run).unwrap();
            scope.spawn(move || {
                for i in 0..1000 {
                    ledger.append(record(&format!("w{w}-{i}"))).unwrap();
                }
            });
        }
    });
    let contents = store.ledger(&run).unwrap().read().unwrap();
    assert!(contents.problems.is_empty(), "{:?}", &contents.problems[..contents.problems.len().min(3)]);
    assert_eq!(contents.records.len(), 8000);
    let mut seqs: Vec<u64> = contents.records.iter().map(|r| r.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "sequence numbers increase in file order");
    seqs.dedup();
    assert_eq!(seqs, (1..=8000).collect::<Vec<u64>>());
    for w in 0..8 {
        let mine: Vec<&str> = contents
            .records
            .iter()
            .map(|r| r.call.tool.as_str())
            .filter(|t| t.starts_with(&format!("w{w}-")))
            .collect();
        assert_eq!(mine.len(), 1000);
    }
}

#[test]
fn provenance_keeps_what_was_read_apart_from_what_is_imported() {
    let ws = Workspace::with_registry();
    ws.build();
    let engine = ws.engine();
    let run = store(&ws).new_run(None).unwrap().run;
    let s = session(&ws, &engine, &run, None);
    let reader = engine.inspect("patterns/mail/mail-reader.tsx").unwrap().pattern_id;
    s.read(&format!("pattern:{reader}/mail/types.ts"), None, None, None).unwrap();
    s.read("doc:docs/common/conventions/wish.md#result-shape", None, None, None).unwrap();
    let authored = format!(
        "import Reader from \"cf:pattern:{reader}\";\nimport {{ pattern }} from \"commonfabric\";\nexport default pattern(() => Reader({{}}));\n"
    );
    let contents = store(&ws).ledger(&run).unwrap().read().unwrap();
    let p = audit::provenance(&contents, "mine.tsx", &authored);
    assert_eq!(p.imports, std::slice::from_ref(&reader));
    assert_eq!(p.consulted.patterns.len(), 1);
    assert_eq!(p.consulted.docs.len(), 1);
    assert!(p.consulted.patterns[0].address.contains("/mail/types.ts"));
    assert_eq!(p.exposure, ["docs", "local-registry"]);
}
