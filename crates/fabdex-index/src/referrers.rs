//! What other documents say a section is about: the list items elsewhere
//! that open with a link to it (`- [Conditional Rendering](./conditional.md)
//! — plain ternaries for show/hide`). See-also lists and indexes describe
//! their targets in a reader's words, which the target itself often does not
//! use; the sentence model reads each such item as one more passage of the
//! unit it lands on (anchor text, as web search uses it).
//!
//! Only list items that open with the link count: a link inside a sentence
//! sits in text about the linking section, not about its target (measured:
//! taking every link's line cost the corpus a question, see
//! `docs/ranking.md`).

use std::collections::{HashMap, HashSet};

use fabdex_model::records::{DocFileRow, DocsTable, LinkKind, LinkRow, LinkTarget};

use fabdex_snapshot::Unit;
use fabdex_snapshot::docs_table::Docs;

/// Per unit, the distinct texts of the list items in other files that open
/// with a link landing on it, in link order. `text_of(file)` is a docs
/// file's text. Only the opening link of an item gets it: a second link on
/// the line sits in words about the first's target.
pub fn link_items<'t>(docs: &DocsTable, text_of: impl Fn(u32) -> &'t str, units: &[Unit]) -> Vec<Vec<String>> {
    let mut first_unit: HashMap<u32, usize> = HashMap::new();
    for (i, u) in units.iter().enumerate() {
        first_unit.entry(u.section).or_insert(i);
    }
    let files = files_by_address(&docs.files);
    let mut lines: HashMap<u32, Vec<&str>> = HashMap::new();
    let mut seen: HashSet<(usize, String)> = HashSet::new();
    let mut out = vec![Vec::new(); units.len()];
    for link in docs.links.iter().filter(|l| l.kind == LinkKind::Inline) {
        let Some(to) = landing(docs, link, &files) else { continue };
        let from_file = docs.sections[link.from as usize].file;
        let Some(&unit) = first_unit.get(&to) else { continue };
        if docs.sections[to as usize].file == from_file {
            continue;
        }
        let file_lines = lines.entry(from_file).or_insert_with(|| text_of(from_file).lines().collect());
        let Some(line) = file_lines.get(link.line.saturating_sub(1) as usize) else { continue };
        let Some(item) = list_item(line) else { continue };
        if first_word(&item.dest) == first_word(&link.dest) && seen.insert((unit, item.words.clone())) {
            out[unit].push(item.words);
        }
    }
    out
}

/// A destination without its title (`url "title"`) or angle brackets.
fn first_word(dest: &str) -> &str {
    let dest = dest.split_whitespace().next().unwrap_or("");
    dest.strip_prefix('<').and_then(|d| d.strip_suffix('>')).unwrap_or(dest)
}

/// The addresses of the sections that links from the files `changed` picks
/// land on: their units' referring items may have changed.
pub fn landed_from(docs: &DocsTable, changed: impl Fn(u32) -> bool) -> HashSet<String> {
    let files = files_by_address(&docs.files);
    docs.links
        .iter()
        .filter(|l| changed(docs.sections[l.from as usize].file))
        .filter_map(|l| landing(docs, l, &files))
        .map(|s| docs.sections[s as usize].address.clone())
        .collect()
}

/// [`landed_from`] of a published snapshot's docs table. A link row that
/// does not decode is an error naming it.
pub fn landed_from_published(docs: &Docs, changed: impl Fn(u32) -> bool) -> anyhow::Result<HashSet<String>> {
    let files = files_by_address(&docs.files);
    let mut out = HashSet::new();
    for i in 0..docs.links.len() {
        let (from, to) = docs.link_ends(i as u32);
        if !changed(docs.section_file(from)) {
            continue;
        }
        let to = match to {
            Some(section) => Some(section),
            None => {
                let link = docs.links.get(i).map_err(|e| anyhow::anyhow!("docs table: link row {i}: {e}"))?;
                file_landing(&docs.files, &link.target, &files)
            }
        };
        out.extend(to.map(|s| docs.section_address(s).to_string()));
    }
    Ok(out)
}

fn files_by_address(files: &[DocFileRow]) -> HashMap<String, u32> {
    files.iter().enumerate().map(|(i, f)| (f.address(), i as u32)).collect()
}

/// The first section of a link's target docs file.
fn file_landing(files: &[DocFileRow], target: &LinkTarget, by_address: &HashMap<String, u32>) -> Option<u32> {
    match target {
        // A file with no sections (empty, or front matter alone) has no unit to land on.
        LinkTarget::File { address: Some(address), .. } => by_address
            .get(address)
            .map(|&f| &files[f as usize])
            .filter(|f| f.section_count > 0)
            .map(|f| f.first_section),
        _ => None,
    }
}

/// The section a link lands on: its target section, or the first section of
/// a target docs file.
fn landing(docs: &DocsTable, link: &LinkRow, files: &HashMap<String, u32>) -> Option<u32> {
    link.to_section.or_else(|| file_landing(&docs.files, &link.target, files))
}

/// A list item that opens with an inline link: the link's destination as
/// written, and the item as plain words.
#[derive(Debug, PartialEq, Eq)]
pub struct ListItem {
    pub dest: String,
    pub words: String,
}

/// The list item `line` is, when it opens with an inline link (after one
/// `-`, `*` or `+`, or a number of up to 9 digits and `.` or `)`, and a
/// space) and has at least [`MIN_ITEM_WORDS`] words: link destinations,
/// reference labels, list marks and emphasis are left out of its words.
pub fn list_item(line: &str) -> Option<ListItem> {
    let item = after_list_mark(line.trim_start())?;
    let item = item.trim_start().strip_prefix('[')?;
    let close = item.find("](")?;
    let dest = &item[close + 2..];
    let dest = &dest[..dest.find(')')?];
    let words = item_words(item);
    let counted = words.split(' ').filter(|w| w.chars().any(char::is_alphanumeric)).count();
    (counted >= MIN_ITEM_WORDS).then(|| ListItem { dest: dest.to_string(), words })
}

/// What follows a list mark and its space, if `line` opens with one.
fn after_list_mark(line: &str) -> Option<&str> {
    let rest = match line.strip_prefix(['-', '*', '+']) {
        Some(rest) => rest,
        None => {
            let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if !(1..=9).contains(&digits) {
                return None;
            }
            line[digits..].strip_prefix(['.', ')'])?
        }
    };
    rest.starts_with([' ', '\t']).then_some(rest)
}

/// The words of an item: `(destination)` after a `]`, and a `[label]` of a
/// reference link, left out; brackets, `!`, backticks, emphasis and table
/// bars dropped.
fn item_words(item: &str) -> String {
    let mut text = String::with_capacity(item.len());
    let mut rest = item;
    while let Some(i) = rest.find(']') {
        text.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        rest = match after.chars().next() {
            Some('(') => after.find(')').map_or("", |j| &after[j + 1..]),
            Some('[') => after.find(']').map_or("", |j| &after[j + 1..]),
            _ => after,
        };
        text.push(' ');
    }
    text.push_str(rest);
    let words: Vec<&str> = text.split(['[', '!', '`', '*', '_', '|', ' ', '\t']).filter(|w| !w.is_empty()).collect();
    words.join(" ")
}

/// An item of one or two words ("- [Actions](action.md)") says no more than
/// the target's own heading.
pub const MIN_ITEM_WORDS: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_item_opening_with_a_link_is_read_as_words() {
        let words = |line: &str| list_item(line).map(|i| i.words);
        let item = list_item("- [Conditional Rendering](./conditional.md) — plain ternaries for show/hide").unwrap();
        assert_eq!(item.dest, "./conditional.md");
        assert_eq!(item.words, "Conditional Rendering — plain ternaries for show/hide");
        assert_eq!(
            words("  12. [`wish()`](wish.md#result) and [fetch](../fetch.md) *both*").as_deref(),
            Some("wish() and fetch both")
        );
        assert_eq!(
            words("3) [Guide](g.md) and the [API][api-ref] for authors").as_deref(),
            Some("Guide and the API for authors")
        );
        assert_eq!(
            words("3) [Guide][guide-ref] for new authors"),
            None,
            "a reference link has no destination here to compare"
        );
        assert_eq!(
            words("* [![logo](l.png) Home](home.md) — the start page").as_deref(),
            Some("logo Home — the start page")
        );
        assert_eq!(list_item("+ [a b](x.md \"t\") c").unwrap().dest, "x.md \"t\"");
        assert_eq!(words("- [Actions](action.md)"), None, "too short to say more than a heading");
        assert_eq!(words("- [Actions](action.md) —"), None, "a dash is not a word");
        assert_eq!(words("needs the body's locals, use an [action](action.md) instead"), None, "prose");
        assert_eq!(words("- see [the guide](guide.md) for more"), None, "the item does not open with the link");
        assert_eq!(words("-[x](y.md) not a list item at all"), None);
        assert_eq!(words("2024 [Notes](n.md) for the spring"), None, "a year is not a list number");
        assert_eq!(words("1234567890. [Notes](n.md) for the spring"), None, "ten digits are not a list number");
        assert_eq!(words("[Conditional Rendering](c.md) — not in a list"), None);
        assert_eq!(words("- [unclosed](c.md and more words here"), None);
        assert_eq!(words("- ["), None);
        assert_eq!(words("- é [ü](ö.md) ß"), None);
    }

    #[test]
    fn a_destination_is_compared_without_its_title_or_brackets() {
        assert_eq!(first_word("x.md \"Title\""), "x.md");
        assert_eq!(first_word("<x y.md>"), "<x");
        assert_eq!(first_word("<x.md>"), "x.md");
        assert_eq!(first_word(""), "");
    }
}
