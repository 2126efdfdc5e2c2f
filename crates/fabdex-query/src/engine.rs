//! The opened snapshot that every query runs on, with the lookups built
//! on first use (addresses, files, the link graph, the symbol table, the
//! search index's reader and the sentence model).

use std::collections::HashMap;
use std::path::Path;

use fabdex_snapshot::Snapshot;
use fabdex_snapshot::search_schema::{self, Fields};

use crate::error::QueryError;
use crate::live_stats;
use crate::weights::{HybridWeights, LexicalScoring};

/// Sections and links as a graph: children, and links in and out.
pub(crate) struct Graph {
    /// Section → its child sections.
    pub(crate) children: Vec<Vec<u32>>,
    /// Section → links (indices) that resolve to it.
    pub(crate) backlinks: Vec<Vec<u32>>,
    /// Section → links (indices) written in it.
    pub(crate) outgoing: Vec<Vec<u32>>,
}

impl Graph {
    fn of(docs: &fabdex_snapshot::docs_table::Docs) -> Graph {
        let n = docs.sections.len();
        let mut children = vec![Vec::new(); n];
        for i in 0..n as u32 {
            if let Some(p) = docs.section_parent(i) {
                children[p as usize].push(i);
            }
        }
        let mut backlinks = vec![Vec::new(); n];
        let mut outgoing = vec![Vec::new(); n];
        for i in 0..docs.links.len() as u32 {
            let (from, to) = docs.link_ends(i);
            outgoing[from as usize].push(i);
            if let Some(t) = to {
                backlinks[t as usize].push(i);
            }
        }
        Graph { children, backlinks, outgoing }
    }
}

/// An opened snapshot with the lookups queries need.
pub struct Engine {
    pub(crate) snap: Snapshot,
    /// The search index's reader and fields, opened by the first search
    /// (`open`, `outline` and the pattern reads never need them).
    pub(crate) search: std::sync::OnceLock<Result<(tantivy::IndexReader, Fields), QueryError>>,
    /// Section address (`doc:r/p#a`) → section index, built by the first
    /// read by address (a search never needs it; on labs it is 9,000
    /// strings, 1.5 ms).
    pub(crate) sections: std::sync::OnceLock<HashMap<String, u32>>,
    /// `<root>/<path>` → file index, likewise.
    pub(crate) files: std::sync::OnceLock<HashMap<String, u32>>,
    /// The link graph, built from the docs table's columns by the first
    /// `related` (the other reads never need it).
    pub(crate) graph: std::sync::OnceLock<Graph>,
    /// The symbol table: lowercased API name → (its spelling, the first
    /// unit of each defining section), built from the docs table's columns
    /// by the first search.
    pub(crate) symbols: std::sync::OnceLock<HashMap<String, (String, Vec<u32>)>>,
    /// Weights of the hybrid ranking (the defaults unless an ablation sets others).
    pub(crate) hybrid: HybridWeights,
    /// How the lexical part scores (BM25F unless an ablation sets the per-field sum).
    pub(crate) lexical_scoring: LexicalScoring,
    /// Whether a question of several clauses is ranked clause by clause and
    /// fused, when the sentence model ranks (on unless an ablation turns it off).
    pub(crate) fuse_clauses: bool,
    /// Where to load the embedding model from, instead of the folder the index recorded.
    pub(crate) embedding_dir: Option<std::path::PathBuf>,
    /// The index's embedding model, loaded by the first search that needs it.
    pub(crate) encoder: std::sync::OnceLock<Result<fabdex_embed::SentenceEncoder, String>>,
    /// Question vectors by token ids (see `Engine::cached_question_vector`).
    pub(crate) query_vectors: std::sync::Mutex<HashMap<Vec<u32>, Vec<f32>>>,
    /// How pattern search weighs and forms the programs' sentence-embedding cosine.
    pub(crate) pattern_dense: crate::weights::PatternDense,
}

impl Engine {
    /// Open the published snapshot of an index directory.
    pub fn open_index(index_dir: &Path) -> Result<Engine, QueryError> {
        let snap = Snapshot::open(index_dir).map_err(QueryError::from_open)?;
        Engine::from_snapshot(snap)
    }

    pub fn from_snapshot(snap: Snapshot) -> Result<Engine, QueryError> {
        Ok(Engine {
            snap,
            search: std::sync::OnceLock::new(),
            sections: std::sync::OnceLock::new(),
            files: std::sync::OnceLock::new(),
            graph: std::sync::OnceLock::new(),
            symbols: std::sync::OnceLock::new(),
            hybrid: Default::default(),
            lexical_scoring: Default::default(),
            fuse_clauses: true,
            embedding_dir: None,
            encoder: std::sync::OnceLock::new(),
            query_vectors: Default::default(),
            pattern_dense: crate::weights::PatternDense::default(),
        })
    }

    /// Change the hybrid ranking's weights (ablations and tuning; the defaults are documented in docs/ranking.md).
    pub fn set_hybrid_weights(&mut self, weights: HybridWeights) {
        self.hybrid = weights;
    }

    /// Change how the lexical part scores (ablations; the default is BM25F with [`crate::DOCS_BM25F`]).
    pub fn set_lexical_scoring(&mut self, scoring: LexicalScoring) {
        self.lexical_scoring = scoring;
    }

    /// The section with this address (`doc:r/p#a`, no window), if any.
    pub(crate) fn section_index(&self, address: &str) -> Option<u32> {
        let docs = &self.snap.docs;
        let map = self.sections.get_or_init(|| {
            (0..docs.sections.len() as u32).map(|i| (docs.section_address(i).to_string(), i)).collect()
        });
        map.get(address).copied()
    }

    /// The file `<root>/<path>`, if it is indexed.
    pub(crate) fn file_by_key(&self, key: &str) -> Option<u32> {
        let map = self.files.get_or_init(|| {
            self.snap.docs.files.iter().enumerate().map(|(i, f)| (format!("{}/{}", f.root, f.path), i as u32)).collect()
        });
        map.get(key).copied()
    }

    /// The link graph, built on first use.
    pub(crate) fn graph(&self) -> &Graph {
        self.graph.get_or_init(|| Graph::of(&self.snap.docs))
    }

    /// The symbol table, built on first use.
    pub(crate) fn symbols(&self) -> &HashMap<String, (String, Vec<u32>)> {
        self.symbols.get_or_init(|| {
            let mut symbols: HashMap<String, (String, Vec<u32>)> = HashMap::new();
            let mut seen_sections = std::collections::HashSet::new();
            for (i, unit) in self.snap.units().iter().enumerate() {
                if !seen_sections.insert(unit.section) {
                    continue;
                }
                for name in self.snap.docs.section_defines(unit.section) {
                    let entry = symbols.entry(name.to_lowercase()).or_insert_with(|| (name.to_string(), Vec::new()));
                    entry.1.push(i as u32);
                }
            }
            symbols
        })
    }

    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    /// The search index's reader and fields, opened (and its files checked)
    /// on first use.
    pub(crate) fn search_index(&self) -> Result<(&tantivy::IndexReader, Fields), QueryError> {
        let opened = self.search.get_or_init(|| {
            let index = self.snap.search().map_err(QueryError::from_open)?;
            let fields = search_schema::fields_of(&index.schema()).map_err(|e| QueryError::Corrupt(e.to_string()))?;
            let reader: tantivy::IndexReader =
                index.reader_builder().reload_policy(tantivy::ReloadPolicy::Manual).try_into().map_err(
                    |e: tantivy::TantivyError| QueryError::Corrupt(format!("cannot open the search index: {e}")),
                )?;
            let deletions = self.snap.search_deletions().map_err(QueryError::from_open)?;
            live_stats::LiveStatistics { searcher: &reader.searcher(), deletions }
                .check()
                .map_err(QueryError::Corrupt)?;
            Ok((reader, fields))
        });
        match opened {
            Ok((reader, fields)) => Ok((reader, *fields)),
            Err(e) => Err(e.clone()),
        }
    }

    pub fn snapshot_id(&self) -> &str {
        self.snap.id()
    }

    /// Origin of an indexed Markdown file (`doc:<root>/<path>` or `<root>/<path>`).
    pub fn file_origin(&self, file: &str) -> Option<String> {
        let key = file.trim_start_matches("doc:");
        self.file_by_key(key).map(|i| self.snap.docs.files[i as usize].origin.clone())
    }

    /// Origin of an indexed program, by pattern id.
    pub fn program_origin(&self, pattern_id: &str) -> Option<String> {
        let patterns = &self.snap.patterns;
        patterns.program_index(pattern_id).map(|i| patterns.programs[i].origin.clone())
    }
}
