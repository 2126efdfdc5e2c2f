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

/// What a caller records; the ledger adds sequence number, run and time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NewRecord {
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
