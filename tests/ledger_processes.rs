//! A run's ledger written by several `fabdex` processes at once, and by
//! processes killed with SIGKILL at random points: no record is lost or
//! interleaved, sequence numbers stay whole, and what a kill tears is
//! reported, never silently dropped or mixed into another record.

mod common;

use std::path::Path;

use common::Workspace;
use fabdex_ledger::RunStore;

/// A read recorded in the run's ledger: one record per call.
fn read_call(ws: &Workspace, run: &str) -> std::process::Command {
    let mut cmd = common::fabdex_command();
    cmd.current_dir(ws.dir.path())
        .arg("--index")
        .arg(ws.index_dir())
        .arg("--runs")
        .arg(ws.path("runs"))
        .args(["--run", run, "search", "docs", "wish result", "--limit", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    cmd
}

fn seqs(runs: &Path, run: &str) -> (Vec<u64>, Vec<String>) {
    let contents = RunStore::new(runs).ledger(run).unwrap().read().unwrap();
    (contents.records.iter().map(|r| r.seq).collect(), contents.problems.iter().map(|p| p.problem.clone()).collect())
}

#[test]
fn several_processes_append_without_losing_or_mixing_records() {
    let ws = Workspace::docs_only();
    ws.build();
    let run = RunStore::new(ws.path("runs")).new_run(None).unwrap().run;
    let (writers, calls) = (4, 10);
    std::thread::scope(|scope| {
        for _ in 0..writers {
            scope.spawn(|| {
                for _ in 0..calls {
                    assert!(read_call(&ws, &run).status().unwrap().success());
                }
            });
        }
    });
    let (seqs, problems) = seqs(&ws.path("runs"), &run);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(seqs, (1..=(writers * calls) as u64).collect::<Vec<_>>(), "one record per call, numbered in order");
}

#[test]
fn appends_killed_at_random_points_leave_the_rest_of_the_ledger_whole() {
    let ws = Workspace::docs_only();
    ws.build();
    let run = RunStore::new(ws.path("runs")).new_run(None).unwrap().run;
    // How long one recorded call takes: the kills are spread over it.
    let started = std::time::Instant::now();
    assert!(read_call(&ws, &run).status().unwrap().success());
    let call = started.elapsed();
    let mut state: u64 = 0xfab;
    let kills = 40;
    for _ in 0..kills {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let fraction = (state >> 11) as f64 / (1u64 << 53) as f64;
        // Two at once, so that a kill can also land while the other holds the lock.
        let mut a = read_call(&ws, &run).spawn().unwrap();
        let mut b = read_call(&ws, &run).spawn().unwrap();
        std::thread::sleep(call.mul_f64(fraction * 1.2));
        let _ = a.kill();
        a.wait().unwrap();
        b.wait().unwrap();
    }
    // A call after the kills appends as usual.
    assert!(read_call(&ws, &run).status().unwrap().success());
    let (seqs, problems) = seqs(&ws.path("runs"), &run);
    assert!(seqs.len() >= kills + 2, "every call that was not killed is recorded: {} records", seqs.len());
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "sequence numbers stay whole");
    // A kill in the middle of a write can tear its own line, and that line only.
    assert!(problems.len() <= kills, "{problems:?}");
    assert!(problems.iter().all(|p| p.contains("not a ledger record") || p.contains("torn last line")), "{problems:?}");
    eprintln!("{kills} kills: {} records, {} torn lines", seqs.len(), problems.len());
}
