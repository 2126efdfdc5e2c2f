//! The order in which the compiler lists a literal union's `enum` values.
//!
//! TypeScript keeps a union's members sorted by type id, and a literal type
//! gets its id the first time the checker meets that literal. A few literals
//! exist before any source is read (`""`, `0`, and the `typeof` names the
//! checker builds at start-up). After that the compiler's transformers walk
//! the entry file (and, after it, the files it imports, depth-first: the
//! order the compiler type-checks them in), and the checker resolves a named
//! type only when something refers to it. The proxy here follows that: the entry's literals in text
//! order, and a referenced declaration's literals (in any file of the
//! program) at its first reference. On the platform's 338 baselined patterns
//! this leaves 3 enums in a different order; a checker that resolves a type
//! for some other reason first can still meet its literals earlier.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use swc_ecma_ast::{
    ExportAll, ImportDecl, NamedExport, Number, PropName, Str, Tpl, TsEntityName, TsImportType, TsInterfaceDecl,
    TsTplLitType, TsTypeAliasDecl, TsTypeRef,
};
use swc_ecma_visit::{Visit, VisitWith};

use crate::extract::Parsed;
use crate::schema::DeclRef;

/// The literals TypeScript's checker creates before it reads any source, in
/// creation order: the empty string, zero, then the `typeof` result names.
const PRE_CREATED_STRINGS: [&str; 9] =
    ["", "string", "number", "bigint", "boolean", "symbol", "undefined", "object", "function"];

/// First-occurrence ranks of a program's string and number literals.
#[derive(Debug, Default)]
pub struct LiteralOrder {
    rank: HashMap<String, usize>,
}

fn key(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(format!("s{s}")),
        Value::Number(n) => n.as_f64().map(|f| format!("n{f}")),
        _ => None,
    }
}

impl LiteralOrder {
    /// Ranks for a program given its entry and the declarations by name
    /// (the schema generator's, so both resolve a name the same way).
    pub(crate) fn of_program(entry: Option<&Parsed>, decls: &HashMap<String, DeclRef>) -> LiteralOrder {
        LiteralOrder::of_files(entry.into_iter(), decls)
    }

    /// Ranks for a program whose files the checker reads in this order (the
    /// entry first, then its imports depth-first): each file in text order,
    /// a referenced declaration at its first reference.
    pub(crate) fn of_files<'p>(
        files: impl Iterator<Item = &'p Parsed>,
        decls: &HashMap<String, DeclRef>,
    ) -> LiteralOrder {
        let mut order = LiteralOrder::default();
        // "" first, then 0, then the typeof names (the checker's start-up order).
        order.note(Value::String(String::new()));
        order.note(Value::from(0));
        for s in &PRE_CREATED_STRINGS[1..] {
            order.note(Value::String((*s).to_string()));
        }
        let mut collector = Collector { order: &mut order, decls, resolved: HashSet::new() };
        for module in files.filter_map(|f| f.module.as_ref()) {
            module.visit_with(&mut collector);
        }
        order
    }

    fn note(&mut self, v: Value) {
        if let Some(k) = key(&v) {
            let next = self.rank.len();
            self.rank.entry(k).or_insert(next);
        }
    }

    /// The rank of a literal value; literals never seen sort last.
    pub fn rank(&self, v: &Value) -> usize {
        key(v).and_then(|k| self.rank.get(&k).copied()).unwrap_or(usize::MAX)
    }

    /// Sort literal values into the compiler's union order (stable for
    /// ties), `null` last, where the compiler appends it.
    pub fn sort(&self, values: &mut [Value]) {
        values.sort_by_key(|v| (v.is_null(), self.rank(v)));
    }
}

struct Collector<'o, 'd, 'a> {
    order: &'o mut LiteralOrder,
    decls: &'d HashMap<String, DeclRef<'a>>,
    /// Declarations already read (by reference or in text order).
    resolved: HashSet<String>,
}

impl Collector<'_, '_, '_> {
    fn note(&mut self, v: Value) {
        self.order.note(v);
    }

    /// Read a named declaration's literals the first time it is needed.
    fn resolve(&mut self, name: &str) {
        let Some(node) = self.decls.get(name).copied() else { return };
        if !self.resolved.insert(name.to_string()) {
            return;
        }
        match node {
            DeclRef::Interface(_, i) => i.visit_children_with(self),
            DeclRef::Alias(_, a) => a.visit_children_with(self),
            DeclRef::Enum(e) => e.visit_children_with(self),
        }
    }
}

impl Visit for Collector<'_, '_, '_> {
    fn visit_ts_type_ref(&mut self, r: &TsTypeRef) {
        r.visit_children_with(self);
        if let TsEntityName::Ident(id) = &r.type_name {
            self.resolve(&id.sym);
        }
    }
    fn visit_ts_interface_decl(&mut self, i: &TsInterfaceDecl) {
        self.resolve(&i.id.sym);
    }
    fn visit_ts_type_alias_decl(&mut self, a: &TsTypeAliasDecl) {
        self.resolve(&a.id.sym);
    }
    fn visit_str(&mut self, s: &Str) {
        self.note(Value::String(s.value.to_string_lossy().into_owned()));
    }
    fn visit_number(&mut self, n: &Number) {
        if let Some(v) = serde_json::Number::from_f64(n.value) {
            self.note(Value::Number(v));
        }
    }
    fn visit_tpl(&mut self, t: &Tpl) {
        if t.exprs.is_empty()
            && let Some(cooked) = t.quasis.first().and_then(|q| q.cooked.as_ref())
        {
            self.note(Value::String(cooked.to_string_lossy().into_owned()));
        }
        t.visit_children_with(self);
    }
    fn visit_ts_tpl_lit_type(&mut self, t: &TsTplLitType) {
        if t.types.is_empty()
            && let Some(cooked) = t.quasis.first().and_then(|q| q.cooked.as_ref())
        {
            self.note(Value::String(cooked.to_string_lossy().into_owned()));
        }
    }
    // Module specifiers and property names are never checked as literal types.
    fn visit_import_decl(&mut self, _: &ImportDecl) {}
    fn visit_named_export(&mut self, _: &NamedExport) {}
    fn visit_export_all(&mut self, _: &ExportAll) {}
    fn visit_ts_import_type(&mut self, _: &TsImportType) {}
    fn visit_prop_name(&mut self, p: &PropName) {
        if let PropName::Computed(c) = p {
            c.visit_with(self);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::extract::parse;
    use serde_json::json;

    #[test]
    fn pre_created_literals_then_entry_text_order_with_referenced_types_resolved_lazily() {
        let files = [
            parse(
                "main.tsx",
                r#"import { B } from "./other.ts";
const k = { "key": 1 };
f(`stored`);
type A = "text" | "number" | B;
g("late");"#,
            ),
            parse("other.ts", r#"export type B = "user" | "late"; export const unused = "never";"#),
        ];
        let env = crate::schema::TypeEnv::new(&files);
        let order = env.literal_order();
        let mut values = vec![
            json!(null),
            json!("late"),
            json!("user"),
            json!("stored"),
            json!("text"),
            json!("number"),
            json!(""),
            json!("x"),
        ];
        order.sort(&mut values);
        // "" and "number" exist before any source; then the entry in text
        // order, with B's literals read at its reference, before `g("late")`;
        // never-seen values last.
        assert_eq!(
            values,
            vec![
                json!(""),
                json!("number"),
                json!("stored"),
                json!("text"),
                json!("user"),
                json!("late"),
                json!("x"),
                json!(null)
            ]
        );
        // Import specifiers, property keys and unreferenced code are not counted.
        assert_eq!(order.rank(&json!("./other.ts")), usize::MAX);
        assert_eq!(order.rank(&json!("key")), usize::MAX);
        assert_eq!(order.rank(&json!("never")), usize::MAX);
        assert!(order.rank(&json!(1)) < order.rank(&json!("stored")));
    }

    #[test]
    fn imported_files_are_read_after_the_entry_in_check_order() {
        let files = [
            parse("main.tsx", r#"import { x } from "./b.ts"; f("main");"#),
            parse("a.ts", r#"export const a = "unreached";"#),
            parse("b.ts", r#"export const x = "imported";"#),
        ];
        let mut env = crate::schema::TypeEnv::new(&files);
        env.set_check_order(&[0, 2, 1]);
        let order = env.literal_order();
        assert!(order.rank(&json!("main")) < order.rank(&json!("imported")));
        assert!(order.rank(&json!("imported")) < order.rank(&json!("unreached")));
        env.set_check_order(&[0]);
        assert_eq!(env.literal_order().rank(&json!("imported")), usize::MAX);
    }
}
