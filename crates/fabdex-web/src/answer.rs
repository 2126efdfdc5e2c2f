//! What the page functions take: a tool's answer or why there is none,
//! and what every page shows around its content.

use serde_json::Value;

/// Why a tool gave no answer: its error kind (`denied`, `not-found`, …) and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: String,
    pub message: String,
}

impl Failure {
    pub fn new(kind: &str, message: impl Into<String>) -> Failure {
        Failure { kind: kind.into(), message: message.into() }
    }
}

/// One tool's answer: its JSON output, or why there is none.
pub type Answer = Result<Value, Failure>;

/// What every page shows around its content.
#[derive(Debug, Clone, Default)]
pub struct Chrome<'a> {
    /// The text in the header's search box.
    pub query: &'a str,
    /// The run the server records calls in, if any.
    pub run_id: Option<&'a str>,
    /// That run's `ledger_exposure` answer, for the provenance footer.
    pub exposure: Option<Answer>,
}
