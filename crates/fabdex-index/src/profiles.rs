//! Program profiles: what describes a program besides its contract, gathered
//! once per build and stored on its row (`ProgramRow::profile`).
//!
//! Three sources, each kept with the address it came from:
//!
//! * **The library's Markdown** (any indexed root). A *catalog* section is one
//!   whose heading, or first line, names a program's entry path (resolved
//!   against the Markdown file's folder, or as a unique path suffix); its own
//!   prose is the description and a `Keywords:` / `Tags:` line gives keywords.
//!   A `README.md` describes the programs whose entry is in its folder. A
//!   section that links to a program's entry file adds the linking line.
//! * **Its standing.** A section under a heading that mentions *tier* (`#
//!   Status tiers` › `## legacy`) lists the paths (files or folders) that
//!   have that tier; the longest listed path that covers an entry wins, and a
//!   path listed under two tiers takes the lower standing. Without a catalog
//!   tier, an entry inside a test or fixture folder is a `fixture` by path.
//! * **What it says about itself** comes from [`crate::own_text`].
//!
//! Nothing here knows any library's names: the rules are about how a library
//! documents itself, so they hold for any that does it the same way.

use std::collections::{BTreeMap, HashMap};

use fabdex_model::records::{DocsTable, LinkTarget, SectionRow};
use fabdex_model::ts::{DocNote, DocRole, PatternsTable, ProfileLimit, ProgramOrigin, TierNote};
use serde::{Deserialize, Serialize};

use fabdex_snapshot::search_schema::prose_and_code;

/// Chars of prose kept per catalog or README note.
pub const NOTE_CHARS: usize = 1_500;
/// Chars of a linking line kept per link note.
const LINK_CHARS: usize = 300;
/// Link notes kept per program: a file linked from everywhere says little more each time.
const MAX_LINK_NOTES: usize = 8;

/// What the build attached, per source: printed by `fabdex index`, kept in `report.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileReport {
    /// Programs with at least one catalog section, and the sections attached.
    pub catalog_programs: u64,
    pub catalog_sections: u64,
    /// Programs whose catalog section lists keywords.
    pub keyword_programs: u64,
    pub readme_programs: u64,
    pub link_programs: u64,
    /// Tiers, by where they came from (`catalog` or `path`), then by tier name.
    pub tiers: BTreeMap<String, BTreeMap<String, u64>>,
    /// Programs with a module comment, `[NAME]`, visible UI text or handler names.
    pub own_text_programs: u64,
    /// Source-tree programs that no catalog section describes (entries).
    pub undescribed: Vec<String>,
    /// Programs whose profile a bound cut, by field (`catalog`, `readme`,
    /// `links`, `module_doc`, `ui`, `actions`); `inspect` shows each cut.
    #[serde(default)]
    pub limited: BTreeMap<String, u64>,
}

impl ProfileReport {
    /// One line for the index summary: what was attached, the tiers, what no
    /// catalog describes and what a bound cut.
    pub fn summary(&self) -> String {
        let tiers: Vec<String> = self
            .tiers
            .iter()
            .flat_map(|(from, t)| t.iter().map(move |(tier, n)| format!("{n} {tier} ({from})")))
            .collect();
        let limited: Vec<String> = self.limited.iter().map(|(field, n)| format!("{n} {field}")).collect();
        format!(
            "program profiles: {} described by a catalog ({} sections, {} with keywords), {} by a README, {} by linking sections, {} with their own text; tiers: {}; {} no catalog describes; cut by a bound: {}",
            self.catalog_programs,
            self.catalog_sections,
            self.keyword_programs,
            self.readme_programs,
            self.link_programs,
            self.own_text_programs,
            if tiers.is_empty() { "none".into() } else { tiers.join(", ") },
            self.undescribed.len(),
            if limited.is_empty() { "nothing".into() } else { limited.join(", ") },
        )
    }
}

/// A tree program's `(root, entry path)` → its row.
type Entries<'a> = HashMap<(&'a str, &'a str), usize>;

fn tree_entries(table: &PatternsTable) -> Entries<'_> {
    table.programs.iter().enumerate().filter_map(|(i, p)| Some((p.tree_entry()?, i))).collect()
}

/// `a/b/../c` → `a/c`; `None` when it climbs out of the root.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn join(dir: &str, rel: &str) -> Option<String> {
    let rel = rel.trim_start_matches("./");
    if let Some(abs) = rel.strip_prefix('/') {
        return normalize(abs);
    }
    normalize(&if dir.is_empty() { rel.to_string() } else { format!("{dir}/{rel}") })
}

/// Path-like tokens of a line: backticked spans, link targets and bare words
/// that end in a source extension or `/`.
fn path_tokens(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in line.split(|c: char| c.is_whitespace() || matches!(c, '`' | '(' | ')' | '[' | ']' | ',' | ';')) {
        // A glob (`*.test.tsx`, `dir/*`) names no one file; `**bold**` is emphasis.
        if raw.contains("*.") || raw.contains("/*") {
            continue;
        }
        let t = raw.trim_matches(|c: char| matches!(c, '.' | ':' | '"' | '\'' | '<' | '>' | '*'));
        if t.is_empty() || t.contains("://") || t.contains('*') {
            continue;
        }
        let source = [".tsx", ".ts", ".jsx", ".js", ".mts"].iter().any(|e| t.ends_with(e));
        let folder = t.ends_with('/') && t.len() > 1;
        if (source || folder) && t.chars().all(|c| c.is_alphanumeric() || matches!(c, '/' | '.' | '-' | '_' | '@')) {
            out.push(t.to_string());
        }
    }
    out
}

/// The programs a path token names, seen from a Markdown file in `root` at `md_path`.
fn resolve_entry(token: &str, root: &str, md_path: &str, entries: &Entries<'_>) -> Option<usize> {
    if token.ends_with('/') {
        return None;
    }
    let joined = join(dir_of(md_path), token)?;
    if let Some(&i) = entries.get(&(root, joined.as_str())) {
        return Some(i);
    }
    // A path written from elsewhere (another root, the repository's top):
    // accept it when exactly one entry ends with it at a segment boundary.
    let wanted = token.trim_start_matches("./").trim_start_matches('/');
    if !wanted.contains('/') {
        return None;
    }
    let mut found = entries.iter().filter(|((_, path), _)| {
        path == &wanted || wanted.ends_with(&format!("/{path}")) || path.ends_with(&format!("/{wanted}"))
    });
    match (found.next(), found.next()) {
        (Some((_, &i)), None) => Some(i),
        _ => None,
    }
}

/// A section's own prose (heading line and code blocks left out), and its
/// `Keywords:` words.
fn section_prose(text: &str, row: &SectionRow) -> (String, Vec<String>) {
    let s = &row.section;
    let (body, _) = prose_and_code(text, &s.code_blocks, s.byte_start, s.byte_end);
    let mut lines = body.lines();
    if s.level > 0 {
        lines.next();
    }
    let mut prose = String::new();
    let mut keywords = Vec::new();
    let mut in_keywords = false;
    for line in lines {
        let plain = line.replace(['*', '_'], "");
        let plain = plain.trim();
        let lower = plain.to_ascii_lowercase();
        if let Some(rest) = ["keywords:", "tags:", "keywords :"].iter().find_map(|k| lower.strip_prefix(k)) {
            let at = plain.len() - rest.len();
            keywords.extend(split_keywords(&plain[at..]));
            in_keywords = true;
            continue;
        }
        if in_keywords && !plain.is_empty() {
            keywords.extend(split_keywords(plain));
            continue;
        }
        in_keywords = false;
        prose.push_str(line.trim());
        prose.push(' ');
    }
    (prose.trim().to_string(), keywords)
}

/// `text` cut to `max` chars, and the limit that says so when it was cut.
fn bounded(text: &str, max: usize, field: &str, address: &str) -> (String, Option<ProfileLimit>) {
    let total = text.chars().count();
    let limit = (total > max).then(|| ProfileLimit::new(field, Some(address), max, total, "chars"));
    (cut(text, max), limit)
}

fn split_keywords(line: &str) -> impl Iterator<Item = String> + '_ {
    line.split([',', ';']).map(|k| k.trim().trim_matches('`').to_string()).filter(|k| !k.is_empty())
}

fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// The heading as plain text.
fn plain_heading(h: &str) -> String {
    h.replace('`', "").trim().to_string()
}

/// Attach catalog sections, READMEs and linking sections, then tiers.
/// `texts[i]` is the text of `docs.files[i]`.
pub fn attach_docs(docs: &DocsTable, texts: &[&str], table: &mut PatternsTable) {
    if table.programs.is_empty() {
        return;
    }
    let entries = tree_entries(table);
    let mut notes =
        Notes { docs: vec![Vec::new(); table.programs.len()], limits: vec![Vec::new(); table.programs.len()] };
    let mut tiers: Vec<Option<(usize, u8, TierNote)>> = vec![None; table.programs.len()];
    for row in &docs.sections {
        let file = &docs.files[row.file as usize];
        let text = texts[row.file as usize];
        let targets = catalog_targets(row, text, &file.root, &file.path, &entries);
        if !targets.is_empty() {
            let (prose, keywords) = section_prose(text, row);
            let (text, limit) = bounded(&prose, NOTE_CHARS, "catalog", &row.address);
            let note = DocNote {
                role: DocRole::Catalog,
                address: row.address.clone(),
                heading: plain_heading(&row.section.heading),
                text,
                keywords,
            };
            for i in targets {
                notes.push(i, note.clone(), limit.clone());
            }
        }
        if is_tier_section(row) {
            assign_tiers(row, text, &file.root, &file.path, &entries, &mut tiers);
        }
    }
    attach_readmes(docs, texts, table, &mut notes);
    attach_links(docs, texts, &entries, &mut notes);
    for (i, (p, t)) in table.programs.iter_mut().zip(tiers).enumerate() {
        p.profile.docs = std::mem::take(&mut notes.docs[i]);
        p.profile.limits = std::mem::take(&mut notes.limits[i]);
        p.profile.tier = t.map(|(_, _, note)| note).or_else(|| path_tier(p));
    }
}

/// Per program: the doc notes attached so far, and the bounds that cut them.
struct Notes {
    docs: Vec<Vec<DocNote>>,
    limits: Vec<Vec<ProfileLimit>>,
}

impl Notes {
    fn push(&mut self, i: usize, note: DocNote, limit: Option<ProfileLimit>) {
        self.docs[i].push(note);
        self.limits[i].extend(limit);
    }
}

/// Programs a section names as its subject: in its heading, else as the
/// first thing on its first line of prose.
fn catalog_targets(row: &SectionRow, text: &str, root: &str, md_path: &str, entries: &Entries<'_>) -> Vec<usize> {
    let s = &row.section;
    let mut found: Vec<usize> =
        path_tokens(&s.heading).iter().filter_map(|t| resolve_entry(t, root, md_path, entries)).collect();
    if found.is_empty() && s.level > 0 {
        let body = text.get(s.byte_start as usize..s.byte_end as usize).unwrap_or("");
        if let Some(first) = body.lines().skip(1).map(str::trim).find(|l| !l.is_empty()) {
            let lead = first.trim_start_matches(['*', '_', '`', '[', '#', ' ']);
            if let Some(t) = path_tokens(first).into_iter().next().filter(|t| lead.starts_with(t.as_str())) {
                found.extend(resolve_entry(&t, root, md_path, entries));
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// A section whose heading is a short name, under an ancestor heading that mentions tiers.
fn is_tier_section(row: &SectionRow) -> bool {
    let s = &row.section;
    let name = plain_heading(&s.heading);
    let words = name.split_whitespace().count();
    // A catalog entry (`## notes/note.tsx`) under the same parent is not a tier.
    s.level > 1
        && (1..=2).contains(&words)
        && !name.contains(['/', '.'])
        && s.heading_path.iter().rev().skip(1).any(|h| h.to_ascii_lowercase().contains("tier"))
}

fn assign_tiers(
    row: &SectionRow,
    text: &str,
    root: &str,
    md_path: &str,
    entries: &Entries<'_>,
    tiers: &mut [Option<(usize, u8, TierNote)>],
) {
    let tier = plain_heading(&row.section.heading).to_ascii_lowercase();
    let rank = fabdex_snapshot::patterns_table::tier_rank(&tier);
    let s = &row.section;
    let (body, _) = prose_and_code(text, &s.code_blocks, s.byte_start, s.byte_end);
    let dir = dir_of(md_path);
    for token in body.lines().skip(1).flat_map(path_tokens) {
        let Some(listed) = join(dir, &token) else { continue };
        let folder = token.ends_with('/');
        for (&(r, path), &i) in entries {
            let covers = r == root && if folder { path.starts_with(&format!("{listed}/")) } else { path == listed };
            if !covers {
                continue;
            }
            let specificity = listed.len() + usize::from(!folder);
            let better = match &tiers[i] {
                None => true,
                Some((len, have, _)) => specificity > *len || (specificity == *len && rank < *have),
            };
            if better {
                let note = TierNote { tier: tier.clone(), source: row.address.clone(), matched: token.clone() };
                tiers[i] = Some((specificity, rank, note));
            }
        }
    }
}

/// `fixture` for an entry inside a test or fixture folder, or a test-named file.
fn path_tier(p: &fabdex_model::ts::ProgramRow) -> Option<TierNote> {
    let (_, path) = p.tree_entry()?;
    let (dirs, file) = path.rsplit_once('/').unwrap_or(("", path));
    let test_word = |w: &str| matches!(w, "test" | "tests" | "fixture" | "fixtures" | "__tests__" | "spec" | "specs");
    let segment = dirs.split('/').find(|seg| {
        let lower = seg.to_ascii_lowercase();
        test_word(&lower) || lower.rsplit(['-', '_']).next().is_some_and(test_word)
    });
    let stem = file.split('.').next().unwrap_or(file).to_ascii_lowercase();
    let named = stem.starts_with("test-") || stem.ends_with("-test") || stem.ends_with("-tests");
    let matched = segment.map(|s| format!("{s}/")).or_else(|| named.then(|| file.to_string()))?;
    Some(TierNote { tier: "fixture".into(), source: format!("path:{}", p.entry), matched })
}

/// A `README.md` describes the programs whose entry sits in its folder (not
/// at a root's top, where it describes the whole library).
fn attach_readmes(docs: &DocsTable, texts: &[&str], table: &PatternsTable, notes: &mut Notes) {
    for (fi, f) in docs.files.iter().enumerate() {
        let name = f.path.rsplit('/').next().unwrap_or(&f.path);
        let dir = dir_of(&f.path);
        if !name.eq_ignore_ascii_case("readme.md") || dir.is_empty() {
            continue;
        }
        let sections = &docs.sections[f.first_section as usize..(f.first_section + f.section_count) as usize];
        let mut prose = String::new();
        let mut keywords = Vec::new();
        for row in sections {
            let (p, k) = section_prose(texts[fi], row);
            prose.push_str(&plain_heading(&row.section.heading));
            prose.push_str(". ");
            prose.push_str(&p);
            prose.push(' ');
            keywords.extend(k);
        }
        let address = f.address();
        let (text, limit) = bounded(prose.trim(), NOTE_CHARS, "readme", &address);
        let note = DocNote {
            role: DocRole::Readme,
            address,
            heading: f.title.clone().unwrap_or_else(|| f.path.clone()),
            text,
            keywords,
        };
        for (i, p) in table.programs.iter().enumerate() {
            if p.tree_entry().is_some_and(|(root, path)| root == f.root && dir_of(path) == dir) {
                notes.push(i, note.clone(), limit.clone());
            }
        }
    }
}

/// A section that links to a program's entry file (and is not already its
/// catalog section) adds its heading and the linking line.
fn attach_links(docs: &DocsTable, texts: &[&str], entries: &Entries<'_>, notes: &mut Notes) {
    let by_entry: HashMap<String, usize> = entries.iter().map(|((r, p), &i)| (format!("{r}/{p}"), i)).collect();
    // Linking sections past MAX_LINK_NOTES, per program.
    let mut dropped: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for link in &docs.links {
        let LinkTarget::File { path, .. } = &link.target else { continue };
        let Some(&i) = by_entry.get(path) else { continue };
        let row = &docs.sections[link.from as usize];
        let has = |n: &DocNote| n.address == row.address || n.address == format!("doc:{}", address_file(&row.address));
        if notes.docs[i].iter().any(has) {
            continue;
        }
        if notes.docs[i].iter().filter(|n| n.role == DocRole::Link).count() >= MAX_LINK_NOTES {
            let extra = dropped.entry(i).or_default();
            if !extra.contains(&row.address.as_str()) {
                extra.push(&row.address);
            }
            continue;
        }
        let text = texts[row.file as usize];
        let line = text.lines().nth(link.line.saturating_sub(1) as usize).unwrap_or("").trim();
        let (text, limit) = bounded(line, LINK_CHARS, "links", &row.address);
        let note = DocNote {
            role: DocRole::Link,
            address: row.address.clone(),
            heading: plain_heading(&row.section.heading),
            text,
            keywords: vec![],
        };
        notes.push(i, note, limit);
    }
    for (i, extra) in dropped {
        let limit = ProfileLimit::new("links", None, MAX_LINK_NOTES, MAX_LINK_NOTES + extra.len(), "items");
        notes.limits[i].push(limit);
    }
}

/// `<root>/<path>` of a section address `doc:<root>/<path>#<anchor>`.
fn address_file(address: &str) -> &str {
    let rest = address.strip_prefix("doc:").unwrap_or(address);
    rest.split('#').next().unwrap_or(rest)
}

/// Each program's own text, from its entry and the files of the program
/// that sit beside or below the entry (a shared library elsewhere describes
/// many programs, so it describes none). `sources` maps `(root, path)` to text.
pub fn attach_own_text(sources: &HashMap<(&str, &str), &str>, table: &mut PatternsTable) {
    use rayon::prelude::*;
    // Each program's scan is its own: they run over the pool.
    table.programs.par_iter_mut().for_each(|p| {
        let Some(main) = p.files.first() else { return };
        let (root, main_path) = p.file_key(&main.name);
        let Some(entry) = sources.get(&(root, main_path.as_str())) else { return };
        let dir = dir_of(&main_path).to_string();
        let mut others = Vec::new();
        for f in p.files.iter().skip(1) {
            let (r, path) = p.file_key(&f.name);
            let inside = if dir.is_empty() { !path.contains('/') } else { path.starts_with(&format!("{dir}/")) };
            if let Some(text) = sources.get(&(r, path.as_str())).filter(|_| inside) {
                others.push(*text);
            }
        }
        let (own, limits) = crate::own_text::own_text(entry, &others);
        p.profile.own = own;
        p.profile.limits.extend(limits);
    });
}

/// Counts of what was attached, and the programs no catalog describes.
pub fn report(table: &PatternsTable) -> ProfileReport {
    let mut r = ProfileReport::default();
    for p in &table.programs {
        let prof = &p.profile;
        let catalog = prof.docs.iter().filter(|n| n.role == DocRole::Catalog).count() as u64;
        r.catalog_sections += catalog;
        r.catalog_programs += u64::from(catalog > 0);
        r.keyword_programs += u64::from(prof.docs.iter().any(|n| n.role == DocRole::Catalog && !n.keywords.is_empty()));
        r.readme_programs += u64::from(prof.docs.iter().any(|n| n.role == DocRole::Readme));
        r.link_programs += u64::from(prof.docs.iter().any(|n| n.role == DocRole::Link));
        r.own_text_programs += u64::from(!prof.own.is_empty());
        if let Some(t) = &prof.tier {
            let from = if t.source.starts_with("path:") { "path" } else { "catalog" };
            *r.tiers.entry(from.into()).or_default().entry(t.tier.clone()).or_default() += 1;
        }
        let mut fields: Vec<&str> = prof.limits.iter().map(|l| l.field.as_str()).collect();
        fields.sort_unstable();
        fields.dedup();
        for field in fields {
            *r.limited.entry(field.into()).or_default() += 1;
        }
        if catalog == 0 && matches!(p.source, ProgramOrigin::Tree { .. }) {
            r.undescribed.push(p.entry.clone());
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_tokens_take_sources_and_folders_only() {
        let t = path_tokens("## `budget-tracker/main.tsx` and `google/` (the `core/` tree), `*.test.ts(x)`, docs.md");
        assert_eq!(t, vec!["budget-tracker/main.tsx", "google/", "core/"]);
        assert!(path_tokens("see https://example.com/x.ts").is_empty());
    }

    #[test]
    fn joins_climb_and_stay_inside() {
        assert_eq!(join("a/b", "../c.tsx").as_deref(), Some("a/c.tsx"));
        assert_eq!(join("", "./x/y.tsx").as_deref(), Some("x/y.tsx"));
        assert_eq!(join("", "../x.tsx"), None);
    }
}
