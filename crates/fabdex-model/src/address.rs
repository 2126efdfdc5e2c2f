//! Addresses: stable names for readable text that never depend on result
//! position.
//!
//! ```text
//! doc:<root>/<path>                    the whole file
//! doc:<root>/<path>#                   the preamble (text before the first heading)
//! doc:<root>/<path>#<anchor>           a section (GitHub-style anchor)
//! doc:<root>/<path>#<anchor>~<n>       part n (1-based) of a section split for size
//! ...@<offset>                         the same text, from char offset <offset>
//!
//! pattern:<id>                         a program's main file
//! pattern:<id>/<path>                  one file of a program (path as the program names it)
//! pattern:<id>/<path>:L<a>-L<b>        lines a..=b of it (`:L<a>` alone: line a)
//! pattern:<id>/<path>#<Symbol>         the lines of a definition, found by the outline
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
    Pattern(PatternAddress),
}

/// An address of pattern source: a program's file, lines or definition.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PatternAddress {
    pub pattern_id: String,
    /// `None`: the program's main file.
    pub path: Option<String>,
    /// 1-based inclusive line range.
    pub lines: Option<(u32, u32)>,
    /// A definition name, resolved through the file's outline.
    pub symbol: Option<String>,
    pub offset: u64,
}

impl PatternAddress {
    pub fn with_offset(&self, offset: u64) -> PatternAddress {
        PatternAddress { offset, ..self.clone() }
    }
}

impl fmt::Display for PatternAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = format!("pattern:{}", self.pattern_id);
        if let Some(path) = &self.path {
            s.push('/');
            s.push_str(path);
        }
        if let Some((a, b)) = self.lines {
            s.push_str(&if a == b { format!(":L{a}") } else { format!(":L{a}-L{b}") });
        }
        if let Some(symbol) = &self.symbol {
            s.push('#');
            s.push_str(symbol);
        }
        write_with_offset(f, &s, self.offset)
    }
}

/// `s`, then `@offset` when the offset is not 0, or when `s` itself ends in
/// `@` and digits (a path like `notes@2`): the parser reads the last such
/// suffix as the offset, so it must then be written even when it is 0.
/// (Found by the `address` fuzz target.)
fn write_with_offset(f: &mut fmt::Formatter<'_>, s: &str, offset: u64) -> fmt::Result {
    f.write_str(s)?;
    let ends_like_offset =
        s.rsplit_once('@').is_some_and(|(_, tail)| !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()));
    if offset > 0 || ends_like_offset {
        write!(f, "@{offset}")?;
    }
    Ok(())
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
        let mut s = format!("doc:{}/{}", self.root, self.path);
        if let Some(anchor) = &self.anchor {
            s.push('#');
            s.push_str(anchor);
            if let Some(part) = self.part {
                s.push_str(&format!("~{part}"));
            }
        }
        write_with_offset(f, &s, self.offset)
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Doc(doc) => doc.fmt(f),
            Address::Pattern(p) => p.fmt(f),
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
        if let Some(rest) = input.strip_prefix("pattern:") {
            return parse_pattern(rest).map(Address::Pattern).map_err(|r| err(&r));
        }
        match input.split_once(':') {
            Some((scheme, _)) if !scheme.is_empty() && !scheme.contains('/') => {
                Err(err(&format!("unknown scheme `{scheme}:` (expected `doc:` or `pattern:`)")))
            }
            _ => Err(err("missing scheme (expected `doc:<root>/<path>#<anchor>` or `pattern:<id>/<path>`)")),
        }
    }
}

fn parse_pattern(rest: &str) -> Result<PatternAddress, String> {
    let (rest, offset) = split_offset(rest)?;
    let (rest, symbol) = match rest.rsplit_once('#') {
        Some((head, sym)) => {
            if sym.is_empty() || !sym.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.')) {
                return Err(format!("symbol `#{sym}` must be a non-empty identifier"));
            }
            (head, Some(sym.to_string()))
        }
        None => (rest, None),
    };
    let (rest, lines) = match rest.rfind(":L") {
        Some(at) => {
            let spec = &rest[at + 2..];
            let (a, b) = match spec.split_once("-L") {
                Some((a, b)) => (a, b),
                None => (spec, spec),
            };
            let parse = |n: &str| n.parse::<u32>().ok().filter(|n| *n >= 1);
            match (parse(a), parse(b)) {
                (Some(a), Some(b)) if a <= b => (&rest[..at], Some((a, b))),
                _ => return Err(format!("line range `:L{spec}` must be `:L<a>` or `:L<a>-L<b>` with 1 <= a <= b")),
            }
        }
        None => (rest, None),
    };
    if lines.is_some() && symbol.is_some() {
        return Err("give a line range or a symbol, not both".into());
    }
    let (id, path) = match rest.split_once('/') {
        Some((id, path)) => (id, Some(path)),
        None => (rest, None),
    };
    if id.is_empty() {
        return Err("expected `pattern:<id>` or `pattern:<id>/<path>`".into());
    }
    if let Some(c) = id.chars().find(|c| c.is_whitespace() || c.is_control() || matches!(c, ':' | '@')) {
        return Err(format!("pattern id `{}` contains {c:?}", id.escape_debug()));
    }
    if let Some(path) = path {
        validate_relative_path(path)?;
    }
    if path.is_none() && (lines.is_some() || symbol.is_some()) {
        return Err("a line range or symbol needs a file: `pattern:<id>/<path>:L<a>-L<b>`".into());
    }
    Ok(PatternAddress { pattern_id: id.to_string(), path: path.map(str::to_string), lines, symbol, offset })
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
            let Ok(Address::Doc(doc)) = Address::parse(text) else { panic!("{text}") };
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
            ("file:abc/x.ts", "unknown scheme"),
            ("pattern:abc/../x.ts", "escapes"),
            ("pattern:abc/x.ts:L5-L2", "line range"),
            ("pattern:abc/x.ts:L0", "line range"),
            ("pattern:abc/x.ts#", "symbol"),
            ("pattern:abc#Foo", "needs a file"),
            ("pattern:/x.ts", "expected `pattern:<id>"),
            ("pattern:abc/x.ts:L2#Foo", "not both"),
            ("docs/a.md", "missing scheme"),
        ];
        for (text, reason) in bad {
            let err = Address::parse(text).unwrap_err();
            assert!(err.to_string().contains(reason), "{text}: {err}");
            assert!(err.to_string().contains(text), "error names the address: {err}");
        }
    }

    #[test]
    fn parses_pattern_addresses() {
        let cases = [
            ("pattern:Abc-_9", None, None, None, 0),
            ("pattern:Abc-_9/mail/inbox.tsx", Some("mail/inbox.tsx"), None, None, 0),
            ("pattern:Abc-_9/inbox.tsx:L3-L9", Some("inbox.tsx"), Some((3, 9)), None, 0),
            ("pattern:Abc-_9/inbox.tsx:L4", Some("inbox.tsx"), Some((4, 4)), None, 0),
            ("pattern:Abc-_9/inbox.tsx#InboxOutput@20", Some("inbox.tsx"), None, Some("InboxOutput"), 20),
        ];
        for (text, path, lines, symbol, offset) in cases {
            let Ok(Address::Pattern(p)) = Address::parse(text) else { panic!("{text}") };
            assert_eq!(p.pattern_id, "Abc-_9");
            assert_eq!(p.path.as_deref(), path, "{text}");
            assert_eq!(p.lines, lines, "{text}");
            assert_eq!(p.symbol.as_deref(), symbol, "{text}");
            assert_eq!(p.offset, offset, "{text}");
            assert_eq!(p.to_string(), text, "display round-trips");
        }
    }

    proptest! {
        #[test]
        fn pattern_addresses_round_trip(
            id in "[A-Za-z0-9_-]{1,43}",
            segs in proptest::collection::vec("[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,10}", 0..3),
            lines in proptest::option::of((1u32..500, 0u32..50)),
            offset in 0u64..1000,
        ) {
            let path = if segs.is_empty() { None } else { Some(segs.join("/")) };
            prop_assume!(path.as_deref().is_none_or(|p| validate_relative_path(p).is_ok()));
            let lines = if path.is_some() { lines.map(|(a, n)| (a, a + n)) } else { None };
            let addr = PatternAddress { pattern_id: id, path, lines, symbol: None, offset };
            let parsed = Address::parse(&addr.to_string()).unwrap();
            prop_assert_eq!(parsed, Address::Pattern(addr));
        }

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
