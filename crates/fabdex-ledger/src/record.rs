//! Ledger records and the items they hold.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What kind of thing was returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ItemKind {
    /// A bounded read: exactly `offset..end` of the addressed text.
    Read,
    /// A search snippet of a docs section.
    Snippet,
    /// A pattern search hit (its description).
    PatternHit,
    /// A pattern record (`inspect`, `contract`).
    Record,
    /// Names, headings and addresses only (outline, related, files, deps).
    Metadata,
}

/// One item returned by a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Item {
    pub kind: ItemKind,
    pub address: String,
    pub origin: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub offset: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub end: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub total: Option<u64>,
    /// Digest of exactly the text returned (absent when nothing was released).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub digest: Option<String>,
    /// Snippets and hits: digest of the whole text they were cut from, so a
    /// later check can tell whether that text changed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source_digest: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub truncated: bool,
    /// Source reads: the per-line limit the text was cut at.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub max_line_chars: Option<u64>,
    /// Stable id of (address, range, digest); only for released text.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub citation: Option<String>,
    /// False when the policy withheld the text.
    pub released: bool,
    /// The policy rule that withheld it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub denied_by: Option<String>,
}

/// The citation id of a released text: `cit-` and 20 hex chars of a blake3
/// digest over address, range and text digest.
pub fn citation_id(address: &str, offset: Option<u64>, end: Option<u64>, digest: &str) -> String {
    let key = format!(
        "fabdex-citation-v1\n{address}\n{}\n{}\n{digest}",
        offset.map_or("-".into(), |o| o.to_string()),
        end.map_or("-".into(), |e| e.to_string())
    );
    format!("cit-{}", &blake3::hash(key.as_bytes()).to_hex()[..20])
}

/// What a ledger record is: a query call (the default, left out of the
/// line) or a research model's turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RecordKind {
    #[default]
    Tool,
    ModelTurn,
}

impl RecordKind {
    pub fn is_tool(&self) -> bool {
        *self == RecordKind::Tool
    }
}

/// One tool call a model turn asked for, as the research loop answered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TurnCall {
    pub tool: String,
    /// `ok`, `tool-error`, `refused` (over a budget, a repeat, not allowed) or `invalid-arguments`.
    pub outcome: String,
    /// Chars of the result returned to the model.
    pub chars: u64,
    pub wall_ms: u64,
    /// Ledger sequence number of the call's own record, when it reached the engine.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub seq: Option<u64>,
}

/// How a turn's request was fitted inside the model's context window
/// (recorded when the window is known). The estimate planned the request;
/// the turn's `tokens_in` is the server's own count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ContextFit {
    /// The window in tokens.
    pub window: u32,
    /// Where it was learned: `config`, `flag`, `server /v1/models`, `server /props` or `refusal`.
    pub window_source: String,
    /// Tokens kept for the answer (the request's `max_tokens`).
    pub answer_reserve: u32,
    /// The request's prompt tokens as planned (chars at `chars_per_token`).
    pub estimated_tokens_in: u64,
    pub chars_per_token: f64,
    /// The rate came from the server's counts (else a cautious guess).
    pub rate_measured: bool,
    /// Tool list sent: `full`, `trimmed` (first sentences, no schema prose) or `essential`.
    pub tools: String,
    /// Earlier tool results replaced by a stub that keeps their citations.
    pub results_removed: u32,
    /// Results (and the opening pass) cut short, each with a `_cut` note.
    pub results_cut: u32,
    /// Chars the cuts and removals left out of this request.
    pub chars_cut: u64,
    /// The server refused the first request as too long; this is the smaller retry.
    pub retried_smaller: bool,
}

/// A research model's turn: what went in and out, and the exposure of the
/// context it ran in (every origin the run had read before it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TurnUsage {
    /// 1-based turn number within the research call.
    pub turn: u32,
    pub model: String,
    /// `opening`, `research`, `repair`.
    pub phase: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Chars of the messages sent in this turn's request.
    pub chars_in: u64,
    /// Wall time of the model's answer, retries included.
    pub wall_ms: u64,
    /// HTTP attempts (more than 1 when a failure was retried).
    pub attempts: u32,
    /// `tool_calls`, `stop`, `length`, `kit`, … or the failure.
    pub finish: String,
    pub calls: Vec<TurnCall>,
    /// Origins read before this turn: the turn's output inherits them.
    pub exposure: Vec<String>,
    /// How the request was fitted to the model's context, when its window is known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub context: Option<ContextFit>,
}

impl TurnUsage {
    /// One line for `ledger show`.
    pub fn summary(&self) -> String {
        let calls: Vec<String> = self
            .calls
            .iter()
            .map(|c| if c.outcome == "ok" { c.tool.clone() } else { format!("{} ({})", c.tool, c.outcome) })
            .collect();
        format!(
            "model turn {} ({}) {}: {} tokens in, {} out, {} chars in, {} ms, {} attempt{}, finish {}; calls: {}; exposure: {}",
            self.turn,
            self.phase,
            self.model,
            self.tokens_in,
            self.tokens_out,
            self.chars_in,
            self.wall_ms,
            self.attempts,
            if self.attempts == 1 { "" } else { "s" },
            self.finish,
            if calls.is_empty() { "none".to_string() } else { calls.join(", ") },
            if self.exposure.is_empty() { "none".to_string() } else { self.exposure.join(", ") },
        )
    }
}

/// What a caller records; the ledger adds sequence number, run and time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NewRecord {
    /// `tool` (left out) or `model-turn`.
    #[serde(skip_serializing_if = "RecordKind::is_tool", default)]
    pub kind: RecordKind,
    /// A model turn's figures.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub turn: Option<TurnUsage>,
    /// The tool called, or `model` for a model turn.
    pub tool: String,
    pub arguments: Value,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub snapshot: Option<String>,
    pub consumer: String,
    /// `none`, or the policy file and its digest.
    pub policy: String,
    pub items: Vec<Item>,
    /// The call failed: its error kind and message (no items).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// One ledger line: the call as recorded, with its place in the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Record {
    pub seq: u64,
    pub time: String,
    pub run: String,
    #[serde(flatten)]
    pub call: NewRecord,
}
