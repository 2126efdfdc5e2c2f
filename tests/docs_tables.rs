//! The docs-tables slice end to end on the project's own corpus: index, search,
//! open by address, follow `next`, navigate; stability and bad input.

mod common;

use std::fs;

use common::{Workspace, load_qrels, project_root, read_all};
use fabdex_index::{BuildOptions, Config, Snapshot};
use fabdex_query::{Engine, QueryError, RetrievalMode, SearchDocs};

fn search(engine: &Engine, q: &str, limit: usize) -> fabdex_query::SearchResult {
    engine.search_docs(&SearchDocs { query: q.into(), limit: Some(limit), ..Default::default() }).unwrap()
}

#[test]
fn every_hit_reopens_to_its_digest_and_next_reassembles_the_source() {
    let ws = Workspace::with_corpus();
    let report = ws.build();
    assert!(report.counts.files >= 28, "{:?}", report.counts);
    assert!(report.counts.parts >= 2, "the long reference section is split");
    let engine = ws.engine();
    let snap = engine.snapshot();
    let questions = load_qrels(&project_root().join("tests/data/corpus-docs-qrels.json"));
    let mut checked = 0;
    for q in &questions {
        for hit in search(&engine, &q.q, 10).hits {
            let a = engine.read(&hit.address, None, Some(32_000)).unwrap();
            let b = engine.read(&hit.address, None, Some(32_000)).unwrap();
            assert_eq!(a.digest, b.digest, "{}", hit.address);
            assert_eq!(a.total, hit.chars);
            // Reassembling by `next` gives exactly the source bytes of the unit.
            let whole = read_all(&engine, &hit.address, 777);
            let unit = snap.units().iter().find(|u| u.address == hit.address).unwrap();
            let row = &snap.docs.sections[unit.section as usize];
            let file = &snap.docs.files[row.file as usize];
            let source = fs::read_to_string(ws.path(&format!("{}/{}", file.root, file.path))).unwrap();
            assert_eq!(whole, source[unit.byte_start as usize..unit.byte_end as usize], "{}", hit.address);
            checked += 1;
        }
    }
    assert!(checked >= 100, "checked {checked} hits");
}

#[test]
fn search_finds_the_answer_in_its_own_words_for_most_questions() {
    let ws = Workspace::docs_only();
    ws.build();
    let engine = ws.engine();
    let qrels: Vec<fabdex_query::Qrel> = common::read_json(&project_root().join("tests/data/corpus-docs-qrels.json"));
    let report = engine.eval_docs(&qrels, 10, false, RetrievalMode::Hybrid).unwrap();
    let baseline = engine.eval_docs(&qrels, 10, false, RetrievalMode::Bm25).unwrap();
    eprintln!(
        "corpus bm25: recall@10 {:.2} MRR@10 {:.3}; hybrid: recall@10 {:.2} MRR@10 {:.3}",
        baseline.recall_at_10, baseline.mrr_at_10, report.recall_at_10, report.mrr_at_10
    );
    assert_eq!(report.mode, "hybrid-bm25-lsa");
    assert_eq!(baseline.mode, "bm25-fields");
    // The semantic lever must pay for itself on our own questions: it
    // loses none of BM25F's top 10 and ranks the answers higher.
    assert!(report.recall_at_10 >= baseline.recall_at_10 && report.mrr_at_10 > baseline.mrr_at_10);
    assert!(baseline.recall_at_10 >= BM25_FLOOR_RECALL_AT_10, "bm25 recall@10 {:.2}", baseline.recall_at_10);
    assert!(baseline.mrr_at_10 >= BM25_FLOOR_MRR_AT_10, "bm25 MRR@10 {:.3}", baseline.mrr_at_10);
    eprintln!(
        "corpus: recall@5 {:.2} recall@10 {:.2} MRR@10 {:.3} nDCG@10 {:.3}",
        report.recall_at_5, report.recall_at_10, report.mrr_at_10, report.ndcg_at_10
    );
    assert_eq!(report.questions, 15);
    assert!(
        report.recall_at_10 >= REGRESSION_RECALL_AT_10,
        "recall@10 {:.2} fell below {REGRESSION_RECALL_AT_10}",
        report.recall_at_10
    );
    assert!(
        report.mrr_at_10 >= REGRESSION_MRR_AT_10,
        "MRR@10 {:.3} fell below {REGRESSION_MRR_AT_10}",
        report.mrr_at_10
    );
    // Ranks are 1-based and consistent with recall.
    let in_top_10 = report.per_question.iter().filter(|q| q.best_rank.is_some_and(|r| r <= 10)).count();
    assert_eq!(in_top_10 as f64 / 15.0, report.recall_at_10);
}

/// Regression floors of the default (hybrid) ranking, just under what it
/// measures (recall@10 0.80, MRR@10 0.603 since questions are scored by
/// BM25F; 0.470 when the hybrid ranking landed); raise them as ranking
/// improves. The BM25 baseline measures 0.80 and 0.577 (0.67 and 0.404
/// with the sum of per-field BM25 scores).
const REGRESSION_RECALL_AT_10: f64 = 0.79;
const REGRESSION_MRR_AT_10: f64 = 0.58;
const BM25_FLOOR_RECALL_AT_10: f64 = 0.79;
const BM25_FLOOR_MRR_AT_10: f64 = 0.55;

/// A question's lexical part is BM25F: a word's frequencies in a unit's
/// fields are summed before they saturate, so the section holding five of
/// the question's six words leads. The sum of per-field BM25 scores ranks a
/// section that holds two of them in its heading and its body above it.
#[test]
fn a_question_ranks_first_the_section_holding_most_of_its_words() {
    let ws = Workspace::docs_only();
    ws.build();
    let mut engine = ws.engine();
    let q = "how can my app know which signed-in person is looking at it right now";
    let want = "doc:docs/common/patterns/multi-user.md#finding-the-current-viewer";
    let first = |engine: &Engine| {
        let r = engine
            .search_docs(&SearchDocs {
                query: q.into(),
                limit: Some(5),
                mode: Some(RetrievalMode::Bm25),
                ..Default::default()
            })
            .unwrap();
        r.hits[0].address.clone()
    };
    assert_eq!(first(&engine), want);
    engine.set_lexical_scoring(fabdex_query::LexicalScoring::FieldSum);
    assert_ne!(first(&engine), want, "the per-field sum ranks it first too: the test shows nothing");
    // BM25F whatever the length ranks it first as well: the length only
    // decides which scoring a keyword query gets.
    engine.set_lexical_scoring(fabdex_query::LexicalScoring::Bm25f(fabdex_query::DOCS_BM25F));
    assert_eq!(first(&engine), want);
}

/// A question that names an API puts the section defining it first, and the
/// hit says so; the lexical baseline is kept honest on the same questions.
#[test]
fn api_names_lead_to_their_defining_sections() {
    let ws = Workspace::with_corpus();
    ws.build();
    let engine = ws.engine();
    for (q, want, name) in [
        ("what does generateObject return", "doc:docs/common/capabilities/llm.md#generateobject", "generateObject"),
        ("how do I call fetchJson", "doc:docs/common/capabilities/fetch.md#fetchjsont", "fetchJson"),
        ("what does wish() give back", "doc:docs/common/conventions/wish.md#wish", "wish"),
        ("when should I use navigateTo", "doc:docs/common/patterns/navigation.md#navigateto", "navigateTo"),
        ("what is a Writable", "doc:docs/common/concepts/writable.md#writable", "Writable"),
    ] {
        let r = search(&engine, q, 3);
        assert_eq!(r.mode, "hybrid-bm25-lsa");
        assert_eq!(r.hits[0].address, want, "{q}");
        assert_eq!(r.hits[0].why.defines, [name], "{q}");
        assert!(r.hits[0].why.score_parts.symbol > 0.0 && r.hits[0].why.score_parts.lexical > 0.0, "{q}");
    }
    // A short keyword query is served by its words: the semantic parts weigh
    // less, and its lexical part is the sum of per-field BM25 scores, where a
    // heading naming `wish` counts for more than a body mentioning it (under
    // BM25F the section about `wish` falls far down). So the
    // section about `wish` and its result shape lead.
    let r = search(&engine, "wish result", 3);
    assert_eq!(r.hits[0].address, "doc:docs/common/conventions/wish.md#wish");
    assert!(r.hits.iter().any(|h| h.address == "doc:docs/common/conventions/wish.md#result-shape"), "{:?}", r.hits);
    // A common word that a section happens to define is not taken for an API name.
    let r = search(&engine, "how do I write a pattern", 10);
    assert!(r.hits.iter().all(|h| h.why.defines.is_empty()), "{:?}", r.hits[0].why);
}

#[test]
fn hits_explain_themselves_and_json_names_are_stable() {
    let ws = Workspace::with_corpus();
    ws.build();
    let engine = ws.engine();
    let result = search(&engine, "fetchJson result type", 5);
    let top = &result.hits[0];
    assert!(top.why.fields.values().flatten().any(|t| t == "fetchjson" || t == "fetch"), "{:?}", top.why);
    assert!(top.why.matched_terms.iter().all(|t| result.terms.contains(t)));
    let json = serde_json::to_value(&result).unwrap();
    for key in ["address", "title", "heading_path", "snippet", "score", "why"] {
        assert!(json["hits"][0].get(key).is_some(), "hit lacks {key}: {}", json["hits"][0]);
    }
    let env = serde_json::to_value(engine.read(&top.address, None, Some(10)).unwrap()).unwrap();
    let mut keys: Vec<&str> = env.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["address", "digest", "end", "next", "offset", "origin", "text", "total", "truncated"]);
}

#[test]
fn identifier_splitting_and_stemming_reach_code_named_sections() {
    let ws = Workspace::with_corpus();
    ws.build();
    let engine = ws.engine();
    let hits = search(&engine, "fetch json", 3).hits;
    assert!(hits.iter().any(|h| h.address == "doc:docs/common/capabilities/fetch.md#fetchjsont"), "{hits:#?}");
}

#[test]
fn history_is_filtered_by_default_and_demoted_when_included() {
    let ws = Workspace::with_corpus();
    ws.build();
    let engine = ws.engine();
    let q = "two argument Default form";
    let live = engine.search_docs(&SearchDocs { query: q.into(), limit: Some(50), ..Default::default() }).unwrap();
    assert!(live.hits.iter().all(|h| !h.address.contains("/history/")), "history leaked");
    let all = engine
        .search_docs(&SearchDocs { query: q.into(), limit: Some(50), include_history: true, ..Default::default() })
        .unwrap();
    let historical: Vec<_> = all.hits.iter().filter(|h| h.historical).collect();
    assert!(!historical.is_empty());
    assert!(historical.iter().all(|h| h.why.historical_demoted));
    let prefixed = engine
        .search_docs(&SearchDocs {
            query: "wish".into(),
            path_prefix: Some("common/conventions".into()),
            limit: Some(50),
            ..Default::default()
        })
        .unwrap();
    assert!(!prefixed.hits.is_empty());
    assert!(prefixed.hits.iter().all(|h| h.address.starts_with("doc:docs/common/conventions/")));
}

/// A command decodes the rows it answers from, not the table: this is what
/// makes a CLI call cost about as much as `grep` (docs/performance.md).
#[test]
fn reads_and_searches_decode_only_the_rows_they_use() {
    let ws = Workspace::with_corpus();
    ws.build();
    let engine = ws.engine();
    let docs = &engine.snapshot().docs;
    let (sections, links) = (docs.sections.len(), docs.links.len());
    assert!(sections > 100 && links > 50, "{sections} sections, {links} links");
    assert_eq!((docs.sections.decoded(), docs.links.decoded()), (0, 0), "opening decodes no row");
    engine.read("doc:docs/common/conventions/wish.md#result-shape", None, None).unwrap();
    assert_eq!(docs.sections.decoded(), 1, "a read decodes its own section");
    let outline = engine.outline("doc:docs/common/conventions/wish.md").unwrap();
    assert_eq!(docs.sections.decoded(), outline.sections.len(), "an outline decodes its file's sections");
    let related = engine.related("doc:docs/common/conventions/wish.md#result-shape").unwrap();
    let touched = related.outgoing.len() + related.backlinks.len();
    assert_eq!(docs.links.decoded(), touched, "related decodes the links it shows");
    let before = docs.sections.decoded();
    let hits = search(&engine, "what does wish return when nothing matches", 5).hits.len();
    let after = docs.sections.decoded();
    assert!(after - before <= hits + 5, "a search decoded {} rows for {hits} hits", after - before);
    assert!(after < sections / 4, "{after} of {sections} rows decoded");
}

#[test]
fn outline_and_related_navigate_the_link_graph() {
    let ws = Workspace::with_corpus();
    ws.build();
    let engine = ws.engine();
    let outline = engine.outline("docs/common/conventions/wish.md").unwrap();
    assert_eq!(outline.files, 1);
    assert!(outline.sections.iter().any(|r| r.address == "doc:docs/common/conventions/wish.md#result-shape"));
    assert!(outline.sections.iter().all(|r| !r.address.is_empty()));
    let related = engine.related("doc:docs/common/conventions/wish.md#result-shape").unwrap();
    assert_eq!(
        related.parent.as_ref().map(|p| p.address.as_str()),
        Some("doc:docs/common/conventions/wish.md#finding-other-pieces")
    );
    assert!(related.children.iter().any(|c| { c.address.ends_with("#telling-an-empty-search-from-a-pending-one") }));
    assert!(
        related.backlinks.iter().any(|b| b.from.starts_with("doc:docs/FAQ.md#")),
        "the FAQ's reference-style link is a backlink: {:?}",
        related.backlinks
    );
    // A reference-style link in the glossary resolves to a section too.
    let snap = engine.snapshot();
    let link =
        snap.docs.links.iter().find(|l| l.dest == "../patterns/multi-user.md#finding-the-current-viewer").unwrap();
    assert_eq!(link.kind, fabdex_model::records::LinkKind::Reference);
    assert!(
        matches!(&link.target, fabdex_model::records::LinkTarget::Section { address } if address == "doc:docs/common/patterns/multi-user.md#finding-the-current-viewer")
    );
}

#[test]
fn the_one_broken_link_is_reported_and_links_cross_roots() {
    let ws = Workspace::with_corpus();
    let report = ws.build();
    let broken: Vec<_> = report.unresolved_links.iter().filter(|u| u.dest.starts_with('#')).collect();
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert_eq!(broken[0].dest, "#no-such-heading");
    assert!(broken[0].from.starts_with("doc:docs/common/patterns/lists.md#"));
    assert!(broken[0].reason.contains("no heading with anchor"));
}

#[test]
fn addresses_survive_editing_another_file() {
    let ws = Workspace::with_corpus();
    ws.build();
    // Every section of an untouched file: its address and the digest of its text.
    let sections_of_wish = |engine: &Engine| -> Vec<(String, String)> {
        let outline = engine.outline("docs/common/conventions/wish.md").unwrap();
        outline
            .sections
            .iter()
            .map(|r| (r.address.clone(), engine.read(&r.address, None, None).unwrap().digest))
            .collect()
    };
    let before = sections_of_wish(&ws.engine());
    let other = ws.path("docs/common/concepts/handler.md");
    let text = fs::read_to_string(&other).unwrap();
    fs::write(&other, format!("# A New First Heading\n\nInserted above everything.\n\n{text}")).unwrap();
    let report = ws.build();
    assert!(!report.unchanged);
    assert_eq!(report.extracted, 1, "only the edited file is extracted again");
    let engine = ws.engine();
    let after = sections_of_wish(&engine);
    assert_eq!(before, after);
    assert!(engine.read("doc:docs/common/concepts/handler.md#a-new-first-heading", None, None).is_ok());
}

#[test]
fn reads_survive_deleting_the_source_tree() {
    let ws = Workspace::with_corpus();
    ws.build();
    fs::remove_dir_all(ws.path("docs")).unwrap();
    let engine = ws.engine();
    let env = engine.read("doc:docs/common/conventions/wish.md#result-shape", None, None).unwrap();
    assert!(env.text.starts_with("## Result Shape"));
}

#[test]
fn bad_files_are_skipped_with_reasons_and_unclosed_fences_flagged() {
    let ws = Workspace::with_corpus();
    fs::write(ws.path("docs/latin1.md"), b"# Caf\xe9\n").unwrap();
    fs::write(ws.path("docs/blob.md"), b"# A\n\0\x01\x02").unwrap();
    let huge = fs::File::create(ws.path("docs/huge.md")).unwrap();
    huge.set_len(50 * 1024 * 1024).unwrap();
    fs::write(ws.path("docs/open-fence.md"), "# Open\n\n```ts\nconst x = 1;\n# not a heading\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(ws.path("skills"), ws.path("docs/skills-mirror")).unwrap();
    let report = ws.build();
    let reason = |p: &str| report.skipped.iter().find(|s| s.path == p).map(|s| s.reason.clone()).unwrap_or_default();
    assert!(reason("latin1.md").contains("not valid UTF-8"), "{:?}", report.skipped);
    assert!(reason("blob.md").contains("binary"));
    assert!(reason("huge.md").contains("over the 8388608-byte limit"));
    #[cfg(unix)]
    assert!(reason("skills-mirror").contains("symbolic link"));
    let diag = report.diagnostics.iter().find(|d| d.address == "doc:docs/open-fence.md").unwrap();
    assert!(diag.diagnostics[0].message.contains("never closed"));
    let engine = ws.engine();
    let env = engine.read("doc:docs/open-fence.md#open", None, None).unwrap();
    assert!(env.text.contains("# not a heading"), "the unclosed fence's text is still readable");
    assert!(engine.read("doc:docs/latin1.md", None, None).is_err());
}

#[test]
fn bad_addresses_and_arguments_get_clear_errors() {
    let ws = Workspace::with_corpus();
    ws.build();
    let engine = ws.engine();
    let err = engine.read("doc:docs/../../etc/passwd", None, None).unwrap_err();
    assert!(matches!(err, QueryError::InvalidArgument(_)) && err.to_string().contains("escapes"), "{err}");
    let err = engine.read("doc:docs//etc/passwd", None, None).unwrap_err();
    assert!(err.to_string().contains("absolute"), "{err}");
    let err = engine.read("doc:docs/common/conventions/wish.md#result-shap", None, None).unwrap_err();
    assert!(matches!(err, QueryError::NotFound(_)));
    assert!(err.to_string().contains("`#result-shape`"), "suggests the nearest anchor: {err}");
    let err = engine.read("doc:docs/common/conventions/wsh.md", None, None).unwrap_err();
    assert!(err.to_string().contains("common/conventions/wish.md"), "{err}");
    let err = engine.read("doc:nope/a.md", None, None).unwrap_err();
    assert!(err.to_string().contains("no root named `nope`"), "{err}");
    let err = engine.read("doc:docs/common/conventions/wish.md#result-shape", Some(1_000_000), None).unwrap_err();
    assert!(err.to_string().contains("past the end"), "{err}");
    let err = engine.read("doc:docs/common/conventions/wish.md", None, Some(32_001)).unwrap_err();
    assert!(err.to_string().contains("between 1 and 32000"), "{err}");
    let err =
        engine.search_docs(&SearchDocs { query: "wish".into(), limit: Some(51), ..Default::default() }).unwrap_err();
    assert!(err.to_string().contains("between 1 and 50"), "{err}");
    let err = engine.search_docs(&SearchDocs { query: "the of".into(), ..Default::default() }).unwrap_err();
    assert!(err.to_string().contains("no searchable words"), "{err}");
    let err = engine.read("doc:docs/common/conventions/wish.md#result-shape~2", None, None).unwrap_err();
    assert!(err.to_string().contains("not split"), "{err}");
}

#[test]
fn a_root_that_does_not_exist_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-root");
    let err = format!("{:#}", Config::from_roots(std::slice::from_ref(&missing)).unwrap_err());
    assert!(err.contains("no-such-root") && err.contains("does not exist"), "{err}");
}

#[test]
fn corruption_is_detected_by_digest_without_panics() {
    let ws = Workspace::with_corpus();
    let report = ws.build();
    let snap_dir = ws.index_dir().join("snapshots").join(&report.snapshot_id);
    // A corrupted blob: the read fails, naming the blob, and other reads still work.
    let snap = Snapshot::open_dir(&snap_dir).unwrap();
    let wish = snap.docs.files.iter().find(|f| f.path == "common/conventions/wish.md").unwrap();
    let place = snap.blobs.place(&wish.digest).unwrap().unwrap();
    let pack = snap.blobs.path().to_path_buf();
    drop(snap);
    let mut bytes = fs::read(&pack).unwrap();
    bytes[place.offset as usize + 1] ^= 0x20;
    fs::write(&pack, bytes).unwrap();
    let engine = ws.engine();
    let err = engine.read("doc:docs/common/conventions/wish.md#result-shape", None, None).unwrap_err();
    assert!(matches!(err, QueryError::Corrupt(_)) && err.to_string().contains("corrupted"), "{err}");
    assert!(engine.read("doc:docs/FAQ.md", None, None).is_ok());
    drop(engine);
    // A corrupted table: opening fails with a clear error.
    let table = snap_dir.join("tables/docs.rows");
    let mut bytes = fs::read(&table).unwrap();
    bytes[10] ^= 1;
    fs::write(&table, bytes).unwrap();
    let err = Engine::open_index(&ws.index_dir()).err().unwrap();
    assert!(matches!(err, QueryError::Corrupt(_)), "{err}");
    assert!(err.to_string().contains("tables/docs.rows"), "{err}");
    // A missing table is corruption too; a snapshot of another search version is stale.
    fs::remove_file(&table).unwrap();
    assert!(matches!(Engine::open_index(&ws.index_dir()).err().unwrap(), QueryError::Corrupt(_)));
    let manifest_path = snap_dir.join("manifest.json");
    let manifest = fs::read_to_string(&manifest_path).unwrap();
    let current = format!("\"search_version\": {}", fabdex_index::snapshot::SEARCH_VERSION);
    assert!(manifest.contains(&current), "{manifest}");
    fs::write(&manifest_path, manifest.replace(&current, "\"search_version\": 4")).unwrap();
    let err = Engine::open_index(&ws.index_dir()).err().unwrap();
    assert!(matches!(err, QueryError::NoSnapshot(_)) && err.to_string().contains("search version 4"), "{err}");
    fs::write(&manifest_path, manifest).unwrap();
    // A damaged semantic model is named.
    let again = ws.build();
    assert!(!again.unchanged);
    let model = snap_dir.join("tables/semantic-units.bin");
    let mut bytes = fs::read(&model).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&model, bytes).unwrap();
    // Opening checks only what every command needs: a read still answers,
    // and the first search (which needs the model) fails, naming it.
    let engine = Engine::open_index(&ws.index_dir()).unwrap();
    assert!(engine.read("doc:docs/common/conventions/wish.md#result-shape", None, None).is_ok());
    let err = engine.search_docs(&SearchDocs { query: "wish".into(), ..Default::default() }).unwrap_err();
    assert!(matches!(err, QueryError::Corrupt(_)) && err.to_string().contains("semantic-units.bin"), "{err}");
    let again = engine.search_docs(&SearchDocs { query: "wish".into(), ..Default::default() }).unwrap_err();
    assert_eq!(again, err, "every use fails the same way");
    drop(engine);
    let err = fabdex_index::verify_published(&ws.index_dir()).unwrap_err();
    assert!(format!("{err:#}").contains("semantic-units.bin"), "{err:#}");
    // Re-indexing replaces the corrupted snapshot even though its id is unchanged.
    let again = ws.build();
    assert_eq!(again.snapshot_id, report.snapshot_id);
    assert!(!again.unchanged);
    assert!(ws.engine().read("doc:docs/common/conventions/wish.md#result-shape", None, None).is_ok());
    // A cut table of vectors (read straight into its vectors, not whole) is
    // corruption too, whether the cut is in its counts or in its values.
    let passages = snap_dir.join("tables/semantic-passages.bin");
    let whole = fs::read(&passages).unwrap();
    for cut in [12, 30, whole.len() - 2, whole.len() - 4] {
        fs::write(&passages, &whole[..cut]).unwrap();
        let err = ws.engine().search_docs(&SearchDocs { query: "wish".into(), ..Default::default() }).unwrap_err();
        assert!(
            matches!(err, QueryError::Corrupt(_)) && err.to_string().contains("semantic-passages.bin"),
            "cut at {cut}: {err}"
        );
    }
}

#[test]
fn a_corrupted_search_index_fails_searches_and_verify_but_not_reads() {
    let ws = Workspace::with_corpus();
    let report = ws.build();
    let snap_dir = ws.index_dir().join("snapshots").join(&report.snapshot_id);
    assert_eq!(fabdex_index::verify_published(&ws.index_dir()).unwrap().0, report.snapshot_id);
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(snap_dir.join("manifest.json")).unwrap()).unwrap();
    let (name, _) = manifest["search_files"]
        .as_object()
        .unwrap()
        .iter()
        .max_by_key(|(n, _)| fs::metadata(snap_dir.join("search").join(n)).map(|m| m.len()).unwrap_or(0))
        .unwrap();
    let file = snap_dir.join("search").join(name);
    let mut bytes = fs::read(&file).unwrap();
    bytes[0] ^= 1;
    fs::write(&file, bytes).unwrap();
    let engine = ws.engine();
    assert!(engine.read("doc:docs/common/conventions/wish.md#result-shape", None, None).is_ok());
    assert!(engine.outline("docs/common").is_ok());
    let err = engine.search_docs(&SearchDocs { query: "wish".into(), ..Default::default() }).unwrap_err();
    assert!(matches!(err, QueryError::Corrupt(_)) && err.to_string().contains(name.as_str()), "{err}");
    let out = common::fabdex_command().arg("--index").arg(ws.index_dir()).arg("verify").output().unwrap();
    assert_eq!(out.status.code(), Some(5), "verify exits as corrupt");
    assert!(String::from_utf8_lossy(&out.stderr).contains(name.as_str()));
}

#[test]
fn a_digest_check_is_remembered_across_processes_until_the_file_changes() {
    let ws = Workspace::with_corpus();
    let report = ws.build();
    let snap_dir = ws.index_dir().join("snapshots").join(&report.snapshot_id);
    // Files changed within the racy window are hashed and not stamped.
    let fresh = Snapshot::open(&ws.index_dir()).unwrap();
    fresh.search().unwrap();
    assert_eq!(fresh.digest_checks().trusted, 0);
    drop(fresh);
    std::thread::sleep(fabdex_index::integrity::RACY_WITHIN + std::time::Duration::from_millis(200));
    // The first process after that hashes what it uses and stamps it ...
    let first = Snapshot::open(&ws.index_dir()).unwrap();
    first.search().unwrap();
    first.semantic().unwrap();
    let hashed = first.digest_checks().hashed;
    assert!(hashed >= 6, "docs table, search files and three semantic tables: {hashed}");
    assert_eq!(first.digest_checks().trusted, 0);
    drop(first);
    // ... and the next one trusts every stamp and hashes nothing.
    let second = Snapshot::open(&ws.index_dir()).unwrap();
    second.search().unwrap();
    second.semantic().unwrap();
    assert_eq!(second.digest_checks(), fabdex_index::CheckCounts { hashed: 0, trusted: hashed });
    let trusted_hits = search(&ws.engine(), "wish result shape", 5);
    drop(second);
    // Damage of the same size, written in place: the change time moves, the
    // stamp lapses, and the damage is found as before.
    let model = snap_dir.join("tables/semantic-units.bin");
    let mut bytes = fs::read(&model).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&model, &bytes).unwrap();
    let err = ws.engine().search_docs(&SearchDocs { query: "wish".into(), ..Default::default() }).unwrap_err();
    assert!(matches!(err, QueryError::Corrupt(_)) && err.to_string().contains("semantic-units.bin"), "{err}");
    // Put right again, the file is hashed (its stamp is of the old change time) and answers as before.
    bytes[last] ^= 1;
    fs::write(&model, &bytes).unwrap();
    let engine = ws.engine();
    assert_eq!(search(&engine, "wish result shape", 5), trusted_hits);
}

#[test]
fn a_failed_build_leaves_the_published_snapshot_usable() {
    let ws = Workspace::with_corpus();
    let first = ws.build();
    // An interrupted build leaves a partial staging directory behind.
    let stale = ws.index_dir().join("staging/build-999-1");
    fs::create_dir_all(stale.join("tables")).unwrap();
    fs::write(stale.join("tables/docs.rows"), "{").unwrap();
    // A build that fails (invalid glob) publishes nothing.
    let mut config = ws.config();
    config.roots[0].exclude = vec!["[".into()];
    let err = fabdex_index::build(&config, &BuildOptions::new(ws.index_dir())).unwrap_err();
    assert!(format!("{err:#}").contains("glob `[` is invalid"), "{err:#}");
    let engine = ws.engine();
    assert_eq!(engine.snapshot_id(), first.snapshot_id);
    assert!(engine.read("doc:docs/FAQ.md", None, None).is_ok());
}

#[test]
fn unchanged_sources_give_the_same_snapshot() {
    let ws = Workspace::with_corpus();
    let a = ws.build();
    let b = ws.build();
    assert_eq!(a.snapshot_id, b.snapshot_id);
    assert!(b.unchanged);
    assert_eq!(b.extracted, 0, "every file came from the extraction cache");
}

#[test]
fn questions_naming_an_api_identifier_put_its_defining_section_first() {
    let ws = Workspace::with_corpus();
    ws.build();
    let engine = ws.engine();
    for (q, defining) in [
        ("what does generateObject return", "doc:docs/common/capabilities/llm.md#generateobject"),
        ("how does navigateTo work", "doc:docs/common/patterns/navigation.md#navigateto"),
        ("fetchText options", "doc:docs/common/capabilities/fetch.md#fetchtext"),
    ] {
        let top = &search(&engine, q, 1).hits[0];
        assert_eq!(top.address, defining, "{q}");
        assert!(top.why.fields.contains_key("defines"), "{q}: {:?}", top.why);
    }
    // The definition table of the reference page defines its first-column names.
    let snap = engine.snapshot();
    let glance = snap.docs.sections.iter().find(|s| s.address.ends_with("api-reference.md#at-a-glance")).unwrap();
    assert!(glance.section.defines.iter().any(|d| d == "navigateTo"), "{:?}", glance.section.defines);
}

#[test]
fn a_new_unindexed_file_changes_link_resolution_and_the_snapshot() {
    let ws = Workspace::with_corpus();
    let first = ws.build();
    let unresolved = |r: &fabdex_index::IndexReport| r.unresolved_links.iter().filter(|u| u.dest == "shared/").count();
    assert!(unresolved(&first) > 0, "the corpus mentions `shared/` before it exists");
    fs::create_dir_all(ws.path("docs/shared")).unwrap();
    fs::write(ws.path("docs/shared/units.json"), "{}").unwrap();
    let second = ws.build();
    assert_ne!(second.snapshot_id, first.snapshot_id, "a file seen but not indexed still changes the snapshot");
    assert!(!second.unchanged);
    assert_eq!(unresolved(&second), 0);
    assert!(second.skipped.iter().any(|s| s.path == "shared/units.json" && s.reason.contains("unsupported file type")));
}

#[test]
fn outline_of_an_address_is_exactly_that_file() {
    let ws = Workspace::with_corpus();
    fs::write(ws.path("docs/FAQ.md.old.md"), "# Old\n").unwrap();
    ws.build();
    let engine = ws.engine();
    assert_eq!(engine.outline("doc:docs/FAQ.md").unwrap().files, 1);
    assert_eq!(engine.outline("docs/FAQ.md").unwrap().files, 2, "a plain prefix is a string prefix");
    let err = engine.read("doc:docs/FAQ.mdx", None, None).unwrap_err().to_string();
    assert!(err.contains("`doc:docs/FAQ.md`"), "suggestions are pasteable addresses: {err}");
}
