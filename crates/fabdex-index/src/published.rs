//! Published pattern records: JSON lines in the index service's `Pattern`
//! shape, read from a `published` root (one `.jsonl` file, or a folder of them).
//!
//! A feed is machine-written, so a line that is not a valid record, or a
//! second record with the same pattern id, fails the build with the file and
//! line: indexing a silently thinned feed would be worse than indexing none.
//! Everything that is wrong *inside* a valid record (no program, a missing
//! main, an import that resolves to no file, an odd file name) is indexed and
//! stated on the record instead.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use fabdex_model::digest_bytes;
use fabdex_model::registry::PublishedPattern;

use crate::config::RootConfig;

/// One record and where it was read.
#[derive(Debug, Clone)]
pub struct RecordLine {
    /// File name relative to the root (the root's own name when the root is a file).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    pub record: PublishedPattern,
}

/// Every record of one `published` root, and the digest of each file read.
#[derive(Debug, Default)]
pub struct PublishedSet {
    pub records: Vec<RecordLine>,
    /// `(file, digest)` of every feed file, for the snapshot id.
    pub files: Vec<(String, String)>,
    pub path: PathBuf,
}

/// The feed files of a root: the file itself, or every `*.jsonl` under the folder, in name order.
fn feed_files(root: &RootConfig) -> Result<Vec<(String, PathBuf)>> {
    if root.path.is_file() {
        let name = root.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return Ok(vec![(name, root.path.clone())]);
    }
    let mut out = Vec::new();
    for entry in ignore::WalkBuilder::new(&root.path).standard_filters(false).follow_links(false).build() {
        let entry = entry.with_context(|| format!("root `{}`: cannot walk `{}`", root.name, root.path.display()))?;
        let is_feed = entry.file_type().is_some_and(|t| t.is_file())
            && entry.path().extension().is_some_and(|e| e == "jsonl" || e == "ndjson");
        if is_feed {
            let rel = entry.path().strip_prefix(&root.path).unwrap_or(entry.path());
            out.push((rel.to_string_lossy().replace('\\', "/"), entry.path().to_path_buf()));
        }
    }
    out.sort();
    Ok(out)
}

/// A pattern id is used in addresses (`pattern:<id>/<path>`) and file keys:
/// it may not be empty, contain `/`, `#`, `:`, `@`, whitespace or control characters, or be
/// longer than 200 bytes.
pub fn validate_pattern_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("empty patternId".into());
    }
    if id.len() > 200 {
        return Err(format!("patternId is {} bytes long (at most 200)", id.len()));
    }
    if let Some(c) = id.chars().find(|c| matches!(c, '/' | '#' | ':' | '@') || c.is_whitespace() || c.is_control()) {
        return Err(format!("patternId `{}` contains {c:?}", id.escape_debug()));
    }
    Ok(())
}

/// Parse JSON lines into records. `name` is used in errors (`name:line: …`).
pub fn parse_records(name: &str, text: &str) -> Result<Vec<RecordLine>> {
    let mut out = Vec::new();
    let mut first_line: HashMap<String, u32> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let mut record: PublishedPattern = serde_json::from_str(trimmed)
            .map_err(|e| anyhow::anyhow!("{name}:{line_no}: not a valid pattern record: {e}"))?;
        record.pattern_id = record.pattern_id.trim().trim_start_matches("cf:pattern:").to_string();
        validate_pattern_id(&record.pattern_id).map_err(|e| anyhow::anyhow!("{name}:{line_no}: {e}"))?;
        if let Some(first) = first_line.insert(record.pattern_id.clone(), line_no) {
            bail!("{name}:{line_no}: duplicate patternId `{}` (first at line {first})", record.pattern_id);
        }
        out.push(RecordLine { file: name.to_string(), line: line_no, record });
    }
    Ok(out)
}

/// Read every record of a `published` root.
pub fn read_root(root: &RootConfig) -> Result<PublishedSet> {
    let mut set = PublishedSet { path: root.path.clone(), ..Default::default() };
    let mut first_seen: HashMap<String, (String, u32)> = HashMap::new();
    for (name, path) in feed_files(root)? {
        let bytes = std::fs::read(&path).with_context(|| format!("root `{}`: cannot read `{name}`", root.name))?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| anyhow::anyhow!("root `{}`: `{name}` is not UTF-8 ({e})", root.name))?;
        let display = format!("{}/{name}", root.name);
        for r in parse_records(&display, text)? {
            if let Some((file, line)) = first_seen.get(&r.record.pattern_id) {
                bail!(
                    "{display}:{}: duplicate patternId `{}` (first at {}/{file}:{line})",
                    r.line,
                    r.record.pattern_id,
                    root.name
                );
            }
            first_seen.insert(r.record.pattern_id.clone(), (name.clone(), r.line));
            set.records.push(RecordLine { file: name.clone(), ..r });
        }
        set.files.push((name, digest_bytes(&bytes)));
    }
    Ok(set)
}

/// Whether a published file name is TypeScript or JavaScript source that the
/// extractor reads; other files (JSON data, say) are kept as bytes only.
pub fn is_source_name(name: &str) -> bool {
    let ext = Path::new(name).extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    matches!(ext.as_str(), "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_lines_and_duplicates_name_their_line() {
        let ok = r#"{"patternId":"a1","description":"x"}"#;
        let err = format!("{:#}", parse_records("feed.jsonl", &format!("{ok}\n\n{{\"patternId\": 3}}\n")).unwrap_err());
        assert!(err.starts_with("feed.jsonl:3: not a valid pattern record"), "{err}");
        let err = format!("{:#}", parse_records("feed.jsonl", &format!("{ok}\n{ok}\n")).unwrap_err());
        assert_eq!(err, "feed.jsonl:2: duplicate patternId `a1` (first at line 1)");
        let err = format!("{:#}", parse_records("f", r#"{"patternId":"a/b"}"#).unwrap_err());
        assert!(err.starts_with("f:1: patternId `a/b` contains '/'"), "{err}");
        let err = format!("{:#}", parse_records("f", "not json").unwrap_err());
        assert!(err.starts_with("f:1: not a valid pattern record"), "{err}");
        let records = parse_records("f", &format!("{ok}\n{}\n", ok.replace("a1", "cf:pattern:b2"))).unwrap();
        assert_eq!(
            records.iter().map(|r| (r.record.pattern_id.as_str(), r.line)).collect::<Vec<_>>(),
            [("a1", 1), ("b2", 2)]
        );
    }
}
