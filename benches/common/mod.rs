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

/// The `p` quantile of some durations (nearest rank; the samples need not be sorted).
pub fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// One keep-alive HTTP/1.1 connection to a `fabdex serve --http`.
pub struct Conn {
    stream: std::io::BufReader<std::net::TcpStream>,
}

impl Conn {
    pub fn new(addr: &str) -> Conn {
        let s = std::net::TcpStream::connect(addr).unwrap();
        s.set_nodelay(true).unwrap();
        Conn { stream: std::io::BufReader::new(s) }
    }

    /// GET a page; its status and body length.
    pub fn get(&mut self, path: &str) -> (u16, usize) {
        use std::io::Write;
        write!(self.stream.get_mut(), "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        self.response()
    }

    /// POST a JSON body; its status and body length.
    pub fn post(&mut self, path: &str, body: &str) -> (u16, usize) {
        use std::io::Write;
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.stream.get_mut().write_all(req.as_bytes()).unwrap();
        self.response()
    }

    /// Read one response whole (by `Content-Length` or chunked): its status and body length.
    fn response(&mut self) -> (u16, usize) {
        use std::io::{BufRead, Read};
        let mut line = String::new();
        self.stream.read_line(&mut line).unwrap();
        let status = line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        let (mut length, mut chunked) = (0usize, false);
        loop {
            line.clear();
            self.stream.read_line(&mut line).unwrap();
            let lower = line.trim_end().to_ascii_lowercase();
            if lower.is_empty() {
                break;
            }
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            chunked |= lower.starts_with("transfer-encoding:") && lower.contains("chunked");
        }
        if !chunked {
            self.stream.read_exact(&mut vec![0u8; length]).unwrap();
            return (status, length);
        }
        let mut total = 0;
        loop {
            line.clear();
            self.stream.read_line(&mut line).unwrap();
            let size = usize::from_str_radix(line.trim(), 16).unwrap_or(0);
            self.stream.read_exact(&mut vec![0u8; size + 2]).unwrap();
            total += size;
            if size == 0 {
                return (status, total);
            }
        }
    }
}

/// Start `cmd` (a `fabdex … serve --http 127.0.0.1:0` command) and return
/// the server and the `host:port` from the line it prints when it listens.
pub fn spawn_http_server(cmd: &mut Command) -> (std::process::Child, String) {
    use std::io::{BufRead, BufReader};
    let mut server = cmd.stdout(Stdio::piped()).spawn().expect("the server starts");
    let mut line = String::new();
    BufReader::new(server.stdout.take().expect("piped stdout")).read_line(&mut line).expect("the listening line");
    let addr = line.trim().trim_start_matches("listening on http://").to_string();
    (server, addr)
}
