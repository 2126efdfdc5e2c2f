//! Which fields a source reads from the results of calls: `const r = F(…)`
//! then `r.field`, or `const { field } = F(…)`. Error-tolerant (tree-sitter,
//! query in `queries/typescript-result-reads.scm`), so a draft with syntax
//! errors still reports what it visibly reads.

use std::collections::HashMap;

use tree_sitter::{QueryCursor, StreamingIterator};

use crate::outline::GrammarQuery;

pub const RESULT_READS_QUERY: &str = include_str!("../../../queries/typescript-result-reads.scm");

/// One field read from a call's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRead {
    /// The called function's local name (an imported pattern, say).
    pub callee: String,
    pub field: String,
    /// 1-based.
    pub line: u32,
}

static READS: GrammarQuery = GrammarQuery::new(RESULT_READS_QUERY);

/// Fields read from the results of calls to `callees` (local names).
pub fn result_reads(path: &str, text: &str, callees: &[&str]) -> Vec<FieldRead> {
    let Some((tree, query)) = READS.parse(path, text) else { return vec![] };
    let names = query.capture_names();
    let src = text.as_bytes();
    let mut bindings: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    let mut members: Vec<(String, String, u32)> = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), src);
    while let Some(m) = matches.next() {
        let capture = |n: &str| m.captures().iter().find(|c| names[c.index as usize] == n).map(|c| c.node);
        let callee = capture("callee").and_then(|n| n.utf8_text(src).ok()).map(str::to_string);
        if let (Some(callee), Some(binding)) = (&callee, capture("binding")) {
            if callees.contains(&callee.as_str()) {
                bindings.insert(binding.utf8_text(src).unwrap_or("").to_string(), callee.clone());
            }
        } else if let (Some(callee), Some(pattern)) = (&callee, capture("pattern")) {
            if callees.contains(&callee.as_str()) {
                let mut walk = pattern.walk();
                for child in pattern.named_children(&mut walk) {
                    // `{ a }` (shorthand) or `{ a: alias }` / `{ a = default }`.
                    let key = match child.kind() {
                        "shorthand_property_identifier_pattern" => Some(child),
                        "pair_pattern" => child.child_by_field_name("key"),
                        "object_assignment_pattern" => child.child_by_field_name("left"),
                        _ => None,
                    };
                    if let Some(key) = key {
                        out.push(FieldRead {
                            callee: callee.clone(),
                            field: key.utf8_text(src).unwrap_or("").to_string(),
                            line: key.start_position().row as u32 + 1,
                        });
                    }
                }
            }
        } else if let (Some(object), Some(property)) = (capture("object"), capture("property")) {
            members.push((
                object.utf8_text(src).unwrap_or("").to_string(),
                property.utf8_text(src).unwrap_or("").to_string(),
                property.start_position().row as u32 + 1,
            ));
        }
    }
    for (object, field, line) in members {
        if let Some(callee) = bindings.get(&object) {
            out.push(FieldRead { callee: callee.clone(), field, line });
        }
    }
    out.sort_by(|a, b| (a.line, &a.field).cmp(&(b.line, &b.field)));
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_member_and_destructured_reads_of_call_results() {
        let src = "import Reader from \"cf:pattern:x\";\nexport default pattern(({ db }) => {\n  const r = Reader({ db });\n  const { messages, count: n } = Reader({ db });\n  const other = fn();\n  return { list: r.messages, total: r.total, o: other.thing };\n});\n";
        let reads = result_reads("a.tsx", src, &["Reader"]);
        let got: Vec<(&str, u32)> = reads.iter().map(|r| (r.field.as_str(), r.line)).collect();
        assert_eq!(got, [("count", 4), ("messages", 4), ("messages", 6), ("total", 6)]);
        assert!(result_reads("a.tsx", src, &["Nothing"]).is_empty());
    }
}

/// One key passed to a call or JSX element of a callee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedKey {
    pub callee: String,
    pub key: String,
    /// The value when it is a bare identifier (`{ db }` or `{ db: db }`, `db={db}`).
    pub identifier: Option<String>,
    pub line: u32,
}

/// Keys passed to calls of (or JSX elements named) `callees`.
pub fn call_arguments(path: &str, text: &str, callees: &[&str]) -> Vec<PassedKey> {
    let Some((tree, query)) = READS.parse(path, text) else { return vec![] };
    let names = query.capture_names();
    let src = text.as_bytes();
    let mut out = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), src);
    let node_text = |n: tree_sitter::Node<'_>| n.utf8_text(src).unwrap_or("").to_string();
    while let Some(m) = matches.next() {
        let capture = |n: &str| m.captures().iter().find(|c| names[c.index as usize] == n).map(|c| c.node);
        if let (Some(callee), Some(object)) = (capture("call.callee"), capture("call.object")) {
            let callee = node_text(callee);
            if !callees.contains(&callee.as_str()) {
                continue;
            }
            let mut walk = object.walk();
            for child in object.named_children(&mut walk) {
                let (key, value) = match child.kind() {
                    "shorthand_property_identifier" => (Some(child), Some(child)),
                    "pair" => (child.child_by_field_name("key"), child.child_by_field_name("value")),
                    _ => (None, None),
                };
                if let Some(key) = key {
                    out.push(PassedKey {
                        callee: callee.clone(),
                        key: node_text(key),
                        identifier: value.filter(|v| v.kind().contains("identifier")).map(node_text),
                        line: key.start_position().row as u32 + 1,
                    });
                }
            }
        } else if let (Some(callee), Some(element)) = (capture("jsx.callee"), capture("jsx.element")) {
            let callee = node_text(callee);
            if !callees.contains(&callee.as_str()) {
                continue;
            }
            let mut walk = element.walk();
            for attr in element.named_children(&mut walk).filter(|c| c.kind() == "jsx_attribute") {
                let mut inner = attr.walk();
                let parts: Vec<tree_sitter::Node<'_>> = attr.named_children(&mut inner).collect();
                let Some(key) = parts.first() else { continue };
                let identifier = parts.get(1).and_then(|v| {
                    (0..v.named_child_count())
                        .filter_map(|i| v.named_child(i as _))
                        .find(|c| c.kind() == "identifier")
                        .map(node_text)
                });
                out.push(PassedKey {
                    callee: callee.clone(),
                    key: node_text(*key),
                    identifier,
                    line: key.start_position().row as u32 + 1,
                });
            }
        }
    }
    out
}

/// The names a source's default-exported `pattern(({ a, b }) => …)` takes
/// from its argument (destructured in the first parameter).
pub fn pattern_parameters(path: &str, text: &str) -> Vec<String> {
    let Some((tree, _)) = READS.parse(path, text) else { return vec![] };
    let src = text.as_bytes();
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "call_expression"
            && node.child_by_field_name("function").and_then(|f| f.utf8_text(src).ok()) == Some("pattern")
            && let Some(args) = node.child_by_field_name("arguments")
            && let Some(arrow) = args.named_child(0).filter(|a| a.kind() == "arrow_function")
        {
            let param = arrow
                .child_by_field_name("parameters")
                .and_then(|p| p.named_child(0))
                .and_then(|p| p.child_by_field_name("pattern").or(Some(p)));
            if let Some(pattern) = param.filter(|p| p.kind() == "object_pattern") {
                let mut walk = pattern.walk();
                for child in pattern.named_children(&mut walk) {
                    let key = match child.kind() {
                        "shorthand_property_identifier_pattern" => Some(child),
                        "pair_pattern" => child.child_by_field_name("key"),
                        "object_assignment_pattern" => child.child_by_field_name("left"),
                        _ => None,
                    };
                    if let Some(k) = key {
                        out.push(k.utf8_text(src).unwrap_or("").to_string());
                    }
                }
            }
        }
        let mut walk = node.walk();
        stack.extend(node.named_children(&mut walk));
    }
    out
}

#[cfg(test)]
mod binding_tests {
    use super::*;

    #[test]
    fn finds_keys_passed_to_calls_and_jsx_and_the_pattern_parameters() {
        let src = "export default pattern<In, Out>(({ db, month }) => {\n  const r = MailReader({ db, month: month, limit: 3 });\n  return { [UI]: <MessageList messages={r.messages} onSelect={pick} /> };\n});\n";
        let keys = call_arguments("a.tsx", src, &["MailReader", "MessageList"]);
        let got: Vec<(&str, &str, Option<&str>)> =
            keys.iter().map(|k| (k.callee.as_str(), k.key.as_str(), k.identifier.as_deref())).collect();
        assert_eq!(
            got,
            [
                ("MailReader", "db", Some("db")),
                ("MailReader", "month", Some("month")),
                ("MailReader", "limit", None),
                ("MessageList", "messages", None),
                ("MessageList", "onSelect", Some("pick")),
            ]
        );
        assert_eq!(pattern_parameters("a.tsx", src), ["db", "month"]);
    }
}
