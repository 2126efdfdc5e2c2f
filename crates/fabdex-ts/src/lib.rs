//! # fabdex-ts
//!
//! TypeScript/TSX pattern programs into tables: imports (with `cf:`
//! specifiers parsed exactly), exports (kind, line range, JSDoc, signature) and
//! `pattern(...)` definitions. Like `fabdex-md`, a pure function of one file's
//! text: no file system, no store; the indexer assembles programs from files.
//!
//! Status: imports, exports and pattern definitions are extracted; contracts
//! (TypeScript types → JSON Schema), the tree-sitter outline for files swc
//! cannot parse, and wiring into `fabdex index` are the rest of the
//! [contracts] issue.

pub mod cf_spec;
mod extract;
pub mod program;
pub mod schema;

pub use extract::{
    ExportKind, ExportRecord, ImportKind, ImportRecord, ImportedName, Parsed, PatternRecord, TsExtraction, extract,
    parse,
};
