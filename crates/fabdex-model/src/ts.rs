//! Records of TypeScript/TSX pattern programs: what `fabdex-ts` extracts and
//! the snapshot's pattern tables hold. Plain data; the parsers live in
//! `fabdex-ts`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::records::Diagnostic;

/// What a `cf:` reference names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CfTarget {
    /// A named slug in the space.
    Slug { slug: String },
    /// A cell, `of:fid1:<hash>`.
    Cell { hash: String },
    /// A published pattern program, `pattern:<hash>`.
    Pattern { hash: String },
}

/// A parsed, normalised `cf:` specifier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CfRef {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub space: Option<String>,
    pub target: CfTarget,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub subpath: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pin: Option<String>,
}

impl fmt::Display for CfRef {
    /// The canonical spelling; parsing it gives the same `CfRef`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cf:")?;
        match (&self.host, &self.space) {
            (Some(h), Some(s)) => write!(f, "//{h}/{s}/")?,
            (None, Some(s)) => write!(f, "/{s}/")?,
            _ => {}
        }
        match &self.target {
            CfTarget::Slug { slug } => write!(f, "{slug}")?,
            CfTarget::Cell { hash } => write!(f, "of:fid1:{hash}")?,
            CfTarget::Pattern { hash } => write!(f, "pattern:{hash}")?,
        }
        if let Some(sub) = &self.subpath {
            write!(f, "/{sub}")?;
        }
        if let Some(pin) = &self.pin {
            write!(f, "@{pin}")?;
        }
        Ok(())
    }
}

impl CfRef {
    /// The pattern id this reference depends on, if it names a pattern.
    pub fn pattern_id(&self) -> Option<&str> {
        match &self.target {
            CfTarget::Pattern { hash } => Some(hash),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ImportKind {
    /// `commonfabric`, `commonfabric/schema`, `commonfabric/cfc`, `turndown`.
    Runtime,
    /// `./x`, `../x`, `/x`.
    Relative,
    /// A `cf:` reference (parsed, or with the reason it is malformed).
    Cf,
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImportedName {
    /// The exported name (`default` and `*` for default and namespace imports).
    pub imported: String,
    pub local: String,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub type_only: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImportRecord {
    pub specifier: String,
    pub kind: ImportKind,
    pub names: Vec<ImportedName>,
    pub type_only: bool,
    pub line: u32,
    /// The parsed `cf:` reference.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cf: Option<CfRef>,
    /// Why a `cf:` specifier is malformed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// True for `export … from`: a re-export, not a plain import.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub reexport: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ExportKind {
    Pattern,
    Handler,
    Function,
    Const,
    Type,
    Interface,
    Class,
    Enum,
    Reexport,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExportRecord {
    /// Exported name (`default` for the default export).
    pub name: String,
    pub kind: ExportKind,
    pub default: bool,
    pub line_start: u32,
    pub line_end: u32,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub jsdoc: Option<String>,
    /// The declaration's first line, trimmed (at most 200 chars).
    pub signature: String,
}

/// A `pattern(...)` definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PatternRecord {
    /// The binding it is assigned to (`default` for `export default pattern(...)`).
    pub name: String,
    pub line_start: u32,
    pub line_end: u32,
    /// Type arguments as written: `pattern<Input, Output>`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub input_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output_type: Option<String>,
    /// The file's default export.
    pub default_export: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub jsdoc: Option<String>,
}

/// Everything extracted from one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct TsExtraction {
    pub imports: Vec<ImportRecord>,
    pub exports: Vec<ExportRecord>,
    pub patterns: Vec<PatternRecord>,
    /// The default export is a `pattern(...)`: this file is a program entry.
    pub is_entry: bool,
    /// Parse errors (the file is still extracted as far as it parsed).
    pub diagnostics: Vec<Diagnostic>,
    /// True when swc could not parse the file at all.
    pub parse_failed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OutlineEntry {
    pub name: String,
    /// `function`, `class`, `interface`, `type`, `enum` or `const`.
    pub kind: String,
    pub exported: bool,
    pub line_start: u32,
    pub line_end: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct Outline {
    pub definitions: Vec<OutlineEntry>,
    /// Module specifiers of `import` statements, with their lines.
    pub imports: Vec<(String, u32)>,
    /// Lines (1-based) where tree-sitter found syntax errors or missing nodes.
    pub error_lines: Vec<u32>,
}

/// A pattern's contract as extracted from source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Contract {
    #[serde(rename = "argumentSchema", skip_serializing_if = "Option::is_none")]
    pub argument_schema: Option<Value>,
    #[serde(rename = "resultSchema", skip_serializing_if = "Option::is_none")]
    pub result_schema: Option<Value>,
    /// How the result schema was obtained when it was not written as a type:
    /// `"complete"` (every returned property inferred) or `"partial"` (see
    /// `notes`; also set when any part of the contract could not be derived).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inferred: Option<String>,
    /// What could not be expressed, and why.
    pub notes: Vec<String>,
}

/// One indexed TS/TSX file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SourceFileRow {
    pub root: String,
    pub path: String,
    pub origin: String,
    pub digest: String,
    pub bytes: u64,
    pub lines: u32,
    pub extraction: TsExtraction,
    pub outline: Outline,
    /// An entry: default-exports `pattern(...)`, and is not a test or `mod.ts`.
    pub entry: bool,
}

/// One file of a program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProgramFile {
    /// Root-relative path.
    pub name: String,
    pub bytes: u64,
    pub digest: String,
}

/// A program: an entry plus the closure of its relative imports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProgramRow {
    /// Content identity of the program (43 base64url chars of a blake3 digest
    /// over the entry's name and every file's name and digest).
    #[serde(rename = "patternId")]
    pub pattern_id: String,
    /// `<root>/<entry path>`, and the entry path alone.
    pub aliases: Vec<String>,
    pub entry: String,
    pub files: Vec<ProgramFile>,
    /// Relative imports that resolve to no file (specifier and importing file).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub unresolved_imports: Vec<String>,
    pub contract: Contract,
    /// `cf:pattern:` references found in the program's sources.
    pub dependencies: Vec<String>,
    /// JSDoc of the entry's pattern or its output type; for a published
    /// record, the record's description.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub hashtags: Vec<String>,
    /// Origin label of the root the program came from.
    pub origin: String,
    /// Where the program was read: a source tree or a line of published records.
    pub source: ProgramOrigin,
    /// Whether the program's source is in the snapshot (a published record
    /// may come without it).
    pub has_source: bool,
    /// Does the content identity of the program match its pattern id?
    pub identity: Identity,
    /// The published record as it was declared (without its program); absent
    /// for a source tree.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub published: Option<crate::registry::PublishedPattern>,
    /// Declared schemas (from the record) against extracted ones (from source).
    pub agreement: SchemaAgreement,
    /// `cf:pattern:` ids found in the sources (a subset of `dependencies`,
    /// which also holds the record's declared ones).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub scanned_dependencies: Vec<String>,
    /// Indexed programs that depend on this one.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub dependents: Vec<String>,
    /// What describes the program beyond its contract: the library's
    /// Markdown about it, the text it shows and names it gives, and its
    /// standing, each with where it came from.
    #[serde(skip_serializing_if = "ProgramProfile::is_empty", default)]
    pub profile: ProgramProfile,
}

/// What describes a program, gathered at build time (`fabdex-index`'s
/// `profiles`): searched by pattern search, shown by `inspect`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProgramProfile {
    /// Markdown that documents the program: catalog sections naming its
    /// entry, a README beside it, sections that link to its files.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub docs: Vec<DocNote>,
    /// What the program says about itself in its source.
    #[serde(skip_serializing_if = "OwnText::is_empty", default)]
    pub own: OwnText,
    /// Its standing in the library, when a catalog or its path gives one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tier: Option<TierNote>,
    /// Where a bound cut what was gathered: each says what, how much was
    /// kept, and how much there was.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub limits: Vec<ProfileLimit>,
}

impl ProgramProfile {
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty() && self.own.is_empty() && self.tier.is_none() && self.limits.is_empty()
    }
}

/// One bound of a program's profile that cut something off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProfileLimit {
    /// `catalog`, `readme`, `links`, `module_doc`, `ui` or `actions`.
    pub field: String,
    /// The section or file the cut text came from, for doc prose.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub address: Option<String>,
    /// What was kept and what there was, in `unit`s.
    pub kept: u32,
    pub total: u32,
    /// `chars` or `items`.
    pub unit: String,
}

impl ProfileLimit {
    pub fn new(field: &str, address: Option<&str>, kept: usize, total: usize, unit: &str) -> ProfileLimit {
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        ProfileLimit {
            field: field.into(),
            address: address.map(str::to_string),
            kept: clamp(kept),
            total: clamp(total),
            unit: unit.into(),
        }
    }
}

/// How a Markdown passage came to describe a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DocRole {
    /// A section whose heading (or first line) names the program's entry path.
    Catalog,
    /// A `README.md` in the folder of the program's entry.
    Readme,
    /// A section with a link to one of the program's files.
    Link,
}

impl DocRole {
    pub fn as_str(self) -> &'static str {
        match self {
            DocRole::Catalog => "catalog",
            DocRole::Readme => "readme",
            DocRole::Link => "link",
        }
    }
}

/// One Markdown passage about a program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DocNote {
    pub role: DocRole,
    /// The section it came from (`doc:<root>/<path>#<anchor>`): reopens with `open`.
    pub address: String,
    /// The section's heading (for a link, with the line that links).
    pub heading: String,
    /// The prose that describes the program (bounded).
    pub text: String,
    /// Words listed on a `Keywords:` (or `Tags:`) line.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub keywords: Vec<String>,
}

/// What a program says about itself: read from its files' text at build time.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OwnText {
    /// The entry's module comment (the first doc comment of the file).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub module_doc: Option<String>,
    /// `[NAME]` values (string and template literals, placeholders dropped).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub names: Vec<String>,
    /// Text a user sees in the entry's JSX: headings, labels, button text,
    /// placeholders, `title=`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub ui: Vec<String>,
    /// Handler and action names, and `#hashtags` written in the source.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub actions: Vec<String>,
}

impl OwnText {
    pub fn is_empty(&self) -> bool {
        self.module_doc.is_none() && self.names.is_empty() && self.ui.is_empty() && self.actions.is_empty()
    }
}

/// A program's standing in its library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TierNote {
    /// The tier as the source names it, lowercased (`exemplar`, `demo`, `fixture`, `legacy`, …).
    pub tier: String,
    /// Where it came from: the catalog section (`doc:…#…`), or `path:<entry>` for a test or fixture folder.
    pub source: String,
    /// What was matched: the listed path (`google/`, `form-demo.tsx`) or the path segment.
    pub matched: String,
}

impl ProgramRow {
    /// The key of one of this program's files in [`PatternsTable::files`]:
    /// `(root, path)`.
    pub fn file_key(&self, name: &str) -> (&str, String) {
        match &self.source {
            ProgramOrigin::Tree { root } => (root, name.to_string()),
            ProgramOrigin::Published { root, .. } => (root, published_file_path(&self.pattern_id, name)),
        }
    }

    /// The address that reads one of this program's files: `pattern:<id>/<name>`.
    pub fn file_address(&self, name: &str) -> String {
        format!("pattern:{}/{}", self.pattern_id, name.trim_start_matches('/'))
    }

    /// A source-tree program's root and its entry's path inside that root;
    /// `None` for a published program.
    pub fn tree_entry(&self) -> Option<(&str, &str)> {
        let ProgramOrigin::Tree { root } = &self.source else { return None };
        let path = self.entry.strip_prefix(root.as_str())?.strip_prefix('/')?;
        Some((root, path))
    }

    /// The program file a read path names (a leading `/` is ignored).
    pub fn file(&self, path: &str) -> Option<&ProgramFile> {
        let wanted = path.trim_start_matches('/');
        self.files.iter().find(|f| f.name.trim_start_matches('/') == wanted)
    }
}

/// Where the files of a published program live in the files table.
pub fn published_file_path(pattern_id: &str, name: &str) -> String {
    format!("{pattern_id}/{}", name.trim_start_matches('/'))
}

/// Where a program was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ProgramOrigin {
    /// An entry file of a `patterns` root.
    Tree { root: String },
    /// A record of a `published` root.
    Published { root: String, file: String, line: u32 },
}

/// Content identity check of a program against its pattern id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Identity {
    /// `verified`, `mismatch` or `unverifiable`.
    pub status: IdentityStatus,
    /// The content identity computed over main and every file, when the
    /// program is complete enough to compute it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub computed: Option<String>,
    /// What differs (mismatch) or why it cannot be checked (unverifiable).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IdentityStatus {
    /// Complete program whose content identity is the pattern id.
    Verified,
    /// Complete program whose content identity is not the pattern id.
    Mismatch,
    /// No program, or one that is incomplete (main missing, relative imports
    /// that resolve to no file of the program).
    Unverifiable,
}

impl IdentityStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            IdentityStatus::Verified => "verified",
            IdentityStatus::Mismatch => "mismatch",
            IdentityStatus::Unverifiable => "unverifiable",
        }
    }
}

/// How a declared schema compares with the one extracted from source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Agreement {
    /// Equal after sorting object keys and `required`.
    Agree,
    Disagree,
    /// Only the record declares one.
    DeclaredOnly,
    /// Only the source gives one (always so for a source tree).
    ExtractedOnly,
    /// Neither.
    #[default]
    Neither,
}

/// Declared against extracted, per schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct SchemaAgreement {
    pub argument: Agreement,
    pub result: Agreement,
}

impl SchemaAgreement {
    pub fn disagrees(&self) -> bool {
        self.argument == Agreement::Disagree || self.result == Agreement::Disagree
    }
}

/// The pattern tables of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct PatternsTable {
    pub files: Vec<SourceFileRow>,
    pub programs: Vec<ProgramRow>,
}
