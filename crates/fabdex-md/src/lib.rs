//! # fabdex-md
//!
//! Markdown into addressable sections. One pure function, [`extract`], turns
//! the text of one file into an [`MdExtraction`]: front matter, a leading HTML
//! comment, sections with GitHub-style anchors, heading paths, line and byte
//! ranges, parts for oversized sections, code blocks, inline-code symbol
//! mentions and links as written.
//!
//! The result depends only on the file's bytes (never on its path or on other
//! files), so the indexer can cache it by content digest. Resolving links to
//! other files needs the whole snapshot and happens in `fabdex-index`.
//!
//! Parsing is CommonMark (pulldown-cmark) with GitHub's tables, strikethrough,
//! task lists and footnotes: a `#` line inside a fence is code, a fence closes
//! only on the same character repeated at least as often, setext headings count.

mod anchor;
mod front_matter;
mod spans;

use std::collections::HashMap;
use std::ops::Range;

use fabdex_model::records::{CodeBlock, Diagnostic, LinkKind, MdExtraction, MdLink, MdSection, Part};
use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd};

pub use anchor::github_anchor;
pub use fabdex_model::records::symbol_name;
pub use spans::{CodeSpanRef, classify_code_span};

/// Sections with more chars than this are split into addressable parts.
pub const SPLIT_CHARS: usize = 12_000;

/// Version of the extraction output; bump when the output for the same input changes.
pub const EXTRACTOR_VERSION: u32 = 4;

/// Extract sections, links and metadata from the text of one Markdown file.
pub fn extract(text: &str) -> MdExtraction {
    extract_with_split(text, SPLIT_CHARS)
}

/// [`extract`] with a chosen split cap (tests use small caps).
pub fn extract_with_split(text: &str, split_chars: usize) -> MdExtraction {
    let lines = LineIndex::new(text);
    let mut out = MdExtraction::default();
    let body_start = read_front_matter(text, &mut out);
    let mut scan = Scan::default();
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_FOOTNOTES;
    for (event, range) in Parser::new_ext(&text[body_start..], options).into_offset_iter() {
        let range = (range.start + body_start)..(range.end + body_start);
        scan.event(event, range, text, &lines, &mut out.diagnostics);
    }
    cut_sections(text, body_start, split_chars, &lines, &scan.headings, &mut out);
    if out.title.is_none() {
        out.title =
            ["title", "name"].iter().find_map(|k| out.metadata.get(*k).and_then(|v| v.as_str()).map(str::to_string));
    }
    assign_to_sections(scan, &mut out);
    out
}

/// The front matter into `out` (a broken one recovered, with a diagnostic)
/// and the leading comment; returns where the body starts.
fn read_front_matter(text: &str, out: &mut MdExtraction) -> usize {
    let front = front_matter::split(text);
    let body_start = front.body_start;
    if let Some(result) = front.metadata {
        match result {
            Ok(map) => out.metadata = map,
            Err((recovered, message)) => {
                out.metadata = recovered;
                out.diagnostics.push(Diagnostic { line: 1, column: 1, message });
            }
        }
    }
    out.leading_comment = front_matter::leading_comment(&text[body_start..]);

    out.leading_comment = front_matter::leading_comment(&text[body_start..]);
    body_start
}

/// What one pass over the body's events collects, and where in the
/// document the pass is (inside a heading, a link, a code block, a table).
#[derive(Default)]
struct Scan {
    headings: Vec<Heading>,
    code_blocks: Vec<CodeBlock>,
    mentions: Vec<(usize, String)>,
    links: Vec<(usize, MdLink)>,
    html_anchors: Vec<(usize, String)>,
    table_definitions: Vec<(usize, String)>,
    in_table_head: bool,
    /// Inside a table body row's cell, by index.
    cell_index: Option<usize>,
    in_heading: Option<Heading>,
    in_link: Option<(usize, MdLink)>,
    in_code_block: bool,
}

impl Scan {
    fn event(
        &mut self,
        event: Event<'_>,
        range: Range<usize>,
        text: &str,
        lines: &LineIndex,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        match event {
            Event::Text(_)
            | Event::Code(_)
            | Event::Html(_)
            | Event::InlineHtml(_)
            | Event::SoftBreak
            | Event::HardBreak => self.inline(event, range, lines),
            _ => self.structure(event, range, text, lines, diagnostics),
        }
    }

    /// Headings, code blocks, tables and links opening and closing.
    fn structure(
        &mut self,
        event: Event<'_>,
        range: Range<usize>,
        text: &str,
        lines: &LineIndex,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                self.in_heading = Some(Heading {
                    start: lines.line_start_byte(range.start),
                    level: level as u8,
                    text: String::new(),
                });
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(mut heading) = self.in_heading.take() {
                    heading.text = heading.text.trim().to_string();
                    self.headings.push(heading);
                }
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                self.in_code_block = true;
                let lang = match &kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                        .next()
                        .filter(|l| !l.is_empty())
                        .map(str::to_string),
                    CodeBlockKind::Indented => None,
                };
                if matches!(kind, CodeBlockKind::Fenced(_))
                    && let Some(diag) = unclosed_fence(text, &range, lines)
                {
                    diagnostics.push(diag);
                }
                self.code_blocks.push(CodeBlock {
                    lang,
                    line_start: lines.line_of(range.start),
                    line_end: lines.line_of(range.end.saturating_sub(1).max(range.start)),
                    byte_start: range.start as u64,
                    byte_end: range.end as u64,
                });
            }
            Event::End(TagEnd::CodeBlock) => self.in_code_block = false,
            Event::Start(Tag::TableHead) => self.in_table_head = true,
            Event::End(TagEnd::TableHead) => self.in_table_head = false,
            Event::Start(Tag::TableRow) => self.cell_index = None,
            Event::Start(Tag::TableCell) => self.cell_index = Some(self.cell_index.map_or(0, |i| i + 1)),
            Event::Start(Tag::Link { link_type, dest_url, .. }) => {
                let kind = match link_type {
                    LinkType::Inline => LinkKind::Inline,
                    LinkType::Autolink | LinkType::Email => LinkKind::Autolink,
                    _ => LinkKind::Reference,
                };
                self.in_link = Some((
                    range.start,
                    MdLink {
                        section: 0,
                        kind,
                        dest: dest_url.to_string(),
                        text: String::new(),
                        line: lines.line_of(range.start),
                        lines: None,
                    },
                ));
            }
            Event::End(TagEnd::Link) => {
                if let Some((at, mut link)) = self.in_link.take() {
                    link.text = link.text.trim().to_string();
                    self.links.push((at, link));
                }
            }
            _ => {}
        }
    }

    /// Text, code spans, HTML and line breaks: what headings and links read,
    /// and the mentions, code-span links, table definitions and HTML anchors.
    fn inline(&mut self, event: Event<'_>, range: Range<usize>, lines: &LineIndex) {
        match event {
            Event::Text(t) => {
                if self.in_code_block {
                    return;
                }
                if let Some(h) = self.in_heading.as_mut() {
                    h.text.push_str(&t);
                }
                if let Some((_, link)) = self.in_link.as_mut() {
                    link.text.push_str(&t);
                }
            }
            Event::Code(code) => {
                if !self.in_table_head && self.cell_index == Some(0) {
                    self.table_definitions.push((range.start, code.trim().to_string()));
                }
                if let Some(h) = self.in_heading.as_mut() {
                    h.text.push_str(&code);
                }
                if let Some((_, link)) = self.in_link.as_mut() {
                    link.text.push_str(&code);
                } else if let Some(span) = classify_code_span(&code) {
                    let (kind, dest, span_lines) = match span {
                        CodeSpanRef::Path(p) => (LinkKind::CodePath, p, None),
                        CodeSpanRef::FileSpan { path, start, end } => (LinkKind::FileSpan, path, Some((start, end))),
                    };
                    self.links.push((
                        range.start,
                        MdLink {
                            section: 0,
                            kind,
                            dest,
                            text: String::new(),
                            line: lines.line_of(range.start),
                            lines: span_lines,
                        },
                    ));
                }
                self.mentions.push((range.start, code.trim().to_string()));
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                self.html_anchors.extend(html_anchor_ids(&html).into_iter().map(|id| (range.start, id)));
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(h) = self.in_heading.as_mut() {
                    h.text.push(' ');
                }
                if let Some((_, link)) = self.in_link.as_mut() {
                    link.text.push(' ');
                }
            }
            _ => {}
        }
    }
}

/// The sections: an optional preamble, then one per heading, each with its
/// anchor (GitHub's, duplicates numbered), parent, heading path and parts.
fn cut_sections(
    text: &str,
    body_start: usize,
    split_chars: usize,
    lines: &LineIndex,
    headings: &[Heading],
    out: &mut MdExtraction,
) {
    let mut starts: Vec<(usize, Option<usize>)> = Vec::new();
    let first_heading = headings.first().map_or(text.len(), |h| h.start);
    if text[body_start..first_heading].chars().any(|c| !c.is_whitespace()) {
        starts.push((body_start, None));
    }
    for (i, h) in headings.iter().enumerate() {
        starts.push((h.start, Some(i)));
    }

    let mut used_anchors: HashMap<String, u32> = HashMap::new();
    let mut stack: Vec<(u8, u32)> = Vec::new();
    for (n, &(start, heading)) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(text.len(), |s| s.0);
        let section_text = &text[start..end];
        let (anchor, heading_text, level, parent, path) = match heading {
            None => {
                used_anchors.insert(String::new(), 0);
                (String::new(), String::new(), 0u8, None, Vec::new())
            }
            Some(i) => {
                let h = &headings[i];
                let base = github_anchor(&h.text);
                let anchor = match used_anchors.get_mut(&base) {
                    Some(count) => {
                        *count += 1;
                        format!("{base}-{count}")
                    }
                    None => {
                        used_anchors.insert(base.clone(), 0);
                        base
                    }
                };
                while stack.last().is_some_and(|(lvl, _)| *lvl >= h.level) {
                    stack.pop();
                }
                let parent = stack.last().map(|(_, idx)| *idx);
                let mut path: Vec<String> =
                    parent.map(|p| out.sections[p as usize].heading_path.clone()).unwrap_or_default();
                path.push(h.text.clone());
                stack.push((h.level, n as u32));
                (anchor, h.text.clone(), h.level, parent, path)
            }
        };
        if out.title.is_none() && level == 1 {
            out.title = Some(heading_text.clone());
        }
        let chars = section_text.chars().count();
        let parts = if chars > split_chars { split_parts(section_text, start, split_chars) } else { Vec::new() };
        out.sections.push(MdSection {
            anchor,
            heading: heading_text,
            level,
            heading_path: path,
            parent,
            line_start: lines.line_of(start),
            line_end: lines.line_of(end.saturating_sub(1).max(start)),
            byte_start: start as u64,
            byte_end: end as u64,
            chars: chars as u64,
            parts,
            code_blocks: Vec::new(),
            mentions: Default::default(),
            defines: heading.map(|i| headings[i].text.as_str()).and_then(symbol_name).into_iter().collect(),
            html_anchors: Vec::new(),
        });
    }
}

/// Code blocks, mentions, links, table definitions and HTML anchors, each
/// to the section it falls in.
fn assign_to_sections(scan: Scan, out: &mut MdExtraction) {
    let Scan { code_blocks, mentions, links, html_anchors, table_definitions, .. } = scan;
    let section_of = |byte: usize| out_section_index(&out.sections, byte);
    let assignments: Vec<(usize, CodeBlock)> =
        code_blocks.into_iter().map(|cb| (section_of(cb.byte_start as usize), cb)).collect();
    let mention_assignments: Vec<(usize, String)> = mentions.into_iter().map(|(at, m)| (section_of(at), m)).collect();
    let mut link_rows: Vec<MdLink> = Vec::with_capacity(links.len());
    for (at, mut link) in links {
        link.section = section_of(at) as u32;
        link_rows.push(link);
    }
    link_rows.sort_by_key(|l| (l.line, l.section));
    for (idx, cb) in assignments {
        if let Some(section) = out.sections.get_mut(idx) {
            section.code_blocks.push(cb);
        }
    }
    for (at, code) in table_definitions {
        let idx = out_section_index(&out.sections, at);
        if let (Some(name), Some(section)) = (symbol_name(&code), out.sections.get_mut(idx))
            && !section.defines.contains(&name)
        {
            section.defines.push(name);
        }
    }
    for (at, id) in html_anchors {
        let idx = out_section_index(&out.sections, at);
        if let Some(section) = out.sections.get_mut(idx)
            && !section.html_anchors.contains(&id)
        {
            section.html_anchors.push(id);
        }
    }
    for (idx, mention) in mention_assignments {
        if mention.is_empty() {
            continue;
        }
        if let Some(section) = out.sections.get_mut(idx) {
            section.mentions.push(&mention);
        }
    }
    out.links = if out.sections.is_empty() { Vec::new() } else { link_rows };
}

/// `id`/`name` attributes of `<a>` tags in a piece of HTML.
fn html_anchor_ids(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut ids = Vec::new();
    let mut pos = 0;
    while let Some(found) = lower[pos..].find("<a") {
        let tag_start = pos + found;
        let after = lower[tag_start + 2..].chars().next();
        let tag_end = lower[tag_start..].find('>').map_or(lower.len(), |e| tag_start + e);
        pos = tag_start + 2;
        if !after.is_some_and(char::is_whitespace) {
            continue;
        }
        let tag = &lower[tag_start..tag_end];
        for attr in ["id=", "name="] {
            let mut search = 0;
            while let Some(i) = tag[search..].find(attr) {
                let at = search + i;
                search = at + attr.len();
                if at > 0 && !tag.as_bytes()[at - 1].is_ascii_whitespace() {
                    continue;
                }
                let value_start = tag_start + at + attr.len();
                let rest = &html[value_start..tag_end];
                let value = match rest.chars().next() {
                    Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or(""),
                    _ => rest.split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or(""),
                };
                if !value.is_empty() {
                    ids.push(value.to_string());
                }
            }
        }
    }
    ids
}

/// Index of the section containing `byte` (the last one starting at or before it).
fn out_section_index(sections: &[MdSection], byte: usize) -> usize {
    sections.partition_point(|s| s.byte_start as usize <= byte).saturating_sub(1)
}

struct Heading {
    start: usize,
    level: u8,
    text: String,
}

/// Split a section into parts of at most `cap` chars, preferring paragraph
/// breaks, then line breaks, in the second half of each window.
fn split_parts(section: &str, section_start: usize, cap: usize) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut pos = 0usize;
    while pos < section.len() {
        let rest = &section[pos..];
        let (_, window_end, _) = fabdex_model::envelope::char_window(rest, 0, cap as u64);
        let cut = if window_end >= rest.len() {
            rest.len()
        } else {
            let window = &rest[..window_end];
            let mut half = window.len() / 2;
            while !window.is_char_boundary(half) {
                half -= 1;
            }
            window[half..]
                .rfind("\n\n")
                .map(|i| half + i + 2)
                .or_else(|| window[half..].rfind('\n').map(|i| half + i + 1))
                .unwrap_or(window_end)
        };
        let piece = &rest[..cut];
        parts.push(Part {
            byte_start: (section_start + pos) as u64,
            byte_end: (section_start + pos + cut) as u64,
            chars: piece.chars().count() as u64,
        });
        pos += cut;
    }
    parts
}

/// A fenced block that runs to the end of the file without its closing fence.
fn unclosed_fence(text: &str, range: &Range<usize>, lines: &LineIndex) -> Option<Diagnostic> {
    let block = &text[range.clone()];
    let strip = |l: &str| l.trim_start_matches([' ', '\t', '>']).to_string();
    let mut block_lines = block.lines();
    let opening = strip(block_lines.next()?);
    let fence_char = opening.chars().next()?;
    if fence_char != '`' && fence_char != '~' {
        return None;
    }
    let fence_len = opening.chars().take_while(|c| *c == fence_char).count();
    let last = block_lines.last().map(strip).unwrap_or_default();
    let last = last.trim_end();
    let closed =
        last.chars().take_while(|c| *c == fence_char).count() >= fence_len && last.chars().all(|c| c == fence_char);
    let at_eof = text[range.end..].trim().is_empty();
    (!closed && at_eof).then(|| Diagnostic {
        line: lines.line_of(range.start),
        column: 1,
        message: format!(
            "code fence `{}` opened here is never closed; everything after it to the end of the file is code",
            fence_char.to_string().repeat(fence_len)
        ),
    })
}

/// Byte offset → 1-based line.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    fn line_of(&self, byte: usize) -> u32 {
        self.starts.partition_point(|&s| s <= byte) as u32
    }

    fn line_start_byte(&self, byte: usize) -> usize {
        self.starts[self.line_of(byte) as usize - 1]
    }
}

#[cfg(test)]
mod tests;
