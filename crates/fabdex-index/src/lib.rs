//! # fabdex-index
//!
//! The batch half of fabdex: read the configuration, walk the roots, extract
//! every file in parallel, and publish one immutable snapshot directory.
//!
//! ```text
//! <index>/CURRENT                      id of the published snapshot (atomic rename)
//! <index>/snapshots/<id>/manifest.json id, format version, per-file digests, counts, table and search-file digests
//! <index>/snapshots/<id>/report.json   what the build read, skipped and could not resolve
//! <index>/snapshots/<id>/tables/       tables (docs.rows, patterns.rows, semantic-*.bin)
//! <index>/snapshots/<id>/search/       the tantivy index
//! <index>/snapshots/<id>/blobs.pack    content-addressed (blake3) bytes of every readable file, one pack
//! <index>/cache/                       per-file extraction results keyed by content digest, a pack per extractor
//! ```
//!
//! A build happens in `<index>/staging/` and is published by renaming the
//! finished directory into `snapshots/` and then replacing `CURRENT`; a failed
//! or interrupted build never touches the published snapshot. Everything a read
//! needs is in the snapshot: the source tree may be deleted afterwards.
//!
//! Start reading at [`build::build`] (writing) and [`snapshot::Snapshot::open`]
//! (reading).

pub mod build;
pub mod cache;
pub mod cli;
pub mod config;
pub mod embeddings;
pub mod incremental;
pub mod links;
pub mod own_text;
pub mod pattern_terms;
pub mod patterns;
pub mod profiles;
pub mod published;
pub mod referrers;
pub mod search_write;
pub mod semantic;
pub mod walk;

pub use build::{BuildOptions, IndexReport, build};
pub use config::{Config, RootConfig};
pub use fabdex_snapshot::integrity::CheckCounts;
// The reader half lives in `fabdex-snapshot`; its modules are re-exported
// so the writer's callers (tests, benches) name one crate.
pub use fabdex_snapshot::{
    CorruptSnapshot, Manifest, Snapshot, Unit, Verified, blobs, docs_table, integrity, passages, patterns_table, rows,
    search_schema, snapshot, table_bytes, verify_published,
};
