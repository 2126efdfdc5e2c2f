//! `fabdex index` killed with SIGKILL at points spread over a whole build:
//! the published snapshot keeps answering exactly as before, and the next
//! build succeeds and equals a clean build of the same sources.

mod common;

use std::path::Path;
use std::time::Instant;

use common::{Workspace, current, reader_answers as answers};

/// Kills spread over the build's phases (walk, extract, tables, search
/// index, semantic fit, publish).
const KILLS: usize = 50;

fn index(ws: &Workspace, out: &Path) -> std::process::Child {
    common::fabdex_command()
        .current_dir(ws.dir.path())
        .args(["index", "--out"])
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_build_killed_at_random_points_loses_nothing() {
    let ws = Workspace::with_corpus();
    // Every build refits the semantic models (an incremental build would
    // otherwise fold the revision into the first fit, and rank a little
    // differently from the clean build this test ends with); the search
    // index is still updated in place of the published one's.
    let config = std::fs::read_to_string(ws.path("fabdex.toml")).unwrap();
    std::fs::write(ws.path("fabdex.toml"), format!("[index]\nsemantic_drift = 0.0\n\n{config}")).unwrap();
    let index_dir = ws.index_dir();
    assert!(index(&ws, &index_dir).wait().unwrap().success());
    let old_id = current(&index_dir);

    // Every build gets sources no build has seen (a numbered revision of one
    // document), so each has a whole new snapshot to make.
    let doc = ws.path("docs/tutorial/01-first-pattern.md");
    let original = std::fs::read_to_string(&doc).unwrap();
    let revise = |n: usize| {
        let section = format!("\n## Revision {n}\n\nEdit number {n}, made between builds.\n");
        std::fs::write(&doc, format!("{original}{section}")).unwrap();
    };

    // How long such a build takes here (warm caches): the kills are spread over it.
    revise(0);
    let started = Instant::now();
    assert!(index(&ws, &index_dir).wait().unwrap().success());
    let full = started.elapsed();
    let mut published = (current(&index_dir), answers(&ws, &index_dir));
    assert_ne!(published.0, old_id);

    // A fixed sequence of delays over 0..full (a linear congruential generator: reproducible).
    let mut state: u64 = 0x5eed;
    let mut finished = 0;
    for kill in 0..KILLS {
        revise(kill + 1);
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let fraction = (state >> 11) as f64 / (1u64 << 53) as f64;
        let mut child = index(&ws, &index_dir);
        std::thread::sleep(full.mul_f64(fraction));
        let _ = child.kill(); // SIGKILL on Unix
        child.wait().unwrap();
        let id = current(&index_dir);
        let seen = answers(&ws, &index_dir);
        if id == published.0 {
            assert_eq!(seen, published.1, "kill {kill}: the published snapshot answers as before");
        } else {
            // The build finished before its kill: the new snapshot is whole.
            finished += 1;
            published = (id, seen);
        }
    }
    assert!(finished < KILLS / 2, "most builds must be killed mid-way, not after: {finished} finished");

    // The next build succeeds and equals a clean build of the same sources.
    revise(KILLS + 1);
    assert!(index(&ws, &index_dir).wait().unwrap().success());
    let clean_dir = ws.path("clean-index");
    assert!(index(&ws, &clean_dir).wait().unwrap().success());
    assert_eq!(current(&index_dir), current(&clean_dir));
    assert_eq!(answers(&ws, &index_dir), answers(&ws, &clean_dir));
    // Killed builds' staging folders are left to the build's garbage collection
    // (after an hour), never in the way: the snapshots folder holds only
    // published snapshots, each of which opens.
    for entry in std::fs::read_dir(index_dir.join("snapshots")).unwrap() {
        let dir = entry.unwrap().path();
        if let Err(e) = fabdex_index::Snapshot::open_dir(&dir) {
            panic!("{} does not open: {e:#}", dir.display());
        }
    }
    eprintln!("{KILLS} kills over a {full:?} build ({finished} builds finished before their kill)");
}
