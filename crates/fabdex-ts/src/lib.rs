//! # fabdex-ts
//!
//! TypeScript/TSX pattern programs into tables: imports (with `cf:`
//! specifiers parsed exactly), exports (kind, line range, JSDoc, signature) and
//! `pattern(...)` definitions. Like `fabdex-md`, a pure function of one file's
//! text: no file system, no store; the indexer assembles programs from files.
//!
//! - [`extract`]: imports, exports, `pattern(...)` definitions (swc).
//! - [`outline::outline`]: top-level definitions and imports by tree-sitter,
//!   with the queries in `queries/`, also for files swc cannot parse.
//! - [`program::program_contract`]: a program's argument and result schemas
//!   ([`schema`]: TypeScript types → JSON Schema by the compiler's rules).
//!

/// Version of the extraction output (per-file extract + outline, and program
/// contracts, which the snapshot id must cover too); bump when either changes.
pub const EXTRACTOR_VERSION: u32 = 4;

pub mod cf_spec;
mod decls;
mod extract;
mod infer;
mod literal_order;
pub mod outline;
pub mod program;
pub mod reads;
pub mod schema;
mod walk;

pub use extract::{
    ExportKind, ExportRecord, ImportKind, ImportRecord, ImportedName, Parsed, PatternRecord, TsExtraction, extract,
    parse,
};
