//! Docs search: field-weighted BM25 over sections (and parts of split
//! sections), with stemming, identifier splitting, and historical documents
//! filtered out or demoted. Every hit says why it matched.

use std::collections::{BTreeMap, HashMap};

use fabdex_index::search_schema::{self, UnitText};
use fabdex_model::Limits;
use serde::{Deserialize, Serialize};
use tantivy::collector::{Count, TopDocs};
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, RegexQuery, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocId, Score, SegmentReader, TantivyDocument, Term};

use crate::{Engine, QueryError};

/// Field weights: a word in a section's own heading counts three times a word in its body.
pub const FIELD_WEIGHTS: [(&str, f32); 8] = [
    ("heading", 3.0),
    ("context", 1.2),
    ("path", 1.0),
    ("body", 1.0),
    ("code", 0.5),
    ("symbols", 1.5),
    ("parent", PARENT_WEIGHT),
    ("defines", DEFINES_WEIGHT),
];

/// Weight of the symbols a section defines (the symbol-table lever).
pub const DEFINES_WEIGHT: f32 = 3.0;

/// Weight of the parent's prose (the parent-intro lever); 0 turns it off.
pub const PARENT_WEIGHT: f32 = 0.4;

/// Score multiplier for historical documents when they are included.
pub const HISTORY_DEMOTION: f32 = 0.5;

/// A docs search request (also the `search_docs` tool's input).
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchDocs {
    /// Words or an API name to look for.
    pub query: String,
    /// Hits to return (default 10, at most 50).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Only files whose `<root>/<path>` (or `<path>`) starts with this.
    #[serde(default)]
    pub path_prefix: Option<String>,
    /// Include historical documents (ranked below live ones).
    #[serde(default)]
    pub include_history: bool,
}

/// Why a hit matched: the query terms found, per field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Why {
    pub matched_terms: Vec<String>,
    pub missing_terms: Vec<String>,
    /// Field → the query terms found in it.
    pub fields: BTreeMap<String, Vec<String>>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub historical_demoted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Hit {
    pub address: String,
    /// Title of the file (first H1 or front matter).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub title: Option<String>,
    pub heading_path: Vec<String>,
    pub snippet: String,
    pub score: f32,
    pub why: Why,
    pub origin: String,
    /// Chars at the address (open it to read them).
    pub chars: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub historical: bool,
    /// Set when the operator's policy withholds this origin's text: `snippet` is then empty.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub denied: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SearchResult {
    pub query: String,
    /// The analyzed terms searched for.
    pub terms: Vec<String>,
    /// Which retrieval ran.
    pub mode: String,
    pub snapshot: String,
    /// Units that matched at all (before the limit).
    pub matched: usize,
    pub limit: usize,
    pub hits: Vec<Hit>,
}

fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~\"@<>".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl Engine {
    pub fn search_docs(&self, req: &SearchDocs) -> Result<SearchResult, QueryError> {
        let query = req.query.trim();
        if query.is_empty() {
            return Err(QueryError::InvalidArgument("query is empty".into()));
        }
        if query.chars().count() > Limits::QUERY_MAX_CHARS {
            return Err(QueryError::InvalidArgument(format!("query is longer than {} chars", Limits::QUERY_MAX_CHARS)));
        }
        let limit = req.limit.unwrap_or(Limits::SEARCH_DEFAULT_LIMIT);
        if limit == 0 || limit > Limits::SEARCH_MAX_LIMIT {
            return Err(QueryError::InvalidArgument(format!(
                "limit {limit} is out of range: it must be between 1 and {}",
                Limits::SEARCH_MAX_LIMIT
            )));
        }
        let mut terms = search_schema::terms(query);
        let mut seen = std::collections::HashSet::new();
        terms.retain(|t| seen.insert(t.clone()));
        if terms.is_empty() {
            return Err(QueryError::InvalidArgument(format!(
                "query `{query}` has no searchable words (only stop words or punctuation)"
            )));
        }

        let (ranked, matched) = self.rank(&terms, req.path_prefix.as_deref(), req.include_history, limit)?;
        let mut file_texts: HashMap<u32, String> = HashMap::new();
        let mut hits = Vec::with_capacity(ranked.len());
        for (score, unit_index) in ranked {
            let unit = &self.snap.units[unit_index as usize];
            let row = &self.snap.docs.sections[unit.section as usize];
            let file_row = &self.snap.docs.files[row.file as usize];
            let text = match file_texts.entry(row.file) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(self.snap.file_text(row.file).map_err(|e| QueryError::Corrupt(format!("{e:#}")))?)
                }
            };
            let unit_text = UnitText::new(text, &self.snap.docs, unit);
            let why = explain(&unit_text, &terms, file_row.historical);
            hits.push(Hit {
                address: unit.address.clone(),
                title: file_row.title.clone(),
                heading_path: row.section.heading_path.clone(),
                snippet: snippet(&text[unit.byte_start as usize..unit.byte_end as usize], &terms),
                score,
                why,
                origin: file_row.origin.clone(),
                chars: unit.chars,
                historical: file_row.historical,
                denied: None,
            });
        }
        Ok(SearchResult {
            query: query.to_string(),
            terms,
            mode: "bm25-fields".into(),
            snapshot: self.snap.id().to_string(),
            matched,
            limit,
            hits,
        })
    }
}

impl Engine {
    /// The units matching `terms`, best first, at most `depth`; and how many matched in all.
    pub(crate) fn rank(
        &self,
        terms: &[String],
        path_prefix: Option<&str>,
        include_history: bool,
        depth: usize,
    ) -> Result<(Vec<(f32, u32)>, usize), QueryError> {
        let f = self.fields;
        let field_of = |name: &str| match name {
            "heading" => f.heading,
            "context" => f.context,
            "path" => f.path,
            "body" => f.body,
            "code" => f.code,
            "parent" => f.parent,
            "defines" => f.defines,
            _ => f.symbols,
        };
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (name, weight) in FIELD_WEIGHTS {
            for t in terms {
                let tq = TermQuery::new(Term::from_field_text(field_of(name), t), IndexRecordOption::WithFreqs);
                should.push((Occur::Should, Box::new(BoostQuery::new(Box::new(tq), weight))));
            }
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, Box::new(BooleanQuery::new(should)))];
        if let Some(prefix) = path_prefix.map(str::trim).filter(|p| !p.is_empty()) {
            let prefix = prefix.trim_start_matches("doc:").trim_start_matches('/');
            let pattern = format!("([^/]+/)?{}.*", regex_escape(prefix));
            let rq = RegexQuery::from_pattern(&pattern, f.path_raw)
                .map_err(|e| QueryError::InvalidArgument(format!("path prefix `{prefix}` is not usable: {e}")))?;
            clauses.push((Occur::Must, Box::new(rq)));
        }
        if !include_history {
            clauses.push((
                Occur::MustNot,
                Box::new(TermQuery::new(Term::from_field_u64(f.history, 1), IndexRecordOption::Basic)),
            ));
        }
        let full = BooleanQuery::new(clauses);

        let searcher = self.reader.searcher();
        let collector = TopDocs::with_limit(depth).tweak_score(move |segment: &SegmentReader| {
            let history = segment.fast_fields().u64("history").ok().map(|c| c.first_or_default_col(0));
            move |doc: DocId, score: Score| match &history {
                Some(col) if col.get_val(doc) == 1 => score * HISTORY_DEMOTION,
                _ => score,
            }
        });
        let (top, matched) = searcher
            .search(&full, &(collector, Count))
            .map_err(|e| QueryError::Corrupt(format!("search failed: {e}")))?;

        let mut ranked = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument =
                searcher.doc(addr).map_err(|e| QueryError::Corrupt(format!("search index: {e}")))?;
            let unit = doc.get_first(f.unit).and_then(|v| v.as_u64()).unwrap_or(u64::MAX);
            if unit as usize >= self.snap.units.len() {
                return Err(QueryError::Corrupt(format!("search index names unit {unit}, which the tables lack")));
            }
            ranked.push((score, unit as u32));
        }
        Ok((ranked, matched))
    }

    /// Addresses of the best `depth` units for a query (no snippets, no limit
    /// cap): what evaluation needs to find the rank of an expected section.
    pub fn rank_addresses(&self, query: &str, include_history: bool, depth: usize) -> Result<Vec<String>, QueryError> {
        let mut terms = search_schema::terms(query);
        let mut seen = std::collections::HashSet::new();
        terms.retain(|t| seen.insert(t.clone()));
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let (ranked, _) = self.rank(&terms, None, include_history, depth)?;
        Ok(ranked.into_iter().map(|(_, u)| self.snap.units[u as usize].address.clone()).collect())
    }
}

fn explain(unit: &UnitText, terms: &[String], historical: bool) -> Why {
    let mut fields = BTreeMap::new();
    let mut matched: Vec<String> = Vec::new();
    for (name, text) in unit.fields() {
        if text.is_empty() {
            continue;
        }
        let field_terms: std::collections::HashSet<String> = search_schema::terms(text).into_iter().collect();
        let found: Vec<String> = terms.iter().filter(|t| field_terms.contains(*t)).cloned().collect();
        for t in &found {
            if !matched.contains(t) {
                matched.push(t.clone());
            }
        }
        if !found.is_empty() {
            fields.insert(name.to_string(), found);
        }
    }
    let missing = terms.iter().filter(|t| !matched.contains(t)).cloned().collect();
    matched.sort_by_key(|t| terms.iter().position(|q| q == t));
    Why { matched_terms: matched, missing_terms: missing, fields, historical_demoted: historical }
}

/// The line with the most query terms, and what follows it, up to the snippet size.
fn snippet(text: &str, terms: &[String]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut best = (0usize, 0usize);
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line_terms = search_schema::terms(line);
        let score = terms.iter().filter(|t| line_terms.contains(t)).count();
        if score > best.1 {
            best = (i, score);
        }
    }
    let mut out = String::new();
    for line in &lines[best.0.min(lines.len().saturating_sub(1))..] {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&line);
        if out.chars().count() >= Limits::SNIPPET_CHARS {
            break;
        }
    }
    if out.chars().count() > Limits::SNIPPET_CHARS {
        let cut: String = out.chars().take(Limits::SNIPPET_CHARS - 1).collect();
        out = format!("{cut}…");
    }
    out
}
