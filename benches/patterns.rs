//! Pattern extraction bench: swc extraction plus the tree-sitter outline of
//! every non-test TS/TSX source of a pattern tree, on one thread and on all
//! threads. Prints a table, and how many files swc could not parse (each must
//! still have an outline).
//!
//! Run: `cargo bench --bench patterns -- PATTERNS_DIR` (for example
//! `packages/patterns` of a `commontoolsinc/labs` checkout). Skips when the
//! folder is not given or absent.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;

fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if name != "node_modules" && !name.starts_with('.') {
                sources(&p, root, out);
            }
        } else if (name.ends_with(".ts") || name.ends_with(".tsx"))
            && !name.ends_with(".test.ts")
            && !name.ends_with(".test.tsx")
        {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            out.push((rel, std::fs::read_to_string(&p).unwrap_or_default()));
        }
    }
}

fn run(files: &[(String, String)], parallel: bool) -> (Duration, usize, usize) {
    let t = Instant::now();
    let work = |(path, text): &(String, String)| {
        let e = fabdex_ts::extract(path, text);
        let o = fabdex_ts::outline::outline(path, text);
        (e.parse_failed, !o.definitions.is_empty() || !o.imports.is_empty() || text.trim().is_empty())
    };
    let results: Vec<(bool, bool)> =
        if parallel { files.par_iter().map(work).collect() } else { files.iter().map(work).collect() };
    let failed = results.iter().filter(|r| r.0).count();
    let failed_with_outline = results.iter().filter(|r| r.0 && r.1).count();
    (t.elapsed(), failed, failed_with_outline)
}

fn main() {
    let Some(dir) = std::env::args().skip(1).find(|a| !a.starts_with('-')).map(PathBuf::from) else {
        eprintln!("skipping: give a pattern tree, e.g. `cargo bench --bench patterns -- LABS/packages/patterns`");
        return;
    };
    if !dir.is_dir() {
        eprintln!("skipping: {} is not a folder", dir.display());
        return;
    }
    let mut files = Vec::new();
    sources(&dir, &dir, &mut files);
    files.sort();
    let bytes: usize = files.iter().map(|f| f.1.len()).sum();
    let mb = bytes as f64 / 1e6;
    println!(
        "{}: {} non-test sources, {:.2} MB, {} threads\n",
        dir.display(),
        files.len(),
        mb,
        rayon::current_num_threads()
    );
    println!("| extraction (swc + tree-sitter outline), best of 3 | time | MB/s | files/s |");
    println!("|---|---|---|---|");
    let mut failed = (0, 0);
    for (name, parallel) in [("one thread", false), ("all threads", true)] {
        let best = (0..3).map(|_| run(&files, parallel)).min_by_key(|r| r.0).unwrap();
        failed = (best.1, best.2);
        let s = best.0.as_secs_f64();
        println!("| {name} | {:.0} ms | {:.1} | {:.0} |", s * 1e3, mb / s, files.len() as f64 / s);
    }
    println!("\nswc could not parse {} files; {} of them still have an outline", failed.0, failed.1);
}
