//! Docs bench: indexing throughput, and search and open latency, on the real
//! Common Fabric Markdown (`../shared/labs`, or `corpus/` when it is absent).
//! Prints a table. Baselines measured in the same run: reading and hashing the
//! files (the I/O floor), pulldown-cmark alone (the parse floor), and the peer's
//! ranking (8·heading + 4·path + min(body, 8) per term, a linear scan).
//!
//! Run: `cargo bench --bench docs` (optionally `-- --rounds N`).

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{markdown_files, percentile};
use fabdex_index::{BuildOptions, Config};
use fabdex_query::{Engine, RetrievalMode, SearchDocs};

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

#[derive(serde::Deserialize)]
struct Question {
    q: String,
}

/// The peer's ranking: per query word, 8 × heading hits + 4 × path hits + min(body hits, 8).
fn peer_rank<'a>(sections: &'a [(String, String, String, String)], query: &str) -> Vec<&'a str> {
    let words: Vec<String> = query
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(str::to_string)
        .collect();
    let mut scored: Vec<(usize, &str)> = sections
        .iter()
        .map(|(address, heading, path, body)| {
            let score = words
                .iter()
                .map(|w| {
                    8 * heading.matches(w.as_str()).count()
                        + 4 * path.matches(w.as_str()).count()
                        + body.matches(w.as_str()).count().min(8)
                })
                .sum();
            (score, address.as_str())
        })
        .filter(|(s, _)| *s > 0)
        .collect();
    scored.sort_by_key(|s| std::cmp::Reverse(s.0));
    scored.into_iter().take(10).map(|(_, a)| a).collect()
}

fn main() {
    let rounds: usize =
        std::env::args().skip_while(|a| a != "--rounds").nth(1).and_then(|n| n.parse().ok()).unwrap_or(3);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let labs = root.join("../shared/labs");
    let (corpus, qrels) = if labs.is_dir() {
        (labs, Some(root.join("../shared/eval/docs-qrels.dev.json")))
    } else {
        eprintln!("../shared/labs is absent: benchmarking corpus/docs instead");
        (root.join("corpus/docs"), Some(root.join("tests/data/corpus-docs-qrels.json")))
    };
    let mut files = Vec::new();
    markdown_files(&corpus, &mut files);
    let bytes: u64 = files.iter().map(|f| std::fs::metadata(f).unwrap().len()).sum();
    let mb = bytes as f64 / 1e6;
    println!("corpus: {} ({} Markdown files, {:.1} MB), {} rounds\n", corpus.display(), files.len(), mb, rounds);

    // Baselines: read + hash, and parse alone.
    let mut read_hash = Vec::new();
    let mut parse = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let texts: Vec<String> = files.iter().map(|f| std::fs::read_to_string(f).unwrap_or_default()).collect();
        for t in &texts {
            std::hint::black_box(blake3::hash(t.as_bytes()));
        }
        read_hash.push(t.elapsed());
        let t = Instant::now();
        for text in &texts {
            std::hint::black_box(pulldown_cmark::Parser::new(text).count());
        }
        parse.push(t.elapsed());
    }

    // Full builds: cold (empty extraction cache) and warm (nothing changed).
    let config = Config::from_roots(std::slice::from_ref(&corpus)).unwrap();
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    let mut index_dir = None;
    for _ in 0..rounds {
        let dir = tempfile::tempdir().unwrap();
        let t = Instant::now();
        fabdex_index::build(&config, &BuildOptions::new(dir.path())).unwrap();
        cold.push(t.elapsed());
        let t = Instant::now();
        fabdex_index::build(&config, &BuildOptions::new(dir.path())).unwrap();
        warm.push(t.elapsed());
        index_dir = Some(dir);
    }
    let index_dir = index_dir.unwrap();
    let best = |v: &Vec<Duration>| *v.iter().min().unwrap();
    let rate = |d: Duration| mb / d.as_secs_f64();
    println!("| indexing (best of {rounds}) | time | MB/s | × read+hash |");
    println!("|---|---|---|---|");
    let floor = best(&read_hash);
    for (name, d) in [
        ("read + blake3 (baseline)", floor),
        ("pulldown-cmark parse only (baseline)", best(&parse)),
        ("fabdex index, cold cache", best(&cold)),
        ("fabdex index, warm cache (no change)", best(&warm)),
    ] {
        println!("| {name} | {} | {:.1} | {:.1} |", ms(d), rate(d), d.as_secs_f64() / floor.as_secs_f64());
    }

    // Queries.
    let engine = Engine::open_index(index_dir.path()).unwrap();
    let questions: Vec<Question> = qrels
        .filter(|p| p.exists())
        .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
        .unwrap_or_default();
    let snap = engine.snapshot();
    let mut texts = std::collections::HashMap::new();
    let sections: Vec<(String, String, String, String)> = snap
        .docs
        .sections
        .iter()
        .map(|row| {
            let file = &snap.docs.files[row.file as usize];
            let text = texts.entry(row.file).or_insert_with(|| snap.file_text(row.file).unwrap());
            let body = text[row.section.byte_start as usize..row.section.byte_end as usize].to_lowercase();
            (row.address.clone(), row.section.heading.to_lowercase(), file.path.to_lowercase(), body)
        })
        .collect();
    // An index of the same corpus built with `--embeddings` (encoding takes
    // minutes, so it is built beforehand): its hybrid searches are timed too.
    let embedded = std::env::var_os("FABDEX_BENCH_EMBEDDED_INDEX").map(|dir| {
        let engine = Engine::open_index(std::path::Path::new(&dir)).unwrap();
        assert!(engine.snapshot().has_embeddings(), "FABDEX_BENCH_EMBEDDED_INDEX has no embeddings");
        // The first search loads the model (once per engine); it is not a search's cost.
        engine.search_docs(&SearchDocs { query: "warm up".into(), ..Default::default() }).unwrap();
        engine
    });
    let mut dense = Vec::new();
    let mut search = Vec::new();
    let mut lexical = Vec::new();
    let mut peer = Vec::new();
    let mut open = Vec::new();
    let mut addresses = Vec::new();
    for _ in 0..rounds.max(5) {
        for q in &questions {
            let t = Instant::now();
            let result =
                engine.search_docs(&SearchDocs { query: q.q.clone(), limit: Some(10), ..Default::default() }).unwrap();
            search.push(t.elapsed());
            let t = Instant::now();
            std::hint::black_box(
                engine
                    .search_docs(&SearchDocs {
                        query: q.q.clone(),
                        limit: Some(10),
                        mode: Some(RetrievalMode::Bm25),
                        ..Default::default()
                    })
                    .unwrap(),
            );
            lexical.push(t.elapsed());
            if let Some(engine) = &embedded {
                let t = Instant::now();
                std::hint::black_box(
                    engine
                        .search_docs(&SearchDocs { query: q.q.clone(), limit: Some(10), ..Default::default() })
                        .unwrap(),
                );
                dense.push(t.elapsed());
            }
            addresses.extend(result.hits.into_iter().map(|h| h.address));
            let t = Instant::now();
            std::hint::black_box(peer_rank(&sections, &q.q));
            peer.push(t.elapsed());
        }
    }
    for a in &addresses {
        let t = Instant::now();
        std::hint::black_box(engine.read(a, None, None).unwrap());
        open.push(t.elapsed());
    }
    println!("\n| query ({} questions) | n | p50 | p99 |", questions.len());
    println!("|---|---|---|---|");
    for (name, v) in [
        ("peer ranking, linear scan (baseline)", &mut peer),
        ("fabdex search docs --mode bm25, limit 10", &mut lexical),
        ("fabdex search docs (hybrid, the default), limit 10", &mut search),
        ("fabdex search docs (hybrid with --embeddings), limit 10", &mut dense),
        ("fabdex open (default window)", &mut open),
    ] {
        if v.is_empty() {
            continue;
        }
        let (p50, p99) = (percentile(v, 0.5), percentile(v, 0.99));
        println!("| {name} | {} | {} | {} |", v.len(), ms(p50), ms(p99));
    }
}
