//! The error-tolerant outline: tree-sitter with the queries in
//! `queries/typescript-outline.scm` gives every file its top-level
//! definitions (name, kind, line range) and imports, also when swc cannot
//! parse it. Files with syntax errors are flagged with where the errors are.

use std::sync::OnceLock;

pub use fabdex_model::ts::{Outline, OutlineEntry};
use tree_sitter::{Language, Parser, Query, QueryCursor, StreamingIterator};

/// The outline query, kept beside the project's other grammar queries.
pub const OUTLINE_QUERY: &str = include_str!("../../../queries/typescript-outline.scm");

/// A tree-sitter query over both TypeScript grammars, compiled once per
/// grammar on first use (compiling a query costs far more than running it).
pub(crate) struct GrammarQuery {
    source: &'static str,
    tsx: OnceLock<Query>,
    ts: OnceLock<Query>,
}

impl GrammarQuery {
    pub(crate) const fn new(source: &'static str) -> GrammarQuery {
        GrammarQuery { source, tsx: OnceLock::new(), ts: OnceLock::new() }
    }

    /// The grammar for a path (TSX for `.tsx`/`.jsx`), and this query compiled for it.
    pub(crate) fn for_path(&self, path: &str) -> (Language, &Query) {
        let tsx = path.ends_with(".tsx") || path.ends_with(".jsx");
        let lang: Language = if tsx {
            tree_sitter_typescript::LANGUAGE_TSX.into()
        } else {
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()
        };
        let cell = if tsx { &self.tsx } else { &self.ts };
        let query =
            cell.get_or_init(|| Query::new(&lang, self.source).expect("bundled queries compile for both grammars"));
        (lang, query)
    }

    /// Parse `text` with the path's grammar.
    pub(crate) fn parse(&self, path: &str, text: &str) -> Option<(tree_sitter::Tree, &Query)> {
        let (lang, query) = self.for_path(path);
        let mut parser = Parser::new();
        parser.set_language(&lang).ok()?;
        Some((parser.parse(text, None)?, query))
    }
}

static OUTLINE: GrammarQuery = GrammarQuery::new(OUTLINE_QUERY);

/// Outline one file. Never fails: an unparsable file yields what the error-
/// recovering parse still recognises, with its error lines.
pub fn outline(path: &str, text: &str) -> Outline {
    let Some((tree, query)) = OUTLINE.parse(path, text) else { return Outline::default() };
    let names = query.capture_names();
    let mut cursor = QueryCursor::new();
    let mut out = Outline::default();
    let mut matches = cursor.matches(query, tree.root_node(), text.as_bytes());
    while let Some(m) = matches.next() {
        let mut name = None;
        let mut def = None;
        for c in m.captures() {
            let capture = names[c.index as usize];
            let node_text = c.node.utf8_text(text.as_bytes()).unwrap_or("").to_string();
            if capture == "name" {
                name = Some(node_text);
            } else if let Some(kind) = capture.strip_prefix("definition.") {
                def = Some((kind.to_string(), c.node));
            } else if capture == "import.source" {
                out.imports.push((node_text, c.node.start_position().row as u32 + 1));
            }
        }
        if let (Some(name), Some((kind, node))) = (name, def) {
            out.definitions.push(OutlineEntry {
                name,
                kind,
                exported: node.parent().is_some_and(|p| p.kind() == "export_statement")
                    || node.kind() == "export_statement",
                line_start: node.start_position().row as u32 + 1,
                line_end: node.end_position().row as u32 + 1,
            });
        }
    }
    out.definitions.sort_by_key(|d| (d.line_start, d.name.clone()));
    out.definitions.dedup();
    if tree.root_node().has_error() {
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            if node.is_error() || node.is_missing() {
                let line = node.start_position().row as u32 + 1;
                if !out.error_lines.contains(&line) {
                    out.error_lines.push(line);
                }
                continue;
            }
            if node.has_error() {
                let mut walker = node.walk();
                stack.extend(node.children(&mut walker));
            }
        }
        out.error_lines.sort_unstable();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outlines_a_file_that_does_not_parse() {
        let src = r#"import { pattern } from "commonfabric";
import { fmt } from "./fmt.ts";

/** The input. */
export interface NoteInput { text: string }

type Mode = "a" | "b";

export function shout(s: string): string {
  return s.toUpperCase();
}

const Note = pattern<NoteInput>(({ text }) => {
  return { [UI]: <div>{text} };
});
export default Note;
"#;
        // swc rejects it (the <div> is never closed) ...
        assert!(
            crate::extract("note.tsx", src).parse_failed || !crate::extract("note.tsx", src).diagnostics.is_empty()
        );
        // ... and the outline still has every top-level definition, and the error's place.
        let o = outline("note.tsx", src);
        let defs: Vec<(&str, &str, bool, u32)> =
            o.definitions.iter().map(|d| (d.name.as_str(), d.kind.as_str(), d.exported, d.line_start)).collect();
        assert!(defs.contains(&("NoteInput", "interface", true, 5)), "{defs:?}");
        assert!(defs.contains(&("Mode", "type", false, 7)), "{defs:?}");
        assert!(defs.contains(&("shout", "function", true, 9)), "{defs:?}");
        assert_eq!(o.definitions.iter().find(|d| d.name == "shout").unwrap().line_end, 11);
        assert_eq!(o.imports, [("commonfabric".to_string(), 1), ("./fmt.ts".to_string(), 2)]);
        assert!(!o.error_lines.is_empty());
    }

    #[test]
    fn a_clean_file_has_no_error_lines() {
        let o = outline("x.ts", "export const a = 1;\nexport enum E { A }\nclass K {}\n");
        assert!(o.error_lines.is_empty());
        let kinds: Vec<&str> = o.definitions.iter().map(|d| d.kind.as_str()).collect();
        assert_eq!(kinds, ["const", "enum", "class"]);
    }
}
