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

use fabdex_model::records::{DocFileRow, DocsTable, LinkRow, LinkTarget};

use crate::Unit;
use crate::docs_table::Docs;

/// Per unit, the distinct texts of the list items in other files that open
/// with a link landing on it, in link order. `text_of(file)` is a docs
/// file's text.
pub fn link_items<'t>(docs: &DocsTable, text_of: impl Fn(u32) -> &'t str, units: &[Unit]) -> Vec<Vec<String>> {
    let mut first_unit: HashMap<u32, usize> = HashMap::new();
    for (i, u) in units.iter().enumerate() {
        first_unit.entry(u.section).or_insert(i);
    }
    let files = files_by_address(&docs.files);
    let mut out = vec![Vec::new(); units.len()];
    for link in &docs.links {
        let Some(to) = landing(docs, link, &files) else { continue };
        let from_file = docs.sections[link.from as usize].file;
        let Some(&unit) = first_unit.get(&to) else { continue };
        if docs.sections[to as usize].file == from_file {
            continue;
        }
        let line = text_of(from_file).lines().nth(link.line.saturating_sub(1) as usize);
        if let Some(item) = line.and_then(item_text)
            && !out[unit].contains(&item)
        {
            out[unit].push(item);
        }
    }
    out
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
    files.iter().enumerate().map(|(i, f)| (format!("doc:{}/{}", f.root, f.path), i as u32)).collect()
}

/// The first section of a link's target docs file.
fn file_landing(files: &[DocFileRow], target: &LinkTarget, by_address: &HashMap<String, u32>) -> Option<u32> {
    match target {
        LinkTarget::File { address: Some(address), .. } => {
            by_address.get(address).map(|&f| files[f as usize].first_section)
        }
        _ => None,
    }
}

/// The section a link lands on: its target section, or the first section of
/// a target docs file.
fn landing(docs: &DocsTable, link: &LinkRow, files: &HashMap<String, u32>) -> Option<u32> {
    link.to_section.or_else(|| file_landing(&docs.files, &link.target, files))
}

/// A list item that opens with a link, as plain words (link targets, list
/// marks and emphasis gone), when it has at least [`MIN_ITEM_WORDS`].
pub fn item_text(line: &str) -> Option<String> {
    let trimmed = line.trim_start();
    let item = trimmed.trim_start_matches(|c: char| matches!(c, '-' | '*' | '+' | '.') || c.is_ascii_digit());
    if item.len() == trimmed.len() || !item.starts_with(char::is_whitespace) || !item.trim_start().starts_with('[') {
        return None;
    }
    let mut words = String::new();
    let mut rest = item;
    while let Some(i) = rest.find("](") {
        words.push_str(&rest[..i]);
        let target = &rest[i + 2..];
        rest = target.find(')').map_or("", |j| &target[j + 1..]);
    }
    words.push_str(rest);
    let words: Vec<&str> = words.split(['[', ']', '`', '*', '_', '|', ' ', '\t']).filter(|w| !w.is_empty()).collect();
    (words.len() >= MIN_ITEM_WORDS).then(|| words.join(" "))
}

/// An item of one or two words ("- [Actions](action.md)") says no more than
/// the target's own heading.
pub const MIN_ITEM_WORDS: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_item_opening_with_a_link_is_read_as_words() {
        assert_eq!(
            item_text("- [Conditional Rendering](./conditional.md) — plain ternaries for show/hide").as_deref(),
            Some("Conditional Rendering — plain ternaries for show/hide")
        );
        assert_eq!(
            item_text("  12. [`wish()`](wish.md#result) and [fetch](../fetch.md) *both*").as_deref(),
            Some("wish() and fetch both")
        );
        assert_eq!(item_text("- [Actions](action.md)"), None, "too short to say more than a heading");
        assert_eq!(item_text("needs the body's locals, use an [action](action.md) instead"), None, "prose");
        assert_eq!(item_text("- see [the guide](guide.md) for more"), None, "the item does not open with the link");
        assert_eq!(item_text("-[x](y.md) not a list item at all"), None);
        assert_eq!(item_text("[Conditional Rendering](c.md) — not in a list"), None);
    }
}
