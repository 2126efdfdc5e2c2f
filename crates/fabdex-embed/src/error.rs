//! The encoder's one error type.

use std::path::PathBuf;

/// What went wrong loading or running a model; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model {path}: {message}")]
    Model { path: PathBuf, message: String },
    #[error("embedding model {path}: encoding failed: {message}")]
    Encode { path: PathBuf, message: String },
}
