//! The ranking's weights and levers, docs and patterns alike: what an
//! ablation or a tuning run changes (`docs/ranking.md` measures each).

use serde::{Deserialize, Serialize};

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

/// Hybrid ranking: weight of the lexical score (BM25 over fields, divided by the best one's).
pub const LEXICAL_WEIGHT: f32 = 1.0;
/// Hybrid ranking: weight of the unit's cosine similarity in the corpus-learned latent space.
pub const SEMANTIC_WEIGHT: f32 = 2.0;
/// Hybrid ranking: weight of the cosine similarity of the unit's whole file.
pub const FILE_SEMANTIC_WEIGHT: f32 = 1.0;
/// Hybrid ranking: bonus for a section that defines an API name the query
/// names, divided among the names the section defines, and halved when the
/// section's heading is not the name itself.
pub const SYMBOL_WEIGHT: f32 = 2.0;
/// Hybrid ranking: weight of the sentence-embedding cosine, on an index built
/// with `--embeddings`. Such cosines spread less than the latent model's
/// (related sections score 0.3 to 0.6), so the weight is larger. Each unit's
/// cosine is its best passage's. Chosen on the tuning questions (the
/// held-out tune half and the labs dev set, recall@10 first, then MRR@10):
/// 4 ties 8 on recall and lifts MRR@10 0.603 → 0.647; the frozen test half
/// rose with it, 0.84 → 0.85 and 0.631 → 0.652 (`docs/ranking.md`).
pub const DENSE_WEIGHT: f32 = 4.0;
/// On a ranking with the sentence-embedding part, the symbol bonus is this
/// many times `SYMBOL_WEIGHT`: the dense part widens the score's range
/// about as much again as the other parts together, and a named API's
/// definition must keep its lead (with weight 2, "what is Writable" ranked a
/// section comparing `Writable<T[]>` forms above `Writable<>` itself).
pub const DENSE_SYMBOL_SCALE: f32 = 2.0;
/// On a ranking with the sentence-embedding part, the lexical part is this
/// many times [`LEXICAL_WEIGHT`]: with the model, BM25's best match misleads
/// more often than the model does on questions in a person's words (on both
/// question sets, 0.5 raised MRR@10: labs 0.500 → 0.517, corpus 0.550 →
/// 0.625; `docs/ranking.md`). API names keep their lead by the symbol bonus.
pub const DENSE_LEXICAL_SCALE: f32 = 0.5;
/// A plain word (not camelCase, not called) counts as naming a symbol only when
/// fewer than this share of units use it in prose: "wish" yes, "pattern" no...
pub const PLAIN_SYMBOL_MAX_SHARE: f64 = 0.02;
/// ...or, in a query this short (in analysed terms), under [`SHORT_QUERY_MAX_SHARE`]:
/// `wish result` is a lookup of the API, not a question in the user's own words.
pub const SHORT_QUERY_TERMS: usize = 3;
pub const SHORT_QUERY_MAX_SHARE: f64 = 0.10;
/// Query terms at which the semantic parts reach their full weight. A short
/// keyword query is precise and lexical matching serves it; a long question in
/// the user's own words is where vocabulary mismatch lives. Below this the
/// semantic weights scale by `terms / SEMANTIC_FULL_AT_TERMS`.
pub const SEMANTIC_FULL_AT_TERMS: usize = 4;

/// The weights of the hybrid ranking's parts. [`Engine::set_hybrid_weights`]
/// changes them for ablations (`examples/ranking_ablation.rs`); a zero turns a lever off.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HybridWeights {
    pub lexical: f32,
    pub semantic: f32,
    pub file_semantic: f32,
    pub symbol: f32,
    /// The sentence-embedding cosine; used only when the index has embeddings.
    pub dense: f32,
}

impl Default for HybridWeights {
    fn default() -> Self {
        HybridWeights {
            lexical: LEXICAL_WEIGHT,
            semantic: SEMANTIC_WEIGHT,
            file_semantic: FILE_SEMANTIC_WEIGHT,
            symbol: SYMBOL_WEIGHT,
            dense: DENSE_WEIGHT,
        }
    }
}

/// How the lexical part scores a unit. [`Engine::set_lexical_scoring`]
/// changes it for ablations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LexicalScoring {
    /// The default. A question (at least [`BM25F_FROM_TERMS`] analysed
    /// terms; an identifier counts as itself and its parts) by BM25F: the unit holding more of its words ranks first. A
    /// keyword query by the sum of per-field BM25 scores, each field with
    /// its own rarity: there, which field holds the word is the signal (a
    /// heading that names `wish` is rarer, and means more, than a body that
    /// mentions it), and BM25F's one rarity per word loses it.
    ByQueryLength(crate::bm25f::Bm25fParams),
    /// BM25F whatever the query's length.
    Bm25f(crate::bm25f::Bm25fParams),
    /// The sum of per-field BM25 scores whatever the query's length (docs
    /// search before BM25F).
    FieldSum,
}

impl Default for LexicalScoring {
    fn default() -> Self {
        LexicalScoring::ByQueryLength(crate::bm25f::DOCS_BM25F)
    }
}

/// From this many analysed terms a query is a question, and BM25F scores
/// its lexical part (the same line as `SEMANTIC_FULL_AT_TERMS`).
pub const BM25F_FROM_TERMS: usize = SEMANTIC_FULL_AT_TERMS;

/// Weight of the sentence-embedding cosine of a program's profile, on an
/// index with program embeddings (see docs/pattern-index.md for the sweep).
pub const PATTERN_DENSE_WEIGHT: f64 = 24.0;

/// How pattern search forms the programs' sentence-embedding cosine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PatternDense {
    /// Weight of the cosine beside the BM25F score.
    pub weight: f64,
    /// Pseudo-relevance feedback: the task's vector moves this share of the
    /// way towards the best passages of the `feedback_depth` programs
    /// closest to it (Rocchio), and the programs are scored against that
    /// (0: off).
    pub feedback: f32,
    pub feedback_depth: usize,
}

/// [`PatternDense::feedback`] by default. Chosen on the tuning tasks (the
/// held-out tune half; success@5 first, then MRR@5) among 0, 0.3 and 0.5 at
/// depths 3 and 5: success@5 0.71 → 0.73; the frozen test half 0.76 → 0.77,
/// and `tests/data/labs-pattern-tasks.json` 0.94 → 0.96 (docs/pattern-index.md).
pub const PATTERN_FEEDBACK: f32 = 0.3;
/// [`PatternDense::feedback_depth`] by default.
pub const PATTERN_FEEDBACK_DEPTH: usize = 3;

impl Default for PatternDense {
    fn default() -> Self {
        PatternDense {
            weight: PATTERN_DENSE_WEIGHT,
            feedback: PATTERN_FEEDBACK,
            feedback_depth: PATTERN_FEEDBACK_DEPTH,
        }
    }
}
