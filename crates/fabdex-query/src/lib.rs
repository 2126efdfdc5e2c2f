//! # fabdex-query
//!
//! The query surface over one published snapshot: ranked searches, bounded
//! reads by address, outlines and navigation. Every function here reads the
//! snapshot only (tables, blobs, search index); nothing parses source at query
//! time. The CLI (and later the MCP and HTTP shells) are thin layers over
//! [`Engine`].
//!
//! Every read returns a [`fabdex_model::ReadEnvelope`]: the address of exactly
//! that window, its char range, the total, the digest of the returned text,
//! whether it was truncated and the address of the next window.

mod bm25f;
mod clauses;
mod engine;
mod error;
mod eval;
mod live_stats;
mod navigate;
mod pattern_read;
mod pattern_search;
mod patterns;
mod read;
mod search;
mod weights;

pub use bm25f::{Bm25fParams, DOCS_BM25F};
pub use engine::Engine;
pub use error::QueryError;
pub use eval::{EvalReport, ExpectedSection, PatternEvalReport, PatternTask, Qrel, QuestionResult, TaskResult};
pub use navigate::{Outline, OutlineRow, Related, RelatedLink, SectionRef};
pub use pattern_read::{DepNode, DepTree, FileListing, PatternFileRow};
pub use pattern_search::{
    FieldMatch, FieldSpec, Fit, InputFit, PatternHit, PatternLevers, PatternQuery, PatternSearch, required_inputs,
    schema_properties,
};
pub use patterns::{DeclaredSchemas, FileDiagnostic, Inspection};

/// A property schema's type as one line of TypeScript (`Writable<MailDatabase>`, `MessageHeader[]`).
pub fn render_type(schema: &serde_json::Value) -> String {
    patterns::render_type(schema, None)
}
pub use search::{EmbeddedQuery, Hit, RetrievalMode, ScoreParts, SearchDocs, SearchResult, Why};
pub use weights::{
    BM25F_FROM_TERMS, DENSE_SYMBOL_SCALE, HybridWeights, LexicalScoring, PATTERN_DENSE_WEIGHT, PatternDense,
};
