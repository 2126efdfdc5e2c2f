//! Ranking ablation: the retrieval metrics of judged questions with each
//! lever of the hybrid ranking on and off, as a Markdown table.
//!
//! ```text
//! cargo run --release -p fabdex-query --example ranking_ablation -- INDEX_DIR QRELS.json
//! ```

use fabdex_query::{Engine, HybridWeights, Qrel, RetrievalMode};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [index, qrels] = &args[..] else {
        eprintln!("usage: ranking_ablation INDEX_DIR QRELS.json");
        std::process::exit(2);
    };
    let qrels: Vec<Qrel> = serde_json::from_slice(&std::fs::read(qrels).expect("read qrels")).expect("valid qrels");
    let mut engine = Engine::open_index(std::path::Path::new(index)).expect("open index");
    let d = HybridWeights::default();
    let off = |f: fn(&mut HybridWeights)| {
        let mut w = d;
        f(&mut w);
        w
    };
    let rows: Vec<(&str, RetrievalMode, HybridWeights)> = vec![
        ("bm25 over fields (`--mode bm25`)", RetrievalMode::Bm25, d),
        (
            "hybrid, lexical part only",
            RetrievalMode::Hybrid,
            off(|w| (w.semantic, w.file_semantic, w.symbol) = (0.0, 0.0, 0.0)),
        ),
        ("+ symbol table", RetrievalMode::Hybrid, off(|w| (w.semantic, w.file_semantic) = (0.0, 0.0))),
        ("+ section semantics (LSA)", RetrievalMode::Hybrid, off(|w| w.file_semantic = 0.0)),
        ("+ file semantics = hybrid (default)", RetrievalMode::Hybrid, d),
        ("hybrid without the lexical part", RetrievalMode::Hybrid, off(|w| w.lexical = 0.0)),
        (
            "section semantics alone",
            RetrievalMode::Hybrid,
            off(|w| (w.lexical, w.file_semantic, w.symbol) = (0.0, 0.0, 0.0)),
        ),
    ];
    println!("| ranking | recall@5 | recall@10 | MRR@10 | nDCG@10 |");
    println!("|---|---|---|---|---|");
    for (name, mode, weights) in rows {
        engine.set_hybrid_weights(weights);
        let r = engine.eval_docs(&qrels, 10, false, mode).expect("eval");
        println!(
            "| {name} | {:.2} | {:.2} | {:.3} | {:.3} |",
            r.recall_at_5, r.recall_at_10, r.mrr_at_10, r.ndcg_at_10
        );
    }
}
