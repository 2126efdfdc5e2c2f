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

pub mod blobs;
pub mod build;
pub mod cache;
pub mod cli;
pub mod config;
pub mod docs_table;
pub mod embeddings;
pub mod incremental;
pub mod integrity;
pub mod links;
pub mod own_text;
pub mod passages;
pub mod pattern_terms;
pub mod patterns;
pub mod patterns_table;
pub mod profiles;
pub mod published;
pub mod referrers;
pub mod rows;
pub mod search_schema;
pub mod search_write;
pub mod semantic;
pub mod snapshot;
pub mod table_bytes;
pub mod walk;

pub use build::{BuildOptions, IndexReport, build};
pub use config::{Config, RootConfig};
pub use integrity::CheckCounts;
pub use snapshot::{CorruptSnapshot, Manifest, Snapshot, Unit, Verified, verify_published};
