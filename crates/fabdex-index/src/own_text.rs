//! What a program says about itself, read from its source text: the entry's
//! module comment, `[NAME]` values, the text a user sees in its JSX
//! (element text, and `placeholder`, `title`, `label`, `alt`, `aria-label`
//! attributes) and its handler and action names.
//!
//! A lexical scan, not a parse: it runs over every program's files at build
//! time, must not fail on text swc rejects, and only has to find words, not
//! structure. What it takes is bounded per program.

use std::collections::HashSet;

use fabdex_model::ts::{OwnText, ProfileLimit};

/// Chars of the module comment kept.
const DOC_CHARS: usize = 1_500;
/// Distinct UI strings kept per program.
const MAX_UI: usize = 120;
/// Longest UI string kept (longer ones are prose, or code the scan misread).
const MAX_UI_CHARS: usize = 120;

/// Attributes whose string value a user reads.
const UI_ATTRIBUTES: [&str; 7] = ["placeholder", "title", "label", "alt", "aria-label", "heading", "subtitle"];

/// The own text of a program: `entry` is the entry file's text, `others` the
/// texts of its other files that live beside or below the entry. The limits
/// say which bounds cut something off.
pub fn own_text(entry: &str, others: &[&str]) -> (OwnText, Vec<ProfileLimit>) {
    let (module_doc, doc_chars) = module_doc(entry).unzip();
    let mut out = OwnText { module_doc, ..OwnText::default() };
    let mut ui = Bounded::new(MAX_UI);
    let mut actions = Bounded::new(MAX_UI);
    for text in std::iter::once(entry).chain(others.iter().copied()) {
        for name in names(text) {
            if !out.names.contains(&name) {
                out.names.push(name);
            }
        }
        for s in ui_strings(text) {
            ui.push(&mut out.ui, s);
        }
        for a in action_names(text) {
            actions.push(&mut out.actions, a);
        }
    }
    let mut limits = Vec::new();
    if let Some(total) = doc_chars.filter(|&n| n > DOC_CHARS) {
        limits.push(ProfileLimit::new("module_doc", None, DOC_CHARS, total, "chars"));
    }
    for (field, list, bounded) in [("ui", &out.ui, &ui), ("actions", &out.actions, &actions)] {
        if !bounded.dropped.is_empty() {
            limits.push(ProfileLimit::new(field, None, list.len(), list.len() + bounded.dropped.len(), "items"));
        }
    }
    (out, limits)
}

/// A list of distinct items kept up to a bound, counting the distinct ones past it.
struct Bounded {
    max: usize,
    dropped: HashSet<String>,
}

impl Bounded {
    fn new(max: usize) -> Bounded {
        Bounded { max, dropped: HashSet::new() }
    }

    fn push(&mut self, list: &mut Vec<String>, item: String) {
        if list.contains(&item) {
            return;
        }
        if list.len() < self.max {
            list.push(item);
        } else {
            self.dropped.insert(item);
        }
    }
}

/// The first `/** … */` of the file, when only imports, directives and line
/// comments come before it: a comment on the module, not on a declaration.
/// Returns the kept text and the comment's full length in chars.
fn module_doc(text: &str) -> Option<(String, usize)> {
    let start = text.find("/**")?;
    let before = &text[..start];
    let declares = ["const ", "let ", "function ", "interface ", "type ", "class ", "enum "];
    let code_before = before.lines().any(|l| {
        let l = l.trim_start();
        !l.starts_with("//") && !l.starts_with("import") && declares.iter().any(|d| l.starts_with(d))
    });
    if code_before {
        return None;
    }
    let end = text[start..].find("*/")? + start;
    let body: Vec<&str> = text[start + 3..end]
        .lines()
        .map(|l| l.trim().trim_start_matches('*').trim())
        .filter(|l| !l.starts_with('@'))
        .collect();
    let doc = body.join(" ").split_whitespace().collect::<Vec<_>>().join(" ");
    (!doc.is_empty()).then(|| (doc.chars().take(DOC_CHARS).collect(), doc.chars().count()))
}

/// `[NAME]: "…"`, `` [NAME]: `…${x}…` `` and `[NAME]: computed(() => `…`)`:
/// the literal text, placeholders dropped.
fn names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("[NAME]") {
        rest = &rest[at + 6..];
        let window: String = rest.chars().take(200).collect();
        if !window.trim_start().starts_with(':') {
            continue;
        }
        if let Some(lit) = first_literal(&window) {
            let words = strip_placeholders(&lit);
            if words.chars().any(char::is_alphabetic) {
                out.push(words);
            }
        }
    }
    out
}

/// The first string or template literal in `s`, before a `,` or `}` that ends the property.
fn first_literal(s: &str) -> Option<String> {
    for (i, c) in s.char_indices() {
        match c {
            '"' | '\'' | '`' => {
                let end = s[i + 1..].find(c)? + i + 1;
                return Some(s[i + 1..end].to_string());
            }
            ',' | '}' | ';' | '\n' if !s[..i].contains("=>") => return None,
            _ => {}
        }
    }
    None
}

fn strip_placeholders(s: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek() == Some(&'{') {
            depth += 1;
            chars.next();
            out.push(' ');
        } else if c == '}' && depth > 0 {
            depth -= 1;
        } else if depth == 0 {
            out.push(c);
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Element text (`>Add expense<`, `>Total: {`) and the values of
/// [`UI_ATTRIBUTES`] written as string literals.
fn ui_strings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'>' || i == 0 || matches!(bytes[i - 1], b'=' | b'-' | b'>') {
            continue;
        }
        let rest = &text[i + 1..];
        let Some(end) = rest.find(['<', '{']) else { continue };
        let candidate = rest[..end].trim();
        // Element text ends at a tag or an expression; a comparison or a
        // generic's `>` is followed by code, which this filter rejects.
        let ends_tag = rest[end..].starts_with("</") || rest[end..].starts_with('{') || rest[end..].starts_with("<");
        if ends_tag && looks_like_ui_text(candidate) {
            out.push(candidate.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    for attr in UI_ATTRIBUTES {
        let mut rest = text;
        let pattern = format!("{attr}=");
        while let Some(at) = rest.find(&pattern) {
            let before = rest[..at].chars().last();
            rest = &rest[at + pattern.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_') {
                continue;
            }
            let value = rest.strip_prefix('{').unwrap_or(rest);
            let Some(q) = value.chars().next().filter(|c| matches!(c, '"' | '\'' | '`')) else { continue };
            if let Some(end) = value[1..].find(q) {
                let v = strip_placeholders(&value[1..1 + end]);
                if looks_like_ui_text(&v) {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// Words a person reads: letters, at most [`MAX_UI_CHARS`], no code punctuation.
fn looks_like_ui_text(s: &str) -> bool {
    let letters = s.chars().filter(|c| c.is_alphabetic()).count();
    letters >= 2
        && s.chars().count() <= MAX_UI_CHARS
        && !s.contains("&&")
        && !s.contains("||")
        && !s.contains("=>")
        && !s.chars().any(|c| matches!(c, ';' | '=' | '(' | ')' | '[' | ']' | '$' | '\\'))
        && !s.starts_with("//")
}

/// Names bound to `handler(…)`/`handler<…>(…)` or `action(…)`, and
/// the methods of an object passed to `handlers(…)`-like builders are left out.
fn action_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for keyword in ["const ", "let "] {
        let mut rest = text;
        while let Some(at) = rest.find(keyword) {
            rest = &rest[at + keyword.len()..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$').collect();
            if name.is_empty() {
                continue;
            }
            let after = rest[name.len()..].trim_start();
            let Some(value) = after.strip_prefix('=') else { continue };
            let value = value.trim_start();
            let is_action = ["handler", "action"]
                .iter()
                .any(|k| value.strip_prefix(k).is_some_and(|r| r.starts_with('(') || r.starts_with('<')));
            if is_action {
                out.push(name);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"/// <cts-enable />
import { handler, pattern, NAME } from "commonfabric";
/**
 * Track spending by category.
 * @param x ignored
 */
const addExpense = handler<{ amount: number }, { items: Item[] }>((e, s) => {});
const removeAll = action(() => {});
export default pattern<Input>(({ items }) => ({
  [NAME]: computed(() => `Budget: ${title}`),
  [UI]: (
    <div>
      <h2>Monthly Budget</h2>
      <cf-input placeholder="Amount spent" />
      <cf-button title={"Add it"} onClick={addExpense}>Add expense</cf-button>
      {items.length > 0 && <span>Total: {total}</span>}
      {a => b}
    </div>
  ),
}));
"#;

    #[test]
    fn finds_module_doc_name_ui_text_and_actions() {
        let (own, limits) = own_text(SOURCE, &[]);
        assert!(limits.is_empty(), "{limits:?}");
        assert_eq!(own.module_doc.as_deref(), Some("Track spending by category."));
        assert_eq!(own.names, vec!["Budget:"]);
        for s in ["Monthly Budget", "Amount spent", "Add it", "Add expense", "Total:"] {
            assert!(own.ui.contains(&s.to_string()), "{s} in {:?}", own.ui);
        }
        assert!(!own.ui.iter().any(|s| s.contains("items") || s.contains("0 &&")), "{:?}", own.ui);
        assert_eq!(own.actions, vec!["addExpense", "removeAll"]);
    }

    #[test]
    fn bounds_that_cut_are_reported() {
        let labels: String = (0..MAX_UI + 5).map(|i| format!("<cf-button title=\"Label {i}\" />\n")).collect();
        let source = format!("/** {} */\nexport default () => (<div>{labels}</div>);", "word ".repeat(DOC_CHARS));
        let (own, limits) = own_text(&source, &[]);
        assert_eq!(own.ui.len(), MAX_UI);
        let ui = limits.iter().find(|l| l.field == "ui").expect("ui limit");
        assert_eq!((ui.kept, ui.total, ui.unit.as_str()), (MAX_UI as u32, MAX_UI as u32 + 5, "items"));
        let doc = limits.iter().find(|l| l.field == "module_doc").expect("module_doc limit");
        assert_eq!((doc.kept as usize, doc.total as usize), (DOC_CHARS, "word ".repeat(DOC_CHARS).trim().len()));
    }

    #[test]
    fn a_comment_after_code_is_not_the_module_doc() {
        assert_eq!(module_doc("const x = 1;\n/** About x. */\nexport default x;"), None);
    }
}
