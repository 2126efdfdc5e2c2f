//! Records: what extractors produce (per file, from content alone) and what the
//! snapshot's tables hold (per build, with addresses and resolved links).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A problem found while extracting a file that did not stop extraction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Diagnostic {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in chars.
    pub column: u32,
    pub message: String,
}

/// Everything the Markdown extractor finds in one file. Depends only on the
/// file's bytes, so it can be cached by content digest and reused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct MdExtraction {
    /// YAML front matter keys (only when the front matter starts at byte 0).
    pub metadata: BTreeMap<String, serde_json::Value>,
    /// A leading HTML comment (after any front matter), kept as metadata.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub leading_comment: Option<String>,
    /// Text of the first level-1 heading, if any.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub title: Option<String>,
    /// Sections in document order; together they tile the body after the
    /// front matter.
    pub sections: Vec<MdSection>,
    pub links: Vec<MdLink>,
    pub diagnostics: Vec<Diagnostic>,
}

/// One section: a heading and its own text up to the next heading of any
/// level, or the preamble before the first heading (`level` 0, `anchor` "").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MdSection {
    pub anchor: String,
    /// Rendered heading text (markup removed, escapes applied).
    pub heading: String,
    pub level: u8,
    /// Headings from the outermost ancestor down to this one.
    pub heading_path: Vec<String>,
    /// Index of the parent section in this file's `sections`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub parent: Option<u32>,
    /// 1-based first line and last line (inclusive).
    pub line_start: u32,
    pub line_end: u32,
    /// Byte range in the file.
    pub byte_start: u64,
    pub byte_end: u64,
    /// Chars of the section's own text.
    pub chars: u64,
    /// Parts, when the section is larger than the split cap; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub parts: Vec<Part>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub code_blocks: Vec<CodeBlock>,
    /// Inline code spans, in order, deduplicated.
    #[serde(skip_serializing_if = "Mentions::is_empty", default)]
    pub mentions: Mentions,
    /// API symbols this section defines: its heading when the heading is an
    /// identifier (`wish()`, `Writable<>`, `fetchJson\<T\>`), and the code
    /// spans in the first column of its definition tables. Bare names, as written.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub defines: Vec<String>,
    /// HTML anchors (`<a id="x">`, `<a name="x">`) inside the section; links
    /// to `#x` lead here.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub html_anchors: Vec<String>,
}

/// A section's inline code spans, in order and without repeats: a JSON
/// array of strings, held as one newline-joined string.
///
/// Labs' sections hold 64,000 of them; as separate strings they were most
/// of the allocations, and of the time, of decoding the docs table that
/// every command opens. A code span has no line breaks (CommonMark turns
/// them into spaces); [`Mentions::push`] does the same to any it is given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mentions {
    joined: String,
}

impl Mentions {
    pub fn is_empty(&self) -> bool {
        self.joined.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.joined.split('\n').filter(|_| !self.joined.is_empty())
    }

    pub fn contains(&self, mention: &str) -> bool {
        self.iter().any(|m| m == mention)
    }

    /// Add a mention at the end unless it is empty or already there.
    pub fn push(&mut self, mention: &str) {
        let mention = mention.replace(['\r', '\n'], " ");
        if mention.is_empty() || self.contains(&mention) {
            return;
        }
        if !self.joined.is_empty() {
            self.joined.push('\n');
        }
        self.joined.push_str(&mention);
    }

    /// All mentions, one per line.
    pub fn joined(&self) -> &str {
        &self.joined
    }
}

impl<S: AsRef<str>> FromIterator<S> for Mentions {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut out = Mentions::default();
        for m in iter {
            out.push(m.as_ref());
        }
        out
    }
}

impl<const N: usize> PartialEq<[&str; N]> for Mentions {
    fn eq(&self, other: &[&str; N]) -> bool {
        self.iter().eq(other.iter().copied())
    }
}

impl Serialize for Mentions {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Mentions {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Appended as read, without `push`'s check for repeats: a stored list has none.
        struct Joiner;
        impl<'de> serde::de::Visitor<'de> for Joiner {
            type Value = Mentions;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of strings")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Mentions, A::Error> {
                let mut out = Mentions::default();
                // Borrowed from the input when it has no escapes: no string per mention.
                #[derive(Deserialize)]
                struct Piece<'a>(#[serde(borrow)] std::borrow::Cow<'a, str>);
                while let Some(Piece(m)) = seq.next_element::<Piece<'de>>()? {
                    if m.is_empty() {
                        continue;
                    }
                    if !out.joined.is_empty() {
                        out.joined.push('\n');
                    }
                    if m.contains(['\r', '\n']) {
                        out.joined.push_str(&m.replace(['\r', '\n'], " "));
                    } else {
                        out.joined.push_str(&m);
                    }
                }
                Ok(out)
            }
        }
        deserializer.deserialize_seq(Joiner)
    }
}

impl schemars::JsonSchema for Mentions {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Mentions".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Vec<String>>::json_schema(generator)
    }
}

/// A window of a split section, by byte range in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Part {
    pub byte_start: u64,
    pub byte_end: u64,
    pub chars: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CodeBlock {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lang: Option<String>,
    pub line_start: u32,
    pub line_end: u32,
    pub byte_start: u64,
    pub byte_end: u64,
}

/// How a link was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LinkKind {
    /// `[text](dest)`
    Inline,
    /// `[text][ref]`, `[ref][]`, `[ref]`
    Reference,
    /// `<https://...>`
    Autolink,
    /// A backticked repository path: `` `docs/x.md` ``, `` `x.md#anchor` ``, `` `dir/` ``.
    CodePath,
    /// A backticked source span: `` `file.ts:12` ``, `` `file.ts:12-30` ``.
    FileSpan,
}

/// A link as written, before resolution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MdLink {
    /// Index of the section it appears in.
    pub section: u32,
    pub kind: LinkKind,
    /// Destination as written (for `FileSpan`, the path; lines go in `lines`).
    pub dest: String,
    /// Link text (empty for code paths).
    pub text: String,
    pub line: u32,
    /// Line span of a `FileSpan`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lines: Option<(u32, u32)>,
}

/// Where a link leads after resolution against the whole snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum LinkTarget {
    /// A section of an indexed file.
    Section { address: String },
    /// A file: indexed (with its address) or present in a root but not indexed.
    File {
        path: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        address: Option<String>,
        indexed: bool,
    },
    /// A folder inside a root.
    Folder { path: String },
    /// Outside the indexed roots (`https:`, `mailto:`, …).
    External { url: String },
    /// Could not be resolved; `reason` says why.
    Unresolved { reason: String },
}

/// The kind of a root, from config or inferred from file type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RootKind {
    Docs,
    Skills,
    Patterns,
    /// Published pattern records as JSON lines (a `.jsonl` file or a folder of them).
    Published,
}

impl RootKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RootKind::Docs => "docs",
            RootKind::Skills => "skills",
            RootKind::Patterns => "patterns",
            RootKind::Published => "published",
        }
    }
}

/// One indexed Markdown file in the docs table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DocFileRow {
    pub root: String,
    pub path: String,
    pub origin: String,
    pub kind: RootKind,
    /// Digest of the whole file; also its blob name.
    pub digest: String,
    pub bytes: u64,
    pub chars: u64,
    pub lines: u32,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub metadata: BTreeMap<String, serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub leading_comment: Option<String>,
    /// Front matter marks it historical (`status: historical` or `superseded-by`).
    pub historical: bool,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub diagnostics: Vec<Diagnostic>,
    /// Index of its first section in the table, and how many it has.
    pub first_section: u32,
    pub section_count: u32,
}

impl DocFileRow {
    /// `doc:<root>/<path>`: the file's address, as links to it carry it.
    pub fn address(&self) -> String {
        format!("doc:{}/{}", self.root, self.path)
    }
}

/// One section in the docs table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SectionRow {
    /// `doc:<root>/<path>#<anchor>`.
    pub address: String,
    /// Index of its file in the table.
    pub file: u32,
    /// Nested, not flattened: serde reads a flattened struct through a
    /// buffer of every field, which made the docs table twice as slow to open.
    pub section: MdSection,
    /// Global index of the parent section.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub parent_row: Option<u32>,
}

/// One link in the docs table, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LinkRow {
    /// Global index of the section it appears in.
    pub from: u32,
    pub kind: LinkKind,
    pub dest: String,
    pub text: String,
    pub line: u32,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lines: Option<(u32, u32)>,
    pub target: LinkTarget,
    /// Global index of the target section, when `target` is a section.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub to_section: Option<u32>,
}

/// The docs tables of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct DocsTable {
    pub files: Vec<DocFileRow>,
    pub sections: Vec<SectionRow>,
    pub links: Vec<LinkRow>,
}

/// Is this front matter the mark of a historical (superseded) document?
pub fn is_historical(metadata: &BTreeMap<String, serde_json::Value>) -> bool {
    let status = metadata.get("status").and_then(|v| v.as_str()).unwrap_or("");
    status.eq_ignore_ascii_case("historical")
        || status.eq_ignore_ascii_case("superseded")
        || metadata.contains_key("superseded-by")
        || metadata.contains_key("superseded_by")
}

/// The API name a heading or table cell defines, when it is written as an
/// identifier: `wish()`, `Writable<>`, `fetchJson<T>`, `cf.view`, `[UI]`.
pub fn symbol_name(text: &str) -> Option<String> {
    let t = text.trim().trim_matches('`').trim();
    let t = t.strip_prefix('[').and_then(|x| x.strip_suffix(']')).unwrap_or(t);
    let base = match t.find(['(', '<']) {
        Some(i) => {
            let tail = &t[i..];
            let ok = tail.ends_with("()")
                || tail.ends_with('>') && tail.starts_with('<')
                || tail.starts_with('(') && tail.ends_with(')');
            if !ok {
                return None;
            }
            &t[..i]
        }
        None => t,
    };
    let mut chars = base.chars();
    let first = chars.next()?;
    let ident = (first.is_ascii_alphabetic() || first == '_' || first == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.'))
        && !base.ends_with('.');
    // A plain word heading ("Overview") is not a symbol; an identifier-shaped
    // one needs call/generic syntax, inner capitals, `_`, `.`, or all caps.
    let shaped = base.len() < t.len()
        || base.chars().skip(1).any(|c| c.is_ascii_uppercase())
        || base.contains(['_', '.', '$'])
        || (base.len() > 1 && base.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
    (ident && shaped).then(|| base.to_string())
}

#[cfg(test)]
mod tests {
    use super::Mentions;

    #[test]
    fn mentions_read_from_json_escaped_or_not_and_write_back_the_same_array() {
        let m: Mentions = serde_json::from_str(r#"["wish()", "a \"b\"", "x\ny", "", "c"]"#).unwrap();
        assert_eq!(m.joined(), "wish()\na \"b\"\nx y\nc");
        assert_eq!(m, ["wish()", "a \"b\"", "x y", "c"]);
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"["wish()","a \"b\"","x y","c"]"#);
        let mut pushed = Mentions::default();
        for s in ["wish()", "a \"b\"", "x\ny", "", "c", "wish()"] {
            pushed.push(s);
        }
        assert_eq!(pushed, m, "push gives what reading the stored array gives");
    }
}
