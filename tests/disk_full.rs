//! `fabdex index` on a filesystem that fills up: the build fails with an
//! error naming the file it could not write and the cause, the published
//! snapshot keeps answering exactly as before, the failed build leaves no
//! staging behind, and later builds on the same filesystem succeed.
//!
//! The filesystem is a tmpfs the test mounts (sized from a probe build), so
//! the test needs the right to mount; it skips, saying why, without it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Workspace, current, reader_answers as answers};

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, kib: u64) -> Result<Tmpfs, String> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn index(ws: &Workspace, out: &Path) -> std::process::Output {
    common::fabdex_command().current_dir(ws.dir.path()).args(["index", "--out"]).arg(out).output().unwrap()
}

/// Bytes of every file under `dir`.
fn size(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() { size(&entry.path()) } else { meta.len() };
    }
    total
}

/// `bytes` of Markdown that no other build has seen: sections of words
/// drawn by a fixed generator (reproducible, and not compressible into
/// nothing by the index).
fn big_document(bytes: usize) -> String {
    let mut state: u64 = 0xd15c;
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let mut text = String::from("# A very large page\n\n");
    let mut section = 0;
    while text.len() < bytes {
        section += 1;
        text.push_str(&format!("\n## Part {section}\n\n"));
        for _ in 0..400 {
            let len = 3 + next() % 7;
            let word: String = (0..len).map(|_| (b'a' + (next() % 26) as u8) as char).collect();
            text.push_str(&word);
            text.push(' ');
        }
        text.push('\n');
    }
    text
}

#[test]
fn a_build_that_fills_the_disk_fails_clearly_and_loses_nothing() {
    let ws = Workspace::with_corpus();
    // How much a build of these sources takes, measured off the small filesystem.
    let probe = ws.path("probe-index");
    assert!(index(&ws, &probe).status.success());
    let needed = size(&probe);
    // Room for two builds (the published one and the next) and 512 KiB
    // more: a 4 MB page (under the size limit for a file) cannot fit.
    let kib = 2 * needed / 1024 + 512;
    let fs = match Tmpfs::mount(&ws.path("small"), kib) {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("skipping the disk-full test: cannot mount a {kib} KiB tmpfs ({why})");
            return;
        }
    };
    let index_dir = fs.0.join("index");
    let first = index(&ws, &index_dir);
    assert!(first.status.success(), "the first build fits: {}", String::from_utf8_lossy(&first.stderr));
    let published = current(&index_dir);
    let before = answers(&ws, &index_dir);

    std::fs::write(ws.path("docs/huge.md"), big_document(4 << 20)).unwrap();
    let full = index(&ws, &index_dir);
    let stderr = String::from_utf8_lossy(&full.stderr);
    assert!(!full.status.success(), "a build larger than the disk cannot succeed");
    assert!(
        stderr.contains("No space left on device") && stderr.contains(&index_dir.display().to_string()),
        "the error names the file and the cause: {stderr}"
    );
    assert_eq!(current(&index_dir), published, "the published snapshot is still the old one");
    assert_eq!(answers(&ws, &index_dir), before, "the old snapshot answers as before");
    let staging: Vec<_> = std::fs::read_dir(index_dir.join("staging")).map(|d| d.collect()).unwrap_or_default();
    assert!(staging.is_empty(), "the failed build left staging behind: {staging:?}");

    // The disk has room again once the page is gone: same sources, same snapshot.
    std::fs::remove_file(ws.path("docs/huge.md")).unwrap();
    assert!(index(&ws, &index_dir).status.success());
    assert_eq!(current(&index_dir), published);
    assert_eq!(answers(&ws, &index_dir), before);

    // And a real change still publishes on the nearly full filesystem.
    let doc = ws.path("docs/tutorial/01-first-pattern.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    std::fs::write(&doc, format!("{text}\n## After the disk filled\n\nA small edit.\n")).unwrap();
    let after = index(&ws, &index_dir);
    assert!(after.status.success(), "{}", String::from_utf8_lossy(&after.stderr));
    assert_ne!(current(&index_dir), published);
}

/// The extraction cache holds one entry per current source: the versions
/// of an edited file and the files removed since do not pile up.
#[test]
fn the_extraction_cache_keeps_only_current_sources() {
    let ws = Workspace::with_corpus();
    let index_dir = ws.index_dir();
    let entries = || fabdex_index::cache::entry_counts(&index_dir.join("cache")).iter().map(|(_, n)| n).sum::<usize>();
    assert!(index(&ws, &index_dir).status.success());
    let first = entries();
    let doc = ws.path("docs/tutorial/01-first-pattern.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    for n in 0..3 {
        std::fs::write(&doc, format!("{text}\n## Edit {n}\n\nOne more.\n")).unwrap();
        assert!(index(&ws, &index_dir).status.success());
    }
    assert_eq!(entries(), first, "three edits of one file leave one entry for it");
    std::fs::remove_file(ws.path("docs/tutorial/02-state-and-events.md")).unwrap();
    assert!(index(&ws, &index_dir).status.success());
    assert_eq!(entries(), first - 1, "a removed file's entry goes");
}
