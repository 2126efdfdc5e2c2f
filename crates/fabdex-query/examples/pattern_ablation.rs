//! Pattern-search ablation: success@1, success@5 and MRR@5 of a task set
//! with each lever of pattern ranking added in turn, as a Markdown table
//! (the tables in `docs/pattern-index.md`).
//!
//! ```text
//! cargo run --release -p fabdex-query --example pattern_ablation -- INDEX_DIR TASKS.json [--per-task]
//! ```

use fabdex_query::{Engine, PatternLevers, PatternTask};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let per_task = args.iter().any(|a| a == "--per-task");
    let args: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let [index, tasks] = &args[..] else {
        eprintln!("usage: pattern_ablation INDEX_DIR TASKS.json [--per-task]");
        std::process::exit(2);
    };
    let tasks: Vec<PatternTask> = serde_json::from_slice(&std::fs::read(tasks).expect("read tasks")).expect("tasks");
    let engine = Engine::open_index(std::path::Path::new(index)).expect("open index");
    let none = PatternLevers {
        catalog: false,
        readme: false,
        links: false,
        own_text: false,
        tiers: false,
        bm25f: false,
        semantic: false,
        dense: false,
    };
    let rows: Vec<(&str, PatternLevers)> = vec![
        ("contract, name, JSDoc (sum of per-field BM25)", none),
        ("+ BM25F over the fields", PatternLevers { bm25f: true, ..none }),
        ("+ catalog sections and keywords", PatternLevers { bm25f: true, catalog: true, ..none }),
        ("+ tiers (fixtures, legacy ranked down)", PatternLevers { bm25f: true, catalog: true, tiers: true, ..none }),
        (
            "+ README and linking sections",
            PatternLevers { bm25f: true, catalog: true, tiers: true, readme: true, links: true, ..none },
        ),
        (
            "+ own text (module doc, [NAME], UI text, actions)",
            PatternLevers { semantic: false, dense: false, ..PatternLevers::default() },
        ),
        ("+ corpus-learned semantic model", PatternLevers { dense: false, ..PatternLevers::default() }),
    ];
    let dense = engine.snapshot().has_program_embeddings();
    let mut rows = rows;
    if dense {
        rows.push(("+ sentence embeddings of the profiles (index built with a model)", PatternLevers::default()));
    }
    println!("| ranking | success@1 | success@5 | MRR@5 |");
    println!("|---|---|---|---|");
    for (name, levers) in &rows {
        let r = engine.eval_patterns_with(&tasks, levers).expect("eval");
        println!("| {name} | {:.2} | {:.2} | {:.3} |", r.success_at_1, r.success_at_5, r.mrr_at_5);
    }
    // FABDEX_SWEEP=w1,w2,…: the last row at each weight of the embeddings' cosine.
    if let (true, Ok(sweep)) = (dense, std::env::var("FABDEX_SWEEP")) {
        let mut engine = Engine::open_index(std::path::Path::new(index)).expect("open index");
        for w in sweep.split(',').filter_map(|w| w.trim().parse::<f64>().ok()) {
            engine.set_pattern_dense_weight(w);
            let r = engine.eval_patterns_with(&tasks, &PatternLevers::default()).expect("eval");
            println!("| embeddings weight {w} | {:.2} | {:.2} | {:.3} |", r.success_at_1, r.success_at_5, r.mrr_at_5);
        }
    }
    // FABDEX_DENSE="weight,feedback,depth;…": the last row with each way of
    // forming the embeddings' cosine (feedback 0: none).
    if let (true, Ok(sets)) = (dense, std::env::var("FABDEX_DENSE")) {
        let mut engine = Engine::open_index(std::path::Path::new(index)).expect("open index");
        for set in sets.split(';').filter(|s| !s.trim().is_empty()) {
            let v: Vec<f64> = set.split(',').map(|x| x.trim().parse().expect("a number")).collect();
            let [weight, feedback, depth] = v[..] else { panic!("FABDEX_DENSE: `{set}` is not three numbers") };
            engine.set_pattern_dense(fabdex_query::PatternDense {
                weight,
                feedback: feedback as f32,
                feedback_depth: depth as usize,
            });
            let r = engine.eval_patterns_with(&tasks, &PatternLevers::default()).expect("eval");
            println!("| dense {set} | {:.2} | {:.2} | {:.3} |", r.success_at_1, r.success_at_5, r.mrr_at_5);
        }
    }
    if per_task {
        let r = engine.eval_patterns(&tasks).expect("eval");
        for t in &r.per_task {
            let rank = t.best_rank.map_or("-".into(), |r| r.to_string());
            println!("{rank:>4}  {}  → {}", t.task, t.top.join(", "));
        }
    }
}
