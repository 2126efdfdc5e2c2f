//! Web UI bench: how long `fabdex serve --http` takes to serve each kind of
//! page of the contract browser (search, pattern, file view, doc section,
//! docs file, run page) on labs: the Markdown of `../shared/labs/docs` and
//! the pattern checkout (`$FABDEX_LABS_PATTERNS`, else
//! `../labs-checkout/packages/patterns`). One client on loopback, one
//! keep-alive connection, sequential requests: the latency an author sees,
//! tool calls and HTML rendering included. Prints p50/p99/max per page type
//! against the 50 ms budget, and, for comparison, the two search tools
//! alone over the JSON API with the same questions (what a page cannot beat).
//! Skips, saying why, when labs is absent.
//!
//! Run: `cargo bench --bench web_ui [-- REQUESTS]` (default 200 per page type).

mod common;

use common::{Conn, percentile, spawn_http_server};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// The budget every page must meet.
const BUDGET: Duration = Duration::from_millis(50);

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

/// The labs folders, or why they are not there.
fn labs(root: &std::path::Path) -> Result<(PathBuf, PathBuf), String> {
    let docs = root.join("../shared/labs/docs");
    let patterns = std::env::var_os("FABDEX_LABS_PATTERNS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../labs-checkout/packages/patterns"));
    if !docs.is_dir() {
        return Err(format!("no labs docs at {}", docs.display()));
    }
    if !patterns.is_dir() {
        return Err(format!("no labs pattern checkout at {} (set FABDEX_LABS_PATTERNS)", patterns.display()));
    }
    Ok((docs.canonicalize().unwrap(), patterns.canonicalize().unwrap()))
}

/// Paths to request per page type, from the index itself.
fn pages(index: &std::path::Path, root: &std::path::Path) -> Vec<(&'static str, Vec<String>)> {
    let engine = fabdex_query::Engine::open_index(index).unwrap();
    let snapshot = engine.snapshot();
    let programs: Vec<_> = snapshot.patterns.programs.iter().filter(|p| p.has_source).collect();
    let sections: Vec<String> = snapshot.docs.sections.iter().map(|s| s.address.clone()).collect();
    let text = std::fs::read_to_string(root.join("tests/data/labs-pattern-tasks.json")).unwrap();
    let tasks: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let enc = fabdex_web::html::enc;
    let searches = tasks.iter().filter_map(|t| t["task"].as_str()).map(|t| format!("/search?q={}", enc(t))).collect();
    // Short lookups, as an author types them into a docs.rs-like box.
    let names =
        ["computed", "handler", "Writable", "Default", "wish", "pattern", "ifElse", "Stream", "llm", "fetchData"];
    let names = names.iter().map(|n| format!("/search?q={}", enc(n))).collect();
    // The judged docs questions, when ../shared/eval has them.
    let questions: Vec<String> = std::fs::read_to_string(root.join("../shared/eval/docs-qrels.dev.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Vec<serde_json::Value>>(&text).ok())
        .unwrap_or_default()
        .iter()
        .filter_map(|q| q["q"].as_str())
        .map(|q| format!("/search?q={}", enc(q)))
        .collect();
    let words = tasks
        .iter()
        .filter_map(|t| t["task"].as_str())
        .map(|t| format!("/search?q={}&ranking=words", enc(t)))
        .collect();
    let filtered = tasks
        .iter()
        .filter_map(|t| t["task"].as_str())
        .map(|t| format!("/search?q={}&scope=patterns&returns=items&kind=app", enc(t)))
        .collect();
    let href = |a: &str| fabdex_web::html::address_href(a).unwrap();
    let files = programs.iter().map(|p| fabdex_web::html::file_href(&p.pattern_id, &p.files[0].name)).collect();
    let doc_files: Vec<String> = sections
        .iter()
        .map(|a| href(a.split('#').next().unwrap()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    vec![
        ("home `/`", vec!["/".to_string()]),
        ("search, API names", names),
        ("search, docs questions", questions),
        ("search, pattern tasks", searches),
        ("search, pattern tasks, `ranking=words`", words),
        ("search, pattern tasks, patterns only with filters", filtered),
        ("pattern", programs.iter().map(|p| fabdex_web::html::pattern_href(&p.pattern_id)).collect()),
        ("file view", files),
        ("doc section", sections.iter().map(|a| href(a)).collect()),
        ("docs file", doc_files),
        ("run (no run)", vec!["/run".to_string()]),
        (
            "API `search_docs` alone (not a page)",
            tasks
                .iter()
                .map(|t| format!("POST /v1/tools/search_docs {}", serde_json::json!({"query": t["task"], "limit": 10})))
                .collect(),
        ),
        (
            "API `search_patterns` alone (not a page)",
            tasks
                .iter()
                .map(|t| {
                    format!("POST /v1/tools/search_patterns {}", serde_json::json!({"text": t["task"], "limit": 10}))
                })
                .collect(),
        ),
    ]
}

/// Whether a file of this name is anywhere under `dir`.
fn has_file(dir: &std::path::Path, name: &str) -> bool {
    std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| {
        let path = e.path();
        if path.is_dir() { has_file(&path, name) } else { e.file_name() == name }
    })
}

fn build_index(
    bin: &std::path::Path,
    config: &std::path::Path,
    index: &std::path::Path,
    docs: &std::path::Path,
    patterns: &std::path::Path,
) {
    let t = Instant::now();
    let built = Command::new(bin)
        .args(["--index", index.to_str().unwrap(), "index", "--config", config.to_str().unwrap(), "--json"])
        .env_remove("FABDEX_EMBEDDINGS")
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    println!("labs indexed in {:.1} s ({} + {})", t.elapsed().as_secs_f64(), docs.display(), patterns.display());
}

fn main() {
    let requests: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(200);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (docs, patterns) = match labs(&root) {
        Ok(found) => found,
        Err(why) => {
            println!("skipping the web UI bench: {why}");
            return;
        }
    };
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_fabdex"));
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("fabdex.toml");
    std::fs::write(
        &config,
        format!(
            "[[root]]\nname = \"docs\"\npath = {:?}\nkind = \"docs\"\norigin = \"docs\"\n\n\
             [[root]]\nname = \"patterns\"\npath = {:?}\nkind = \"patterns\"\norigin = \"local-registry\"\n",
            docs.display().to_string(),
            patterns.display().to_string()
        ),
    )
    .unwrap();
    // `$FABDEX_BENCH_WEB_INDEX`: an index folder kept between runs (built there when empty).
    let index =
        std::env::var_os("FABDEX_BENCH_WEB_INDEX").map(PathBuf::from).unwrap_or_else(|| tmp.path().join("index"));
    if index.join("CURRENT").is_file() {
        println!("reusing the labs index in {}", index.display());
    } else {
        build_index(&bin, &config, &index, &docs, &patterns);
    }
    let (mut server, addr) = spawn_http_server(
        Command::new(&bin)
            .args(["--index", index.to_str().unwrap(), "serve", "--http", "127.0.0.1:0"])
            .env_remove("FABDEX_SERVE_TOKEN"),
    );
    let embedded = has_file(&index, "embeddings.bin");
    println!(
        "sentence embeddings in the index: {}",
        if embedded { "yes (searches encode the question)" } else { "no" }
    );
    let mut conn = Conn::new(&addr);
    // The first search loads the ranking's vectors; not a page an author waits on twice.
    conn.get("/search?q=warm+up");

    // A server keeps the vectors of questions it has encoded (64 at most), so
    // a question asked again is cheaper: "first ask" is the worst of each
    // distinct page's first request, which no cache served.
    println!("\n| page | requests | p50 ms | p99 ms | max ms | first ask max ms | median KB | under 50 ms |");
    println!("|---|---:|---:|---:|---:|---:|---:|---|");
    let mut all_under = true;
    for (name, paths) in pages(&index, &root).into_iter().filter(|(_, paths)| !paths.is_empty()) {
        let mut samples = Vec::new();
        let mut sizes = Vec::new();
        for i in 0..requests {
            let path = &paths[i % paths.len()];
            let t = Instant::now();
            let (status, size) = match path.strip_prefix("POST ").and_then(|p| p.split_once(' ')) {
                Some((tool, body)) => conn.post(tool, body),
                None => conn.get(path),
            };
            samples.push(t.elapsed());
            assert_eq!(status, 200, "{path}");
            sizes.push(size);
        }
        sizes.sort();
        let max = *samples.iter().max().unwrap();
        let first_ask = *samples.iter().take(paths.len()).max().unwrap();
        all_under &= max < BUDGET || name.starts_with("API");
        println!(
            "| {name} | {requests} ({} distinct) | {} | {} | {} | {} | {:.1} | {} |",
            paths.len().min(requests),
            ms(percentile(&samples, 0.5)),
            ms(percentile(&samples, 0.99)),
            ms(max),
            ms(first_ask),
            sizes[sizes.len() / 2] as f64 / 1024.0,
            if max < BUDGET { "yes" } else { "**no**" }
        );
    }
    println!("\nevery page under {} ms: {}", BUDGET.as_millis(), if all_under { "yes" } else { "no" });
    let _ = server.kill();
    let _ = server.wait();
}
