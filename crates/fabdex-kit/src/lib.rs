//! # fabdex-kit
//!
//! The implementation kit research hands an author ([`kit::Kit`]: approach,
//! inputs, patterns, steps, example, rules, verification, sources, missing,
//! run, exposure; every list and string bounded), its JSON Schema
//! ([`schema`]), and admission ([`admit::admit`]): the host-side checks that
//! keep only what the host can confirm. Sources come from the run's ledger,
//! patterns from the index (inspected by the run, identity verified), inputs
//! from the handle inventory; examples are checked (JSON arguments against
//! the pattern's schema; TSX syntax, imports, imported names and result
//! fields read); placeholders are refused. `complete` only when nothing is
//! missing.

pub mod admit;
pub mod cli;
pub mod kit;
pub mod placeholders;

pub use admit::{Admission, Problem, admit};
pub use kit::{Handle, Inventory, Kit, KitStatus};

/// The kit's published JSON Schema.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(kit::Kit)).unwrap_or_default()
}
