//! Readers during publish: CLI processes and a running `serve --http` keep
//! searching while builds publish one new snapshot after another. Every
//! answer succeeds and comes whole from the snapshot it names, never a mix.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use common::{Server, Workspace};
use serde_json::json;

/// Snapshots published while the readers read.
const BUILDS: usize = 12;

/// What a reader saw: the snapshot an answer names, and the heading of its best hit.
type Seen = (String, String);

fn index(ws: &Workspace) {
    let out = common::fabdex_command()
        .current_dir(ws.dir.path())
        .arg("index")
        .arg("--out")
        .arg(ws.index_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn best(result: &serde_json::Value) -> Seen {
    let heading = result["hits"][0]["heading_path"].as_array().and_then(|p| p.last()).and_then(|h| h.as_str());
    (result["snapshot"].as_str().unwrap().to_string(), heading.unwrap_or("").to_string())
}

#[test]
fn readers_see_one_whole_snapshot_while_builds_publish() {
    let ws = Workspace::docs_only();
    let doc = ws.path("docs/tutorial/01-first-pattern.md");
    let original = std::fs::read_to_string(&doc).unwrap();
    // Each build's sources name their revision in a section only they have.
    let revise = move |n: usize| {
        let section = format!("\n## Revision {n}\n\nThe revisionmarker of edit number {n}.\n");
        std::fs::write(&doc, format!("{original}{section}")).unwrap();
    };
    revise(0);
    index(&ws);
    let current = || std::fs::read_to_string(ws.index_dir().join("CURRENT")).unwrap().trim().to_string();
    let published: Arc<Mutex<HashMap<String, usize>>> = Arc::new(Mutex::new(HashMap::from([(current(), 0)])));

    let mut cmd = common::fabdex_command();
    cmd.current_dir(ws.dir.path()).args([
        "--index",
        ws.index_dir().to_str().unwrap(),
        "serve",
        "--http",
        "127.0.0.1:0",
    ]);
    let server = Arc::new(Server::start(cmd));
    let done = Arc::new(AtomicBool::new(false));
    let query = json!({"query": "revisionmarker", "mode": "bm25", "limit": 3}).to_string();

    let seen: Vec<Seen> = std::thread::scope(|scope| {
        let http: Vec<_> = (0..2)
            .map(|_| {
                let (server, done, query) = (server.clone(), done.clone(), query.clone());
                scope.spawn(move || {
                    let mut seen = Vec::new();
                    while !done.load(Ordering::SeqCst) {
                        let (status, body) = server.request("POST", "/v1/tools/search_docs", &query, None);
                        assert_eq!(status, 200, "a reader failed during publish: {body}");
                        seen.push(best(&body));
                    }
                    seen
                })
            })
            .collect();
        let cli = {
            let done = done.clone();
            let ws = &ws;
            scope.spawn(move || {
                let mut seen = Vec::new();
                while !done.load(Ordering::SeqCst) {
                    let out = common::fabdex_command()
                        .current_dir(ws.dir.path())
                        .arg("--index")
                        .arg(ws.index_dir())
                        .args(["search", "docs", "revisionmarker", "--mode", "bm25", "--json", "--limit", "3"])
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "a CLI reader failed: {}", String::from_utf8_lossy(&out.stderr));
                    seen.push(best(&serde_json::from_slice(&out.stdout).unwrap()));
                }
                seen
            })
        };
        for n in 1..=BUILDS {
            revise(n);
            index(&ws);
            published.lock().unwrap().insert(current(), n);
        }
        done.store(true, Ordering::SeqCst);
        let mut seen: Vec<Seen> = http.into_iter().flat_map(|h| h.join().unwrap()).collect();
        seen.extend(cli.join().unwrap());
        seen
    });

    let published = published.lock().unwrap();
    assert_eq!(published.len(), BUILDS + 1, "each build published a snapshot of its own");
    for (snapshot, heading) in &seen {
        let revision =
            published.get(snapshot).unwrap_or_else(|| panic!("an answer names `{snapshot}`, never published"));
        assert_eq!(heading, &format!("Revision {revision}"), "an answer of {snapshot} holds another snapshot's text");
    }
    let distinct: std::collections::HashSet<&String> = seen.iter().map(|(s, _)| s).collect();
    assert!(distinct.len() >= 3, "the readers saw {} snapshots in {} answers", distinct.len(), seen.len());
    eprintln!("{} answers during {BUILDS} publishes, from {} snapshots", seen.len(), distinct.len());
}
