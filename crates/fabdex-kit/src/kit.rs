//! The kit: what research hands an author. Every string and list has a bound
//! (see [`Bounds`]); `sources`, the embedded pattern records, `missing`,
//! `run` and `exposure` are filled by the host at admission, never taken
//! from the model's text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The documented bounds of a kit, checked at admission.
pub struct Bounds;

impl Bounds {
    pub const TASK: usize = 2_000;
    pub const SUMMARY: usize = 4_000;
    pub const RATIONALE: usize = 4_000;
    pub const TEXT: usize = 1_000;
    pub const EXAMPLE: usize = 24_000;
    pub const INPUTS: usize = 32;
    pub const PATTERNS: usize = 16;
    pub const STEPS: usize = 32;
    pub const RULES: usize = 32;
    pub const VERIFICATION: usize = 16;
    pub const SOURCE_IDS: usize = 32;
}

/// Admission's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum KitStatus {
    /// As proposed, before admission.
    #[default]
    Draft,
    Complete,
    Incomplete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RecommendationKind {
    /// Run one existing pattern as it is (needs a `run-pattern-input` example).
    DirectRun,
    /// Compose existing patterns in new source (needs a `pattern-source` example).
    Compose,
    /// Write a new pattern (needs a `pattern-source` example).
    Author,
    /// Answer with the API rules that apply (needs at least one rule).
    FocusedApi,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Recommendation {
    pub kind: RecommendationKind,
    /// Why this approach (at most 4,000 chars).
    #[schemars(length(max = 4000))]
    pub rationale: String,
}

/// A granted handle bound to an argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct KitInput {
    /// The argument it binds (of a selected pattern), e.g. `db`.
    #[schemars(length(max = 1000))]
    pub name: String,
    /// A token from the handle inventory.
    #[schemars(length(max = 1000))]
    pub token: String,
    #[serde(default)]
    #[schemars(length(max = 1000))]
    pub purpose: String,
}

/// A selected pattern. `record` is the host's record, filled at admission.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KitPattern {
    #[serde(rename = "patternId")]
    pub pattern_id: String,
    /// What it is used for here (at most 1,000 chars).
    #[serde(default)]
    #[schemars(length(max = 1000))]
    pub role: String,
    /// The host's record of the pattern (identity, import hint, contract):
    /// set at admission; whatever the proposal put here is replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    #[schemars(length(max = 1000))]
    pub text: String,
    /// Citation ids (`cit-…`) from the run's ledger.
    #[serde(default, rename = "sourceIds")]
    #[schemars(length(max = 32))]
    pub source_ids: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ExampleKind {
    /// JSON: `{"patternId": …, "argument": {…}}`; a handle is bound as `{"$handle": "<token>"}`.
    RunPatternInput,
    /// TypeScript/TSX source of a pattern.
    PatternSource,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Example {
    pub kind: ExampleKind,
    /// At most 24,000 chars: enough for a complete minimal composition.
    #[schemars(length(max = 24000))]
    pub content: String,
    #[serde(default, rename = "sourceIds")]
    #[schemars(length(max = 32))]
    pub source_ids: Vec<String>,
    /// `json` or `tsx` (informative).
    #[serde(default)]
    pub syntax: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Rule {
    #[schemars(length(max = 1000))]
    pub rule: String,
    /// At least one citation of a read (`read` item) in the run's ledger.
    #[serde(default, rename = "sourceIds")]
    #[schemars(length(max = 32))]
    pub source_ids: Vec<String>,
}

/// A source the run read, from the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Source {
    pub id: String,
    pub address: String,
    pub origin: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<u64>,
    pub digest: String,
    /// Ledger sequence number of the call that returned it.
    pub seq: u64,
}

/// Something the kit needs that is not there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Missing {
    /// `input`: a required argument with no granted handle bound to it.
    /// Set by the research loop when it could not finish: `model` (the
    /// endpoint failed), `budget` (a budget ran out before a kit was
    /// submitted), `kit` (no valid kit after the repair turn).
    pub kind: String,
    /// `input` only.
    #[serde(rename = "patternId", default, skip_serializing_if = "String::is_empty")]
    pub pattern_id: String,
    /// `input` only.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub argument: String,
    /// `input` only: its type, as TypeScript.
    #[serde(rename = "type", default, skip_serializing_if = "String::is_empty")]
    pub ty: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What would make it available.
    pub resolution: String,
}

/// The implementation kit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Kit {
    /// Set by admission: `complete` only when nothing is missing.
    #[serde(default)]
    pub status: KitStatus,
    #[schemars(length(max = 2000))]
    pub task: String,
    #[serde(default)]
    #[schemars(length(max = 4000))]
    pub summary: String,
    pub recommendation: Recommendation,
    #[serde(default)]
    #[schemars(length(max = 32))]
    pub inputs: Vec<KitInput>,
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub patterns: Vec<KitPattern>,
    #[serde(default)]
    #[schemars(length(max = 32))]
    pub steps: Vec<Step>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<Example>,
    #[serde(default)]
    #[schemars(length(max = 32))]
    pub rules: Vec<Rule>,
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub verification: Vec<String>,
    /// Filled from the run's ledger at admission.
    #[serde(default)]
    pub sources: Vec<Source>,
    /// Filled at admission.
    #[serde(default)]
    pub missing: Vec<Missing>,
    /// The research run, set at admission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The run's exposure set (origins read), set at admission: the kit inherits it.
    #[serde(default)]
    pub exposure: Vec<String>,
}

/// A granted handle: what the harness can pass into a pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Handle {
    pub token: String,
    #[serde(default)]
    pub description: String,
    /// JSON Schema of what the handle holds.
    #[serde(default)]
    pub schema: Option<Value>,
}

/// The handle inventory file: `{"handles": [...]}` or a bare list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Inventory {
    Wrapped { handles: Vec<Handle> },
    Bare(Vec<Handle>),
}

impl Inventory {
    pub fn handles(&self) -> &[Handle] {
        match self {
            Inventory::Wrapped { handles } | Inventory::Bare(handles) => handles,
        }
    }
}
