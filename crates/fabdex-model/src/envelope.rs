//! The read envelope: what every bounded read returns, and the bounds.

use serde::{Deserialize, Serialize};

/// One window of one addressable text. Field names are part of the public
/// `--json` contract; do not rename them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReadEnvelope {
    /// Address of exactly this window (includes `@offset` when not at 0).
    pub address: String,
    /// Origin label of the root the text came from (e.g. `docs`, `skill`).
    pub origin: String,
    /// First char of the window, counted in Unicode scalar values.
    pub offset: u64,
    /// One past the last char of the window.
    pub end: u64,
    /// Chars in the whole addressed text.
    pub total: u64,
    /// Digest of exactly `text`.
    pub digest: String,
    /// True when the window stops before the end of the addressed text.
    pub truncated: bool,
    /// Address of the following window; absent when this one reaches the end.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub next: Option<String>,
    /// Source reads: the first and last line (1-based) the window covers.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lines: Option<[u32; 2]>,
    /// Source reads: lines cut at the per-line limit (each ends with a
    /// `… [N more chars]` marker in `text`).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub clipped_lines: Vec<u32>,
    pub text: String,
}

/// Defaults and hard maximums of every bounded call. The CLI, and later the
/// MCP and HTTP shells, read them from here so they cannot disagree.
#[derive(Debug, Clone, Copy)]
pub struct Limits;

impl Limits {
    /// Chars returned by a read when the caller does not say.
    pub const READ_DEFAULT_CHARS: u64 = 8_000;
    /// Most chars one read may return.
    pub const READ_MAX_CHARS: u64 = 32_000;
    /// Hits returned by a search when the caller does not say.
    pub const SEARCH_DEFAULT_LIMIT: usize = 10;
    /// Most hits one search may return.
    pub const SEARCH_MAX_LIMIT: usize = 50;
    /// Chars in a search snippet.
    pub const SNIPPET_CHARS: usize = 280;
    /// Most rows an outline returns before it reports the rest as omitted.
    pub const OUTLINE_MAX_ROWS: usize = 500;
    /// Most items per list in a `related` answer before the rest are omitted.
    pub const RELATED_MAX_ITEMS: usize = 100;
    /// Longest query accepted, in chars.
    pub const QUERY_MAX_CHARS: usize = 2_000;
    /// Chars of one source line returned by a source read when the caller does not say.
    pub const LINE_DEFAULT_CHARS: u64 = 1_000;
    /// Depth of a `deps` tree when the caller does not say, and the most allowed.
    pub const DEPS_DEFAULT_DEPTH: usize = 3;
    pub const DEPS_MAX_DEPTH: usize = 10;
    /// Most nodes of one `deps` tree before the rest are reported as omitted.
    pub const DEPS_MAX_NODES: usize = 500;
    /// Most records of one `listPatterns` page.
    pub const LIST_MAX_LIMIT: usize = 500;
}

/// Slice `text` to the char window `[offset, offset + max_chars)`. Returns the
/// window's byte range and its char end. `offset` must be `<= total chars`.
pub fn char_window(text: &str, offset: u64, max_chars: u64) -> (usize, usize, u64) {
    let mut indices = text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len()));
    let start = indices.nth(offset as usize).unwrap_or(text.len());
    let mut end = start;
    let mut end_char = offset;
    if max_chars > 0 {
        match indices.nth(max_chars as usize - 1) {
            Some(byte) => {
                end = byte;
                end_char = offset + max_chars;
            }
            None => {
                end = text.len();
                end_char = text.chars().count() as u64;
            }
        }
    }
    (start, end, end_char)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_window_counts_chars_not_bytes() {
        let text = "añb€c";
        assert_eq!(char_window(text, 0, 2), (0, 3, 2));
        let (s, e, end) = char_window(text, 2, 2);
        assert_eq!(&text[s..e], "b€");
        assert_eq!(end, 4);
        let (s, e, end) = char_window(text, 4, 10);
        assert_eq!(&text[s..e], "c");
        assert_eq!(end, 5);
        let (s, e, end) = char_window(text, 5, 10);
        assert_eq!((s, e, end), (text.len(), text.len(), 5));
    }
}
