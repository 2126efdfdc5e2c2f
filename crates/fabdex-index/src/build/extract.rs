//! Read and extract: each candidate file read (bounded), classified and
//! extracted by `fabdex-md` or `fabdex-ts`, cached by digest; published
//! feeds' programs as candidates.

use super::report::progress_bar;
use crate::walk::walk_root;
use rayon::prelude::*;
use std::collections::HashSet;
use std::fs;

use anyhow::Result;
use fabdex_model::digest::digest_bytes;
use fabdex_model::records::{MdExtraction, RootKind};

use crate::cache::{Cache, cached};
use crate::config::Config;
use crate::patterns::TsFile;
use crate::published::{PublishedSet, is_source_name};
use crate::walk::{Candidate, FileType, Skipped};

/// (files extracted in this build, files whose extraction came from the cache).
pub(crate) fn cache_counts(files: &[ReadFile], ts_files: &[TsFile]) -> (u64, u64) {
    let cached = files.iter().map(|f| f.from_cache).chain(ts_files.iter().map(|f| f.from_cache));
    cached.fold((0, 0), |(fresh, hit), c| if c { (fresh, hit + 1) } else { (fresh + 1, hit) })
}

pub(crate) struct ReadFile {
    pub(crate) candidate: Candidate,
    pub(crate) text: String,
    pub(crate) digest: String,
    pub(crate) extraction: MdExtraction,
    pub(crate) from_cache: bool,
}

pub(crate) enum Outcome {
    Read(Box<ReadFile>),
    ReadTs(Box<TsFile>),
    Skip(Skipped),
}

pub(crate) fn skip(root: &str, path: &str, reason: String) -> Outcome {
    Outcome::Skip(Skipped { root: root.to_string(), path: path.to_string(), reason })
}

/// The source files of every published program, as candidates with their
/// text in memory, and the texts of its other files (kept as blobs only).
/// Files whose names cannot be addresses are left out here and reported on
/// the record by `patterns::assemble`.
pub(crate) fn published_candidates(root: usize, set: &PublishedSet) -> (Vec<Candidate>, Vec<String>) {
    let mut sources = Vec::new();
    let mut raw = Vec::new();
    for r in &set.records {
        let Some(program) = &r.record.program else { continue };
        for f in &program.files {
            if fabdex_model::address::validate_relative_path(f.name.trim_start_matches('/')).is_err() {
                continue;
            }
            if !is_source_name(&f.name) {
                raw.push(f.contents.clone());
                continue;
            }
            sources.push(Candidate {
                root,
                path: fabdex_model::ts::published_file_path(&r.record.pattern_id, &f.name),
                abs: set.path.join(&r.file),
                bytes: f.contents.len() as u64,
                file_type: FileType::TypeScript,
                inline: Some(f.contents.clone()),
            });
        }
    }
    (sources, raw)
}

/// Read a file's text, or the reason it is skipped.
pub(crate) fn read_text(c: &Candidate, root: &str, max_bytes: u64) -> Result<String, Outcome> {
    let too_big = |n: u64| {
        skip(root, &c.path, format!("file is {n} bytes, over the {max_bytes}-byte limit (index.max_file_bytes)"))
    };
    if c.bytes > max_bytes {
        return Err(too_big(c.bytes));
    }
    if let Some(text) = &c.inline {
        return Ok(text.clone());
    }
    let bytes = fs::read(&c.abs).map_err(|e| skip(root, &c.path, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big(bytes.len() as u64));
    }
    if let Some(at) = bytes.iter().take(8192).position(|b| *b == 0) {
        return Err(skip(root, &c.path, format!("binary file (NUL byte at offset {at})")));
    }
    String::from_utf8(bytes).map_err(|e| {
        skip(root, &c.path, format!("not valid UTF-8 (invalid byte at offset {})", e.utf8_error().valid_up_to()))
    })
}

/// `caches`: the Markdown and the TS/TSX extraction caches.
pub(crate) fn read_and_extract(c: Candidate, config: &Config, max_bytes: u64, caches: (&Cache, &Cache)) -> Outcome {
    let root = &config.roots[c.root];
    let is_ts = match (c.file_type, root.kind) {
        (FileType::Markdown, _) => false,
        (FileType::TypeScript, None | Some(RootKind::Patterns | RootKind::Published)) => true,
        (FileType::TypeScript, Some(kind)) => {
            return skip(
                &root.name,
                &c.path,
                format!(
                    "TypeScript source in a `{}` root (index pattern sources from a `patterns` root)",
                    kind.as_str()
                ),
            );
        }
        _ => return skip(&root.name, &c.path, "unsupported file type (fabdex indexes Markdown and TS/TSX)".into()),
    };
    let text = match read_text(&c, &root.name, max_bytes) {
        Ok(t) => t,
        Err(outcome) => return outcome,
    };
    let digest = digest_bytes(text.as_bytes());
    if is_ts {
        let ((ts, outline), from_cache) = cached(caches.1, &digest, || {
            (fabdex_ts::extract(&c.path, &text), fabdex_ts::outline::outline(&c.path, &text))
        });
        return Outcome::ReadTs(Box::new(TsFile { candidate: c, text, digest, ts, outline, from_cache }));
    }
    let (extraction, from_cache) = cached(caches.0, &digest, || fabdex_md::extract(&text));
    Outcome::Read(Box::new(ReadFile { candidate: c, text, digest, extraction, from_cache }))
}

/// What walking the roots found: candidates to read, files skipped, every
/// path seen per root, the published roots' feeds and their raw files.
pub(crate) struct Walked {
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) skipped: Vec<Skipped>,
    pub(crate) seen: Vec<HashSet<String>>,
    pub(crate) published: Vec<(usize, PublishedSet)>,
    pub(crate) raw_files: Vec<String>,
}

/// Walk every root (a published root is its feed's programs).
pub(crate) fn walk(config: &Config) -> Result<Walked> {
    let mut candidates = Vec::new();
    let mut skipped = Vec::new();
    let mut seen: Vec<HashSet<String>> = Vec::new();
    let mut published: Vec<(usize, PublishedSet)> = Vec::new();
    let mut raw_files: Vec<String> = Vec::new();
    for (i, root) in config.roots.iter().enumerate() {
        if root.kind == Some(RootKind::Published) {
            let set = crate::published::read_root(root)?;
            let (sources, raw) = published_candidates(i, &set);
            candidates.extend(sources);
            raw_files.extend(raw);
            published.push((i, set));
            seen.push(HashSet::new());
            continue;
        }
        let walked = walk_root(i, root)?;
        candidates.extend(walked.candidates);
        skipped.extend(walked.skipped);
        seen.push(walked.seen.into_iter().collect());
    }

    Ok(Walked { candidates, skipped, seen, published, raw_files })
}

/// Read, classify and extract every candidate in parallel: the docs files,
/// the TS/TSX files, and what was skipped.
pub(crate) fn extract_all(
    candidates: Vec<Candidate>,
    config: &Config,
    (md_cache, ts_cache): (&Cache, &Cache),
    progress: bool,
) -> (Vec<ReadFile>, Vec<TsFile>, Vec<Skipped>) {
    let max_bytes = config.index.max_file_bytes;
    let bar = progress_bar(progress, candidates.len() as u64);
    let outcomes: Vec<Outcome> = candidates
        .into_par_iter()
        .map(|c| {
            let out = read_and_extract(c, config, max_bytes, (md_cache, ts_cache));
            if let Some(bar) = &bar {
                bar.inc(1);
            }
            out
        })
        .collect();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut files: Vec<ReadFile> = Vec::new();
    let mut ts_files: Vec<TsFile> = Vec::new();
    let mut skipped = Vec::new();
    for o in outcomes {
        match o {
            Outcome::Read(f) => files.push(*f),
            Outcome::ReadTs(f) => ts_files.push(*f),
            Outcome::Skip(s) => skipped.push(s),
        }
    }

    (files, ts_files, skipped)
}
