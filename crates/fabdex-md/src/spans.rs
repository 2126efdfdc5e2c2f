//! Inline code spans that name files: `docs/x.md`, `x.md#anchor`, `dir/`,
//! `file.ts:12`, `file.tsx:12-30`.

/// What a code span refers to, when it looks like a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeSpanRef {
    /// A file (with optional `#anchor`) or a folder (ending in `/`).
    Path(String),
    /// A source line or line range.
    FileSpan { path: String, start: u32, end: u32 },
}

const EXTENSIONS: &[&str] = &[
    "md", "markdown", "ts", "tsx", "js", "jsx", "mts", "mjs", "cjs", "json", "jsonc", "toml", "yaml", "yml", "sh",
    "rs", "py", "txt", "css", "html",
];

fn path_chars_ok(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '@' | '+'))
        && !s.starts_with('-')
        && !s.contains("//")
}

fn has_known_extension(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    match file.rsplit_once('.') {
        Some((stem, ext)) => !stem.is_empty() && EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()),
        None => false,
    }
}

/// Classify an inline code span; `None` when it does not look like a path.
pub fn classify_code_span(code: &str) -> Option<CodeSpanRef> {
    let code = code.trim();
    if code.len() > 300 || code.contains("://") {
        return None;
    }
    if let Some((path, lines)) = code.rsplit_once(':') {
        let (start, end) = match lines.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?),
            None => {
                let n = lines.parse::<u32>().ok()?;
                (n, n)
            }
        };
        if path_chars_ok(path) && has_known_extension(path) && start >= 1 && end >= start {
            return Some(CodeSpanRef::FileSpan { path: path.to_string(), start, end });
        }
        return None;
    }
    let (path, anchor) = match code.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (code, None),
    };
    if !path_chars_ok(path) || path.starts_with('@') {
        return None;
    }
    let is_folder = path.ends_with('/') && path.len() > 1 && anchor.is_none();
    let is_file = has_known_extension(path) && (path.contains('/') || anchor.is_some() || path.ends_with(".md"));
    if let Some(anchor) = anchor
        && (anchor.is_empty() || !anchor.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_'))
    {
        return None;
    }
    (is_folder || is_file).then(|| CodeSpanRef::Path(code.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_paths_spans_and_non_paths() {
        let path = |s: &str| Some(CodeSpanRef::Path(s.to_string()));
        assert_eq!(classify_code_span("docs/common/x.md"), path("docs/common/x.md"));
        assert_eq!(classify_code_span("wish.md#result-shape"), path("wish.md#result-shape"));
        assert_eq!(classify_code_span("README.md"), path("README.md"));
        assert_eq!(classify_code_span("packages/patterns/"), path("packages/patterns/"));
        assert_eq!(
            classify_code_span("counter/counter.tsx:12-30"),
            Some(CodeSpanRef::FileSpan { path: "counter/counter.tsx".into(), start: 12, end: 30 })
        );
        assert_eq!(
            classify_code_span("src/a.ts:7"),
            Some(CodeSpanRef::FileSpan { path: "src/a.ts".into(), start: 7, end: 7 })
        );
        for not_path in [
            "wish()",
            "commonfabric/schema",
            "fetchJson<T>",
            "a.b",
            "x.ts:30-12",
            "https://example.com/a.md",
            "/",
            "@commonfabric/api",
            "cf:pattern:abc",
            "deno task test",
            "x.md#not an anchor",
        ] {
            assert_eq!(classify_code_span(not_path), None, "{not_path}");
        }
    }
}
