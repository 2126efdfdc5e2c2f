//! Pattern index bench: pattern search and source reads over a real pattern
//! tree, against baselines measured in the same run.
//!
//! - search: fabdex's field-weighted, contract-aware ranking (with fit
//!   verdicts) against the index service's way (disjunctive keyword match over
//!   description and hashtags, a linear scan of every record);
//! - read: `pattern:<id>/<path>` (a blob read, digest-checked, windowed and
//!   line-bounded) against reading the same file from the checkout.
//!
//! Run: `cargo bench --bench pattern_index -- PATTERNS_DIR` (for example
//! `packages/patterns` of a `commontoolsinc/labs` checkout); without a folder
//! it runs on `corpus/patterns`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fabdex_index::{BuildOptions, Config};
use fabdex_query::{Engine, FieldSpec, PatternQuery};

const TASKS: [&str; 16] = [
    "give me a simple list view of my email inbox",
    "todo list with checkboxes",
    "counter with increment and decrement",
    "chat messages between people",
    "calendar of upcoming events",
    "take notes in markdown",
    "shopping list shared with family",
    "weather forecast for a city",
    "image gallery",
    "search records by keyword",
    "track habits every day",
    "budget and expenses",
    "kanban board with columns",
    "contact card with email and phone",
    "timer for focus sessions",
    "recipe ingredients and steps",
];

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// The index service's search: any query word (with light suffix handling)
/// in the description or hashtags, ranked by words matched.
fn baseline_search(records: &[(String, String)], query: &str) -> Vec<usize> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(|w| w.to_lowercase().trim_end_matches('s').to_string())
        .collect();
    let mut scored: Vec<(usize, usize)> = records
        .iter()
        .enumerate()
        .map(|(i, (description, tags))| {
            let text = format!("{description} {tags}").to_lowercase();
            (words.iter().filter(|w| text.contains(w.as_str())).count(), i)
        })
        .filter(|(n, _)| *n > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(10).map(|(_, i)| i).collect()
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("corpus/patterns"));
    if !dir.is_dir() {
        eprintln!("skipping: {} is not a folder", dir.display());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut config = Config::from_roots(std::slice::from_ref(&dir)).unwrap();
    config.roots[0].name = "patterns".into();
    config.roots[0].kind = Some(fabdex_model::records::RootKind::Patterns);
    let t = Instant::now();
    let report = fabdex_index::build(&config, &BuildOptions::new(tmp.path())).unwrap();
    let build = t.elapsed();
    let t = Instant::now();
    let engine = Engine::open_index(tmp.path()).unwrap();
    let open = t.elapsed();
    let programs = &engine.snapshot().patterns.programs;
    println!(
        "{}: {} sources, {} programs; index {} ms, open {} ms\n",
        dir.display(),
        report.counts.source_files,
        programs.len(),
        build.as_millis(),
        open.as_millis()
    );

    // Search.
    let records: Vec<(String, String)> =
        programs.iter().map(|p| (p.description.clone().unwrap_or_default(), p.hashtags.join(" "))).collect();
    let rounds = 20;
    let mut ours = Vec::new();
    let mut contract = Vec::new();
    let mut baseline = Vec::new();
    let returns = vec![FieldSpec::parse("items:array", "--returns").unwrap()];
    for _ in 0..rounds {
        for task in TASKS {
            let q = PatternQuery { text: task.into(), ..Default::default() };
            let t = Instant::now();
            std::hint::black_box(engine.search_patterns(&q).unwrap());
            ours.push(t.elapsed());
            let q = PatternQuery { text: task.into(), returns: returns.clone(), ..Default::default() };
            let t = Instant::now();
            std::hint::black_box(engine.search_patterns(&q).unwrap());
            contract.push(t.elapsed());
            let t = Instant::now();
            std::hint::black_box(baseline_search(&records, task));
            baseline.push(t.elapsed());
        }
    }
    println!("| pattern search ({} queries × {rounds}) | p50 | p99 |", TASKS.len());
    println!("|---|---|---|");
    for (name, samples) in [
        ("fabdex: text, fields, fit verdicts", &mut ours),
        ("fabdex: text + --returns items:array", &mut contract),
        ("baseline: service keyword scan (description, tags)", &mut baseline),
    ] {
        println!("| {name} | {} | {} |", ms(percentile(samples, 0.5)), ms(percentile(samples, 0.99)));
    }

    // Reads.
    let mut ours = Vec::new();
    let mut lines = Vec::new();
    let mut baseline = Vec::new();
    let mut bytes = 0usize;
    for _ in 0..3 {
        for p in programs {
            for f in &p.files {
                let address = format!("pattern:{}/{}", p.pattern_id, f.name);
                let t = Instant::now();
                let env = engine.read(&address, None, Some(32_000)).unwrap();
                ours.push(t.elapsed());
                bytes += env.text.len();
                let t = Instant::now();
                std::hint::black_box(engine.read(&format!("{address}:L1-L40"), None, Some(32_000)).unwrap());
                lines.push(t.elapsed());
                let t = Instant::now();
                std::hint::black_box(std::fs::read_to_string(dir.join(&f.name)).unwrap());
                baseline.push(t.elapsed());
            }
        }
    }
    println!("\n| source reads ({} reads, {:.1} MB returned) | p50 | p99 |", ours.len(), bytes as f64 / 1e6);
    println!("|---|---|---|");
    for (name, samples) in [
        ("fabdex: read pattern:<id>/<path> (≤ 32,000 chars)", &mut ours),
        ("fabdex: read …:L1-L40", &mut lines),
        ("baseline: fs::read_to_string of the file", &mut baseline),
    ] {
        println!("| {name} | {} | {} |", ms(percentile(samples, 0.5)), ms(percentile(samples, 0.99)));
    }
}
