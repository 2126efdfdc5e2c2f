//! One fabdex mirroring another over loopback: `fabdex serve --http` answers
//! the index service's endpoints from a snapshot, `fabdex index --from-index`
//! pulls every record into a second snapshot, and the records and reads come
//! out identical. Then the failures a pull must survive without touching the
//! published snapshot: a hanging server, a 500, an HTML error page, a refused
//! token.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::{Server, Workspace};
use fabdex_query::Engine;

fn serve(index: &Path, token: Option<&str>) -> Server {
    let mut cmd = common::fabdex_command();
    cmd.args(["--index", index.to_str().unwrap(), "serve", "--http", "127.0.0.1:0"])
        .stderr(Stdio::inherit())
        .env_remove("FABDEX_SERVE_TOKEN");
    if let Some(t) = token {
        cmd.env("FABDEX_SERVE_TOKEN", t);
    }
    Server::start(cmd)
}

fn pull(url: &str, out: &Path, token: Option<&str>, timeout: u64) -> std::process::Output {
    let mut cmd = common::fabdex_command();
    cmd.args(["index", "--from-index", url, "--out", out.to_str().unwrap(), "--timeout", &timeout.to_string()])
        .env_remove("FABDEX_INDEX_TOKEN");
    if let Some(t) = token {
        cmd.env("FABDEX_INDEX_TOKEN", t);
    }
    cmd.output().unwrap()
}

#[test]
fn a_mirror_pulled_over_loopback_has_identical_records_and_reads() {
    let ws = Workspace::with_registry();
    ws.build();
    let server = serve(&ws.index_dir(), None);
    let mirror = ws.path("mirror");
    let out = pull(&server.url, &mirror, None, 10);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let a = ws.engine();
    let b = Engine::open_index(&mirror).unwrap();
    let ids_a: Vec<&str> = a.snapshot().patterns.programs.iter().map(|p| p.pattern_id.as_str()).collect();
    let ids_b: Vec<&str> = b.snapshot().patterns.programs.iter().map(|p| p.pattern_id.as_str()).collect();
    assert_eq!(ids_a, ids_b);
    assert!(ids_a.len() >= 25, "{}", ids_a.len());
    let mut reads = 0;
    for id in ids_a {
        let ra = a.published_record(id, true).unwrap();
        let rb = b.published_record(id, true).unwrap();
        assert_eq!(ra, rb, "record {id}");
        let pa = a.inspect(id).unwrap();
        let pb = b.inspect(id).unwrap();
        assert_eq!(pa.identity.status, pb.identity.status, "{id}");
        assert_eq!(pb.origin, "remote-index");
        for f in a.pattern_files(id).unwrap().files {
            let ea = a.read(&f.address, None, Some(32_000)).unwrap();
            let eb = b.read(&f.address, None, Some(32_000)).unwrap();
            assert_eq!((ea.address, ea.digest, ea.text, ea.lines), (eb.address, eb.digest, eb.text, eb.lines));
            reads += 1;
        }
    }
    assert!(reads >= 30, "{reads}");
    // Source-tree programs arrive as verified published records.
    let inbox = a.inspect("patterns/mail/inbox.tsx").unwrap();
    let mirrored = b.inspect(&inbox.pattern_id).unwrap();
    assert_eq!(mirrored.identity.status, fabdex_model::ts::IdentityStatus::Verified);
    assert_eq!(mirrored.argument_schema, inbox.argument_schema);

    // Pulling the same records again publishes the same snapshot.
    let again = pull(&server.url, &mirror, None, 10);
    assert!(again.status.success());
    assert_eq!(Engine::open_index(&mirror).unwrap().snapshot_id(), b.snapshot_id());
}

#[test]
fn the_server_checks_tokens_bodies_and_ids() {
    let ws = Workspace::with_registry();
    ws.build();
    let server = serve(&ws.index_dir(), Some("s3cret"));
    let mirror = ws.path("mirror");
    let out = pull(&server.url, &mirror, None, 5);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("401") && err.contains("FABDEX_INDEX_TOKEN"), "{err}");
    assert!(!mirror.join("CURRENT").exists());
    let out = pull(&server.url, &mirror, Some("s3cret"), 5);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let post = |path: &str, body: &str| server.request_text("POST", path, body, Some("s3cret"));
    let (status, text) = post("/getPattern", r#"{"patternId":"nope"}"#);
    assert_eq!(status, 404, "{text}");
    assert!(text.contains("no pattern with id or alias `nope`"), "{text}");
    let (status, text) = post("/getPattern", "{not json");
    assert_eq!(status, 400, "{text}");
    let (status, _) = post("/listPatterns", r#"{"cursor":"bogus"}"#);
    assert_eq!(status, 400);
    let (status, _) = post("/nowhere", "{}");
    assert_eq!(status, 404);
    let big = format!("{{\"text\":\"{}\"}}", "a".repeat(2 * 1024 * 1024));
    let (status, _) = post("/searchPatterns", &big);
    assert_eq!(status, 413);
}

/// What a fake server answers to every request: raw HTTP, or `None` to hang.
type Responder = fn() -> Option<String>;

/// A loopback server that answers every request with `respond` (or never, if it returns None).
fn fake_server(respond: Responder) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                let _ = stream.read(&mut buf);
                match respond() {
                    Some(answer) => {
                        let _ = stream.write_all(answer.as_bytes());
                    }
                    None => std::thread::sleep(Duration::from_secs(60)),
                }
            });
        }
    });
    url
}

fn http(status: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn failed_pulls_name_the_failure_and_keep_the_published_snapshot() {
    let ws = Workspace::with_registry();
    let good = ws.build();
    let index = ws.index_dir();
    let current = || std::fs::read_to_string(index.join("CURRENT")).unwrap().trim().to_string();
    let cases: [(Responder, &str); 4] = [
        (|| None, "timeout"),
        (|| Some(http("500 Internal Server Error", "text/plain", "database on fire")), "HTTP 500"),
        (
            || Some(http("200 OK", "text/html", "<html><body><h1>Welcome to nginx</h1></body></html>")),
            "not the JSON expected",
        ),
        (|| Some(http("404 Not Found", "text/plain", "no such route")), "HTTP 404"),
    ];
    for (respond, expected) in cases {
        let url = fake_server(respond);
        let out = pull(&url, &index, None, 1);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{expected}");
        assert!(err.contains(expected), "expected `{expected}` in: {err}");
        assert!(err.contains(&url) && err.contains("the index was not changed"), "{err}");
        assert_eq!(current(), good.snapshot_id, "{expected}: the published snapshot stays");
    }
    // Retryable failures are retried before giving up.
    let url = fake_server(|| Some(http("503 Service Unavailable", "text/plain", "busy")));
    let err = String::from_utf8_lossy(&pull(&url, &index, None, 1).stderr).to_string();
    assert!(err.contains("after 3 attempts"), "{err}");
}
