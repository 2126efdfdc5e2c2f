//! Incremental builds: after edits, additions and deletions, a snapshot built
//! on the published one equals a whole rebuild of the same sources — the
//! same tables, blobs and files, the same BM25 hits with the same scores —
//! and, once its semantic models are refitted, the same models and the same
//! hybrid hits.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use common::{Workspace, load_qrels, project_root};
use fabdex_index::{BuildOptions, Config, IndexReport, Snapshot};
use fabdex_query::{Engine, RetrievalMode, SearchDocs};

fn build(config: &Config, index: &Path) -> IndexReport {
    fabdex_index::build(config, &BuildOptions::new(index)).unwrap()
}

fn append(path: &Path, text: &str) {
    let mut body = fs::read_to_string(path).unwrap();
    body.push_str(text);
    fs::write(path, body).unwrap();
}

/// Every judged corpus question's hits (address and exact score), in order.
fn hits(index: &Path, mode: RetrievalMode) -> Vec<(String, Vec<(String, u32)>)> {
    let engine = Engine::open_index(index).unwrap();
    let questions = load_qrels(&project_root().join("tests/data/corpus-docs-qrels.json"));
    let mut queries: Vec<String> = questions.into_iter().map(|q| q.q).collect();
    // Words of the edited and added text, whose statistics the edits moved.
    queries.extend(["ledger reconciliation".into(), "settling reactivity".into(), "quokka".into()]);
    queries
        .into_iter()
        .map(|q| {
            let req = SearchDocs { query: q.clone(), limit: Some(20), mode: Some(mode), ..Default::default() };
            let found = engine.search_docs(&req).unwrap().hits;
            (q, found.into_iter().map(|h| (h.address, h.score.to_bits())).collect())
        })
        .collect()
}

/// Table name → digest, without the tables only an updated search index has.
fn tables(index: &Path) -> BTreeMap<String, String> {
    let snap = Snapshot::open(index).unwrap();
    let mut tables = snap.manifest.tables.clone();
    tables.remove(fabdex_index::search_schema::DELETIONS_TABLE);
    tables
}

fn blobs(index: &Path) -> Vec<String> {
    let snap = Snapshot::open(index).unwrap();
    let mut digests = snap.blobs.digests().unwrap();
    digests.sort();
    digests
}

#[test]
fn edits_additions_and_deletions_equal_a_whole_rebuild() {
    let ws = Workspace::with_corpus();
    let index = ws.index_dir();
    let first = build(&ws.config(), &index);
    assert_eq!(first.incremental.whole_because.as_deref(), Some("no snapshot was published"));

    // An edited section.
    append(
        &ws.path("docs/common/concepts/reactivity.md"),
        "\nSettling also waits for ledger reconciliation before a handler's writes are visible.\n",
    );
    let edited = build(&ws.config(), &index);
    let inc = &edited.incremental;
    assert_eq!(inc.whole_because, None, "{inc:?}");
    assert_eq!((inc.files_edited, inc.files_added, inc.files_removed), (1, 0, 0), "{inc:?}");
    assert_eq!((inc.units_deleted, inc.units_added), (6, 6), "reactivity.md has six sections: {inc:?}");
    assert!(inc.semantic.starts_with("folded 6 units"), "{inc:?}");
    assert_ne!(edited.snapshot_id, first.snapshot_id);

    // An added file that links to an existing one, and a removed file that others link to.
    fs::write(
        ws.path("docs/common/concepts/quokka.md"),
        "# Quokka Cells\n\nA quokka cell is a made-up cell for this test; see [reactivity](reactivity.md).\n\n\
         ## Quokka Writes\n\nWrites to a quokka cell settle like any other write.\n",
    )
    .unwrap();
    fs::remove_file(ws.path("docs/common/conventions/file-layout.md")).unwrap();
    let changed = build(&ws.config(), &index);
    let inc = &changed.incremental;
    assert_eq!((inc.files_edited, inc.files_added, inc.files_removed), (0, 1, 1), "{inc:?}");
    assert_eq!((inc.units_deleted, inc.units_added), (6, 2), "{inc:?}");
    assert!(Snapshot::open(&index).unwrap().search_deletions().unwrap().is_some_and(|d| d.docs() == 12));

    // A pattern source edited: no docs unit changes.
    append(&ws.path("patterns/greeting-card.tsx"), "\n// A trailing comment.\n");
    let pattern_edit = build(&ws.config(), &index);
    let inc = &pattern_edit.incremental;
    assert_eq!(inc.whole_because, None, "{inc:?}");
    assert_eq!((inc.files_edited, inc.units_deleted, inc.units_added), (0, 0, 0), "{inc:?}");
    // One cached contract per program: the edited program's old one was pruned.
    let contracts = format!("contracts-v{}", fabdex_ts::EXTRACTOR_VERSION);
    let entries = fabdex_index::cache::entry_counts(&index.join("cache"));
    let cached_contracts = entries.iter().find(|(name, _)| *name == contracts).map(|(_, n)| *n as u64);
    assert_eq!(cached_contracts, Some(pattern_edit.counts.programs), "{entries:?}");

    // A whole rebuild of the same sources, elsewhere.
    let whole_dir = ws.path("whole");
    let whole = build(&ws.config(), &whole_dir);
    assert!(whole.incremental.whole_because.is_some());
    assert_eq!(whole.snapshot_id, pattern_edit.snapshot_id, "same sources, same id");
    let semantic = ["tables/semantic-units.bin", "tables/semantic-files.bin", "tables/semantic-passages.bin"];
    let lexical_tables = |index: &Path| {
        let mut t = tables(index);
        // Pattern search's table holds each program's vector in the units model's space.
        for name in semantic.iter().chain(&["tables/pattern_terms.bin"]) {
            t.remove(*name);
        }
        t
    };
    assert_eq!(lexical_tables(&index), lexical_tables(&whole_dir));
    assert_ne!(tables(&index), tables(&whole_dir), "the semantic models were folded into, not refitted");
    assert_eq!(blobs(&index), blobs(&whole_dir));
    let (a, b) = (Snapshot::open(&index).unwrap(), Snapshot::open(&whole_dir).unwrap());
    assert_eq!(serde_json::to_value(&a.manifest.files).unwrap(), serde_json::to_value(&b.manifest.files).unwrap());
    let counts = |snap: &Snapshot| {
        let mut counts = serde_json::to_value(&snap.manifest.counts).unwrap();
        // The vocabulary is the fit's until the models are refitted.
        counts.as_object_mut().unwrap().remove("semantic_vocabulary");
        counts
    };
    assert_eq!(counts(&a), counts(&b));
    assert_eq!(hits(&index, RetrievalMode::Bm25), hits(&whole_dir, RetrievalMode::Bm25));

    // Past the drift limit the models are refitted, and equal a whole rebuild's.
    let mut strict = ws.config();
    strict.index.semantic_drift = 0.0;
    append(&ws.path("docs/common/concepts/quokka.md"), "\nA quokka cell never settles twice.\n");
    let refit = build(&strict, &index);
    assert!(refit.incremental.semantic.starts_with("refitted"), "{:?}", refit.incremental);
    assert_eq!(refit.incremental.semantic_drift, 0.0);
    let whole_again = build(&ws.config(), &ws.path("whole-again"));
    assert_eq!(tables(&index), tables(&ws.path("whole-again")));
    let (a, b) = (Snapshot::open(&index).unwrap(), Snapshot::open(&ws.path("whole-again")).unwrap());
    assert_eq!(serde_json::to_value(&a.manifest.counts).unwrap(), serde_json::to_value(&b.manifest.counts).unwrap());
    assert_eq!(hits(&index, RetrievalMode::Hybrid), hits(&ws.path("whole-again"), RetrievalMode::Hybrid));
    assert_eq!(refit.snapshot_id, whole_again.snapshot_id);
}

#[test]
fn full_builds_whole_and_a_damaged_deletions_table_is_corrupt() {
    let ws = Workspace::docs_only();
    let index = ws.index_dir();
    build(&ws.config(), &index);
    append(&ws.path("docs/common/concepts/reactivity.md"), "\nOne more sentence about settling.\n");
    let updated = build(&ws.config(), &index);
    assert_eq!(updated.incremental.whole_because, None);

    // A damaged deletions table fails searches and `verify`, naming the file.
    let snap = Snapshot::open(&index).unwrap();
    let path = snap.dir.join(fabdex_index::search_schema::DELETIONS_TABLE);
    let good = fs::read(&path).unwrap();
    fs::write(&path, String::from_utf8(good.clone()).unwrap().replace("\"docs\":6", "\"docs\":5")).unwrap();
    let engine = Engine::open_index(&index).unwrap();
    let err = engine.search_docs(&SearchDocs { query: "settling".into(), ..Default::default() }).unwrap_err();
    assert!(err.to_string().contains("search-deletions.json"), "{err}");
    assert!(Snapshot::open(&index).unwrap().verify().is_err());
    fs::write(&path, &good).unwrap();
    Engine::open_index(&index)
        .unwrap()
        .search_docs(&SearchDocs { query: "settling".into(), ..Default::default() })
        .unwrap();

    // `full` rebuilds whole even though the sources are those of the published snapshot.
    let mut opts = BuildOptions::new(&index);
    opts.full = true;
    let full = fabdex_index::build(&ws.config(), &opts).unwrap();
    assert_eq!(full.incremental.whole_because.as_deref(), Some("asked for (--full)"));
    assert_eq!(full.snapshot_id, updated.snapshot_id);
    assert!(!full.unchanged);
    assert!(Snapshot::open(&index).unwrap().search_deletions().unwrap().is_none());
}

/// The workspace's config with a tiny sentence model written into it.
fn with_tiny_model(ws: &Workspace) -> Config {
    let model = ws.path("model");
    fabdex_embed::tiny::write_tiny_model(&model, &["wish", "cell", "settle", "handler"], 7).unwrap();
    let mut config = ws.config();
    config.index.embeddings = Some(model);
    config
}

#[test]
fn sentence_embeddings_of_unchanged_units_are_carried_and_equal_a_whole_builds() {
    let ws = Workspace::docs_only();
    let config = with_tiny_model(&ws);
    let index = ws.index_dir();
    let first = build(&config, &index);
    let truncated = first.embeddings.as_ref().unwrap().truncated;
    assert!(truncated > 0, "the API reference's long section is read only to its last passage");
    // The file with the truncated unit edited, another removed, one added.
    append(&ws.path("docs/common/reference/api-reference.md"), "\nOne more line about a wish.\n");
    fs::remove_file(ws.path("docs/common/conventions/file-layout.md")).unwrap();
    fs::write(ws.path("docs/common/concepts/handlers-note.md"), "# Handlers\n\nA handler settles a cell.\n").unwrap();
    let updated = build(&config, &index);
    assert_eq!(updated.incremental.whole_because, None);
    let e = updated.embeddings.as_ref().unwrap();
    assert!(e.carried > 0 && e.carried + e.encoded + e.reused == e.passages, "{e:?}");
    assert!(e.carried > e.passages / 2, "most units are carried, not tokenized again: {e:?}");
    let whole = build(&config, &ws.path("whole"));
    let w = whole.embeddings.as_ref().unwrap();
    assert_eq!((e.passages, e.truncated), (w.passages, w.truncated));
    let name = "tables/embeddings.bin";
    assert_eq!(tables(&index)[name], tables(&ws.path("whole"))[name]);
}

/// A unit's referring list items live in other files: editing or removing
/// one, in a file that only links to the unit, changes the unit's passages,
/// and an incremental build must give the whole build's table.
#[test]
fn a_units_referring_items_follow_edits_of_the_file_that_links_to_it() {
    let ws = Workspace::docs_only();
    let config = with_tiny_model(&ws);
    let index = ws.index_dir();
    let note = ws.path("docs/common/concepts/see-also-note.md");
    let name = "tables/embeddings.bin";
    // A link to a file with no sections lands nowhere.
    fs::write(ws.path("docs/zz-empty.md"), "").unwrap();
    let mut passages = Vec::new();
    for (step, text) in [
        Some("# See also\n\n- [Reactivity](reactivity.md) — how a cell settles its readers\n"),
        Some("# See also\n\n- [Reactivity](reactivity.md) — a handler wakes every wish\n"),
        Some("# See also\n\nNothing links from here.\n- [Empty](../../zz-empty.md) — a page of nothing\n"),
        Some("# See also\n\n- [Reactivity](reactivity.md) — how every cell settles its readers\n"),
        None,
    ]
    .into_iter()
    .enumerate()
    {
        match text {
            Some(text) => fs::write(&note, text).unwrap(),
            None => fs::remove_file(&note).unwrap(),
        }
        let report = build(&config, &index);
        let whole = ws.path(&format!("whole-{step}"));
        build(&config, &whole);
        assert_eq!(tables(&index)[name], tables(&whole)[name], "step {step}: incremental and whole differ");
        let e = report.embeddings.unwrap();
        if step > 0 {
            assert_eq!(report.incremental.whole_because, None);
            assert!(e.carried > 0, "step {step}: {e:?}");
        }
        passages.push(e.passages);
    }
    assert_eq!(passages[0], passages[1], "an edited item is still one passage");
    assert_eq!(passages[2] + 1, passages[1], "a removed item takes its passage with it");
    assert_eq!(passages[3], passages[0]);
}

#[test]
fn a_damaged_published_snapshot_makes_the_build_whole_and_stays_out_of_the_new_one() {
    let ws = Workspace::docs_only();
    let index = ws.index_dir();
    build(&ws.config(), &index);
    // A flipped byte in the published snapshot's semantic model.
    let snap = Snapshot::open(&index).unwrap();
    let table = snap.dir.join("tables/semantic-units.bin");
    let mut bytes = fs::read(&table).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    fs::write(&table, bytes).unwrap();
    append(&ws.path("docs/common/concepts/reactivity.md"), "\nOne more sentence about settling.\n");
    let report = build(&ws.config(), &index);
    let because = report.incremental.whole_because.as_deref().unwrap_or_default();
    assert!(because.contains("damaged") && because.contains("semantic-units.bin"), "{because}");
    let fresh = Snapshot::open(&index).unwrap();
    assert_ne!(fresh.id(), snap.id());
    fresh.verify().unwrap();
}

#[test]
fn a_damaged_blob_of_an_edited_file_or_too_many_deletions_make_the_build_whole() {
    let ws = Workspace::docs_only();
    let index = ws.index_dir();
    build(&ws.config(), &index);
    // The published blob of the file about to be edited: its units' deleted
    // texts cannot be rebuilt from it, so the index is not updated but rewritten.
    let snap = Snapshot::open(&index).unwrap();
    let file = snap.docs.files.iter().find(|f| f.path == "common/concepts/reactivity.md").unwrap();
    let place = snap.blobs.place(&file.digest).unwrap().unwrap();
    let mut bytes = fs::read(snap.blobs.path()).unwrap();
    bytes[place.offset as usize] ^= 0x20;
    fs::write(snap.blobs.path(), bytes).unwrap();
    append(&ws.path("docs/common/concepts/reactivity.md"), "\nOne more sentence about settling.\n");
    let report = build(&ws.config(), &index);
    let because = report.incremental.whole_because.as_deref().unwrap_or_default();
    assert!(
        because.starts_with("the published snapshot could not be carried") && because.contains("blob"),
        "{because}"
    );
    Snapshot::open(&index).unwrap().verify().unwrap();

    // Half the files removed at once: more deleted documents than an update keeps.
    let mut removed = 0;
    for entry in fs::read_dir(ws.path("docs/common/concepts")).unwrap() {
        let path = entry.unwrap().path();
        if removed < 8 && path.extension().is_some_and(|x| x == "md") {
            fs::remove_file(path).unwrap();
            removed += 1;
        }
    }
    let report = build(&ws.config(), &index);
    let because = report.incremental.whole_because.as_deref().unwrap_or_default();
    assert!(because.contains("deleted search documents would pass 10%"), "{because}");
    assert!(Snapshot::open(&index).unwrap().search_deletions().unwrap().is_none());
}
