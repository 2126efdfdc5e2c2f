//! The pattern index on the project's corpus: published records beside source
//! trees, identity checks, declared against extracted contracts, contract-aware
//! search with fit verdicts, bounded source reads, dependency trees, and the
//! bad feeds that must fail loudly without touching the published snapshot.

mod common;

use std::fs;

use common::Workspace;
use fabdex_model::Address;
use fabdex_model::ts::{Agreement, IdentityStatus};
use fabdex_query::{Engine, FieldSpec, PatternQuery, PatternSearch, QueryError};

fn search(engine: &Engine, text: &str) -> PatternSearch {
    engine.search_patterns(&PatternQuery { text: text.into(), ..Default::default() }).unwrap()
}

fn rank_of(result: &PatternSearch, entry_suffix: &str) -> usize {
    result
        .hits
        .iter()
        .find(|h| {
            h.entry.ends_with(entry_suffix) || h.description.as_deref().is_some_and(|d| d.starts_with(entry_suffix))
        })
        .map(|h| h.rank)
        .unwrap_or(usize::MAX)
}

/// The pattern id of a published record by the start of its description.
fn record_id(engine: &Engine, description_start: &str) -> String {
    engine
        .snapshot()
        .patterns
        .programs
        .iter()
        .find(|p| p.published.is_some() && p.description.as_deref().is_some_and(|d| d.starts_with(description_start)))
        .unwrap_or_else(|| panic!("no record described `{description_start}…`"))
        .pattern_id
        .clone()
}

#[test]
fn the_inbox_task_ranks_the_inbox_above_look_alikes_and_names_the_database() {
    let ws = Workspace::with_registry();
    ws.build();
    let engine = ws.engine();
    let result = search(&engine, "give me a simple list view of my email inbox");
    let top = &result.hits[0];
    assert!(top.entry.ends_with("mail/inbox.tsx"), "{:#?}", result.hits.iter().map(|h| &h.entry).collect::<Vec<_>>());
    assert_eq!(top.import_hint, format!("import X from \"cf:pattern:{}\"", top.pattern_id));
    assert_eq!(top.address, format!("pattern:{}", top.pattern_id));
    let missing: Vec<&str> = top.fit.missing.iter().map(|m| m.input.as_str()).collect();
    assert_eq!(missing, ["db"], "the inbox needs the database handle it passes to the reader");
    assert!(top.why.iter().any(|w| w.starts_with("description:") && w.contains("inbox")), "{:?}", top.why);
    // Published look-alikes that only mention email in prose rank below it.
    for look_alike in ["Email signature", "Mail merge", "Pick an email template"] {
        assert!(rank_of(&result, look_alike) > 1, "{look_alike}");
    }

    // A description that merely mentions email and messages ranks below the
    // patterns whose result contract returns a list of messages.
    let result = search(&engine, "email messages");
    let signature = rank_of(&result, "Email signature");
    assert!(rank_of(&result, "mail/inbox.tsx") < signature, "{signature}");
    assert!(
        rank_of(&result, "mail/mail-reader.tsx") < signature,
        "{:#?}",
        result.hits.iter().map(|h| (&h.entry, h.score, &h.why)).collect::<Vec<_>>()
    );
    let sig_hit = result.hits.iter().find(|h| h.rank == signature).unwrap();
    assert_eq!(sig_hit.fit.verdict, "textual", "only its prose matched");
    assert!(!sig_hit.has_source);
}

#[test]
fn contract_requests_and_handles_decide_the_fit_verdict() {
    let ws = Workspace::with_registry();
    ws.build();
    let engine = ws.engine();
    let returns = vec![FieldSpec::parse("messages:array", "--returns").unwrap()];
    let q = PatternQuery { returns: returns.clone(), ..Default::default() };
    let result = engine.search_patterns(&q).unwrap();
    let entries: Vec<&str> = result.hits.iter().map(|h| h.entry.as_str()).collect();
    assert_eq!(entries.len(), 2, "only the patterns returning a messages array match: {entries:?}");
    assert!(entries.iter().any(|e| e.ends_with("mail/mail-reader.tsx")));
    assert!(entries.iter().any(|e| e.ends_with("mail/inbox.tsx")));
    for hit in &result.hits {
        assert_eq!(hit.fit.verdict, "needs-inputs");
        assert_eq!(hit.fit.returns[0].field, "messages");
        assert_eq!(hit.fit.returns[0].ty, "MessageHeader[]");
        assert_eq!(hit.fit.missing[0].input, "db");
        assert!(hit.fit.missing[0].ty.contains("MailDatabase"));
    }

    // Holding a mail database handle binds the required input: the reader meets the task.
    let have = vec![FieldSpec::parse("mailbox:MailDatabase", "--have").unwrap()];
    let q = PatternQuery { returns, have, text: "mail reader".into(), ..Default::default() };
    let result = engine.search_patterns(&q).unwrap();
    let reader = &result.hits[0];
    assert!(reader.entry.ends_with("mail/mail-reader.tsx"));
    assert_eq!(reader.fit.verdict, "meets");
    assert_eq!(reader.fit.satisfied[0].input, "db");
    assert_eq!(reader.fit.satisfied[0].by.as_deref(), Some("mailbox"));
    assert!(reader.fit.missing.is_empty());

    // A field it does not return makes the fit partial.
    let q = PatternQuery {
        text: "mail reader".into(),
        returns: vec![FieldSpec::parse("messages", "").unwrap(), FieldSpec::parse("bodies", "").unwrap()],
        ..Default::default()
    };
    let reader = engine.search_patterns(&q).unwrap().hits.into_iter().next().unwrap();
    assert_eq!(reader.fit.verdict, "partial");
    assert_eq!(reader.fit.not_returned, ["bodies"]);

    // Filters: kind, quality, tags.
    let q = PatternQuery { text: "email".into(), min_quality: Some("proven".parse_quality()), ..Default::default() };
    let result = engine.search_patterns(&q).unwrap();
    assert!(!result.hits.is_empty());
    assert!(result.hits.iter().all(|h| h.quality == Some(fabdex_model::registry::Quality::Proven)));
    let q = PatternQuery {
        tags: vec!["#calendar".into()],
        kind: Some(fabdex_model::registry::PatternKind::App),
        ..Default::default()
    };
    let result = engine.search_patterns(&q).unwrap();
    assert_eq!(result.hits.len(), 1, "{:?}", result.hits);
    assert!(result.hits[0].description.as_deref().unwrap().starts_with("A month of agenda items"));

    let err = engine.search_patterns(&PatternQuery { text: "the of".into(), ..Default::default() }).unwrap_err();
    assert!(matches!(err, QueryError::InvalidArgument(_)), "{err}");
    let err =
        engine.search_patterns(&PatternQuery { text: "x".into(), limit: Some(51), ..Default::default() }).unwrap_err();
    assert!(err.to_string().contains("limit 51"), "{err}");
}

trait ParseQuality {
    fn parse_quality(self) -> fabdex_model::registry::Quality;
}

impl ParseQuality for &str {
    fn parse_quality(self) -> fabdex_model::registry::Quality {
        serde_json::from_value(serde_json::Value::String(self.into())).unwrap()
    }
}

#[test]
fn published_records_state_identity_schemas_and_dependencies() {
    let ws = Workspace::with_registry();
    let report = ws.build();
    assert_eq!(report.counts.published_records, 6);
    assert_eq!(report.counts.records_without_source, 2);
    assert_eq!(report.counts.identity_mismatch, 1);
    assert_eq!(report.counts.identity_unverifiable, 2);
    assert_eq!(report.counts.schema_disagreements, 1);
    let engine = ws.engine();

    let templates = engine.inspect(&record_id(&engine, "Pick an email template")).unwrap();
    assert_eq!(templates.identity.status, IdentityStatus::Verified);
    assert_eq!(templates.identity.computed.as_deref(), Some(templates.pattern_id.as_str()));
    assert_eq!(templates.origin, "remote-index");
    assert_eq!(templates.agreement.argument, Agreement::Agree, "declared and extracted agree");
    assert!(templates.argument_schema.is_some() && templates.declared_schemas.is_some());

    let team = engine.inspect(&record_id(&engine, "A shared inbox")).unwrap();
    assert_eq!(team.identity.status, IdentityStatus::Mismatch);
    assert!(team.identity.reasons[0].contains("is not the content identity"), "{:?}", team.identity);

    let signature = engine.inspect(&record_id(&engine, "Email signature")).unwrap();
    assert_eq!(signature.identity.status, IdentityStatus::Unverifiable);
    assert!(!signature.has_source);
    assert!(signature.identity.reasons[0].contains("no program"));
    assert!(signature.argument_schema.is_none(), "nothing extracted without source");
    assert_eq!(signature.agreement.result, Agreement::DeclaredOnly);

    let picker = engine.inspect(&record_id(&engine, "Step through months")).unwrap();
    assert_eq!(picker.agreement.result, Agreement::Disagree, "the record declares month: number");
    assert_eq!(picker.agreement.argument, Agreement::Agree, "published with the extracted argument schema");
    let agenda = engine.inspect(&record_id(&engine, "A month of agenda items")).unwrap();
    assert_eq!(agenda.dependencies, std::slice::from_ref(&picker.pattern_id));
    assert_eq!(agenda.declared_dependencies, std::slice::from_ref(&picker.pattern_id));
    assert!(agenda.scanned_dependencies.is_empty());
    assert_eq!(picker.dependents, std::slice::from_ref(&agenda.pattern_id));
    assert_eq!(agenda.files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["/main.tsx", "/format.ts"]);

    let tree = engine.deps(&agenda.pattern_id, None).unwrap();
    assert_eq!(tree.root.dependencies.len(), 1);
    assert_eq!(tree.root.dependencies[0].pattern_id, picker.pattern_id);
    assert_eq!(tree.root.dependencies[0].identity, "verified");
    // A source-tree program's `cf:pattern:` import of something not indexed.
    let focus = engine.deps("patterns/focus-board.tsx", Some(2)).unwrap();
    assert!(focus.root.dependencies.iter().all(|d| !d.indexed && d.identity == "not-indexed"), "{focus:?}");
    assert!(engine.deps("patterns/focus-board.tsx", Some(0)).is_err());
}

#[test]
fn pattern_files_read_by_lines_symbols_and_windows() {
    let ws = Workspace::with_registry();
    ws.build();
    let engine = ws.engine();
    let agenda = record_id(&engine, "A month of agenda items");
    let files = engine.pattern_files(&agenda).unwrap();
    assert_eq!(files.files.len(), 2);
    assert!(files.files[0].main && files.files[0].source);
    assert_eq!(files.files[1].address, format!("pattern:{agenda}/format.ts"));

    let read = |a: &str| {
        let Ok(Address::Pattern(p)) = Address::parse(a) else { panic!("{a}") };
        engine.read_pattern(&p, None, None, None)
    };
    let whole = read(&format!("pattern:{agenda}/format.ts")).unwrap();
    let source = fs::read_to_string(common::project_root().join("corpus/published-src/agenda/format.ts")).unwrap();
    assert_eq!(whole.text, source);
    assert_eq!(whole.digest, fabdex_model::digest_text(&source));
    assert_eq!(whole.origin, "remote-index");

    let lines = read(&format!("pattern:{agenda}/format.ts:L2-L3")).unwrap();
    assert_eq!(lines.text, source.lines().skip(1).take(2).map(|l| format!("{l}\n")).collect::<String>());
    assert_eq!(lines.lines, Some([2, 3]));

    let symbol = read(&format!("pattern:{agenda}/format.ts#itemsOfMonth")).unwrap();
    assert!(symbol.text.starts_with("export function itemsOfMonth"), "{}", symbol.text);
    assert!(symbol.text.trim_end().ends_with('}'));

    // `pattern:<id>` alone reads the main file; the same read as the CLI's `read`.
    let main = engine.read(&format!("pattern:{agenda}"), None, Some(100)).unwrap();
    assert!(main.truncated);
    assert_eq!(main.next.as_deref(), Some(format!("pattern:{agenda}/main.tsx@100").as_str()));
    let next = engine.read(main.next.as_deref().unwrap(), None, Some(100)).unwrap();
    assert_eq!(next.offset, 100);

    // A long line is cut at the per-line limit and reported.
    let Ok(Address::Pattern(p)) = Address::parse(&format!("pattern:{agenda}/format.ts")) else { panic!() };
    let cut = engine.read_pattern(&p, None, None, Some(10)).unwrap();
    assert!(!cut.clipped_lines.is_empty());
    assert!(cut.text.contains("… ["), "{}", cut.text);

    // Errors say which file or record.
    let err = read(&format!("pattern:{agenda}/nope.ts")).unwrap_err();
    assert!(matches!(err, QueryError::NotFound(_)));
    assert!(err.to_string().contains("`nope.ts` is not a file of pattern") && err.to_string().contains("format.ts"));
    let signature = record_id(&engine, "Email signature");
    let err = read(&format!("pattern:{signature}/main.tsx")).unwrap_err();
    assert!(err.to_string().contains("has no source"), "{err}");
    let err = read(&format!("pattern:{agenda}/format.ts#nothingHere")).unwrap_err();
    assert!(err.to_string().contains("defines no `nothingHere`"), "{err}");
    let err = read(&format!("pattern:{agenda}/format.ts:L999")).unwrap_err();
    assert!(err.to_string().contains("past the end"), "{err}");
}

fn feed_workspace(feed: &str) -> Workspace {
    let ws = Workspace::with_registry();
    fs::write(ws.path("published/registry.jsonl"), feed).unwrap();
    ws
}

fn record(id: &str, program: Option<serde_json::Value>) -> String {
    let mut r = serde_json::json!({"patternId": id, "description": "a record"});
    if let Some(p) = program {
        r["program"] = p;
    }
    r.to_string()
}

#[test]
fn bad_feeds_fail_with_the_line_and_keep_the_published_snapshot() {
    let ws = Workspace::with_registry();
    let good = ws.build();
    let current = || fs::read_to_string(ws.index_dir().join("CURRENT")).unwrap();
    assert_eq!(current().trim(), good.snapshot_id);
    let build_err = |feed: &str| {
        fs::write(ws.path("published/registry.jsonl"), feed).unwrap();
        let err = fabdex_index::build(&ws.config(), &fabdex_index::BuildOptions::new(ws.index_dir())).unwrap_err();
        format!("{err:#}")
    };
    let ok = record("abc", None);
    let err = build_err(&format!("{ok}\n{{\"patternId\": \"x\", \"hashtags\": 7}}\n"));
    assert!(err.contains("registry/registry.jsonl:2: not a valid pattern record"), "{err}");
    let err = build_err(&format!("{ok}\n\n{ok}\n"));
    assert!(err.contains("registry.jsonl:3: duplicate patternId `abc` (first at line 1)"), "{err}");
    let err = build_err("<html><body>502 Bad Gateway</body></html>\n");
    assert!(err.contains("registry.jsonl:1:"), "{err}");
    assert_eq!(current().trim(), good.snapshot_id, "a failed build leaves the published snapshot in place");
    ws.engine().inspect(&record_id(&ws.engine(), "Email signature")).unwrap();
}

#[test]
fn incomplete_programs_are_indexed_and_say_why() {
    let main = "import { helper } from \"./lib/helper\";\nimport { pattern } from \"commonfabric\";\nexport default pattern(() => ({ v: helper() }));\n";
    let feed = [
        record("no-program", None),
        record(
            "lost-import",
            Some(serde_json::json!({"main": "/main.tsx", "files": [{"name": "/main.tsx", "contents": main}]})),
        ),
        record(
            "no-main",
            Some(serde_json::json!({"main": "/app.tsx", "files": [{"name": "/main.tsx", "contents": "export const x = 1;\n"}]})),
        ),
        record(
            "complete",
            Some(serde_json::json!({"main": "/main.tsx", "files": [
                {"name": "/main.tsx", "contents": main},
                {"name": "/lib/helper.ts", "contents": "export const helper = () => 1;\n"}
            ]})),
        ),
    ]
    .join("\n");
    let ws = feed_workspace(&feed);
    ws.build();
    let engine = ws.engine();
    let status = |id: &str| engine.inspect(id).unwrap().identity;
    assert_eq!(status("no-program").status, IdentityStatus::Unverifiable);
    let lost = status("lost-import");
    assert_eq!(lost.status, IdentityStatus::Unverifiable);
    assert!(lost.reasons[0].contains("`./lib/helper` imported by main.tsx resolves to no file"), "{lost:?}");
    let no_main = status("no-main");
    assert!(no_main.reasons[0].contains("main `/app.tsx` is not among the program's files"), "{no_main:?}");
    // Complete, but its id is not its content identity.
    let complete = status("complete");
    assert_eq!(complete.status, IdentityStatus::Mismatch);
    let computed = complete.computed.unwrap();
    // Republished under its content identity, the same program verifies.
    let feed = feed.replace("\"complete\"", &format!("\"{computed}\""));
    fs::write(ws.path("published/registry.jsonl"), feed).unwrap();
    ws.build();
    let engine = ws.engine();
    assert_eq!(engine.inspect(&computed).unwrap().identity.status, IdentityStatus::Verified);
}

/// Pattern search against tasks in users' own words (`eval patterns`), with a
/// regression floor just under what it measured (success@1 0.67, success@5
/// 0.93, MRR 0.756; before the program profiles and the semantic model
/// 0.53, 0.93 and 0.674).
#[test]
fn pattern_tasks_find_their_patterns() {
    let ws = Workspace::with_registry();
    ws.build();
    let engine = ws.engine();
    let tasks: Vec<fabdex_query::PatternTask> =
        common::read_json(&common::project_root().join("tests/data/corpus-pattern-tasks.json"));
    let report = engine.eval_patterns(&tasks).unwrap();
    eprintln!(
        "pattern tasks: success@1 {:.2} success@5 {:.2} MRR {:.3}",
        report.success_at_1, report.success_at_5, report.mrr
    );
    assert_eq!(report.tasks, 15);
    assert!(report.success_at_5 >= 0.86, "success@5 {:.2}", report.success_at_5);
    assert!(report.mrr >= 0.72, "MRR {:.3}", report.mrr);
    // A published record is found by its patternId; ranks agree with success@1.
    let mail_merge = report.per_task.iter().find(|t| t.task.starts_with("send the same email")).unwrap();
    assert!(mail_merge.best_rank.is_some_and(|r| r <= 5), "{mail_merge:?}");
    let firsts = report.per_task.iter().filter(|t| t.best_rank == Some(1)).count();
    assert_eq!(firsts as f64 / 15.0, report.success_at_1);
    let empty = [fabdex_query::PatternTask { task: "anything".into(), expect: vec![] }];
    assert!(engine.eval_patterns(&empty).unwrap_err().to_string().contains("expects no pattern"));
}

/// A library that says more about a program than its profile keeps: every
/// bound that cuts is named in the program's profile and counted in the report.
#[test]
fn profile_bounds_that_cut_are_reported_not_silent() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("lib");
    fs::create_dir_all(lib.join("shop")).unwrap();
    let labels: String = (0..130).map(|i| format!("      <cf-button title=\"Aisle {i}\">Add</cf-button>\n")).collect();
    fs::write(
        lib.join("shop/main.tsx"),
        format!(
            "import {{ NAME, pattern, UI }} from \"commonfabric\";\n\
             export default pattern<{{ items: string[] }}, {{}}>(({{ items }}) => ({{\n  [NAME]: \"Shop\",\n  \
             [UI]: (\n    <div>\n{labels}    </div>\n  ),\n}}));\n"
        ),
    )
    .unwrap();
    let mut catalog =
        format!("# Catalog\n\n## shop/main.tsx\n\n{}\n\n**Keywords:** cart, aisle\n", "A shop list. ".repeat(200));
    for i in 0..11 {
        catalog.push_str(&format!("\n## Guide {i}\n\nStart from [the shop](shop/main.tsx) for lists.\n"));
    }
    fs::write(lib.join("index.md"), catalog).unwrap();
    fs::write(dir.path().join("fabdex.toml"), "[[root]]\nname = \"lib\"\npath = \"lib\"\nkind = \"patterns\"\n")
        .unwrap();
    let config = fabdex_index::Config::load(&dir.path().join("fabdex.toml")).unwrap();
    let report = fabdex_index::build(&config, &fabdex_index::BuildOptions::new(dir.path().join("index"))).unwrap();
    let limited = &report.profiles.limited;
    for field in ["catalog", "links", "ui"] {
        assert_eq!(limited.get(field), Some(&1), "{field} in {limited:?}");
    }
    let engine = Engine::open_index(&dir.path().join("index")).unwrap();
    let id = engine.snapshot().patterns.programs[0].pattern_id.clone();
    let profile = engine.inspect(&id).unwrap().profile;
    let limit = |field: &str| profile.limits.iter().find(|l| l.field == field).unwrap_or_else(|| panic!("{field}"));
    let catalog = limit("catalog");
    assert_eq!((catalog.kept, catalog.total, catalog.unit.as_str()), (1500, 2599, "chars"));
    assert_eq!(catalog.address.as_deref(), Some("doc:lib/index.md#shopmaintsx"));
    assert_eq!((limit("links").kept, limit("links").total), (8, 11));
    assert_eq!((limit("ui").kept, limit("ui").total), (120, 131));
    // What was kept is still searched.
    let hits = search(&engine, "cart aisle").hits;
    assert!(hits.first().is_some_and(|h| h.entry.ends_with("shop/main.tsx")), "{hits:?}");
}
