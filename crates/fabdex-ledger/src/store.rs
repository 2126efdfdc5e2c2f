//! Runs and their ledgers on disk: `<runs>/<run id>/run.json` and
//! `<runs>/<run id>/ledger.jsonl`.
//!
//! An append takes an exclusive lock on the ledger file, reads the last
//! record's sequence number from the tail, writes one complete line and
//! syncs it before unlocking: appends from several processes never
//! interleave, and a record is on disk when `append` returns. A crash can
//! leave a torn last line (no newline, or not JSON); reading reports it with
//! its line number and every earlier record stays readable, and the next
//! append starts on a fresh line.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::record::{NewRecord, Record};

/// Where runs live.
#[derive(Debug, Clone)]
pub struct RunStore {
    pub dir: PathBuf,
}

/// `run.json`: when a run was made and on which snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunInfo {
    pub run: String,
    pub created: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub snapshot: Option<String>,
}

/// A run id: `[A-Za-z0-9._-]`, 1 to 100 chars, not `.` or `..`.
pub fn validate_run_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 100
        && id != "."
        && id != ".."
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !ok {
        bail!("run id `{id}` is not valid: use 1–100 ASCII letters, digits, `.`, `_` or `-`");
    }
    Ok(())
}

/// RFC 3339 UTC time with milliseconds.
pub fn now_rfc3339() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

impl RunStore {
    pub fn new(dir: impl Into<PathBuf>) -> RunStore {
        RunStore { dir: dir.into() }
    }

    /// Make a new run and return its id.
    pub fn new_run(&self, snapshot: Option<&str>) -> Result<RunInfo> {
        let created = now_rfc3339();
        let nonce = blake3::hash(
            format!("{created} {} {:?}", std::process::id(), SystemTime::now().duration_since(UNIX_EPOCH)).as_bytes(),
        );
        let stamp: String = created.chars().filter(char::is_ascii_digit).take(14).collect();
        let run = format!("run-{}T{}Z-{}", &stamp[..8], &stamp[8..], &nonce.to_hex()[..8]);
        let dir = self.dir.join(&run);
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create run folder `{}`", dir.display()))?;
        let info = RunInfo { run: run.clone(), created, snapshot: snapshot.map(str::to_string) };
        std::fs::write(dir.join("run.json"), serde_json::to_vec_pretty(&info)?)?;
        File::create(dir.join("ledger.jsonl"))?;
        Ok(info)
    }

    /// The ledger of an existing run.
    pub fn ledger(&self, run: &str) -> Result<Ledger> {
        validate_run_id(run)?;
        let path = self.dir.join(run).join("ledger.jsonl");
        if !path.exists() {
            bail!("no run `{run}` in `{}` (make one with `fabdex run new`)", self.dir.display());
        }
        Ok(Ledger { path, run: run.to_string() })
    }

    /// Every run id, sorted.
    pub fn runs(&self) -> Vec<String> {
        let mut runs: Vec<String> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("ledger.jsonl").exists())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        runs.sort();
        runs
    }
}

/// One run's append-only ledger.
#[derive(Debug, Clone)]
pub struct Ledger {
    pub path: PathBuf,
    pub run: String,
}

/// A line of the ledger that is not a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LineProblem {
    pub line: u64,
    pub problem: String,
}

/// Everything readable in a ledger, and what is not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Contents {
    pub run: String,
    pub records: Vec<Record>,
    /// Lines that are not records (a torn last line after a crash, say).
    pub problems: Vec<LineProblem>,
}

/// The last complete line's sequence number, and whether the file ends in a
/// torn (newline-less) line.
fn tail_state(file: &mut File) -> Result<(u64, bool)> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok((0, false));
    }
    let mut window = 4096u64.min(len);
    loop {
        file.seek(SeekFrom::Start(len - window))?;
        let mut buf = vec![0u8; window as usize];
        file.read_exact(&mut buf)?;
        let torn = buf.last() != Some(&b'\n');
        // Complete lines in the window, last first; the first may be partial
        // unless the window starts the file.
        let body = if torn {
            match buf.iter().rposition(|b| *b == b'\n') {
                Some(i) => &buf[..=i],
                None if window == len => &buf[..0],
                None => {
                    window = (window * 2).min(len);
                    continue;
                }
            }
        } else {
            &buf[..]
        };
        let lines: Vec<&[u8]> = body.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect();
        let usable = if window == len { lines.len() } else { lines.len().saturating_sub(1) };
        for line in lines.iter().rev().take(usable) {
            if let Ok(r) = serde_json::from_slice::<SeqOnly>(line) {
                return Ok((r.seq, torn));
            }
        }
        if window == len {
            return Ok((0, torn));
        }
        window = (window * 2).min(len);
    }
}

#[derive(Deserialize)]
struct SeqOnly {
    seq: u64,
}

impl Ledger {
    /// Append one record; returns it with its sequence number and time.
    pub fn append(&self, new: NewRecord) -> Result<Record> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&self.path)
            .with_context(|| format!("cannot open ledger `{}`", self.path.display()))?;
        file.lock().with_context(|| format!("cannot lock ledger `{}`", self.path.display()))?;
        let result = (|| -> Result<Record> {
            let (last, torn) = tail_state(&mut file)?;
            let record = Record { seq: last + 1, time: now_rfc3339(), run: self.run.clone(), call: new };
            let mut line = Vec::with_capacity(512);
            if torn {
                line.push(b'\n');
            }
            serde_json::to_writer(&mut line, &record)?;
            line.push(b'\n');
            file.write_all(&line)?;
            file.sync_data()?;
            Ok(record)
        })();
        let _ = file.unlock();
        result.with_context(|| format!("cannot append to ledger `{}`", self.path.display()))
    }

    /// Every record, and every line that is not one.
    pub fn read(&self) -> Result<Contents> {
        let bytes = std::fs::read(&self.path).with_context(|| format!("cannot read `{}`", self.path.display()))?;
        let mut contents = Contents { run: self.run.clone(), records: Vec::new(), problems: Vec::new() };
        let ends_clean = bytes.last().is_none_or(|b| *b == b'\n');
        let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
        let count = lines.len();
        for (i, line) in lines.into_iter().enumerate() {
            let last = i + 1 == count;
            if line.is_empty() {
                continue;
            }
            if last && !ends_clean {
                contents.problems.push(LineProblem {
                    line: i as u64 + 1,
                    problem: format!("torn last line ({} bytes, no newline): an append was interrupted", line.len()),
                });
                continue;
            }
            match serde_json::from_slice::<Record>(line) {
                Ok(r) => contents.records.push(r),
                Err(e) => contents
                    .problems
                    .push(LineProblem { line: i as u64 + 1, problem: format!("not a ledger record: {e}") }),
            }
        }
        Ok(contents)
    }
}

/// The runs folder for an index directory, unless `FABDEX_RUNS` says otherwise.
pub fn default_runs_dir(index_dir: &Path) -> PathBuf {
    index_dir.join("runs")
}
