//! A program's files, bounded source reads by `pattern:` address, dependency
//! trees, and the program as the index service's record (`getPattern`,
//! `listPatterns`, `searchPatterns`), for `fabdex serve --http`.

use std::collections::BTreeSet;

use fabdex_model::envelope::char_window;
use fabdex_model::registry::{
    ListRequest, ListResponse, PatternSummary, Program, ProgramSource, PublishedPattern, SearchRequest,
};
use fabdex_model::ts::ProgramRow;
use fabdex_model::{Limits, PatternAddress, ReadEnvelope, digest_text};
use serde::{Deserialize, Serialize};

use crate::pattern_search::{PatternQuery, effective_schemas};
use crate::read::suggest;
use crate::{Engine, QueryError};

/// One file of a program, as `fabdex files` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PatternFileRow {
    /// The name the program gives the file.
    pub name: String,
    /// Address to read it.
    pub address: String,
    pub bytes: u64,
    pub digest: String,
    /// Lines, when the file was indexed as source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<u32>,
    /// The program's main file.
    pub main: bool,
    /// Extracted as TS/TSX source (other files are kept as bytes only).
    pub source: bool,
    /// swc could not parse it (the outline still covers it).
    #[serde(rename = "parseFailed")]
    pub parse_failed: bool,
    pub diagnostics: usize,
}

/// `fabdex files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileListing {
    #[serde(rename = "patternId")]
    pub pattern_id: String,
    pub entry: String,
    #[serde(rename = "hasSource")]
    pub has_source: bool,
    pub identity: String,
    pub files: Vec<PatternFileRow>,
}

/// One node of a dependency tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DepNode {
    #[serde(rename = "patternId")]
    pub pattern_id: String,
    /// Whether this snapshot holds the program.
    pub indexed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `verified`, `mismatch`, `unverifiable`, or `not-indexed`.
    pub identity: String,
    /// Already shown higher up this branch: not expanded again.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub cycle: bool,
    /// Has dependencies below the depth limit or beyond the node limit: not expanded.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub cut: bool,
    pub dependencies: Vec<DepNode>,
}

/// The answer of `fabdex deps`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DepTree {
    pub depth: usize,
    pub root: DepNode,
    /// Nodes not shown because the tree reached [`Limits::DEPS_MAX_NODES`].
    pub omitted: usize,
}

impl Engine {
    fn file_rows(&self, p: &ProgramRow) -> Vec<PatternFileRow> {
        p.files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let row = self.program_file_row(p, &f.name);
                PatternFileRow {
                    name: f.name.clone(),
                    address: p.file_address(&f.name),
                    bytes: f.bytes,
                    digest: f.digest.clone(),
                    lines: row.map(|r| r.lines),
                    main: i == 0,
                    source: row.is_some(),
                    parse_failed: row.is_some_and(|r| r.extraction.parse_failed),
                    diagnostics: row.map_or(0, |r| r.extraction.diagnostics.len()),
                }
            })
            .collect()
    }

    /// `fabdex files ID`.
    pub fn pattern_files(&self, id: &str) -> Result<FileListing, QueryError> {
        let p = self.program(id)?;
        Ok(FileListing {
            pattern_id: p.pattern_id.clone(),
            entry: p.entry.clone(),
            has_source: p.has_source,
            identity: p.identity.status.as_str().to_string(),
            files: self.file_rows(p),
        })
    }

    /// Read one window of a program's file, line range or definition.
    ///
    /// The addressed text is the whole file, or lines `a..=b`, or the lines of
    /// a definition found by the file's outline. The window is `max_chars`
    /// chars from `offset` (as for docs); a line longer than `max_line_chars`
    /// is cut, marked in the text and listed in `clipped_lines`.
    pub fn read_pattern(
        &self,
        addr: &PatternAddress,
        offset: Option<u64>,
        max_chars: Option<u64>,
        max_line_chars: Option<u64>,
    ) -> Result<ReadEnvelope, QueryError> {
        let (max_chars, max_line_chars) = read_bounds(max_chars, max_line_chars)?;
        let p = self.program(&addr.pattern_id)?;
        if !p.has_source {
            return Err(QueryError::NotFound(format!(
                "pattern `{}` has no source in this snapshot: its record was published without a program",
                p.pattern_id
            )));
        }
        let file = addressed_file(p, addr)?;
        let bytes = self.snap.blobs.get(&file.digest).map_err(|e| QueryError::Corrupt(format!("{e:#}")))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| QueryError::Corrupt(format!("blob {} of `{}` is not UTF-8", file.digest, file.name)))?;
        let name = file.name.trim_start_matches('/');
        let line_starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&i| i < text.len())
            .collect();
        let total_lines = line_starts.len().max(1) as u32;
        let range = self.line_range(p, file, name, addr, total_lines)?;
        let (first_line, byte_start, byte_end) = match range {
            None => (1, 0, text.len()),
            Some((a, b)) => {
                let start = line_starts.get(a as usize - 1).copied().unwrap_or(text.len());
                let end = line_starts.get(b as usize).copied().unwrap_or(text.len());
                (a, start, end)
            }
        };
        let addressed = &text[byte_start..byte_end];
        let total = addressed.chars().count() as u64;
        let offset = offset.unwrap_or(addr.offset);
        if offset > total {
            return Err(QueryError::InvalidArgument(format!(
                "offset {offset} is past the end of `{}` ({total} chars)",
                addr.with_offset(0)
            )));
        }
        let (start, end, end_char) = char_window(addressed, offset, max_chars);
        let window = &addressed[start..end];
        // Lines of the window: the first is the line holding `start`.
        let window_first = first_line + addressed[..start].matches('\n').count() as u32;
        let (out, clipped) = clip_lines(window, window_first, max_line_chars);
        let window_last = window_first + window.trim_end_matches('\n').matches('\n').count() as u32;
        let truncated = end_char < total;
        let canonical =
            PatternAddress { pattern_id: p.pattern_id.clone(), path: Some(name.to_string()), ..addr.clone() };
        Ok(ReadEnvelope {
            address: canonical.with_offset(offset).to_string(),
            origin: p.origin.clone(),
            offset,
            end: end_char,
            total,
            digest: digest_text(&out),
            truncated,
            next: truncated.then(|| canonical.with_offset(end_char).to_string()),
            lines: Some([window_first, window_last.max(window_first)]),
            clipped_lines: clipped,
            text: out,
        })
    }

    /// The lines an address asks for: its `:A-B` range (checked against the
    /// file), or the lines of the symbol it names in the file's outline.
    fn line_range(
        &self,
        p: &ProgramRow,
        file: &fabdex_model::ts::ProgramFile,
        name: &str,
        addr: &PatternAddress,
        total_lines: u32,
    ) -> Result<Option<(u32, u32)>, QueryError> {
        let range = match (&addr.lines, &addr.symbol) {
            (Some((a, b)), _) => {
                if *a > total_lines {
                    return Err(QueryError::InvalidArgument(format!(
                        "line {a} is past the end of `{name}` ({total_lines} lines)"
                    )));
                }
                Some((*a, (*b).min(total_lines)))
            }
            (None, Some(symbol)) => {
                let row = self.program_file_row(p, &file.name).ok_or_else(|| {
                    QueryError::NotFound(format!("`{name}` is not source, so it has no outline to find `{symbol}` in"))
                })?;
                let defs = &row.outline.definitions;
                let found = defs.iter().find(|d| &d.name == symbol).ok_or_else(|| {
                    QueryError::NotFound(format!(
                        "`{name}` defines no `{symbol}`{}",
                        suggest(symbol, defs.iter().map(|d| d.name.as_str()), "#")
                    ))
                })?;
                Some((found.line_start, found.line_end.max(found.line_start)))
            }
            (None, None) => None,
        };
        Ok(range)
    }

    /// `fabdex deps ID --depth N`: what a program depends on, transitively.
    pub fn deps(&self, id: &str, depth: Option<usize>) -> Result<DepTree, QueryError> {
        let depth = depth.unwrap_or(Limits::DEPS_DEFAULT_DEPTH);
        if depth == 0 || depth > Limits::DEPS_MAX_DEPTH {
            return Err(QueryError::InvalidArgument(format!(
                "depth {depth} is out of range: it must be between 1 and {}",
                Limits::DEPS_MAX_DEPTH
            )));
        }
        let p = self.program(id)?;
        let mut budget = Limits::DEPS_MAX_NODES;
        let mut omitted = 0;
        let mut path = BTreeSet::new();
        let root = self.dep_node(&p.pattern_id, depth, &mut path, &mut budget, &mut omitted);
        Ok(DepTree { depth, root, omitted })
    }

    fn dep_node(
        &self,
        id: &str,
        depth: usize,
        path: &mut BTreeSet<String>,
        budget: &mut usize,
        omitted: &mut usize,
    ) -> DepNode {
        *budget = budget.saturating_sub(1);
        let patterns = &self.snap.patterns;
        let Some(p) = patterns.program_index(id).map(|i| &patterns.programs[i]) else {
            return DepNode {
                pattern_id: id.to_string(),
                indexed: false,
                entry: None,
                description: None,
                identity: "not-indexed".into(),
                cycle: false,
                cut: false,
                dependencies: vec![],
            };
        };
        let mut node = DepNode {
            pattern_id: id.to_string(),
            indexed: true,
            entry: Some(p.entry.clone()),
            description: p.description.clone(),
            identity: p.identity.status.as_str().into(),
            cycle: path.contains(id),
            cut: false,
            dependencies: vec![],
        };
        if node.cycle || p.dependencies.is_empty() {
            return node;
        }
        if depth == 0 {
            node.cut = true;
            return node;
        }
        path.insert(id.to_string());
        for d in &p.dependencies {
            if *budget == 0 {
                node.cut = true;
                *omitted += 1;
                continue;
            }
            let child = self.dep_node(d, depth - 1, path, budget, omitted);
            node.dependencies.push(child);
        }
        path.remove(id);
        node
    }

    /// A program as the index service's `Pattern` record. Declared fields
    /// come from its published record when it has one; schemas are the
    /// declared ones, else the extracted ones.
    pub fn published_record(&self, id: &str, include_source: bool) -> Result<PublishedPattern, QueryError> {
        let p = self.program(id)?;
        let meta = p.published.as_ref();
        let (arg, res, _) = effective_schemas(p);
        let program = if include_source && p.has_source {
            let mut files = Vec::new();
            for f in &p.files {
                let bytes = self.snap.blobs.get(&f.digest).map_err(|e| QueryError::Corrupt(format!("{e:#}")))?;
                let contents = String::from_utf8(bytes)
                    .map_err(|_| QueryError::Corrupt(format!("blob {} of `{}` is not UTF-8", f.digest, f.name)))?;
                files.push(ProgramSource { name: f.name.clone(), contents });
            }
            let main = p.files.first().map(|f| f.name.clone()).unwrap_or_default();
            Some(Program {
                main: meta.and_then(|m| m.program.as_ref()).map_or(main, |prog| prog.main.clone()),
                main_export: None,
                files,
                source_roots: None,
                data_files: None,
            })
        } else {
            None
        };
        Ok(PublishedPattern {
            pattern_id: p.pattern_id.clone(),
            owner_did: meta.and_then(|m| m.owner_did.clone()),
            created_at: meta.and_then(|m| m.created_at.clone()),
            description: p.description.clone().unwrap_or_default(),
            hashtags: p.hashtags.clone(),
            kind: meta.and_then(|m| m.kind),
            quality: meta.and_then(|m| m.quality),
            signals: meta.and_then(|m| m.signals),
            argument_schema: meta.and_then(|m| m.argument_schema.clone()).or_else(|| arg.cloned()),
            result_schema: meta.and_then(|m| m.result_schema.clone()).or_else(|| res.cloned()),
            dependencies: p.dependencies.clone(),
            prior_pattern_id: meta.and_then(|m| m.prior_pattern_id.clone()),
            program,
        })
    }

    /// `listPatterns`: summaries in snapshot order, paged by an opaque cursor.
    pub fn list_records(&self, req: &ListRequest) -> Result<ListResponse, QueryError> {
        let limit = req.limit.unwrap_or(100);
        if limit == 0 || limit > Limits::LIST_MAX_LIMIT {
            return Err(QueryError::InvalidArgument(format!(
                "limit {limit} is out of range: it must be between 1 and {}",
                Limits::LIST_MAX_LIMIT
            )));
        }
        let programs = &self.snap.patterns.programs;
        let start = match &req.cursor {
            None => 0,
            Some(c) => c
                .strip_prefix(&format!("{}:", self.snapshot_id()))
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n <= programs.len())
                .ok_or_else(|| {
                    QueryError::InvalidArgument(format!(
                        "cursor `{c}` is not one this snapshot gave out (it may be from an older snapshot)"
                    ))
                })?,
        };
        let end = (start + limit).min(programs.len());
        let mut patterns = Vec::new();
        for i in start..end {
            patterns.push(self.published_record(self.snap.patterns.pattern_id(i), false)?.summary());
        }
        Ok(ListResponse {
            patterns,
            next_cursor: (end < programs.len()).then(|| format!("{}:{end}", self.snapshot_id())),
        })
    }

    /// `searchPatterns` in the service's shape, ranked by [`Engine::search_patterns`].
    pub fn service_search(&self, req: &SearchRequest) -> Result<Vec<PatternSummary>, QueryError> {
        let q = PatternQuery {
            text: req.text.clone().unwrap_or_default(),
            tags: req.tags.clone().unwrap_or_default(),
            limit: Some(req.limit.unwrap_or(10).clamp(1, Limits::SEARCH_MAX_LIMIT)),
            ..Default::default()
        };
        let result = self.search_patterns(&q)?;
        let query_terms = result.terms.len() as u32;
        result
            .hits
            .iter()
            .map(|h| {
                let mut s = self.published_record(&h.pattern_id, false)?.summary();
                let matched: BTreeSet<&str> = h
                    .why
                    .iter()
                    .filter_map(|w| w.rsplit_once(": ").map(|(_, t)| t))
                    .flat_map(|t| t.split(", "))
                    .filter(|t| result.terms.iter().any(|q| q == t))
                    .collect();
                s.matched_terms = Some(matched.len() as u32);
                s.query_terms = Some(query_terms);
                Ok(s)
            })
            .collect()
    }
}

/// `max_chars` and `max_line_chars`, defaulted and checked.
fn read_bounds(max_chars: Option<u64>, max_line_chars: Option<u64>) -> Result<(u64, u64), QueryError> {
    let max_chars = max_chars.unwrap_or(Limits::READ_DEFAULT_CHARS);
    if max_chars == 0 || max_chars > Limits::READ_MAX_CHARS {
        return Err(QueryError::InvalidArgument(format!(
            "max_chars {max_chars} is out of range: it must be between 1 and {}",
            Limits::READ_MAX_CHARS
        )));
    }
    let max_line_chars = max_line_chars.unwrap_or(Limits::LINE_DEFAULT_CHARS);
    if max_line_chars == 0 || max_line_chars > Limits::READ_MAX_CHARS {
        return Err(QueryError::InvalidArgument(format!(
            "max_line_chars {max_line_chars} is out of range: it must be between 1 and {}",
            Limits::READ_MAX_CHARS
        )));
    }
    Ok((max_chars, max_line_chars))
}

/// The file of a program an address names (its main file when it names none).
fn addressed_file<'p>(
    p: &'p ProgramRow,
    addr: &PatternAddress,
) -> Result<&'p fabdex_model::ts::ProgramFile, QueryError> {
    let file = match &addr.path {
        None => p
            .files
            .first()
            .ok_or_else(|| QueryError::NotFound(format!("pattern `{}` has a program with no files", p.pattern_id)))?,
        Some(path) => p.file(path).ok_or_else(|| {
            let names: Vec<&str> = p.files.iter().map(|f| f.name.trim_start_matches('/')).collect();
            QueryError::NotFound(format!(
                "`{path}` is not a file of pattern `{}` (its {} files: {}){}",
                p.pattern_id,
                names.len(),
                names.iter().take(20).map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
                suggest(path, names.iter().copied(), "")
            ))
        })?,
    };
    Ok(file)
}

/// A window's lines, each cut at `max_line_chars` (saying how much was cut),
/// and the numbers of the lines that were.
fn clip_lines(window: &str, window_first: u32, max_line_chars: u64) -> (String, Vec<u32>) {
    let mut out = String::with_capacity(window.len());
    let mut clipped = Vec::new();
    for (i, line) in window.split_inclusive('\n').enumerate() {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let n = body.chars().count() as u64;
        if n > max_line_chars {
            let keep: String = body.chars().take(max_line_chars as usize).collect();
            out.push_str(&keep);
            out.push_str(&format!("… [{} more chars]", n - max_line_chars));
            if line.ends_with('\n') {
                out.push('\n');
            }
            clipped.push(window_first + i as u32);
        } else {
            out.push_str(line);
        }
    }
    (out, clipped)
}
