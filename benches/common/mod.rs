//! Helpers the bench binaries share: whole-process measurement and the
//! Markdown files of a tree.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Wall time and peak resident memory (KiB) of one process, which must succeed.
// The child is reaped by `wait4`, which also gives its own peak RSS.
#[allow(clippy::zombie_processes)]
pub fn measure(cmd: &mut Command) -> (Duration, u64) {
    let started = Instant::now();
    let child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn");
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting on our own child, with valid out-pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    let elapsed = started.elapsed();
    assert!(pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "{cmd:?} failed ({status})");
    (elapsed, usage.ru_maxrss as u64)
}

/// Every `.md` file under `dir` (not under `.git`).
pub fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let t = e.file_type().unwrap();
        if t.is_dir() && e.file_name() != ".git" {
            markdown_files(&e.path(), out);
        } else if t.is_file() && e.path().extension().is_some_and(|x| x == "md") {
            out.push(e.path());
        }
    }
}
