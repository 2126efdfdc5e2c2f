//! Scaling bench: how fabdex's costs grow with the corpus. Builds synthetic
//! corpora of 1×, 4× and 16× the labs docs (`../shared/labs`; skips without
//! it): copy `i` of every Markdown file under `copy-<i>/`, its text lightly
//! permuted (a few adjacent words swapped per paragraph, and a line naming
//! the copy), so that no two copies are identical. For each size it
//! measures, with the release binary as a separate process:
//!
//! - cold index: wall time and peak RSS, and the index's size on disk;
//! - one-file re-index: one line appended to one file, then `fabdex index`;
//! - `fabdex search docs` as a process (median wall, peak RSS);
//! - in-process search p50/p99 over the dev questions, on an opened engine.
//!
//! Run: `cargo build --release && cargo bench --bench scaling`
//! (`FABDEX_SCALING_SIZES=1,4` to choose the sizes).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{markdown_files, measure, percentile};
use fabdex_query::{Engine, SearchDocs};

/// Copy `copy` of a file's text: every paragraph of prose gets two adjacent
/// words swapped at a position drawn from a generator seeded by the copy
/// (code fences and headings are left alone, so anchors and code stay), and
/// a line names the copy.
fn permute(text: &str, copy: u64) -> String {
    let mut state = copy.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = String::with_capacity(text.len() + 32);
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let mut words: Vec<&str> = line.split(' ').collect();
        if copy > 0 && !fenced && !line.starts_with('#') && words.len() > 6 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let at = 1 + (state >> 33) as usize % (words.len() - 2);
            words.swap(at, at + 1);
        }
        out.push_str(&words.join(" "));
        out.push('\n');
    }
    out.push_str(&format!("\nThis page is copy {copy} of the corpus.\n"));
    out
}

fn build_corpus(labs: &Path, files: &[PathBuf], copies: u64, out: &Path) {
    for copy in 0..copies {
        for f in files {
            let rel = f.strip_prefix(labs).unwrap();
            let target = out.join(format!("copy-{copy}")).join(rel);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            let text = std::fs::read_to_string(f).unwrap_or_default();
            std::fs::write(target, permute(&text, copy)).unwrap();
        }
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let m = e.metadata().unwrap();
        total += if m.is_dir() { dir_bytes(&e.path()) } else { m.len() };
    }
    total
}

struct Row {
    copies: u64,
    files: usize,
    source_mb: f64,
    index: (Duration, u64),
    index_mb: f64,
    reindex: (Duration, u64),
    cli_search: (Duration, u64),
    search: (Duration, Duration),
    /// The cold build's phases (ms), from its report.
    phases: Vec<(String, u64)>,
}

/// `phases_ms` of the published snapshot's build report.
fn build_phases(index_dir: &Path) -> Vec<(String, u64)> {
    let id = std::fs::read_to_string(index_dir.join("CURRENT")).unwrap();
    let report = std::fs::read_to_string(index_dir.join("snapshots").join(id.trim()).join("report.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let mut phases: Vec<(String, u64)> = report["phases_ms"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
        .collect();
    phases.sort_by_key(|p| std::cmp::Reverse(p.1));
    phases
}

fn measure_size(bin: &Path, labs: &Path, files: &[PathBuf], copies: u64, questions: &[String]) -> Row {
    let scratch = tempfile::tempdir().unwrap();
    let corpus = scratch.path().join("corpus");
    build_corpus(labs, files, copies, &corpus);
    let index_dir = scratch.path().join("index");
    let fabdex = || {
        let mut c = Command::new(bin);
        c.env("FABDEX_MODELS", scratch.path().join("no-models"));
        c
    };
    let index = || {
        let mut c = fabdex();
        c.args(["index", "--no-embeddings", "--out"]).arg(&index_dir).arg(&corpus);
        c
    };
    let cold = measure(&mut index());
    let phases = build_phases(&index_dir);
    let index_mb = dir_bytes(&index_dir.join("snapshots")) as f64 / 1e6;
    // One line appended to one file.
    let edited = corpus.join("copy-0").join(files[files.len() / 2].strip_prefix(labs).unwrap());
    let mut text = std::fs::read_to_string(&edited).unwrap();
    text.push_str("\nOne more line, edited between builds.\n");
    std::fs::write(&edited, text).unwrap();
    let reindex = measure(&mut index());

    let question = "what does wish return when nothing matches";
    let search = || {
        let mut c = fabdex();
        c.arg("--index").arg(&index_dir).args(["search", "docs", question]);
        c
    };
    measure(&mut search());
    let mut cli: Vec<(Duration, u64)> = (0..5).map(|_| measure(&mut search())).collect();
    cli.sort();
    let cli_search = (cli[2].0, cli.iter().map(|c| c.1).max().unwrap());

    let engine = Engine::open_index(&index_dir).unwrap();
    let mut times = Vec::new();
    for round in 0..3 {
        for q in questions {
            let started = Instant::now();
            engine.search_docs(&SearchDocs { query: q.clone(), ..Default::default() }).unwrap();
            if round > 0 {
                times.push(started.elapsed());
            }
        }
    }
    let p50 = percentile(&times, 0.5);
    let p99 = percentile(&times, 0.99);
    Row {
        copies,
        files: files.len() * copies as usize,
        source_mb: dir_bytes(&corpus) as f64 / 1e6,
        index: cold,
        index_mb,
        reindex,
        cli_search,
        search: (p50, p99),
        phases,
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let labs = root.join("../shared/labs");
    let bin = root.join("target/release/fabdex");
    if !labs.is_dir() || !bin.exists() {
        eprintln!("skipping: needs ../shared/labs and target/release/fabdex (cargo build --release)");
        return;
    }
    let sizes: Vec<u64> = std::env::var("FABDEX_SCALING_SIZES")
        .unwrap_or_else(|_| "1,4,16".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let mut files = Vec::new();
    markdown_files(&labs, &mut files);
    files.sort();
    let qrels: serde_json::Value = std::fs::read_to_string(root.join("../shared/eval/docs-qrels.dev.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    let mut questions: Vec<String> =
        qrels.as_array().into_iter().flatten().filter_map(|q| q["q"].as_str().map(str::to_string)).collect();
    if questions.is_empty() {
        questions = vec!["what does wish return when nothing matches".into(), "handler state".into()];
    }
    println!(
        "| corpus | files | source | cold index | index RSS | index on disk | one-file re-index | re-index RSS | CLI search (median) | CLI RSS | in-process search p50 / p99 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut phases = Vec::new();
    for copies in sizes {
        let r = measure_size(&bin, &labs, &files, copies, &questions);
        phases.push((copies, r.phases.clone()));
        println!(
            "| {}× labs | {} | {:.0} MB | {:.2} s | {:.0} MB | {:.0} MB | {:.2} s | {:.0} MB | {:.0} ms | {:.0} MB | {:.1} / {:.1} ms |",
            r.copies,
            r.files,
            r.source_mb,
            r.index.0.as_secs_f64(),
            r.index.1 as f64 / 1024.0,
            r.index_mb,
            r.reindex.0.as_secs_f64(),
            r.reindex.1 as f64 / 1024.0,
            r.cli_search.0.as_secs_f64() * 1e3,
            r.cli_search.1 as f64 / 1024.0,
            r.search.0.as_secs_f64() * 1e3,
            r.search.1.as_secs_f64() * 1e3,
        );
    }
    println!("\nCold build phases (ms, from the build report):\n");
    for (copies, phases) in phases {
        let cells: Vec<String> = phases.iter().map(|(name, ms)| format!("{name} {ms}")).collect();
        println!("- {copies}× labs: {}", cells.join(", "));
    }
}
