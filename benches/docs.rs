//! Docs bench: indexing throughput, and search and open latency, on the real
//! Common Fabric Markdown (`../shared/labs`, or `corpus/` when it is absent).
//! Prints a table. Baselines measured in the same run: reading and hashing the
//! files (the I/O floor), pulldown-cmark alone (the parse floor), and the peer's
//! ranking (8·heading + 4·path + min(body, 8) per term, a linear scan), and
//! each search again with the lexical part scored as before BM25F.
//!
//! Run: `cargo bench --bench docs` (optionally `-- --rounds N`).

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{markdown_files, percentile};
use fabdex_index::{BuildOptions, Config};
use fabdex_query::{Engine, LexicalScoring, RetrievalMode, SearchDocs};

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
    let mut timings = time_queries(index_dir.path(), &engine, &questions, rounds);
    for a in &timings.addresses {
        let t = Instant::now();
        std::hint::black_box(engine.read(a, None, None).unwrap());
        timings.open.push(t.elapsed());
    }
    println!("\n| query ({} questions) | n | p50 | p99 |", questions.len());
    println!("|---|---|---|---|");
    for (name, v) in [
        ("peer ranking, linear scan (baseline)", &mut timings.peer),
        ("fabdex search docs --mode bm25, limit 10", &mut timings.lexical),
        ("  the same, lexical part by the per-field sum (before BM25F)", &mut timings.lexical_sum),
        ("fabdex search docs (hybrid, the default), limit 10", &mut timings.search),
        ("  the same, lexical part by the per-field sum (before BM25F)", &mut timings.search_sum),
        ("fabdex search docs (hybrid with --embeddings), limit 10", &mut timings.dense),
        ("  the same, lexical part by the per-field sum (before BM25F)", &mut timings.dense_sum),
        ("fabdex open (default window)", &mut timings.open),
    ] {
        if v.is_empty() {
            continue;
        }
        let (p50, p99) = (percentile(v, 0.5), percentile(v, 0.99));
        println!("| {name} | {} | {} | {} |", v.len(), ms(p50), ms(p99));
    }
}

/// Each timed search's durations, and the addresses the default search found.
#[derive(Default)]
struct Timings {
    peer: Vec<Duration>,
    lexical: Vec<Duration>,
    lexical_sum: Vec<Duration>,
    search: Vec<Duration>,
    search_sum: Vec<Duration>,
    dense: Vec<Duration>,
    dense_sum: Vec<Duration>,
    open: Vec<Duration>,
    addresses: Vec<String>,
}

/// Time one search and keep its result.
fn timed(
    engine: &Engine,
    q: &str,
    mode: Option<RetrievalMode>,
    into: &mut Vec<Duration>,
) -> fabdex_query::SearchResult {
    let t = Instant::now();
    let result =
        engine.search_docs(&SearchDocs { query: q.into(), limit: Some(10), mode, ..Default::default() }).unwrap();
    into.push(t.elapsed());
    result
}

/// An engine on `dir` whose lexical part is the per-field sum of BM25
/// scores, the baseline of BM25F timed in the same run.
fn field_sum_engine(dir: &std::path::Path) -> Engine {
    let mut engine = Engine::open_index(dir).unwrap();
    engine.set_lexical_scoring(LexicalScoring::FieldSum);
    engine
}

/// An index of the same corpus built with `--embeddings` (encoding takes
/// minutes, so it is built beforehand, `FABDEX_BENCH_EMBEDDED_INDEX`), with
/// today's lexical scoring and with the per-field sum; the model is loaded
/// before timing: the first search loads it once per engine.
fn embedded_engines() -> Option<(Engine, Engine)> {
    let dir = std::env::var_os("FABDEX_BENCH_EMBEDDED_INDEX")?;
    let dir = std::path::Path::new(&dir);
    let engines = (Engine::open_index(dir).unwrap(), field_sum_engine(dir));
    for engine in [&engines.0, &engines.1] {
        assert!(engine.snapshot().has_embeddings(), "FABDEX_BENCH_EMBEDDED_INDEX has no embeddings");
        engine.search_docs(&SearchDocs { query: "warm up".into(), ..Default::default() }).unwrap();
    }
    Some(engines)
}

/// Every question searched each way, interleaved so that the machine's
/// noise falls on every row alike.
fn time_queries(index_dir: &std::path::Path, engine: &Engine, questions: &[Question], rounds: usize) -> Timings {
    let sections = peer_sections(engine);
    let sum = field_sum_engine(index_dir);
    let embedded = embedded_engines();
    let mut t = Timings::default();
    for round in 0..rounds.max(5) {
        // Which of a pair runs first alternates by round.
        let pair = |a: &mut dyn FnMut(), b: &mut dyn FnMut()| {
            if round % 2 == 0 {
                a();
                b();
            } else {
                b();
                a();
            }
        };
        for q in questions {
            let mut result = None;
            pair(&mut || result = Some(timed(engine, &q.q, None, &mut t.search)), &mut || {
                drop(timed(&sum, &q.q, None, &mut t.search_sum))
            });
            pair(&mut || drop(timed(engine, &q.q, Some(RetrievalMode::Bm25), &mut t.lexical)), &mut || {
                drop(timed(&sum, &q.q, Some(RetrievalMode::Bm25), &mut t.lexical_sum))
            });
            if let Some((today, sum)) = &embedded {
                pair(&mut || drop(timed(today, &q.q, None, &mut t.dense)), &mut || {
                    drop(timed(sum, &q.q, None, &mut t.dense_sum))
                });
            }
            t.addresses.extend(result.expect("the default search ran").hits.into_iter().map(|h| h.address));
            let start = Instant::now();
            std::hint::black_box(peer_rank(&sections, &q.q));
            t.peer.push(start.elapsed());
        }
    }
    t
}

/// Each section's address, heading, path and text, lowercased: what the peer's ranking scans.
fn peer_sections(engine: &Engine) -> Vec<(String, String, String, String)> {
    let snap = engine.snapshot();
    let mut texts = std::collections::HashMap::new();
    snap.docs
        .sections
        .iter()
        .map(|row| {
            let file = &snap.docs.files[row.file as usize];
            let text = texts.entry(row.file).or_insert_with(|| snap.file_text(row.file).unwrap());
            let body = text[row.section.byte_start as usize..row.section.byte_end as usize].to_lowercase();
            (row.address.clone(), row.section.heading.to_lowercase(), file.path.to_lowercase(), body)
        })
        .collect()
}
