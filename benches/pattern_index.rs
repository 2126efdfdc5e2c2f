//! Pattern index bench: pattern search and source reads over a real pattern
//! tree, against baselines measured in the same run.
//!
//! - search: fabdex's field-weighted, contract-aware ranking (with fit
//!   verdicts) against the index service's way (disjunctive keyword match over
//!   description and hashtags, a linear scan of every record);
//! - read: `pattern:<id>/<path>` (a blob read, digest-checked, windowed and
//!   line-bounded) against reading the same file from the checkout.
//!
//! Run: `cargo bench --bench pattern_index`. It runs on `corpus/patterns`
//! with the 16 tasks below, then on the platform's library when a checkout of
//! `commontoolsinc/labs`'s `packages/patterns` is found (`FABDEX_LABS_PATTERNS`,
//! else `../labs-checkout/packages/patterns`) with the 50 tasks of
//! `tests/data/labs-pattern-tasks.json`; it says so and skips when there is
//! none. `cargo bench --bench pattern_index -- DIR` runs on DIR alone.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fabdex_index::{BuildOptions, Config};
use fabdex_query::{Engine, FieldSpec, PatternQuery, PatternTask};

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
    if let Some(dir) = std::env::args().skip(1).find(|a| !a.starts_with('-')) {
        let tasks: Vec<String> = TASKS.iter().map(|t| t.to_string()).collect();
        return bench_library(&PathBuf::from(dir), &tasks, None);
    }
    bench_library(&root.join("corpus/patterns"), &TASKS.iter().map(|t| t.to_string()).collect::<Vec<_>>(), None);
    let labs = std::env::var_os("FABDEX_LABS_PATTERNS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../labs-checkout/packages/patterns"));
    if !labs.join("index.md").is_file() {
        println!(
            "
skipping labs: no pattern checkout at {} (set FABDEX_LABS_PATTERNS)",
            labs.display()
        );
        return;
    }
    let text = std::fs::read_to_string(root.join("tests/data/labs-pattern-tasks.json")).unwrap();
    let tasks: Vec<PatternTask> = serde_json::from_str(&text).unwrap();
    let tasks: Vec<String> = tasks.into_iter().map(|t| t.task).collect();
    println!();
    bench_library(&labs, &tasks, None);
    // With a sentence model (the encoder bench's variable): the question is
    // encoded on every search, so this is the ranking's worst case.
    match std::env::var_os("FABDEX_EMBED_MODEL") {
        Some(model) => {
            println!();
            bench_library(&labs, &tasks, Some(PathBuf::from(model)));
        }
        None => println!("\nskipping labs with embeddings: set FABDEX_EMBED_MODEL to a model folder"),
    }
}

fn bench_library(dir: &std::path::Path, tasks: &[String], model: Option<PathBuf>) {
    if !dir.is_dir() {
        eprintln!("skipping: {} is not a folder", dir.display());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut config = Config::from_roots(&[dir.to_path_buf()]).unwrap();
    config.roots[0].name = "patterns".into();
    config.roots[0].kind = Some(fabdex_model::records::RootKind::Patterns);
    config.index.embeddings = model;
    let t = Instant::now();
    let report = fabdex_index::build(&config, &BuildOptions::new(tmp.path())).unwrap();
    let build = t.elapsed();
    let t = Instant::now();
    let engine = Engine::open_index(tmp.path()).unwrap();
    let open = t.elapsed();
    let programs = &engine.snapshot().patterns.programs;
    // The first search builds the programs' semantic vectors (once per process).
    let t = Instant::now();
    let mode = engine.search_patterns(&PatternQuery { text: tasks[0].clone(), ..Default::default() }).unwrap().mode;
    let first = t.elapsed();
    println!(
        "{}: {} sources, {} programs; index {} ms, open {} ms, first search {} ms (mode {mode})\n",
        dir.display(),
        report.counts.source_files,
        programs.len(),
        build.as_millis(),
        open.as_millis(),
        first.as_millis(),
    );
    bench_search(&engine, tasks);
    bench_reads(&engine, dir);
}

fn bench_search(engine: &Engine, tasks: &[String]) {
    let programs = &engine.snapshot().patterns.programs;
    let records: Vec<(String, String)> =
        programs.iter().map(|p| (p.description.clone().unwrap_or_default(), p.hashtags.join(" "))).collect();
    let rounds = 20;
    let mut ours = Vec::new();
    let mut contract = Vec::new();
    let mut baseline = Vec::new();
    let returns = vec![FieldSpec::parse("items:array", "--returns").unwrap()];
    for _ in 0..rounds {
        for task in tasks {
            let q = PatternQuery { text: task.clone(), ..Default::default() };
            let t = Instant::now();
            std::hint::black_box(engine.search_patterns(&q).unwrap());
            ours.push(t.elapsed());
            let q = PatternQuery { text: task.clone(), returns: returns.clone(), ..Default::default() };
            let t = Instant::now();
            std::hint::black_box(engine.search_patterns(&q).unwrap());
            contract.push(t.elapsed());
            let t = Instant::now();
            std::hint::black_box(baseline_search(&records, task));
            baseline.push(t.elapsed());
        }
    }
    let base = (percentile(&mut baseline, 0.5), percentile(&mut baseline, 0.99));
    let ratio = |a: Duration, b: Duration| format!("{:.1}×", a.as_secs_f64() / b.as_secs_f64().max(1e-9));
    println!("| pattern search ({} queries × {rounds}) | p50 | p99 | p99 / baseline p99 |", tasks.len());
    println!("|---|---|---|---|");
    for (name, samples) in [
        ("fabdex: text, fields, fit verdicts", &mut ours),
        ("fabdex: text + --returns items:array", &mut contract),
        ("baseline: service keyword scan (description, tags)", &mut baseline),
    ] {
        let (p50, p99) = (percentile(samples, 0.5), percentile(samples, 0.99));
        println!("| {name} | {} | {} | {} |", ms(p50), ms(p99), ratio(p99, base.1));
    }
}

fn bench_reads(engine: &Engine, dir: &std::path::Path) {
    let programs = &engine.snapshot().patterns.programs;
    let mut ours = Vec::new();
    let mut lines = Vec::new();
    let mut baseline = Vec::new();
    let mut bytes = 0usize;
    for _ in 0..3 {
        for p in programs.iter() {
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
                std::hint::black_box(std::fs::read_to_string(dir.join(&f.name)).ok());
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
