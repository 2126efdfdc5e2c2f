//! Research bench: fabdex's own overhead per model turn (the opening pass,
//! tool calls through the registry, ledger appends with fsync, admission,
//! the outcome written) against the scripted model's bare HTTP round trip,
//! measured in the same run. The research calls play the bundled inbox
//! script (3 turns) against a scripted model on loopback; the baseline then
//! replays exactly the request bodies those calls sent, with the same HTTP
//! client, to a fresh scripted model, so the difference is fabdex's own work.
//!
//! Run: `cargo bench --bench research` (indexes `corpus/` into a temp dir).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fabdex_index::{BuildOptions, Config};
use fabdex_query::Engine;
use fabdex_research::{Client, Endpoint, Grants, Request, Service};
use fabdex_scripted::{Script, ScriptedServer};

const CALLS: usize = 40;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let config = Config::load(&root.join("fabdex.toml")).unwrap();
    fabdex_index::build(&config, &BuildOptions::new(tmp.path().join("index"))).unwrap();
    let engine = Engine::open_index(&tmp.path().join("index")).unwrap();
    let script = Script::load(&root.join("corpus/research/inbox-model.json")).unwrap();
    let grants = Grants::load(&root.join("corpus/research/mail-grant.json")).unwrap();

    // Research calls, each on a fresh scripted model (the script starts over).
    let mut per_turn = Vec::with_capacity(CALLS);
    let mut bodies = Vec::new();
    let mut turns = 0;
    for _ in 0..CALLS {
        let server = ScriptedServer::start(script.clone()).unwrap();
        let svc = Service {
            engine: &engine,
            store: fabdex_ledger::RunStore::new(tmp.path().join("runs")),
            policy: None,
            client: Client::new(Endpoint::new(&server.base_url, "scripted")).unwrap(),
            model_label: "scripted".into(),
        };
        let mut request = Request::new("give me a simple list view of my email inbox");
        request.grants = grants.clone();
        let t = Instant::now();
        let outcome = fabdex_research::research(&svc, &request).unwrap();
        let wall = t.elapsed();
        assert_eq!(outcome.status, fabdex_kit::KitStatus::Complete);
        turns = outcome.spent.turns as usize;
        per_turn.push(wall / turns as u32);
        bodies = server.received().into_iter().map(|r| r.body).collect();
    }

    // The bare round trips of the same requests.
    let http = reqwest::blocking::Client::new();
    let mut round_trips = Vec::with_capacity(CALLS * turns);
    let mut per_call_rt = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let server = ScriptedServer::start(script.clone()).unwrap();
        let url = format!("{}/chat/completions", server.base_url);
        let mut sum = Duration::ZERO;
        for body in &bodies {
            let t = Instant::now();
            let text = http.post(&url).json(body).send().unwrap().text().unwrap();
            let d = t.elapsed();
            std::hint::black_box(text);
            round_trips.push(d);
            sum += d;
        }
        per_call_rt.push(sum / turns as u32);
    }

    let turn_p50 = percentile(&mut per_turn, 0.5);
    let turn_p99 = percentile(&mut per_turn, 0.99);
    let rt_p50 = percentile(&mut per_call_rt, 0.5);
    let rt_p99 = percentile(&mut per_call_rt, 0.99);
    let overhead = turn_p50.saturating_sub(rt_p50);
    println!("research bench: {CALLS} research calls of {turns} turns on corpus/, scripted model on loopback\n");
    println!("| per model turn | p50 | p99 |");
    println!("|---|---|---|");
    println!(
        "| scripted model round trip alone (baseline: the same request bodies) | {} | {} |",
        ms(rt_p50),
        ms(rt_p99)
    );
    println!("| a research turn, everything included | {} | {} |", ms(turn_p50), ms(turn_p99));
    println!("| fabdex's own overhead (turn − round trip, p50) | {} | |", ms(overhead));
    println!(
        "\noverhead / round trip: {:.2}× (request bodies {}–{} KB)",
        overhead.as_secs_f64() / rt_p50.as_secs_f64().max(1e-9),
        bodies.iter().map(|b| b.to_string().len()).min().unwrap_or(0) / 1024,
        bodies.iter().map(|b| b.to_string().len()).max().unwrap_or(0) / 1024
    );
    let mut all = round_trips;
    println!("single round trips: p50 {} p99 {}", ms(percentile(&mut all, 0.5)), ms(percentile(&mut all, 0.99)));
}
