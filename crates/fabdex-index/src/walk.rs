//! Walking a root: which files are candidates and which are skipped, and why.
//!
//! Symbolic links are never followed (the real skills tree mirrors itself
//! through symlinks). Hidden files are indexed (`.claude/rules/*.md` are real
//! docs); `.gitignore` is not applied, so every file under a root is either
//! indexed or reported as skipped. Version-control folders (`.git`, `.hg`,
//! `.svn`) are reported once each and not entered.

use std::path::PathBuf;

use anyhow::{Context, Result};
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::config::RootConfig;

/// What a file is, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    Markdown,
    TypeScript,
    Other,
}

impl FileType {
    pub fn of(path: &str) -> FileType {
        let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
        match ext.as_str() {
            "md" | "markdown" => FileType::Markdown,
            "ts" | "tsx" | "mts" => FileType::TypeScript,
            _ => FileType::Other,
        }
    }
}

/// A file found in a root.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub root: usize,
    /// Root-relative, `/`-separated.
    pub path: String,
    pub abs: PathBuf,
    pub bytes: u64,
    pub file_type: FileType,
    /// Text already in memory (a file of a published program); `abs` is then
    /// the feed it came from.
    pub inline: Option<String>,
}

/// A file that was seen but not indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub root: String,
    pub path: String,
    pub reason: String,
}

/// Every path seen in one root (for link resolution), the candidates and the skips.
pub struct Walked {
    pub candidates: Vec<Candidate>,
    pub skipped: Vec<Skipped>,
    /// Every regular file seen, indexed or not (root-relative).
    pub seen: Vec<String>,
}

fn globset(globs: &[String], root: &str, what: &str) -> Result<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for g in globs {
        builder.add(Glob::new(g).with_context(|| format!("root `{root}`: {what} glob `{g}` is invalid"))?);
    }
    Ok(builder.build()?)
}

pub fn walk_root(index: usize, root: &RootConfig) -> Result<Walked> {
    let include = globset(&root.include, &root.name, "include")?;
    let exclude = globset(&root.exclude, &root.name, "exclude")?;
    let mut out = Walked { candidates: Vec::new(), skipped: Vec::new(), seen: Vec::new() };
    let pruned = std::sync::Arc::new(std::sync::Mutex::new(Vec::<PathBuf>::new()));
    let pruned_in_filter = pruned.clone();
    let walker = ignore::WalkBuilder::new(&root.path)
        .follow_links(false)
        .standard_filters(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            let vcs = e.file_type().is_some_and(|t| t.is_dir())
                && matches!(e.file_name().to_str(), Some(".git" | ".hg" | ".svn"));
            if vcs {
                pruned_in_filter.lock().unwrap_or_else(|p| p.into_inner()).push(e.path().to_path_buf());
            }
            !vcs
        })
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                out.skipped.push(Skipped {
                    root: root.name.clone(),
                    path: String::new(),
                    reason: format!("walk error: {err}"),
                });
                continue;
            }
        };
        let Ok(rel) = entry.path().strip_prefix(&root.path) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let Some(rel_str) = rel.to_str() else {
            out.skipped.push(Skipped {
                root: root.name.clone(),
                path: rel.to_string_lossy().into_owned(),
                reason: "path is not valid UTF-8".into(),
            });
            continue;
        };
        let rel_str = rel_str.replace('\\', "/");
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_symlink() {
            out.skipped.push(Skipped {
                root: root.name.clone(),
                path: rel_str,
                reason: "symbolic link (not followed)".into(),
            });
            continue;
        }
        if !file_type.is_file() {
            continue;
        }
        out.seen.push(rel_str.clone());
        if exclude.is_match(&rel_str) || (!include.is_empty() && !include.is_match(&rel_str)) {
            out.skipped.push(Skipped {
                root: root.name.clone(),
                path: rel_str,
                reason: "excluded by the root's include/exclude globs".into(),
            });
            continue;
        }
        let bytes = entry.metadata().map(|m| m.len()).unwrap_or(0);
        out.candidates.push(Candidate {
            root: index,
            file_type: FileType::of(&rel_str),
            path: rel_str,
            abs: entry.path().to_path_buf(),
            bytes,
            inline: None,
        });
    }
    for dir in pruned.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        let rel = dir.strip_prefix(&root.path).unwrap_or(dir).to_string_lossy().replace('\\', "/");
        out.skipped.push(Skipped {
            root: root.name.clone(),
            path: format!("{rel}/"),
            reason: "version-control folder (not entered)".into(),
        });
    }
    Ok(out)
}
