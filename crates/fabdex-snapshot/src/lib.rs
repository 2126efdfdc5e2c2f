//! # fabdex-snapshot
//!
//! The reader half of an index: open the published snapshot of an index
//! directory (`CURRENT` → `snapshots/<id>/`), check what is read against the
//! manifest's digests (`integrity`), and decode on first use its tables (the
//! docs and patterns rows in `docs_table` and `patterns_table`, over the
//! shared `rows` and `table_bytes`), the blob pack (`blobs`), the tantivy
//! index and its schema and analysis (`search_schema`), the semantic models
//! and their passages (`semantic`, `passages`), pattern search's term table
//! (`pattern_terms`) and the sentence embeddings (`embeddings`).
//!
//! `fabdex-index` writes what this reads (and re-exports it for its own
//! callers); `fabdex-query` reads through this crate alone. Start at
//! [`Snapshot::open`].

pub mod blobs;
pub mod docs_table;
pub mod embeddings;
pub mod integrity;
pub mod passages;
pub mod pattern_terms;
pub mod patterns_table;
pub mod rows;
pub mod search_schema;
pub mod semantic;
pub mod snapshot;
pub mod table_bytes;

pub use integrity::CheckCounts;
pub use snapshot::{CorruptSnapshot, Manifest, Snapshot, Unit, Verified, verify_published};
