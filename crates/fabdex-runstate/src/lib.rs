//! # fabdex-runstate
//!
//! The deep-research run contract as files (`spec.json`, staged and canonical
//! evidence, drafts, evals, feedback, `meta.json`) with published JSON
//! Schemas ([`schema`]) and deterministic validation: each artifact alone
//! ([`artifacts`]), the whole run against its durable state ([`meta::validate_run`]),
//! and the resume plan from what is on disk ([`plan::plan`], [`plan::apply`]).
//! Every violation names the file, the JSON pointer and the rule.

pub mod artifacts;
pub mod cli;
pub mod meta;
pub mod plan;

pub use artifacts::Violation;

/// The JSON Schema of one artifact: `spec`, `evidence`, `eval` or `meta`.
pub fn schema(name: &str) -> Option<serde_json::Value> {
    let s = match name {
        "spec" => schemars::schema_for!(artifacts::Spec),
        "evidence" => schemars::schema_for!(artifacts::Evidence),
        "eval" => schemars::schema_for!(artifacts::Eval),
        "meta" => schemars::schema_for!(meta::Meta),
        _ => return None,
    };
    serde_json::to_value(s).ok()
}
