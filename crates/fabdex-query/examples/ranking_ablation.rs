//! Ranking ablation: the retrieval metrics of judged questions with each
//! lever of the hybrid ranking on and off, as a Markdown table.
//!
//! ```text
//! cargo run --release -p fabdex-query --example ranking_ablation -- INDEX_DIR QRELS.json [--include-history]
//! ```
//!
//! On an index built with `--embeddings`, rows for the sentence-embedding part
//! are added (the model is loaded from the folder the index recorded).
//! `FABDEX_WEIGHTS="l,s,f,y,d;…"` adds a row per weight set, and
//! `FABDEX_RANKS=1` prints each question's best rank under every row.
//! `FABDEX_LEXICAL=sum` scores the lexical part of every row by the sum of
//! per-field BM25 scores, and `FABDEX_LEXICAL=k1,b` by BM25F with those
//! constants, whatever the question's length (unset: today's scoring).

use fabdex_query::{Bm25fParams, Engine, HybridWeights, LexicalScoring, Qrel, RetrievalMode};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let include_history = args.iter().any(|a| a == "--include-history");
    let args: Vec<&String> = args.iter().filter(|a| *a != "--include-history").collect();
    let [index, qrels] = &args[..] else {
        eprintln!("usage: ranking_ablation INDEX_DIR QRELS.json [--include-history]");
        std::process::exit(2);
    };
    let qrels: Vec<Qrel> = serde_json::from_slice(&std::fs::read(qrels).expect("read qrels")).expect("valid qrels");
    let mut engine = Engine::open_index(std::path::Path::new(index)).expect("open index");
    engine.set_lexical_scoring(lexical_scoring());
    let d = HybridWeights::default();
    let off = |f: &dyn Fn(&mut HybridWeights)| {
        let mut w = d;
        f(&mut w);
        w
    };
    let mut rows: Vec<(&str, RetrievalMode, HybridWeights)> = vec![
        ("bm25 over fields (`--mode bm25`)", RetrievalMode::Bm25, d),
        (
            "hybrid, lexical part only",
            RetrievalMode::Hybrid,
            off(&|w| (w.semantic, w.file_semantic, w.symbol, w.dense) = (0.0, 0.0, 0.0, 0.0)),
        ),
        ("+ symbol table", RetrievalMode::Hybrid, off(&|w| (w.semantic, w.file_semantic, w.dense) = (0.0, 0.0, 0.0))),
        ("+ section semantics (LSA)", RetrievalMode::Hybrid, off(&|w| (w.file_semantic, w.dense) = (0.0, 0.0))),
        ("+ file semantics = hybrid without embeddings", RetrievalMode::Hybrid, off(&|w| w.dense = 0.0)),
    ];
    // An index built with `--embeddings` adds the dense rows.
    if engine.snapshot().has_embeddings() {
        rows.push(("+ sentence embeddings, clauses not fused", RetrievalMode::Hybrid, d));
        rows.push(("+ clauses ranked apart and fused = hybrid with a model", RetrievalMode::Hybrid, d));
        rows.push((
            "sentence embeddings alone",
            RetrievalMode::Hybrid,
            off(&|w| (w.lexical, w.semantic, w.file_semantic, w.symbol) = (0.0, 0.0, 0.0, 0.0)),
        ));
        for weight in [2.0, 4.0, 6.0, 10.0, 12.0, 16.0] {
            let label: &'static str = Box::leak(format!("hybrid, dense weight {weight}").into_boxed_str());
            rows.push((label, RetrievalMode::Hybrid, off(&|w| w.dense = weight)));
        }
    }
    rows.extend([
        ("hybrid without the lexical part", RetrievalMode::Hybrid, off(&|w| w.lexical = 0.0)),
        (
            "section semantics alone",
            RetrievalMode::Hybrid,
            off(&|w| (w.lexical, w.file_semantic, w.symbol, w.dense) = (0.0, 0.0, 0.0, 0.0)),
        ),
    ]);
    // FABDEX_WEIGHTS="l,s,f,y,d;…": one more row per weight set (lexical,
    // semantic, file semantic, symbol, dense), for sweeps.
    if let Ok(sets) = std::env::var("FABDEX_WEIGHTS") {
        for set in sets.split(';').filter(|s| !s.trim().is_empty()) {
            let v: Vec<f32> = set.split(',').map(|x| x.trim().parse().expect("a number")).collect();
            let [lexical, semantic, file_semantic, symbol, dense] = v[..] else {
                panic!("FABDEX_WEIGHTS: `{set}` is not five numbers");
            };
            // FABDEX_UNFUSED=1: these rows without the fusion of clauses.
            let unfused = if std::env::var_os("FABDEX_UNFUSED").is_some() { ", clauses not fused" } else { "" };
            let label: &'static str = Box::leak(format!("weights {set}{unfused}").into_boxed_str());
            rows.push((
                label,
                RetrievalMode::Hybrid,
                HybridWeights { lexical, semantic, file_semantic, symbol, dense },
            ));
        }
    }
    println!("| ranking | recall@5 | recall@10 | MRR@10 | nDCG@10 |");
    println!("|---|---|---|---|---|");
    for (name, mode, weights) in rows {
        engine.set_hybrid_weights(weights);
        engine.set_clause_fusion(!name.contains("clauses not fused"));
        let r = engine.eval_docs(&qrels, 10, include_history, mode).expect("eval");
        println!(
            "| {name} | {:.2} | {:.2} | {:.3} | {:.3} |",
            r.recall_at_5, r.recall_at_10, r.mrr_at_10, r.ndcg_at_10
        );
        // FABDEX_RANKS=1: each question's best rank under the row (`-`: not within `EVAL_DEPTH`).
        if std::env::var_os("FABDEX_RANKS").is_some() {
            let ranks: Vec<String> =
                r.per_question.iter().map(|q| q.best_rank.map_or("-".into(), |n| n.to_string())).collect();
            println!("|   ranks | {} | | | |", ranks.join(", "));
        }
    }
}

/// The lexical scoring `FABDEX_LEXICAL` names (`sum`, or `k1,b` of BM25F).
fn lexical_scoring() -> LexicalScoring {
    match std::env::var("FABDEX_LEXICAL").ok().as_deref().map(str::trim) {
        None | Some("") => LexicalScoring::default(),
        Some("sum") => LexicalScoring::FieldSum,
        Some(set) => {
            let v: Vec<f32> = set.split(',').map(|x| x.trim().parse().expect("a number")).collect();
            let [k1, b] = v[..] else { panic!("FABDEX_LEXICAL: `{set}` is neither `sum` nor `k1,b`") };
            LexicalScoring::Bm25f(Bm25fParams { k1, b })
        }
    }
}
