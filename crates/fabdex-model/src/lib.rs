//! # fabdex-model
//!
//! The vocabulary every fabdex layer shares and nothing else: addresses
//! (`doc:<root>/<path>#<anchor>`), the read envelope every bounded read
//! returns, the records the extractors produce and the snapshot stores, and
//! the digest used to prove which bytes were returned.
//!
//! This crate has no parser, store or search dependencies, so extractors, the
//! snapshot and the query layer can all depend on it without depending on each
//! other. Start with [`address::Address`] and [`envelope::ReadEnvelope`].

pub mod address;
pub mod digest;
pub mod envelope;
pub mod records;
pub mod registry;
pub mod ts;

pub use address::{Address, AddressError, DocAddress, PatternAddress};
pub use digest::{digest_bytes, digest_text};
pub use envelope::{Limits, ReadEnvelope};
