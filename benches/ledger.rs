//! Ledger bench: the cost of one durable append (lock, tail read, write,
//! fsync) against a bare buffered write of the same line, and the time to
//! verify a 10,000-record run against the time to just make its 10,000 reads.
//!
//! Run: `cargo bench --bench ledger` (indexes `corpus/` into a temp dir).

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use fabdex_index::{BuildOptions, Config};
use fabdex_ledger::{RunStore, Session};
use fabdex_query::Engine;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let config = Config::load(&root.join("fabdex.toml")).unwrap();
    fabdex_index::build(&config, &BuildOptions::new(tmp.path().join("index"))).unwrap();
    let engine = Engine::open_index(&tmp.path().join("index")).unwrap();
    let addresses: Vec<String> = engine.snapshot().docs.sections.iter().map(|s| s.address.clone()).collect();
    let n = 10_000;

    let store = RunStore::new(tmp.path().join("runs"));
    let run = store.new_run(Some(engine.snapshot_id())).unwrap().run;
    let mut session = Session::new(&engine);
    session.ledger = Some(store.ledger(&run).unwrap());
    let plain = Session::new(&engine);

    // Reads alone, then the same reads recorded.
    let t = Instant::now();
    for i in 0..n {
        std::hint::black_box(plain.read(&addresses[i % addresses.len()], None, Some(2000), None).unwrap());
    }
    let reads_alone = t.elapsed();
    let mut recorded = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        std::hint::black_box(session.read(&addresses[i % addresses.len()], None, Some(2000), None).unwrap());
        recorded.push(t.elapsed());
    }
    let total_recorded: Duration = recorded.iter().sum();

    // A bare write of the same lines: no lock, no fsync.
    let contents = store.ledger(&run).unwrap().read().unwrap();
    let lines: Vec<String> = contents.records.iter().map(|r| serde_json::to_string(r).unwrap()).collect();
    let mut bare = Vec::with_capacity(n);
    let mut file = std::io::BufWriter::new(std::fs::File::create(tmp.path().join("bare.jsonl")).unwrap());
    for l in &lines {
        let t = Instant::now();
        file.write_all(l.as_bytes()).unwrap();
        file.write_all(b"\n").unwrap();
        bare.push(t.elapsed());
    }
    file.flush().unwrap();

    let per_append = total_recorded.saturating_sub(reads_alone) / n as u32;
    println!("{n} reads of corpus sections, each recorded as one ledger record ({:.1} MB ledger)\n", {
        std::fs::metadata(&store.ledger(&run).unwrap().path).unwrap().len() as f64 / 1e6
    });
    println!("| append | per record |");
    println!("|---|---|");
    println!("| read + durable append (lock, tail, write, fsync), p50 | {} |", us(percentile(&mut recorded, 0.5)));
    println!("| read + durable append, p99 | {} |", us(percentile(&mut recorded, 0.99)));
    println!("| read alone (mean) | {} |", us(reads_alone / n as u32));
    println!("| durable append alone (mean, recorded − read) | {} |", us(per_append));
    println!(
        "| baseline: buffered write of the same line, no lock or fsync (mean) | {} |",
        us(bare.iter().sum::<Duration>() / n as u32)
    );

    let t = Instant::now();
    let contents = store.ledger(&run).unwrap().read().unwrap();
    let parse = t.elapsed();
    let t = Instant::now();
    let v = fabdex_ledger::audit::verify(&engine, &contents).unwrap();
    let verify = t.elapsed();
    assert!(v.ok() && v.identical == n);
    println!("\n| verify a {n}-record run | time |");
    println!("|---|---|");
    println!("| read and parse the ledger | {} ms |", parse.as_millis());
    println!("| verify every read (re-read, compare digests) | {} ms |", verify.as_millis());
    println!("| baseline: the same {n} reads alone | {} ms |", reads_alone.as_millis());
}
