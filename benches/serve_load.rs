//! HTTP load bench: 16 concurrent clients on loopback for 20 s of mixed
//! `search_docs`, `search_patterns`, `read` and `read_source` calls against
//! `fabdex serve --http`. Prints throughput, p50/p99 latency, errors, and the
//! server's resident memory at start, after warm-up and at the end.
//!
//! Run: `cargo bench --bench serve_load [-- SECONDS CLIENTS]` (indexes
//! `corpus/` into a temp dir; uses the release `fabdex` binary, built first).

mod common;

use common::{Conn, spawn_http_server};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let seconds: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(20);
    let clients: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(16);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new("cargo").args(["build", "--release", "--quiet", "-p", "fabdex"]).status().unwrap();
    assert!(status.success());
    let bin = root.join("target/release/fabdex");
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("index");
    let ok = Command::new(&bin)
        .current_dir(&root)
        .args(["index", "--out", index.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(ok.status.success());
    let (mut server, addr) = spawn_http_server(Command::new(&bin).args([
        "--index",
        index.to_str().unwrap(),
        "serve",
        "--http",
        "127.0.0.1:0",
        "--max-concurrency",
        "64",
    ]));
    let pid = server.id();
    let rss_start = rss_kb(pid);

    // Addresses to read, from the server itself.
    let engine = fabdex_query::Engine::open_index(&index).unwrap();
    let docs: Vec<String> = engine.snapshot().docs.sections.iter().map(|s| s.address.clone()).collect();
    let sources: Vec<(String, String)> = engine
        .snapshot()
        .patterns
        .programs
        .iter()
        .filter(|p| p.has_source)
        .flat_map(|p| p.files.iter().map(move |f| (p.pattern_id.clone(), f.name.clone())))
        .collect();
    let queries = ["wish result", "handler stream", "how do I test a pattern", "Default values", "computed", "inbox"];
    let request = |i: usize| -> (String, String) {
        match i % 4 {
            0 => (
                "/v1/tools/search_docs".into(),
                format!("{{\"query\":\"{}\",\"limit\":5}}", queries[i % queries.len()]),
            ),
            1 => ("/v1/tools/search_patterns".into(), format!("{{\"text\":\"{}\"}}", queries[i % queries.len()])),
            2 => ("/v1/tools/read".into(), format!("{{\"address\":\"{}\",\"max_chars\":4000}}", docs[i % docs.len()])),
            _ => {
                let (id, path) = &sources[i % sources.len()];
                ("/v1/tools/read_source".into(), format!("{{\"pattern_id\":\"{id}\",\"path\":\"{path}\"}}"))
            }
        }
    };

    let run_for = |duration: Duration| -> (Vec<Duration>, usize) {
        let start = Instant::now();
        let results: Vec<(Vec<Duration>, usize)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..clients)
                .map(|c| {
                    let addr = addr.clone();
                    let request = &request;
                    scope.spawn(move || {
                        let mut conn = Conn::new(&addr);
                        let mut lat = Vec::new();
                        let mut errors = 0;
                        let mut i = c * 7919;
                        while start.elapsed() < duration {
                            let (path, body) = request(i);
                            let t = Instant::now();
                            if conn.post(&path, &body).0 != 200 {
                                errors += 1;
                            }
                            lat.push(t.elapsed());
                            i += 1;
                        }
                        (lat, errors)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let errors = results.iter().map(|r| r.1).sum();
        (results.into_iter().flat_map(|r| r.0).collect(), errors)
    };

    let _ = run_for(Duration::from_secs(2));
    let rss_warm = rss_kb(pid);
    let t = Instant::now();
    let (mut lat, errors) = run_for(Duration::from_secs(seconds));
    let elapsed = t.elapsed();
    let rss_end = rss_kb(pid);
    lat.sort();
    let p = |q: f64| lat[((lat.len() as f64 - 1.0) * q).round() as usize];
    println!("{clients} clients × {seconds} s on loopback, mixed search_docs / search_patterns / read / read_source\n");
    println!("| calls | errors | calls/s | p50 | p99 | max |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| {} | {errors} | {:.0} | {:.2} ms | {:.2} ms | {:.2} ms |",
        lat.len(),
        lat.len() as f64 / elapsed.as_secs_f64(),
        p(0.5).as_secs_f64() * 1e3,
        p(0.99).as_secs_f64() * 1e3,
        lat.last().unwrap().as_secs_f64() * 1e3
    );
    println!(
        "\nserver RSS: {} MB at start, {} MB after warm-up, {} MB at the end",
        rss_start / 1024,
        rss_warm / 1024,
        rss_end / 1024
    );
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(errors, 0, "every call must succeed");
}
