//! Content digests. One algorithm (BLAKE3) everywhere, written with its name so
//! a reader of a ledger or manifest never has to guess.

/// Digest of exactly these bytes: `blake3:<64 hex>`.
pub fn digest_bytes(bytes: &[u8]) -> String {
    format!("blake3:{}", blake3::hash(bytes).to_hex())
}

/// Digest of exactly this text (its UTF-8 bytes).
pub fn digest_text(text: &str) -> String {
    digest_bytes(text.as_bytes())
}

/// The hex part of a `blake3:` digest, if it is one.
pub fn digest_hex(digest: &str) -> Option<&str> {
    let hex = digest.strip_prefix("blake3:")?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_names_its_algorithm_and_differs_per_text() {
        let a = digest_text("wish");
        assert!(a.starts_with("blake3:"));
        assert_eq!(digest_hex(&a).unwrap().len(), 64);
        assert_ne!(a, digest_text("wish "));
        assert_eq!(a, digest_bytes(b"wish"));
        assert_eq!(digest_hex("sha256:abc"), None);
    }
}
