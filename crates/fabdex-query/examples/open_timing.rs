//! Where the time of opening an index goes, step by step (the floor of every
//! CLI call): `cargo run --release -p fabdex-query --example open_timing -- INDEX`.
use std::time::Instant;

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("usage: open_timing INDEX"));
    let current = std::fs::read_to_string(dir.join("CURRENT")).expect("a published index");
    let snapshot = dir.join("snapshots").join(current.trim());
    let lap = |what: &str, t: Instant| println!("{what:<24} {:>8.2} ms", t.elapsed().as_secs_f64() * 1e3);

    let t = Instant::now();
    let manifest = std::fs::read(snapshot.join("manifest.json")).unwrap();
    let _: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    lap("read manifest", t);
    let t = Instant::now();
    let bytes = std::fs::read(snapshot.join(fabdex_snapshot::docs_table::PATH)).unwrap();
    lap("read docs table", t);
    let t = Instant::now();
    let _ = fabdex_model::digest::digest_bytes(&bytes);
    lap("digest docs table", t);
    let t = Instant::now();
    let docs = fabdex_snapshot::docs_table::decode(bytes).unwrap();
    lap("open docs table", t);
    let t = Instant::now();
    docs.decode_all().unwrap();
    lap("decode every row", t);
    let t = Instant::now();
    let snap = fabdex_snapshot::Snapshot::open(&dir).unwrap();
    lap("Snapshot::open (all)", t);
    let t = Instant::now();
    let engine = fabdex_query::Engine::from_snapshot(snap).unwrap();
    lap("Engine::from_snapshot", t);
    if !engine.snapshot().patterns.programs.is_empty() {
        let t = Instant::now();
        engine.snapshot().semantic().unwrap();
        lap("semantic models", t);
        let t = Instant::now();
        engine.snapshot().patterns.programs.decode_all().unwrap();
        lap("decode program rows", t);
        let t = Instant::now();
        engine.snapshot().patterns.files.decode_all().unwrap();
        lap("decode file rows", t);
        let ask = fabdex_query::PatternQuery { text: "todo list".into(), ..Default::default() };
        let t = Instant::now();
        engine.search_patterns(&ask).unwrap();
        lap("first pattern search", t);
        let t = Instant::now();
        engine.search_patterns(&ask).unwrap();
        lap("second pattern search", t);
        return;
    }
    let t = Instant::now();
    engine.snapshot().search().unwrap();
    lap("search index (checked)", t);
    let t = Instant::now();
    engine.snapshot().semantic().unwrap();
    lap("semantic models", t);
    let ask = |q: &str| fabdex_query::SearchDocs {
        query: q.into(),
        limit: None,
        path_prefix: None,
        include_history: false,
        mode: None,
    };
    let t = Instant::now();
    engine.search_docs(&ask("what does wish return when nothing matches")).unwrap();
    lap("first search", t);
    let t = Instant::now();
    engine.search_docs(&ask("how do I show a list of items")).unwrap();
    lap("second search", t);
    std::mem::forget(engine);
}
