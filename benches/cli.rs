//! CLI bench: whole-process wall time and peak RSS of the commands a person
//! or an agent runs, against `grep -r -i -c` over the same tree in the same
//! run (the yardstick: scanning the corpus without an index).
//!
//! Indexes `../shared/labs` (or `corpus/` when it is absent) into a
//! temporary folder with the release binary, then runs each command 2 times
//! to warm up and `--runs N` (default 9) times measured. With
//! `FABDEX_BENCH_PATTERNS=DIR` (a labs `packages/patterns` checkout) the
//! pattern commands run too, on an index of that folder. The last rows are
//! `fabdex index` after a one-line edit of one file (the docs hit's file;
//! the first `.tsx` of the patterns folder), on copies indexed once before,
//! and (with the patterns folder) a cold index of both folders together
//! (empty output folder and cache; at most 5 runs).
//!
//! A command skips the hash of a snapshot file an earlier process found
//! whole (digest stamps, docs/snapshot-format.md), except in the first
//! second after the file was written. The rows after the yardstick are
//! measured past that second, as a person's or an agent's later calls are;
//! the `search docs` row marked "first call after an index" removes the
//! stamps before each run, so it hashes everything it reads, as the first
//! call after a build does.
//!
//! Run: `cargo build --release && cargo bench --bench cli`. The binary
//! measured is `target/release/fabdex` (or `FABDEX_BENCH_BIN`).

mod common;

use common::measure;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

struct Row {
    name: String,
    median: Duration,
    rss_kib: u64,
}

fn bench(name: &str, runs: usize, make: impl Fn() -> Command) -> Row {
    for _ in 0..2 {
        measure(&mut make());
    }
    let mut times = Vec::new();
    let mut rss = 0;
    for _ in 0..runs {
        let (t, r) = measure(&mut make());
        times.push(t);
        rss = rss.max(r);
    }
    times.sort();
    Row { name: name.to_string(), median: times[times.len() / 2], rss_kib: rss }
}

/// [`bench`] with `before` run ahead of each call, untimed.
fn bench_after(name: &str, runs: usize, before: impl Fn(), make: impl Fn() -> Command) -> Row {
    let mut times = Vec::new();
    let mut rss = 0;
    for run in 0..runs + 2 {
        before();
        let (t, r) = measure(&mut make());
        if run >= 2 {
            times.push(t);
            rss = rss.max(r);
        }
    }
    times.sort();
    Row { name: name.to_string(), median: times[times.len() / 2], rss_kib: rss }
}

fn index(bin: &Path, source: &Path, out: &Path) {
    let status = Command::new(bin)
        .args(["index", "--no-embeddings", "--out"])
        .arg(out)
        .arg(source)
        .env("FABDEX_MODELS", out.join("no-models"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run fabdex index");
    assert!(status.success(), "indexing {} failed", source.display());
}

/// Copy a tree (symlinks and `.git` left out, as `fabdex index` leaves them).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let t = e.file_type().unwrap();
        if t.is_dir() && e.file_name() != ".git" {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else if t.is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// `fabdex index` after a one-line edit of `file` (relative to `source`),
/// on a copy of `source` indexed once before: each run appends another line
/// (`line` with the run's number), so each has a new snapshot to make.
fn reindex(bin: &Path, source: &Path, scratch: &Path, file: &str, line: &str, runs: usize) -> Row {
    let name = source.file_name().unwrap();
    let copy = scratch.join(format!("reindex-{}", file.replace('/', "-"))).join(name);
    copy_tree(source, &copy);
    let out = copy.parent().unwrap().join("index");
    index(bin, &copy, &out);
    let edited = copy.join(file);
    let (mut times, mut rss) = (Vec::new(), 0);
    for run in 0..runs + 2 {
        let mut text = std::fs::read_to_string(&edited).unwrap();
        text.push_str(&line.replace("{run}", &run.to_string()));
        std::fs::write(&edited, text).unwrap();
        let mut c = Command::new(bin);
        c.args(["index", "--no-embeddings", "--out"]).arg(&out).arg(&copy).env("FABDEX_MODELS", out.join("no-models"));
        let (t, r) = measure(&mut c);
        if run >= 2 {
            times.push(t);
            rss = rss.max(r);
        }
    }
    times.sort();
    Row { name: format!("index after a one-line edit of `{file}`"), median: times[times.len() / 2], rss_kib: rss }
}

/// `fabdex index` of `roots` into an empty folder, with an empty cache: one
/// warm-up (the source files in the page cache), then `runs` measured.
fn cold_index(bin: &Path, roots: &[&Path], scratch: &Path, runs: usize) -> Row {
    let (mut times, mut rss) = (Vec::new(), 0);
    for run in 0..runs + 1 {
        let out = scratch.join(format!("cold-{run}"));
        let mut c = Command::new(bin);
        c.args(["index", "--no-embeddings", "--out"]).arg(&out).args(roots).env("FABDEX_MODELS", out.join("no-models"));
        let (t, r) = measure(&mut c);
        std::fs::remove_dir_all(&out).unwrap();
        if run >= 1 {
            times.push(t);
            rss = rss.max(r);
        }
    }
    times.sort();
    Row { name: "cold index of the docs and the patterns folder".into(), median: times[times.len() / 2], rss_kib: rss }
}

fn first_hit(bin: &Path, index: &Path, args: &[&str], field: &str) -> String {
    let out = Command::new(bin).arg("--index").arg(index).args(args).arg("--json").output().expect("search");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("search --json");
    v["hits"][0][field].as_str().expect("a first hit").to_string()
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runs = std::env::args().skip_while(|a| a != "--runs").nth(1).and_then(|n| n.parse().ok()).unwrap_or(9usize);
    let bin = std::env::var_os("FABDEX_BENCH_BIN").map_or(root.join("target/release/fabdex"), PathBuf::from);
    if !bin.exists() {
        eprintln!("{} is absent: run `cargo build --release` first", bin.display());
        return;
    }
    let labs = root.join("../shared/labs");
    let docs = if labs.is_dir() { labs } else { root.join("corpus") };
    let scratch = tempfile::tempdir().unwrap();
    let docs_index = scratch.path().join("docs");
    index(&bin, &docs, &docs_index);
    let fabdex = |index: &Path, args: Vec<String>| {
        let (bin, index) = (bin.clone(), index.to_path_buf());
        move || {
            let mut c = Command::new(&bin);
            c.arg("--index").arg(&index).args(&args);
            c
        }
    };
    let question = "what does wish return when nothing matches";
    let hit = first_hit(&bin, &docs_index, &["search", "docs", question], "address");
    let file = hit.split('#').next().unwrap().trim_start_matches("doc:").to_string();
    let prefix = file.rsplit_once('/').map_or(file.clone(), |(dir, _)| dir.to_string());
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    // Past the racy second after the build, so that the files can be stamped.
    std::thread::sleep(Duration::from_millis(1200));

    let grep = bench("grep -r -i -c wish (the tree, no index)", runs, || {
        let mut c = Command::new("grep");
        c.args(["-r", "-i", "-c", "wish"]).arg(&docs);
        c
    });
    let stamps = docs_index.join("cache/verified-v1");
    let unstamped = || {
        let _ = std::fs::remove_dir_all(&stamps);
    };
    let search_docs = fabdex(&docs_index, s(&["search", "docs", question]));
    let mut rows = vec![
        bench_after("search docs, first call after an index (no stamps)", runs, unstamped, &search_docs),
        bench("search docs", runs, &search_docs),
        bench("open", runs, fabdex(&docs_index, s(&["open", &hit]))),
        bench("read", runs, fabdex(&docs_index, s(&["read", &hit]))),
        bench("outline", runs, fabdex(&docs_index, s(&["outline", &prefix]))),
        bench("related", runs, fabdex(&docs_index, s(&["related", &hit]))),
    ];
    let edited = file.split_once('/').map_or(file.as_str(), |(_, path)| path);
    rows.push(reindex(&bin, &docs, scratch.path(), edited, "\nOne more line, edit {run}.\n", runs));
    if let Some(patterns) = std::env::var_os("FABDEX_BENCH_PATTERNS").map(PathBuf::from) {
        let patterns_index = scratch.path().join("patterns");
        index(&bin, &patterns, &patterns_index);
        let task = "a simple list view of my email inbox";
        let id = first_hit(&bin, &patterns_index, &["search", "patterns", task], "patternId");
        std::thread::sleep(Duration::from_millis(1200));
        rows.push(bench("search patterns", runs, fabdex(&patterns_index, s(&["search", "patterns", task]))));
        rows.push(bench("inspect", runs, fabdex(&patterns_index, s(&["inspect", &id]))));
        let mut sources: Vec<String> = std::fs::read_dir(&patterns)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tsx"))
            .collect();
        sources.sort();
        if let Some(source) = sources.first() {
            rows.push(reindex(&bin, &patterns, scratch.path(), source, "\n// edit {run}\n", runs));
        }
        rows.push(cold_index(&bin, &[&docs, &patterns], scratch.path(), runs.min(5)));
    } else {
        eprintln!("FABDEX_BENCH_PATTERNS is unset: the pattern commands are not measured");
    }
    println!("\n{} ({} runs each, medians; {})\n", bin.display(), runs, docs.display());
    println!("| command | median wall | × grep | peak RSS |");
    println!("|---|---|---|---|");
    rows.insert(0, grep);
    let base = rows[0].median.as_secs_f64();
    for r in &rows {
        println!(
            "| `{}` | {:.1} ms | {:.2} | {:.1} MB |",
            r.name,
            r.median.as_secs_f64() * 1e3,
            r.median.as_secs_f64() / base,
            r.rss_kib as f64 / 1024.0
        );
    }
}
