//! Docs search: field-weighted BM25 over sections (and parts of split
//! sections; BM25F for a question), with stemming, identifier splitting, and historical documents
//! filtered out or demoted. Every hit says why it matched.

use std::collections::{BTreeMap, HashMap};

use fabdex_model::Limits;
use fabdex_snapshot::search_schema::{self, UnitText};
use serde::{Deserialize, Serialize};
use tantivy::query::Bm25StatisticsProvider;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, RegexQuery, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, Score, SegmentReader, Term};

use crate::live_stats::LiveStatistics;
use crate::weights::*;
use crate::{Engine, QueryError};

/// Which retrieval runs; every result says which one did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RetrievalMode {
    /// Field-weighted BM25 with the symbol table, fused with the corpus-learned
    /// latent semantic model (sections and whole files).
    #[default]
    Hybrid,
    /// Field-weighted BM25 only (the baseline).
    Bm25,
}

impl RetrievalMode {
    pub fn label(self) -> &'static str {
        match self {
            RetrievalMode::Hybrid => "hybrid-bm25-lsa",
            RetrievalMode::Bm25 => "bm25-fields",
        }
    }

    /// The label of hybrid retrieval with the sentence-embedding part.
    pub const HYBRID_DENSE_LABEL: &'static str = "hybrid-bm25-lsa-dense";
}

/// What one hit's score is made of.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScoreParts {
    /// The lexical score (raw, before normalisation): BM25F over the fields
    /// for a question, the sum of per-field BM25 scores for a keyword query.
    pub lexical: f32,
    /// Cosine similarity of the unit with the query in the latent space (hybrid).
    pub semantic: f32,
    /// Cosine similarity of the unit's file with the query (hybrid).
    pub file_semantic: f32,
    /// Symbol-table bonus (hybrid).
    pub symbol: f32,
    /// Cosine similarity of the unit's sentence embedding with the query's
    /// (hybrid, only on an index built with `--embeddings`).
    #[serde(default)]
    pub dense: f32,
}

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
    /// Retrieval to run: `hybrid` (default) or `bm25`.
    #[serde(default)]
    pub mode: Option<RetrievalMode>,
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
    /// The parts of the score: lexical, semantic (unit and file) and symbol.
    #[serde(default)]
    pub score_parts: ScoreParts,
    /// API names in the query that this section defines (the symbol table).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub defines: Vec<String>,
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
    /// Units that scored above zero (before the limit). In hybrid mode that is
    /// nearly every unit, because semantic similarity is graded.
    pub matched: usize,
    pub limit: usize,
    pub hits: Vec<Hit>,
    /// What the sentence model read of the query, when one ranked it
    /// (`hybrid-bm25-lsa-dense`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedded_query: Option<EmbeddedQuery>,
    /// When the sentence model ranks a question of two or more clauses:
    /// the clauses, each ranked apart and fused with the whole question by
    /// reciprocal rank (each hit's `score` is then its fused score, and its
    /// `why` the whole question's). Absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fused_clauses: Vec<String>,
}

/// How much of the query the sentence model read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EmbeddedQuery {
    /// Tokens the model read, its `[CLS]` and `[SEP]` markers included.
    pub tokens: usize,
    /// The query was longer than the index's token limit and was cut there;
    /// words past it count for the other parts of the score only.
    pub truncated: bool,
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
    /// What a first search opens, on both cores at once: the units and the
    /// symbol table (from the docs table's columns) and the search index on
    /// one side, the semantic models (read and hashed) on the other. Errors are left
    /// for the ranking to meet and report where it uses each part.
    fn open_for_search(&self, mode: RetrievalMode) {
        rayon::join(
            || {
                self.symbols();
                let _ = self.search_index();
            },
            || {
                if mode != RetrievalMode::Bm25 {
                    let _ = self.snap.semantic();
                }
            },
        );
    }

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
        let terms = query_terms(query);
        if terms.is_empty() {
            return Err(QueryError::InvalidArgument(format!(
                "query `{query}` has no searchable words (only stop words or punctuation)"
            )));
        }

        let mode = req.mode.unwrap_or_default();
        self.open_for_search(mode);
        let symbols = self.query_symbols(query, &terms);
        let Ranking { ranked, matched, embedded_query, clauses } =
            self.rank(query, &terms, &symbols, req.path_prefix.as_deref(), req.include_history, limit, mode)?;
        let mut file_texts: HashMap<u32, String> = HashMap::new();
        let mut hits = Vec::with_capacity(ranked.len());
        for (score, unit_index, parts) in ranked {
            let unit = &self.snap.units()[unit_index as usize];
            let row = &self.snap.docs.sections[unit.section as usize];
            let file_row = &self.snap.docs.files[row.file as usize];
            let text = match file_texts.entry(row.file) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(self.snap.file_text(row.file).map_err(|e| QueryError::Corrupt(format!("{e:#}")))?)
                }
            };
            let unit_text = UnitText::new(text, &self.snap.docs, unit);
            let mut why = explain(&unit_text, &terms, file_row.historical);
            why.score_parts = parts;
            why.defines =
                symbols.iter().filter(|(_, units)| units.contains(&unit_index)).map(|(name, _)| name.clone()).collect();
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
            mode: self.mode_label(mode).into(),
            snapshot: self.snap.id().to_string(),
            matched,
            limit,
            hits,
            embedded_query,
            fused_clauses: clauses,
        })
    }
}

/// What [`Engine::rank`] found.
pub(crate) struct Ranking {
    /// Best first, at most the depth asked for.
    pub ranked: Vec<RankedUnit>,
    /// Units that scored at all.
    pub matched: usize,
    /// What the sentence model read, when one ranked.
    pub embedded_query: Option<EmbeddedQuery>,
    /// The clauses ranked apart and fused with the whole question (none: not fused).
    pub clauses: Vec<String>,
}

/// Collects `(raw BM25 score, unit key)` for every matching document.
struct UnitScores;

/// [`UnitScores`] within one segment: its key column, and what it found.
struct SegmentUnitScores {
    key: search_schema::UnitKeys,
    found: Vec<(f32, u64)>,
}

impl tantivy::collector::Collector for UnitScores {
    type Fruit = Vec<(f32, u64)>;
    type Child = SegmentUnitScores;

    fn for_segment(&self, _: tantivy::SegmentOrdinal, segment: &SegmentReader) -> tantivy::Result<SegmentUnitScores> {
        Ok(SegmentUnitScores { key: search_schema::unit_keys(segment)?, found: Vec::new() })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, segments: Vec<Vec<(f32, u64)>>) -> tantivy::Result<Vec<(f32, u64)>> {
        Ok(segments.into_iter().flatten().collect())
    }
}

impl tantivy::collector::SegmentCollector for SegmentUnitScores {
    type Fruit = Vec<(f32, u64)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        self.found.push((score, self.key.get_val(doc)));
    }

    fn harvest(self) -> Vec<(f32, u64)> {
        self.found
    }
}

/// A ranked unit: its score, its index and what the score is made of.
pub(crate) type RankedUnit = (f32, u32, ScoreParts);

/// Every unit's sentence-embedding cosine with a text, and what the model read of it.
type DenseSims = (Vec<f32>, EmbeddedQuery);

/// One text to rank: its analysed terms, the API names it names, and its BM25 query.
#[derive(Clone, Copy)]
struct RankText<'a> {
    terms: &'a [String],
    symbols: &'a [(String, Vec<u32>)],
    lexical: &'a BooleanQuery,
}

/// Where and how deep to rank: the same for every text of a question.
#[derive(Clone, Copy)]
struct RankScope<'a> {
    prefix: Option<&'a str>,
    include_history: bool,
    depth: usize,
}

impl Engine {
    /// The units matching `terms`, best first, at most `depth`; and how many scored at all.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rank(
        &self,
        query: &str,
        terms: &[String],
        symbols: &[(String, Vec<u32>)],
        path_prefix: Option<&str>,
        include_history: bool,
        depth: usize,
        mode: RetrievalMode,
    ) -> Result<Ranking, QueryError> {
        let prefix = path_prefix
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| p.trim_start_matches("doc:").trim_start_matches('/'));
        let lexical_query = self.lexical_query(terms, prefix, include_history)?;
        match mode {
            RetrievalMode::Bm25 => {
                let (top, matched) = self.lexical(&lexical_query, terms, depth)?;
                let ranked = top
                    .into_iter()
                    .map(|(raw, unit)| {
                        let historical = self.unit_historical(unit);
                        let score = if historical { raw * HISTORY_DEMOTION } else { raw };
                        (score, unit, ScoreParts { lexical: raw, ..ScoreParts::default() })
                    })
                    .collect();
                Ok(Ranking { ranked, matched, embedded_query: None, clauses: Vec::new() })
            }
            RetrievalMode::Hybrid => {
                let text = RankText { terms, symbols, lexical: &lexical_query };
                let scope = RankScope { prefix, include_history, depth };
                let clauses = if self.ranks_dense() && self.fuse_clauses {
                    crate::clauses::split_clauses(query)
                } else {
                    Vec::new()
                };
                if clauses.is_empty() {
                    return self.rank_hybrid(text, scope, || self.dense_similarities(query));
                }
                self.rank_clauses(query, text, scope, clauses)
            }
        }
    }

    /// The whole question and each of its clauses ranked in hybrid mode, and
    /// fused by reciprocal rank ([`crate::clauses`]). The texts are encoded
    /// and ranked in parallel over the rayon pool; `matched` and what the
    /// model read are the whole question's. A clause with no searchable word
    /// is listed but not ranked.
    fn rank_clauses(
        &self,
        query: &str,
        whole: RankText<'_>,
        scope: RankScope<'_>,
        clauses: Vec<String>,
    ) -> Result<Ranking, QueryError> {
        use rayon::prelude::*;
        let mut analysed = Vec::new();
        for clause in &clauses {
            let terms = query_terms(clause);
            if terms.is_empty() {
                continue;
            }
            let symbols = self.query_symbols(clause, &terms);
            let lexical = self.lexical_query(&terms, scope.prefix, scope.include_history)?;
            analysed.push((clause.as_str(), terms, symbols, lexical));
        }
        // The whole question first: the fusion keeps its parts for `why`.
        let texts: Vec<(&str, RankText<'_>)> = std::iter::once((query, whole))
            .chain(
                analysed
                    .iter()
                    .map(|(clause, terms, symbols, lexical)| (*clause, RankText { terms, symbols, lexical })),
            )
            .collect();
        let strings: Vec<&str> = texts.iter().map(|(t, _)| *t).collect();
        let dense: Vec<Option<DenseSims>> = match self.dense_similarities_of(&strings)? {
            Some(sims) => sims.into_iter().map(Some).collect(),
            None => texts.iter().map(|_| None).collect(),
        };
        let per_list = RankScope { depth: scope.depth.max(crate::clauses::FUSE_DEPTH), ..scope };
        let rankings: Vec<Ranking> = texts
            .into_par_iter()
            .zip(dense)
            .map(|((_, text), dense)| self.rank_hybrid(text, per_list, move || Ok(dense)))
            .collect::<Result<_, _>>()?;
        let mut rankings = rankings.into_iter();
        let whole = rankings.next().expect("the whole question is always ranked");
        let mut lists = vec![whole.ranked];
        lists.extend(rankings.map(|r| r.ranked));
        Ok(Ranking {
            ranked: crate::clauses::fuse(&lists, scope.depth),
            matched: whole.matched,
            embedded_query: whole.embedded_query,
            clauses,
        })
    }

    /// Hybrid ranking of one text, with its sentence-embedding cosines from
    /// `dense` (run on another thread while the rest scores).
    fn rank_hybrid(
        &self,
        text: RankText<'_>,
        scope: RankScope<'_>,
        dense: impl FnOnce() -> Result<Option<DenseSims>, QueryError> + Send,
    ) -> Result<Ranking, QueryError> {
        let RankText { terms, symbols, lexical: lexical_query } = text;
        let RankScope { prefix, include_history, depth } = scope;
        // The question's sentence embedding is the slow part; it runs
        // on another thread while the other parts score.
        let (dense, others) = rayon::join(dense, || -> Result<_, QueryError> {
            let lexical = self.lexical_all(lexical_query, terms)?;
            let bag = fabdex_snapshot::semantic::query_bag(terms);
            let models = self.snap.semantic().map_err(QueryError::from_open)?;
            let unit_sims = models.units.embed(&bag).map(|q| {
                let mut sims = models.units.similarities(&q);
                // Passages serve a question in the user's own words; a
                // short keyword query is served by its words, and a
                // short unit's passage would be mostly its heading.
                if terms.len() >= SEMANTIC_FULL_AT_TERMS {
                    models.passages.raise(&q, &mut sims);
                }
                sims
            });
            let file_sims = models.files.embed(&bag).map(|q| models.files.similarities(&q));
            Ok((lexical, unit_sims, file_sims))
        });
        let (dense_sims, embedded_query) = match dense? {
            Some((sims, read)) => (Some(sims), Some(read)),
            None => (None, None),
        };
        let (lexical, unit_sims, file_sims) = others?;
        let mut lex = vec![0f32; self.snap.units().len()];
        for (raw, unit) in &lexical {
            lex[*unit as usize] = *raw;
        }
        let best = lexical.iter().map(|(s, _)| *s).fold(0f32, f32::max);
        let (symbol_weight, lexical_weight) = match dense_sims {
            Some(_) => (self.hybrid.symbol * DENSE_SYMBOL_SCALE, self.hybrid.lexical * DENSE_LEXICAL_SCALE),
            None => (self.hybrid.symbol, self.hybrid.lexical),
        };
        let mut bonus = vec![0f32; self.snap.units().len()];
        for (name, units) in symbols {
            for &u in units {
                let section = &self.snap.docs.sections[self.snap.units()[u as usize].section as usize].section;
                let defined = section.defines.len().max(1) as f32;
                // A heading that is the name itself (`# Writable<>`) defines it;
                // one that only contains it (`Writable<T[]> vs …`) half as much.
                let own = if heading_is(&section.heading, name) { 1.0 } else { 0.5 };
                bonus[u as usize] += symbol_weight * own / defined;
            }
        }
        let semantic_scale = (terms.len() as f32 / SEMANTIC_FULL_AT_TERMS as f32).min(1.0);
        let mut ranked: Vec<RankedUnit> = Vec::new();
        for (i, unit) in self.snap.units().iter().enumerate() {
            let file_index = self.snap.docs.section_file(unit.section);
            let file = &self.snap.docs.files[file_index as usize];
            if file.historical && !include_history {
                continue;
            }
            if let Some(p) = prefix
                && !(format!("{}/{}", file.root, file.path).starts_with(p) || file.path.starts_with(p))
            {
                continue;
            }
            let parts = ScoreParts {
                lexical: lex[i],
                semantic: unit_sims.as_ref().map_or(0.0, |s| s[i].max(0.0)),
                file_semantic: file_sims.as_ref().map_or(0.0, |s| s[file_index as usize].max(0.0)),
                symbol: bonus[i],
                dense: dense_sims.as_ref().map_or(0.0, |s| s[i].max(0.0)),
            };
            let w = &self.hybrid;
            let mut score = lexical_weight * if best > 0.0 { parts.lexical / best } else { 0.0 }
                + semantic_scale * (w.semantic * parts.semantic + w.file_semantic * parts.file_semantic)
                + parts.symbol
                + w.dense * parts.dense;
            if file.historical {
                score *= HISTORY_DEMOTION;
            }
            if score > 0.0 {
                ranked.push((score, i as u32, parts));
            }
        }
        let matched = ranked.len();
        // Best first, ties to the earlier unit: a total order, so only
        // the `depth` best need sorting.
        let order = |a: &RankedUnit, b: &RankedUnit| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if depth < ranked.len() {
            ranked.select_nth_unstable_by(depth, order);
            ranked.truncate(depth);
        }
        ranked.sort_unstable_by(order);
        Ok(Ranking { ranked, matched, embedded_query, clauses: Vec::new() })
    }

    /// The label of what `mode` runs on this index.
    pub fn mode_label(&self, mode: RetrievalMode) -> &'static str {
        match mode {
            RetrievalMode::Hybrid if self.ranks_dense() => RetrievalMode::HYBRID_DENSE_LABEL,
            _ => mode.label(),
        }
    }

    /// Turn the fusion of a question's clauses off or on (ablations; on by default).
    pub fn set_clause_fusion(&mut self, on: bool) {
        self.fuse_clauses = on;
    }

    /// Load the embedding model from this folder rather than the one the index
    /// recorded (the model must still be the same, by digest).
    pub fn set_embedding_model(&mut self, dir: &std::path::Path) {
        self.embedding_dir = Some(dir.to_path_buf());
        self.encoder = std::sync::OnceLock::new();
    }

    /// The query's cosine with every unit's sentence embedding; `None` when
    /// the index has none (or the ablation weight is 0). An index with
    /// embeddings whose model cannot be loaded is an error, never a silent
    /// fallback to the other parts.
    fn dense_similarities(&self, query: &str) -> Result<Option<DenseSims>, QueryError> {
        Ok(self.dense_similarities_of(&[query])?.map(|mut sims| sims.swap_remove(0)))
    }

    /// [`Self::dense_similarities`] for several texts, in their order.
    fn dense_similarities_of(&self, texts: &[&str]) -> Result<Option<Vec<DenseSims>>, QueryError> {
        if !self.ranks_dense() {
            return Ok(None);
        }
        let Some(table) = self.snap.embeddings().map_err(QueryError::from_open)? else { return Ok(None) };
        let vectors = self.embed_queries(&table.header, texts)?;
        let queries: Vec<&[f32]> = vectors.iter().map(|(q, _)| q.as_slice()).collect();
        let sims = table.similarities_of(&queries);
        Ok(Some(sims.into_iter().zip(vectors).map(|(sims, (_, read))| (sims, read)).collect()))
    }

    /// Whether hybrid ranking includes the sentence-embedding part here.
    fn ranks_dense(&self) -> bool {
        self.snap.has_embeddings() && self.hybrid.dense > 0.0
    }

    /// The query's vector by the model that made `header`'s table (loaded
    /// once per engine, and checked by digest).
    pub(crate) fn embed_query(
        &self,
        header: &fabdex_snapshot::embeddings::EmbeddingsHeader,
        query: &str,
    ) -> Result<(Vec<f32>, EmbeddedQuery), QueryError> {
        Ok(self.embed_queries(header, &[query])?.swap_remove(0))
    }

    /// [`Self::embed_query`] for several texts, each encoded on its own over
    /// the rayon pool: one batch would run on one core, and a question's
    /// clauses are as long again as the question.
    pub(crate) fn embed_queries(
        &self,
        header: &fabdex_snapshot::embeddings::EmbeddingsHeader,
        queries: &[&str],
    ) -> Result<Vec<(Vec<f32>, EmbeddedQuery)>, QueryError> {
        let encoder = self.encoder.get_or_init(|| {
            let dir = self.embedding_dir.clone().unwrap_or_else(|| std::path::PathBuf::from(&header.model_dir));
            let mut encoder = fabdex_embed::SentenceEncoder::load(&dir).map_err(|e| e.to_string())?;
            encoder.set_precision(header.precision);
            if encoder.identity().digest != header.model.digest {
                return Err(format!(
                    "embedding model {}: is {} ({}), but the index was built with {} ({})",
                    dir.display(),
                    encoder.identity().name,
                    encoder.identity().digest,
                    header.model.name,
                    header.model.digest
                ));
            }
            Ok(encoder)
        });
        let encoder = encoder.as_ref().map_err(|e| {
            QueryError::NoSnapshot(format!(
                "this index ranks with sentence embeddings and needs its model: {e}. Give the model's folder with --embeddings DIR (or $FABDEX_EMBEDDINGS), search with --mode bm25, or rebuild the index without --embeddings"
            ))
        })?;
        let invalid = |e: fabdex_embed::EmbedError| QueryError::InvalidArgument(e.to_string());
        let read: Vec<(Vec<u32>, bool)> = queries
            .iter()
            .map(|q| encoder.token_ids_as(fabdex_embed::Role::Query, q, header.max_tokens))
            .collect::<Result<_, _>>()
            .map_err(invalid)?;
        use rayon::prelude::*;
        read.into_par_iter()
            .map(|(ids, truncated)| {
                let vector = match self.cached_question_vector(&ids) {
                    Some(vector) => vector,
                    None => {
                        let vector = encoder.encode_ids(&[&ids]).map_err(invalid)?.swap_remove(0);
                        self.keep_question_vector(ids.clone(), vector.clone());
                        vector
                    }
                };
                Ok((vector, EmbeddedQuery { tokens: ids.len(), truncated }))
            })
            .collect()
    }

    /// How many questions' vectors this engine holds (diagnostics and tests).
    pub fn cached_question_vectors(&self) -> usize {
        self.query_vectors.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// A question's vector from an earlier search, by its token ids. The
    /// docs and pattern searches of one web page (or of one research step)
    /// ask the same question. Never waits for another search's encoding:
    /// the encoder runs on the rayon pool, and a worker blocked here could
    /// be the one that encoding needs.
    fn cached_question_vector(&self, ids: &[u32]) -> Option<Vec<f32>> {
        self.query_vectors.lock().unwrap_or_else(|p| p.into_inner()).get(ids).cloned()
    }

    /// Keep a question's vector (at most [`QUERY_VECTORS_KEPT`] questions).
    fn keep_question_vector(&self, ids: Vec<u32>, vector: Vec<f32>) {
        let mut cache = self.query_vectors.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= QUERY_VECTORS_KEPT {
            cache.clear();
        }
        cache.insert(ids, vector);
    }

    fn unit_historical(&self, unit: u32) -> bool {
        let file = self.snap.docs.section_file(self.snap.units()[unit as usize].section);
        self.snap.docs.files[file as usize].historical
    }

    /// The field-weighted BM25 query with the path and history filters.
    fn lexical_query(
        &self,
        terms: &[String],
        prefix: Option<&str>,
        include_history: bool,
    ) -> Result<BooleanQuery, QueryError> {
        let (_, f) = self.search_index()?;
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (name, weight) in FIELD_WEIGHTS {
            for t in terms {
                let tq = TermQuery::new(Term::from_field_text(field_named(&f, name), t), IndexRecordOption::WithFreqs);
                should.push((Occur::Should, Box::new(BoostQuery::new(Box::new(tq), weight))));
            }
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, Box::new(BooleanQuery::new(should)))];
        if let Some(prefix) = prefix {
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
        Ok(BooleanQuery::new(clauses))
    }

    /// BM25 statistics of the searcher's live documents (see [`LiveStatistics`]).
    fn live_statistics<'a>(&'a self, searcher: &'a tantivy::Searcher) -> Result<LiveStatistics<'a>, QueryError> {
        let deletions = self.snap.search_deletions().map_err(QueryError::from_open)?;
        Ok(LiveStatistics { searcher, deletions })
    }

    /// Raw lexical scores of the best `depth` units (history not yet demoted),
    /// and how many matched. Ranked with historical units demoted, equal
    /// scores by unit: the order of documents in the index (which an
    /// incremental build changes) never decides a rank.
    fn lexical(
        &self,
        query: &BooleanQuery,
        terms: &[String],
        depth: usize,
    ) -> Result<(Vec<(f32, u32)>, usize), QueryError> {
        let found = self.lexical_all(query, terms)?;
        let matched = found.len();
        let mut ranked: Vec<(f32, f32, u32)> = found
            .into_iter()
            .map(|(raw, unit)| (if self.unit_historical(unit) { raw * HISTORY_DEMOTION } else { raw }, raw, unit))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
        ranked.truncate(depth);
        Ok((ranked.into_iter().map(|(_, raw, unit)| (raw, unit)).collect(), matched))
    }

    /// The raw lexical score of every unit the query matches, in no order:
    /// by default BM25F over the unit's fields ([`crate::bm25f`]) for a
    /// question, and the sum of per-field BM25 scores for a keyword query
    /// (see [`LexicalScoring`]). Hybrid ranking
    /// needs them all, not the best few, so they are written out as found
    /// rather than kept in order.
    fn lexical_all(&self, query: &BooleanQuery, terms: &[String]) -> Result<Vec<(f32, u32)>, QueryError> {
        let (reader, f) = self.search_index()?;
        let searcher = reader.searcher();
        let stats = self.live_statistics(&searcher)?;
        let bm25f = match self.lexical_scoring {
            LexicalScoring::ByQueryLength(params) if terms.len() >= BM25F_FROM_TERMS => Some(params),
            LexicalScoring::Bm25f(params) => Some(params),
            LexicalScoring::ByQueryLength(_) | LexicalScoring::FieldSum => None,
        };
        let by_key = match bm25f {
            Some(params) => {
                let fields: Vec<_> = FIELD_WEIGHTS.iter().map(|(name, w)| (field_named(&f, name), *w)).collect();
                crate::bm25f::scores(&searcher, &stats, query, &fields, terms, params)
            }
            None => searcher.search_with_statistics_provider(query, &UnitScores, &stats),
        }
        .map_err(|e| QueryError::Corrupt(format!("search failed: {e}")))?;
        by_key
            .into_iter()
            .map(|(score, key)| match self.snap.docs.unit_of_key(key) {
                Some(unit) if (unit as usize) < self.snap.units().len() => Ok((score, unit)),
                _ => Err(QueryError::Corrupt("search index names a unit key which the tables lack".into())),
            })
            .collect()
    }

    /// API names the query names that the symbol table defines, each with the
    /// units (first unit of each defining section) that define it. A name
    /// counts when it is written like code (`fetchJson`, `wish()`, `Default<>`,
    /// `` `ifElse` ``, a capitalised word after the first), is in a short
    /// query, or is a plain word rare in prose.
    pub(crate) fn query_symbols(&self, query: &str, terms: &[String]) -> Vec<(String, Vec<u32>)> {
        // A search index that does not open fails the search that asked.
        let Ok((reader, fields)) = self.search_index() else { return Vec::new() };
        let searcher = reader.searcher();
        let units = self.snap.units().len().max(1) as f64;
        let mut out: Vec<(String, Vec<u32>)> = Vec::new();
        let chars: Vec<char> = query.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if !(chars[i].is_alphabetic() || chars[i] == '_' || chars[i] == '$') {
                i += 1;
                continue;
            }
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let key = word.to_lowercase();
            let Some(defining) = self.symbols().get(&key) else { continue };
            if out.iter().any(|(n, _)| n.to_lowercase() == key) {
                continue;
            }
            // Capitalised after the first word reads as a type name (`a Writable`).
            let capitalised_inside = start > 0 && word.starts_with(char::is_uppercase);
            let code_like = capitalised_inside
                || word.chars().skip(1).any(char::is_uppercase)
                || word.contains('_')
                || matches!(chars.get(i), Some('(' | '<'))
                || (start > 0 && chars[start - 1] == '`');
            // A plain word must be a searched term itself (not a stop word).
            let plain = || {
                let analysed = search_schema::terms(&word);
                analysed.len() == 1 && terms.contains(&analysed[0]) && {
                    let live =
                        LiveStatistics { searcher: &searcher, deletions: self.snap.search_deletions().ok().flatten() };
                    let df = live.doc_freq(&Term::from_field_text(fields.body, &analysed[0]));
                    let share = df.unwrap_or(u64::MAX) as f64 / units;
                    share
                        < if terms.len() <= SHORT_QUERY_TERMS { SHORT_QUERY_MAX_SHARE } else { PLAIN_SYMBOL_MAX_SHARE }
                }
            };
            if code_like || plain() {
                out.push((defining.0.clone(), defining.1.clone()));
            }
        }
        out
    }

    /// Addresses of the best `depth` units for a query (no snippets, no limit
    /// cap): what evaluation needs to find the rank of an expected section.
    pub fn rank_addresses(
        &self,
        query: &str,
        include_history: bool,
        depth: usize,
        mode: RetrievalMode,
    ) -> Result<Vec<String>, QueryError> {
        let terms = query_terms(query);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let symbols = self.query_symbols(query, &terms);
        let ranked = self.rank(query, &terms, &symbols, None, include_history, depth, mode)?.ranked;
        Ok(ranked.into_iter().map(|(_, u, _)| self.snap.units()[u as usize].address.clone()).collect())
    }
}

/// The search index's field of a [`FIELD_WEIGHTS`] name.
fn field_named(f: &search_schema::Fields, name: &str) -> tantivy::schema::Field {
    match name {
        "heading" => f.heading,
        "context" => f.context,
        "path" => f.path,
        "body" => f.body,
        "code" => f.code,
        "parent" => f.parent,
        "defines" => f.defines,
        _ => f.symbols,
    }
}

/// A query's analysed terms, each once, in query order (what both search and
/// evaluation rank by).
fn query_terms(query: &str) -> Vec<String> {
    let mut terms = search_schema::terms(query);
    let mut seen = std::collections::HashSet::new();
    terms.retain(|t| seen.insert(t.clone()));
    terms
}

/// Whether a heading is exactly an API name, written as code or not
/// (`wish()`, `` `Writable<>` ``, `fetchJson<T>`).
fn heading_is(heading: &str, name: &str) -> bool {
    // Drop backticks and every bracketed group (type arguments, parameters).
    let mut bare = String::new();
    let mut depth = 0usize;
    for c in heading.chars() {
        match c {
            '`' => {}
            '<' | '(' => depth += 1,
            '>' | ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => bare.push(c),
            _ => {}
        }
    }
    bare.trim().eq_ignore_ascii_case(name)
}

fn explain(unit: &UnitText, terms: &[String], historical: bool) -> Why {
    let mut fields = BTreeMap::new();
    let mut matched: Vec<String> = Vec::new();
    for (name, text) in unit.fields() {
        if text.is_empty() {
            continue;
        }
        let present = terms_present(text, terms);
        let found: Vec<String> = terms.iter().zip(&present).filter(|(_, p)| **p).map(|(t, _)| t.clone()).collect();
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
    Why {
        matched_terms: matched,
        missing_terms: missing,
        fields,
        historical_demoted: historical,
        score_parts: ScoreParts::default(),
        defines: Vec::new(),
    }
}

/// Which of `terms` occur in `text`, in the order of `terms`.
fn terms_present(text: &str, terms: &[String]) -> Vec<bool> {
    let mut present = vec![false; terms.len()];
    search_schema::for_each_term(text, |t| {
        if let Some(i) = terms.iter().position(|q| q == t) {
            present[i] = true;
        }
    });
    present
}

/// The line with the most query terms, and what follows it, up to the snippet size.
fn snippet(text: &str, terms: &[String]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut best = (0usize, 0usize);
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let score = terms_present(line, terms).iter().filter(|p| **p).count();
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

/// Questions whose vectors an engine keeps.
const QUERY_VECTORS_KEPT: usize = 64;

#[cfg(test)]
mod tests {
    use super::heading_is;

    #[test]
    fn a_heading_is_a_name_only_when_it_is_nothing_else() {
        assert!(heading_is("`wish()`", "wish"));
        assert!(heading_is("Writable<>", "Writable"));
        assert!(heading_is("`fetchJson<T>`", "fetchjson"));
        assert!(!heading_is("`Writable<T[]>` vs `Writable<Array<Writable<T>>>`", "Writable"));
        assert!(!heading_is("Using wish", "wish"));
    }
}
