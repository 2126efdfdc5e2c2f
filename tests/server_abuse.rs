//! `fabdex serve --http` under abuse, on loopback, with bounded loops:
//! oversized and deeply nested bodies, slow clients holding connections, a
//! flood past the concurrency bound, wrong tokens, path-escaping addresses
//! and policy-denied reads. Every abuse gets a clear JSON error, honest
//! clients keep being served, the server's memory stays bounded, and no
//! denied text appears in any response or in the server's log.
//!
//! Run with `--nocapture` to see the figures (docs/reliability.md quotes them).

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Server, Workspace};
use serde_json::json;

const TOKEN: &str = "abuse-t0ken";
const CONCURRENCY: usize = 4;
const MAX_BODY: usize = 64 * 1024;

/// One request on a fresh connection: status and the whole response, or
/// what went wrong at the transport level.
fn send(addr: &str, method: &str, path: &str, body: &[u8], token: Option<&str>) -> Result<(u16, String), String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).map_err(|e| format!("write: {e}"))?;
    // A server that refuses a body (413) before reading it must still drain
    // it while it closes, or this write fails and the answer may be lost.
    stream.write_all(body).map_err(|e| format!("write: {e}"))?;
    let mut text = Vec::new();
    let _ = stream.read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text).into_owned();
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or(format!("no status in {text:?}"))?;
    Ok((status, text))
}

fn kind_of(response: &str) -> String {
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let start = body.find('{').unwrap_or(0);
    let end = body.rfind('}').map_or(body.len(), |e| e + 1);
    serde_json::from_str::<serde_json::Value>(&body[start..end])
        .ok()
        .and_then(|v| v["error"]["kind"].as_str().map(str::to_string))
        .unwrap_or_else(|| "ok".into())
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Outcomes of one abuse, by `status kind`.
#[derive(Default)]
struct Tally(BTreeMap<String, usize>);

impl Tally {
    fn add(&mut self, outcome: &Result<(u16, String), String>) {
        let key = match outcome {
            Ok((status, text)) if *status >= 400 && kind_of(text) == "ok" => format!("{status} (no JSON body)"),
            Ok((status, text)) => format!("{status} {}", kind_of(text)),
            Err(e) => format!("transport: {}", e.split(':').next().unwrap_or(e)),
        };
        *self.0.entry(key).or_default() += 1;
    }
    fn only(&self, key: &str) -> bool {
        self.0.keys().all(|k| k == key)
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(k, n)| format!("{n}× {k}")).collect();
        write!(f, "{}", parts.join(", "))
    }
}

fn search(addr: &str) -> Result<(u16, String), String> {
    let body = json!({"query": "how do I tell whether a wish found nothing"}).to_string();
    send(addr, "POST", "/v1/tools/search_docs", body.as_bytes(), Some(TOKEN))
}

#[test]
fn the_server_holds_under_abuse_and_leaks_no_denied_text() {
    let ws = Workspace::with_registry();
    ws.build();
    // The skills' text is withheld from this server's consumer.
    ws.deny_policy("skill");
    let log_path = ws.path("serve.log");
    let mut cmd = common::fabdex_command();
    cmd.args(["--index", ws.index_dir().to_str().unwrap(), "--runs", ws.path("runs").to_str().unwrap()])
        .args(["--policy", ws.path("policy.toml").to_str().unwrap()])
        .args(["serve", "--http", "127.0.0.1:0", "--max-concurrency", &CONCURRENCY.to_string()])
        .args(["--max-body-bytes", &MAX_BODY.to_string()])
        .env("FABDEX_SERVE_TOKEN", TOKEN)
        .env("RUST_LOG", "debug")
        .stderr(std::fs::File::create(&log_path).unwrap());
    let server = Server::start(cmd);
    let addr = server.addr().to_string();
    let pid = server.pid();
    assert_eq!(search(&addr).unwrap().0, 200);
    let rss_before = rss_kib(pid);
    let mut report = vec![format!("| abuse | requests | outcomes |"), "|---|---|---|".into()];

    oversized_bodies(&addr, &mut report);
    deep_nesting(&addr, &mut report);
    slow_clients(&addr, &mut report);
    flood(&addr, &mut report);
    wrong_tokens(&addr, &mut report);
    escaping_addresses(&addr, &mut report);
    let denied = denied_reads(&ws, &addr, &mut report);

    assert_eq!(search(&addr).unwrap().0, 200, "the server still answers after the abuse");
    let rss_after = rss_kib(pid);
    report.push(format!("| memory (VmRSS) | | {} MiB before, {} MiB after |", rss_before / 1024, rss_after / 1024));
    eprintln!("{}", report.join("\n"));
    assert!(rss_after < rss_before + 200 * 1024, "memory grew from {rss_before} KiB to {rss_after} KiB");
    drop(server);
    let log = std::fs::read_to_string(&log_path).unwrap();
    for text in &denied {
        assert!(!log.contains(text.as_str()), "the server's log holds denied text: {text}");
    }
}

/// Bodies past the limit, in one piece and as a lying Content-Length.
fn oversized_bodies(addr: &str, report: &mut Vec<String>) {
    let mut tally = Tally::default();
    let huge = format!("{{\"query\": \"{}\"}}", "x".repeat(32 * MAX_BODY));
    for _ in 0..20 {
        tally.add(&send(addr, "POST", "/v1/tools/search_docs", huge.as_bytes(), Some(TOKEN)));
    }
    // A client that announces a huge body and sends a little, then waits.
    for _ in 0..5 {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let head = format!(
            "POST /v1/tools/search_docs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 1000000000\r\n\r\n{{\"q"
        );
        s.write_all(head.as_bytes()).unwrap();
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        tally.add(&Ok((status, text)));
    }
    report.push(format!(
        "| bodies over {} KiB (20 of 2 MiB sent whole, 5 announcing 1 GB) | 25 | {tally} |",
        MAX_BODY / 1024
    ));
    assert!(tally.only("413 too-large"), "oversized bodies: {tally}");
}

/// JSON nested far deeper than any tool input, inside the size limit.
fn deep_nesting(addr: &str, report: &mut Vec<String>) {
    let mut tally = Tally::default();
    let depth = MAX_BODY / 2 - 16;
    let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let objects = format!("{}1{}", "{\"a\":".repeat(depth / 6), "}".repeat(depth / 6));
    for body in [&arrays, &objects] {
        for _ in 0..10 {
            tally.add(&send(addr, "POST", "/v1/tools/search_docs", body.as_bytes(), Some(TOKEN)));
        }
    }
    report.push(format!("| JSON nested {depth} deep (arrays, objects) | 20 | {tally} |"));
    assert!(tally.only("400 invalid-argument"), "deep nesting: {tally}");
}

/// Clients that open connections and send half a request, held while
/// honest clients are served.
fn slow_clients(addr: &str, report: &mut Vec<String>) {
    let held: Vec<TcpStream> = (0..200)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(b"POST /v1/tools/search_docs HTTP/1.1\r\nHost: x\r\nContent-Le").unwrap();
            s
        })
        .collect();
    let mut tally = Tally::default();
    let mut times = Vec::new();
    for _ in 0..50 {
        let started = Instant::now();
        tally.add(&search(addr));
        times.push(started.elapsed());
    }
    times.sort();
    report.push(format!(
        "| 200 connections holding half a request; 50 honest searches meanwhile | 50 | {tally}; honest p50 {:.1} ms, max {:.1} ms |",
        times[25].as_secs_f64() * 1e3,
        times[49].as_secs_f64() * 1e3
    ));
    assert!(tally.only("200 ok"), "honest clients behind slow ones: {tally}");
    // The server closes what never finishes its header (after 10 s).
    let started = Instant::now();
    let closed = held
        .into_iter()
        .filter(|s| {
            let mut s = s;
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            let mut rest = Vec::new();
            s.read_to_end(&mut rest).is_ok()
        })
        .count();
    report.push(format!(
        "| the 200 half-sent requests | 200 | {closed} closed by the server within {:.1} s |",
        started.elapsed().as_secs_f64()
    ));
    assert_eq!(closed, 200, "connections that never send their header are closed");
}

/// 32 clients at once against a bound of 4 requests in flight.
fn flood(addr: &str, report: &mut Vec<String>) {
    let started = Instant::now();
    let outcomes: Vec<Result<(u16, String), String>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..32).map(|_| s.spawn(|| (0..25).map(|_| search(addr)).collect::<Vec<_>>())).collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    let mut tally = Tally::default();
    outcomes.iter().for_each(|o| tally.add(o));
    report.push(format!(
        "| flood: 32 clients × 25 searches, {CONCURRENCY} in flight at most | 800 | {tally} in {:.1} s |",
        started.elapsed().as_secs_f64()
    ));
    assert!(tally.only("200 ok"), "a flood past the bound queues, it does not fail: {tally}");
}

fn wrong_tokens(addr: &str, report: &mut Vec<String>) {
    let mut tally = Tally::default();
    let body = json!({"address": "doc:docs/common/conventions/wish.md#result-shape"}).to_string();
    let mut wrong: Vec<String> = (0..TOKEN.len() + 2).map(|n| TOKEN.chars().take(n).collect()).collect();
    // (Not `"{TOKEN} "`: whitespace around a header value is not part of it, RFC 9110 §5.5.)
    wrong.extend(["ABUSE-T0KEN".into(), format!(" {TOKEN}x"), format!("{TOKEN}\u{0}"), "x".repeat(4096)]);
    wrong.retain(|t| t != TOKEN);
    for t in &wrong {
        tally.add(&send(addr, "POST", "/v1/tools/read", body.as_bytes(), Some(t)));
    }
    tally.add(&send(addr, "POST", "/v1/tools/read", body.as_bytes(), None));
    report.push(format!("| wrong or missing bearer tokens | {} | {tally} |", wrong.len() + 1));
    assert!(tally.0.keys().all(|k| k == "401 unauthorized" || k.starts_with("400")), "wrong tokens: {tally}");
    assert!(tally.0.get("401 unauthorized").is_some_and(|n| *n >= wrong.len() - 1), "wrong tokens: {tally}");
}

/// Addresses that try to leave the indexed roots.
fn escaping_addresses(addr: &str, report: &mut Vec<String>) {
    let mut tally = Tally::default();
    let addresses = [
        "doc:../../../../etc/passwd",
        "doc:docs/../../../../etc/passwd",
        "doc:docs/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "doc:/etc/passwd",
        "doc:docs/common/../../../etc/passwd#x",
        "pattern:../../../etc/passwd",
        "pattern:patterns/mail/inbox.tsx/../../../../etc/passwd",
        "doc:docs\\..\\..\\etc\\passwd",
    ];
    for a in addresses {
        let (status, text) =
            send(addr, "POST", "/v1/tools/read", json!({"address": a}).to_string().as_bytes(), Some(TOKEN)).unwrap();
        assert!(!text.contains("root:x:0:0"), "{a} read outside the roots");
        assert!((400..500).contains(&status), "{a}: {status} {text}");
        tally.add(&Ok((status, text)));
    }
    let body = json!({"pattern_id": "patterns/mail/inbox.tsx", "path": "../../../../etc/passwd"}).to_string();
    let outcome = send(addr, "POST", "/v1/tools/read_source", body.as_bytes(), Some(TOKEN)).unwrap();
    assert!(!outcome.1.contains("root:x:0:0") && (400..500).contains(&outcome.0), "{}", outcome.1);
    tally.add(&Ok(outcome));
    report.push(format!("| path-escaping addresses (`..`, encoded, absolute) | {} | {tally} |", addresses.len() + 1));
}

/// Every door to a withheld section: read, search, outline, related. Returns
/// the withheld lines, for the log check.
fn denied_reads(ws: &Workspace, addr: &str, report: &mut Vec<String>) -> Vec<String> {
    let engine = ws.engine();
    let outline = engine.outline("skills").unwrap();
    let skill = outline.sections.iter().max_by_key(|s| s.chars).unwrap().address.clone();
    let secret = engine.read(&skill, Some(0), None).unwrap().text;
    let lines: Vec<String> = secret.lines().map(str::trim).filter(|l| l.len() > 30).map(str::to_string).collect();
    assert!(!lines.is_empty(), "the withheld section has text to look for");
    let query = lines[0].split_whitespace().take(6).collect::<Vec<_>>().join(" ");
    let calls = [
        ("read", json!({"address": skill})),
        ("search_docs", json!({"query": query, "limit": 50})),
        ("outline", json!({"prefix": "skills"})),
        ("related", json!({"address": skill})),
        ("read", json!({"address": format!("{skill}@10"), "max_chars": 50})),
    ];
    let mut tally = Tally::default();
    for (tool, input) in &calls {
        let outcome = send(addr, "POST", &format!("/v1/tools/{tool}"), input.to_string().as_bytes(), Some(TOKEN));
        let text = &outcome.as_ref().unwrap().1;
        for line in &lines {
            assert!(!text.contains(line.as_str()), "{tool} answered withheld text: {line}");
        }
        tally.add(&outcome);
    }
    report
        .push(format!("| policy-denied section through read, search, outline, related | {} | {tally} |", calls.len()));
    // Search answers, with the withheld hits' text left out; the rest are refused.
    assert_eq!(tally.to_string(), "1× 200 ok, 4× 403 denied");
    lines
}
