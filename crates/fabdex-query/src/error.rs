//! Query errors: what kind of failure, with a message that names the address,
//! path or argument at fault.

/// Every query failure. The kind decides the CLI exit code and, later, the
/// HTTP status; the message is the same everywhere.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// A caller's argument is invalid (bad address, limit out of bounds, …).
    #[error("{0}")]
    InvalidArgument(String),
    /// The address is well-formed but names nothing in the snapshot.
    #[error("{0}")]
    NotFound(String),
    /// There is no usable snapshot.
    #[error("{0}")]
    NoSnapshot(String),
    /// The snapshot failed an integrity check.
    #[error("{0}")]
    Corrupt(String),
    /// The operator's policy does not release this origin's text to the consumer.
    #[error("{0}")]
    Denied(String),
}

impl QueryError {
    pub fn from_open(err: anyhow::Error) -> QueryError {
        let message = format!("{err:#}");
        if err.chain().any(|e| e.is::<fabdex_snapshot::CorruptSnapshot>()) {
            QueryError::Corrupt(message)
        } else {
            QueryError::NoSnapshot(message)
        }
    }

    /// Stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            QueryError::InvalidArgument(_) => "invalid-argument",
            QueryError::NotFound(_) => "not-found",
            QueryError::NoSnapshot(_) => "no-snapshot",
            QueryError::Corrupt(_) => "corrupt",
            QueryError::Denied(_) => "denied",
        }
    }
}
