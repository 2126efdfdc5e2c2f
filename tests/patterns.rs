//! Pattern programs on the project's own corpus: entries, programs, content
//! identities, contracts, broken sources, and the CLI's inspect/export/contract.

mod common;

use std::collections::BTreeMap;
use std::fs;

use common::Workspace;
use serde_json::json;

#[test]
fn entries_programs_and_the_mail_contracts() {
    let ws = Workspace::with_corpus();
    let report = ws.build();
    assert_eq!(report.counts.programs, 22, "{:?}", report.counts);
    assert_eq!(report.counts.source_parse_failures, 2, "the two broken files are flagged, not dropped");
    let engine = ws.engine();
    let snap = engine.snapshot();
    // Tests and mod.ts are not entries; the broken files still have an outline.
    let entry = |p: &str| snap.patterns.files.iter().find(|f| f.path == p).unwrap();
    assert!(!entry("tally/tally.test.tsx").entry);
    assert!(!entry("mod.ts").entry);
    for broken in ["broken/unclosed-jsx.tsx", "broken/missing-brace.ts"] {
        let f = entry(broken);
        assert!(f.extraction.parse_failed || !f.extraction.diagnostics.is_empty(), "{broken}");
        assert!(f.outline.definitions.len() >= 2, "{broken}: {:?}", f.outline.definitions);
        assert!(!f.extraction.diagnostics.is_empty());
    }

    let reader = engine.inspect("patterns/mail/mail-reader.tsx").unwrap();
    assert_eq!(reader.aliases, ["patterns/mail/mail-reader.tsx", "mail/mail-reader.tsx"]);
    assert_eq!(
        reader.files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        ["mail/mail-reader.tsx", "mail/types.ts"]
    );
    let arg = reader.argument_schema.as_ref().unwrap();
    assert_eq!(arg["required"], json!(["db"]), "the reader requires its database");
    assert_eq!(arg["properties"]["db"]["asCell"], json!(["cell"]));
    let result = reader.result_schema.as_ref().unwrap();
    assert_eq!(result["properties"]["messages"]["items"], json!({"$ref": "#/$defs/MessageHeader"}));
    assert!(reader.hashtags.contains(&"mail".to_string()));
    assert!(reader.import_hint.contains(&reader.pattern_id));
    // Looked up by id and by id prefix too.
    assert_eq!(engine.inspect(&reader.pattern_id).unwrap().entry, reader.entry);
    assert_eq!(engine.inspect(&reader.pattern_id[..8]).unwrap().entry, reader.entry);

    let inbox = engine.inspect("mail/inbox.tsx").unwrap();
    assert_eq!(inbox.files.len(), 4, "{:?}", inbox.files);
    let focus = engine.inspect("focus-board.tsx").unwrap();
    assert_eq!(focus.dependencies, ["Zt3kQ9mW2xLp8rVb4nHc7sYd1fGj6uKe0aTo5qNiXw_"]);
    let err = engine.inspect("mail/no-such.tsx").unwrap_err().to_string();
    assert!(err.contains("mail/mail-reader.tsx") || err.contains("mail/inbox.tsx"), "suggests aliases: {err}");
}

#[test]
fn program_ids_follow_content_across_files() {
    let ws = Workspace::with_corpus();
    ws.build();
    let ids = |ws: &Workspace| -> BTreeMap<String, String> {
        ws.engine().export_patterns().into_iter().map(|p| (p.entry, p.pattern_id)).collect()
    };
    let before = ids(&ws);
    let types = ws.path("patterns/mail/types.ts");
    let text = fs::read_to_string(&types).unwrap();
    fs::write(&types, format!("{text}\n// edited\n")).unwrap();
    ws.build();
    let after = ids(&ws);
    for entry in ["patterns/mail/mail-reader.tsx", "patterns/mail/inbox.tsx"] {
        assert_ne!(before[entry], after[entry], "{entry} includes the edited helper");
    }
    assert_eq!(before["patterns/tally/tally.tsx"], after["patterns/tally/tally.tsx"]);
}

#[test]
fn snapshot_of_every_corpus_contract() {
    let ws = Workspace::with_corpus();
    ws.build();
    let contracts: BTreeMap<String, serde_json::Value> = ws
        .engine()
        .export_patterns()
        .into_iter()
        .map(|p| {
            (p.entry, json!({"argumentSchema": p.argument_schema, "resultSchema": p.result_schema, "inferred": p.inferred, "notes": p.notes}))
        })
        .collect();
    insta::assert_json_snapshot!("corpus_contracts", contracts);
}

#[test]
fn cli_inspect_export_and_contract() {
    let ws = Workspace::with_corpus();
    ws.build();
    let run = |args: &[&str]| {
        let out = common::fabdex_command().arg("--index").arg(ws.index_dir()).args(args).output().unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    let (code, out, _) = run(&["export", "patterns"]);
    assert_eq!(code, Some(0));
    assert_eq!(out.lines().count(), 22);
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for key in [
            "patternId",
            "aliases",
            "entry",
            "files",
            "exports",
            "imports",
            "argumentSchema",
            "resultSchema",
            "dependencies",
            "diagnostics",
        ] {
            assert!(v.get(key).is_some(), "{key} missing in {line}");
        }
    }
    let (code, out, _) = run(&["contract", "mail/mail-reader.tsx"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("db: Writable<MailDatabase>;"), "{out}");
    assert!(out.contains("month?: Default<string, \"2026-11\">;"), "{out}");
    let (code, _, err) = run(&["inspect", "nothing-like-this"]);
    assert_eq!(code, Some(3), "{err}");
}

#[test]
fn commonfabric_types_resolve_against_configured_api_declarations() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("patterns")).unwrap();
    fs::create_dir_all(dir.path().join("api")).unwrap();
    fs::write(
        dir.path().join("patterns/chat.tsx"),
        r#"import { pattern, type ChatTurn, type Writable } from "commonfabric";
interface Input { turns: Writable<ChatTurn[]> }
export default pattern<Input, { count: number }>(({ turns }) => ({ count: 0 }));
"#,
    )
    .unwrap();
    // Our own miniature of the platform's API declarations.
    fs::write(
        dir.path().join("api/index.ts"),
        "/** One turn of a chat. */\nexport interface ChatTurn {\n  /** Who spoke. */\n  role: \"user\" | \"assistant\";\n  text: string;\n}\n",
    )
    .unwrap();
    let config_text =
        "[index]\nout = \"index\"\n\n[[root]]\nname = \"patterns\"\npath = \"patterns\"\nkind = \"patterns\"\n";
    fs::write(dir.path().join("fabdex.toml"), config_text).unwrap();
    let build = || {
        let config = fabdex_index::Config::load(&dir.path().join("fabdex.toml")).unwrap();
        fabdex_index::build(&config, &fabdex_index::BuildOptions::new(dir.path().join("index"))).unwrap()
    };
    let contract = || {
        let engine = fabdex_query::Engine::open_index(&dir.path().join("index")).unwrap();
        engine.inspect("chat.tsx").unwrap()
    };

    // Without the declarations the name is unresolved, and the contract says so.
    let without = build();
    let c = contract();
    assert!(c.argument_schema.as_ref().unwrap()["$defs"].get("ChatTurn").is_none());
    assert!(c.notes.iter().any(|n| n.contains("ChatTurn")), "{:?}", c.notes);

    fs::write(
        dir.path().join("fabdex.toml"),
        format!("[index]\nout = \"index\"\ncommonfabric_types = \"api/index.ts\"\n{}", &config_text[22..]),
    )
    .unwrap();
    let with = build();
    assert_ne!(with.snapshot_id, without.snapshot_id, "the declarations are part of the snapshot's identity");
    let c = contract();
    let turn = &c.argument_schema.as_ref().unwrap()["$defs"]["ChatTurn"];
    assert_eq!(
        turn["properties"]["role"],
        // As in the compiler, JSDoc from declaration files is not carried over.
        json!({"enum": ["user", "assistant"]}),
        "{turn}"
    );

    // A missing declarations file is a config error naming it.
    fs::write(
        dir.path().join("fabdex.toml"),
        config_text.replace("[index]\n", "[index]\ncommonfabric_types = \"api/nope.ts\"\n"),
    )
    .unwrap();
    let err = fabdex_index::Config::load(&dir.path().join("fabdex.toml")).unwrap_err();
    assert!(format!("{err:#}").contains("api/nope.ts"), "{err:#}");
}

/// The patterns table as written for the corpus: its lookup columns agree
/// with its rows, opening decodes no row, and a cut or damaged table is an
/// error (or rows that still decode), never a panic.
#[test]
fn the_patterns_table_opens_without_decoding_and_its_columns_match_its_rows() {
    let ws = Workspace::with_corpus();
    let report = ws.build();
    let table = ws.index_dir().join("snapshots").join(&report.snapshot_id).join(fabdex_index::patterns_table::PATH);
    let bytes = fs::read(&table).unwrap();
    let patterns = fabdex_index::patterns_table::decode(bytes.clone()).unwrap();
    assert_eq!(patterns.programs.len() as u64, report.counts.programs);
    assert_eq!((patterns.programs.decoded(), patterns.files.decoded()), (0, 0));
    let reader = patterns.program_index(patterns.pattern_id(3)).unwrap();
    assert_eq!(reader, 3);
    assert_eq!(patterns.programs.decoded(), 0, "finding a program reads only the columns");
    for (i, p) in patterns.programs.iter().enumerate() {
        assert_eq!(patterns.pattern_id(i), p.pattern_id);
        assert_eq!(patterns.aliases(i).collect::<Vec<_>>(), p.aliases);
    }
    for (i, f) in patterns.files.iter().enumerate() {
        assert_eq!(patterns.file_index(&f.root, &f.path), Some(i), "{}/{}", f.root, f.path);
    }
    assert_eq!(patterns.file_index("patterns", "no/such.tsx"), None);
    for cut in (0..bytes.len()).step_by(97) {
        assert!(fabdex_index::patterns_table::decode(bytes[..cut].to_vec()).is_err(), "cut at {cut}");
    }
    for at in (0..bytes.len()).step_by(211) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x5a;
        if let Ok(p) = fabdex_index::patterns_table::decode(damaged) {
            let _ = p.decode_all();
        }
    }
}

/// `fabdex verify` checks the TS/TSX sources' blobs too, not only the Markdown's.
#[test]
fn verify_checks_the_pattern_sources() {
    let ws = Workspace::with_corpus();
    let report = ws.build();
    let (id, verified) = fabdex_index::verify_published(&ws.index_dir()).unwrap();
    assert_eq!(id, report.snapshot_id);
    let engine = ws.engine();
    let snap = engine.snapshot();
    assert_eq!(verified.blobs, snap.docs.files.len() + snap.patterns.files.len());
    let source = snap.patterns.files.iter().find(|f| f.path.ends_with("mail-reader.tsx")).unwrap();
    let place = snap.blobs.place(&source.digest).unwrap().unwrap();
    let pack = snap.blobs.path().to_path_buf();
    drop(engine);
    let mut bytes = fs::read(&pack).unwrap();
    bytes[(place.offset + place.len) as usize - 1] ^= 0x01;
    fs::write(&pack, bytes).unwrap();
    let err = fabdex_index::verify_published(&ws.index_dir()).unwrap_err();
    assert!(format!("{err:#}").contains("corrupt"), "{err:#}");
}

/// Pattern search's term table holds exactly what analysing each program's
/// fields gives, a search decodes only the rows of the hits it shows, and a
/// damaged table fails the search (naming it) but not `inspect`.
#[test]
fn pattern_search_ranks_from_the_term_table_and_decodes_only_its_hits() {
    use fabdex_index::pattern_terms::{FIELDS, field_texts};
    use fabdex_query::{Engine, PatternQuery, QueryError};
    let ws = Workspace::with_corpus();
    let report = ws.build();
    let engine = ws.engine();
    let snap = engine.snapshot();
    let query = PatternQuery { text: "mail inbox reader".into(), limit: Some(3), ..Default::default() };
    let found = engine.search_patterns(&query).unwrap();
    assert_eq!(found.hits.len(), 3);
    assert!(found.matched > 3, "{}", found.matched);
    assert_eq!(snap.patterns.programs.decoded(), 3, "only the shown hits' rows are decoded");

    let table = snap.pattern_terms().unwrap();
    assert_eq!(table.programs(), snap.patterns.programs.len());
    let mut postings = 0;
    for (program, row) in snap.patterns.programs.iter().enumerate() {
        for (fi, text) in field_texts(row).iter().enumerate() {
            let mut counts: BTreeMap<String, u32> = BTreeMap::new();
            fabdex_index::search_schema::for_each_term(text, |t| *counts.entry(t.to_string()).or_default() += 1);
            assert_eq!(table.len_of(program, fi), counts.values().sum::<u32>(), "{} {:?}", row.entry, FIELDS[fi]);
            for (term, tf) in counts {
                let (_, list) = table.term(&term).unwrap();
                let hit = list.iter().find(|p| p.program as usize == program && p.field == FIELDS[fi]);
                assert_eq!(hit.map(|p| p.frequency), Some(tf), "{term} in {} {:?}", row.entry, FIELDS[fi]);
                postings += 1;
            }
        }
        assert_eq!(table.facets(program).entry, row.entry);
        assert_eq!(table.facets(program).hashtags, row.hashtags);
        assert!(table.vector(program).is_some() || table.dim() == 0);
    }
    assert!(postings > 500, "{postings}");
    drop(engine);

    let path = ws.index_dir().join("snapshots").join(&report.snapshot_id).join(fabdex_index::pattern_terms::PATH);
    let mut bytes = fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    fs::write(&path, bytes).unwrap();
    let engine = Engine::open_index(&ws.index_dir()).unwrap();
    let id = engine.snapshot().patterns.pattern_id(0).to_string();
    assert!(engine.inspect(&id).is_ok(), "inspect needs no term table");
    let err = engine.search_patterns(&query).unwrap_err();
    assert!(matches!(err, QueryError::Corrupt(_)) && err.to_string().contains("pattern_terms.bin"), "{err}");
    drop(engine);
    let err = fabdex_index::verify_published(&ws.index_dir()).unwrap_err();
    assert!(format!("{err:#}").contains("pattern_terms.bin"), "{err:#}");
}
