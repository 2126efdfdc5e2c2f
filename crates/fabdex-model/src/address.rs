//! Addresses: stable names for readable text that never depend on result
//! position.
//!
//! ```text
//! doc:<root>/<path>                    the whole file
//! doc:<root>/<path>#                   the preamble (text before the first heading)
//! doc:<root>/<path>#<anchor>           a section (GitHub-style anchor)
//! doc:<root>/<path>#<anchor>~<n>       part n (1-based) of a section split for size
//! ...@<offset>                         the same text, from char offset <offset>
//! ```
//!
//! `<root>` is a configured root name; `<path>` is relative to that root and may
//! not escape it (no `..`, no leading `/`, no empty segments, no backslashes).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a string is not a valid address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid address `{address}`: {reason}")]
pub struct AddressError {
    pub address: String,
    pub reason: String,
}

/// A parsed address.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Address {
    Doc(DocAddress),
}

/// An address of Markdown text: a file, its preamble, a section or a part.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DocAddress {
    pub root: String,
    pub path: String,
    /// `None` addresses the whole file; `Some("")` the preamble.
    pub anchor: Option<String>,
    /// 1-based part of a split section.
    pub part: Option<u32>,
    /// Char offset the read starts at.
    pub offset: u64,
}

impl DocAddress {
    pub fn section(root: &str, path: &str, anchor: &str) -> Self {
        DocAddress {
            root: root.to_string(),
            path: path.to_string(),
            anchor: Some(anchor.to_string()),
            part: None,
            offset: 0,
        }
    }

    /// The same text from offset 0: the identity of the addressed text.
    pub fn base(&self) -> DocAddress {
        DocAddress { offset: 0, ..self.clone() }
    }

    pub fn with_offset(&self, offset: u64) -> DocAddress {
        DocAddress { offset, ..self.clone() }
    }

    pub fn with_part(&self, part: Option<u32>) -> DocAddress {
        DocAddress { part, ..self.clone() }
    }

    /// `<root>/<path>`, the file this address is in.
    pub fn file_key(&self) -> String {
        format!("{}/{}", self.root, self.path)
    }
}

impl fmt::Display for DocAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "doc:{}/{}", self.root, self.path)?;
        if let Some(anchor) = &self.anchor {
            write!(f, "#{anchor}")?;
            if let Some(part) = self.part {
                write!(f, "~{part}")?;
            }
        }
        if self.offset > 0 {
            write!(f, "@{}", self.offset)?;
        }
        Ok(())
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Doc(doc) => doc.fmt(f),
        }
    }
}

impl std::str::FromStr for Address {
    type Err = AddressError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Address::parse(s)
    }
}

impl Address {
    pub fn parse(input: &str) -> Result<Address, AddressError> {
        let err = |reason: &str| AddressError { address: input.to_string(), reason: reason.to_string() };
        if input.len() > 4096 {
            return Err(err("longer than 4096 bytes"));
        }
        if let Some(rest) = input.strip_prefix("doc:") {
            return parse_doc(rest).map(Address::Doc).map_err(|r| err(&r));
        }
        match input.split_once(':') {
            Some((scheme, _)) if !scheme.is_empty() && !scheme.contains('/') => {
                Err(err(&format!("unknown scheme `{scheme}:` (expected `doc:`)")))
            }
            _ => Err(err("missing scheme (expected `doc:<root>/<path>#<anchor>`)")),
        }
    }

    pub fn as_doc(&self) -> &DocAddress {
        match self {
            Address::Doc(doc) => doc,
        }
    }
}

fn parse_doc(rest: &str) -> Result<DocAddress, String> {
    let (rest, offset) = split_offset(rest)?;
    let (location, fragment) = match rest.split_once('#') {
        Some((loc, frag)) => (loc, Some(frag)),
        None => (rest, None),
    };
    let (root, path) = location.split_once('/').ok_or_else(|| "expected `<root>/<path>` after `doc:`".to_string())?;
    validate_root(root)?;
    validate_relative_path(path)?;
    let (anchor, part) = match fragment {
        None => (None, None),
        Some(frag) => {
            let (anchor, part) = match frag.rsplit_once('~') {
                Some((anchor, n)) => {
                    let part: u32 = n
                        .parse()
                        .ok()
                        .filter(|p| *p >= 1)
                        .ok_or_else(|| format!("part `~{n}` is not a number >= 1"))?;
                    (anchor, Some(part))
                }
                None => (frag, None),
            };
            if anchor.contains(['#', '/', '~']) || anchor.chars().any(char::is_whitespace) {
                return Err(format!("anchor `{anchor}` contains `#`, `/`, `~` or whitespace"));
            }
            (Some(anchor.to_string()), part)
        }
    };
    Ok(DocAddress { root: root.to_string(), path: path.to_string(), anchor, part, offset })
}

/// Split a trailing `@<digits>` char offset.
fn split_offset(rest: &str) -> Result<(&str, u64), String> {
    if let Some((head, tail)) = rest.rsplit_once('@')
        && !tail.is_empty()
        && tail.bytes().all(|b| b.is_ascii_digit())
    {
        let offset = tail.parse::<u64>().map_err(|_| format!("offset `@{tail}` is too large"))?;
        return Ok((head, offset));
    }
    Ok((rest, 0))
}

/// A root name: non-empty, ASCII letters, digits, `.`, `_`, `-`.
pub fn validate_root(root: &str) -> Result<(), String> {
    if root.is_empty() {
        return Err("empty root name".into());
    }
    if root == "." || root == ".." {
        return Err(format!("root name `{root}` is not allowed"));
    }
    if !root.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')) {
        return Err(format!("root name `{root}` may only use ASCII letters, digits, `.`, `_` and `-`"));
    }
    Ok(())
}

/// A path relative to its root that cannot escape it.
pub fn validate_relative_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("empty path".into());
    }
    if path.starts_with('/') {
        return Err(format!("path `{path}` is absolute; addresses take paths relative to their root"));
    }
    if path.contains('\\') {
        return Err(format!("path `{path}` contains a backslash"));
    }
    if path.contains('\0') {
        return Err("path contains a NUL byte".into());
    }
    for segment in path.split('/') {
        match segment {
            "" => return Err(format!("path `{path}` has an empty segment")),
            "." | ".." => {
                return Err(format!("path `{path}` escapes or re-enters its root with `{segment}`"));
            }
            _ => {}
        }
    }
    if path.len() >= 2 && path.as_bytes()[1] == b':' && path.as_bytes()[0].is_ascii_alphabetic() {
        return Err(format!("path `{path}` looks like a drive-absolute path"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_every_form() {
        let cases = [
            ("doc:docs/a/b.md", None, None, 0),
            ("doc:docs/a/b.md#", Some(""), None, 0),
            ("doc:docs/a/b.md#result-shape", Some("result-shape"), None, 0),
            ("doc:docs/a/b.md#result-shape~2", Some("result-shape"), Some(2), 0),
            ("doc:docs/a/b.md#result-shape~2@8000", Some("result-shape"), Some(2), 8000),
            ("doc:docs/a/b.md#@12", Some(""), None, 12),
        ];
        for (text, anchor, part, offset) in cases {
            let Address::Doc(doc) = Address::parse(text).unwrap();
            assert_eq!(doc.root, "docs");
            assert_eq!(doc.path, "a/b.md");
            assert_eq!(doc.anchor.as_deref(), anchor, "{text}");
            assert_eq!(doc.part, part, "{text}");
            assert_eq!(doc.offset, offset, "{text}");
            assert_eq!(doc.to_string(), text, "display round-trips");
        }
    }

    #[test]
    fn rejects_escapes_and_malformed_addresses() {
        let bad = [
            ("doc:docs/../etc/passwd", "escapes"),
            ("doc:docs//etc/passwd", "absolute"),
            ("doc:docs/a//b.md", "empty segment"),
            ("doc:docs/./a.md", "escapes"),
            ("doc:docs/a\\b.md", "backslash"),
            ("doc:../x.md", "root name"),
            ("doc:docs", "expected `<root>/<path>`"),
            ("doc:docs/a.md#x~0", "part"),
            ("doc:docs/a.md#x y", "whitespace"),
            ("pattern:abc/x.ts", "unknown scheme"),
            ("docs/a.md", "missing scheme"),
        ];
        for (text, reason) in bad {
            let err = Address::parse(text).unwrap_err();
            assert!(err.to_string().contains(reason), "{text}: {err}");
            assert!(err.to_string().contains(text), "error names the address: {err}");
        }
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in ".{0,80}") {
            let _ = Address::parse(&s);
        }

        #[test]
        fn valid_addresses_round_trip(
            root in "[a-z][a-z0-9_-]{0,8}",
            segs in proptest::collection::vec("[a-zA-Z0-9_][a-zA-Z0-9_. -]{0,10}", 1..4),
            anchor in proptest::option::of("[a-z0-9_-]{0,12}"),
            part in proptest::option::of(1u32..50),
            offset in 0u64..100_000,
        ) {
            let path = segs.join("/");
            prop_assume!(validate_relative_path(&path).is_ok());
            let part = if anchor.is_some() { part } else { None };
            let doc = DocAddress { root, path, anchor, part, offset };
            let text = doc.to_string();
            let parsed = Address::parse(&text).unwrap();
            prop_assert_eq!(parsed, Address::Doc(doc));
        }

        #[test]
        fn parsed_paths_never_escape(s in "doc:[a-z]{1,4}/[./a-z]{0,20}") {
            if let Ok(Address::Doc(doc)) = Address::parse(&s) {
                prop_assert!(!doc.path.split('/').any(|seg| seg == ".." || seg.is_empty()));
                prop_assert!(!doc.path.starts_with('/'));
            }
        }
    }
}
