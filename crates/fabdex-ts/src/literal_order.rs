//! The order in which the compiler lists a literal union's `enum` values.
//!
//! TypeScript keeps a union's members sorted by type id, and a literal type
//! gets its id the first time the checker meets that literal. A few literals
//! exist before any source is read (`""`, `0`, and the `typeof` names the
//! checker builds at start-up). Then the compiler type-checks every program
//! file, the entry first and its imports depth-first, before it generates a
//! schema. The proxy here follows the checker as far as syntax can:
//!
//! - each file's literals in text order, the bodies of arrows and function
//!   expressions after the file's statements (the checker defers them), but
//!   the expressions a call argument returns in place (inferring the call's
//!   type arguments needs them);
//! - a program declaration's literals at its first reference;
//! - the platform's API declarations never at a reference: the checker
//!   resolves their members one by one as they are used, which syntax
//!   cannot follow, so their literals rank where the program itself writes
//!   them, or last.
//!
//! Checked against TypeScript itself (its literal creation order over a full
//! check), the misses left on the platform's 338 baselined patterns come
//! from expressions the checker reads out of order: another file's pattern
//! body checked to infer a call here, or a member resolved by contextual
//! typing.

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
        LiteralOrder::of_files(entry.into_iter(), decls, usize::MAX)
    }

    /// Ranks for a program whose files the checker reads in this order (the
    /// entry first, then its imports depth-first): each file in text order,
    /// a referenced declaration at its first reference.
    ///
    /// Declarations from file index `declaration_files` on (the platform's
    /// API declarations) are not read at a reference: the checker resolves
    /// their members only when they are used, which syntax cannot follow.
    pub(crate) fn of_files<'p>(
        files: impl Iterator<Item = &'p Parsed>,
        decls: &HashMap<String, DeclRef>,
        declaration_files: usize,
    ) -> LiteralOrder {
        let mut order = LiteralOrder::default();
        // "" first, then 0, then the typeof names (the checker's start-up order).
        order.note(Value::String(String::new()));
        order.note(Value::from(0));
        for s in &PRE_CREATED_STRINGS[1..] {
            order.note(Value::String((*s).to_string()));
        }
        let mut collector = Collector {
            order: &mut order,
            decls,
            resolved: HashSet::new(),
            declaration_files,
            pass: 0,
            depth: 0,
            deepest: 0,
            resolving: 0,
        };
        // Each file in turn: its statements, then the bodies of its function
        // expressions and arrows, which the checker defers to the end of the
        // file (those found while checking deferred bodies come after them).
        for module in files.filter_map(|f| f.module.as_ref()) {
            collector.pass = 0;
            loop {
                collector.deepest = 0;
                module.visit_with(&mut collector);
                if collector.deepest <= collector.pass {
                    break;
                }
                collector.pass += 1;
            }
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
    /// The first file index whose declarations are not read at a reference.
    declaration_files: usize,
    /// Which level of deferred function bodies this walk reads (0: the
    /// file's statements), how deep the walk is now, and the deepest seen.
    pass: usize,
    depth: usize,
    deepest: usize,
    /// Inside a declaration being read at a reference (always read).
    resolving: usize,
}

/// The expressions a function returns (an expression body, or each
/// `return`'s argument), not those of functions nested in it.
fn returned_expressions(body: &swc_ecma_ast::FunctionBody) -> Vec<&swc_ecma_ast::Expr> {
    struct Returns<'b> {
        out: Vec<&'b swc_ecma_ast::Expr>,
    }
    impl<'b> Returns<'b> {
        fn stmts(&mut self, stmts: &'b [swc_ecma_ast::Stmt]) {
            for s in stmts {
                self.stmt(s);
            }
        }
        fn stmt(&mut self, s: &'b swc_ecma_ast::Stmt) {
            use swc_ecma_ast::Stmt;
            match s {
                Stmt::Return(r) => self.out.extend(r.arg.as_deref()),
                Stmt::Block(b) => self.stmts(&b.stmts),
                Stmt::If(i) => {
                    self.stmt(&i.cons);
                    if let Some(a) = &i.alt {
                        self.stmt(a);
                    }
                }
                Stmt::For(f) => self.stmt(&f.body),
                Stmt::ForOf(f) => self.stmt(&f.body),
                Stmt::ForIn(f) => self.stmt(&f.body),
                Stmt::While(w) => self.stmt(&w.body),
                Stmt::DoWhile(w) => self.stmt(&w.body),
                Stmt::Labeled(l) => self.stmt(&l.body),
                Stmt::Try(t) => {
                    self.stmts(&t.block.stmts);
                    if let Some(h) = &t.handler {
                        self.stmts(&h.body.stmts);
                    }
                    if let Some(f) = &t.finalizer {
                        self.stmts(&f.stmts);
                    }
                }
                Stmt::Switch(sw) => {
                    for c in &sw.cases {
                        self.stmts(&c.cons);
                    }
                }
                _ => {}
            }
        }
    }
    let mut r = Returns { out: Vec::new() };
    r.stmts(&body.stmts);
    r.out
}

impl Collector<'_, '_, '_> {
    fn active(&self) -> bool {
        self.resolving > 0 || self.depth == self.pass
    }

    fn note(&mut self, v: Value) {
        if self.active() {
            self.order.note(v);
        }
    }

    /// Read a named declaration's literals the first time it is needed.
    fn resolve(&mut self, name: &str) {
        if !self.active() {
            return;
        }
        let Some(node) = self.decls.get(name).copied() else { return };
        if !self.resolved.insert(name.to_string()) {
            return;
        }
        self.resolving += 1;
        self.read(node);
        self.resolving -= 1;
    }

    fn read(&mut self, node: DeclRef) {
        match node {
            DeclRef::Interface(f, _) | DeclRef::Alias(f, _) if f >= self.declaration_files => {}
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
    // A function expression's or arrow's body is checked after the file's
    // statements; its parameters and return type in place. An argument's
    // returned expressions are checked in place too: inferring the call's
    // type arguments needs them.
    fn visit_call_expr(&mut self, c: &swc_ecma_ast::CallExpr) {
        use swc_ecma_ast::{ArrowFunctionBody, Expr};
        c.callee.visit_with(self);
        c.type_args.visit_with(self);
        for arg in &c.args {
            match &*arg.expr {
                Expr::Arrow(a) => match &*a.body {
                    ArrowFunctionBody::Expr(e) => e.visit_with(self),
                    ArrowFunctionBody::FunctionBody(b) => {
                        for e in returned_expressions(b) {
                            e.visit_with(self);
                        }
                    }
                },
                Expr::Fn(f) => {
                    if let Some(b) = &f.function.body {
                        for e in returned_expressions(b) {
                            e.visit_with(self);
                        }
                    }
                }
                _ => {}
            }
            arg.visit_with(self);
        }
    }
    fn visit_arrow_expr(&mut self, a: &swc_ecma_ast::ArrowExpr) {
        a.params.visit_with(self);
        a.type_params.visit_with(self);
        a.return_type.visit_with(self);
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        a.body.visit_with(self);
        self.depth -= 1;
    }
    fn visit_fn_expr(&mut self, f: &swc_ecma_ast::FnExpr) {
        let f = &f.function;
        f.params.visit_with(self);
        f.type_params.visit_with(self);
        f.return_type.visit_with(self);
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        f.body.visit_with(self);
        self.depth -= 1;
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
    fn function_bodies_are_deferred_and_api_declarations_are_not_read_at_a_reference() {
        let program = [parse(
            "main.tsx",
            r#"import { Scope } from "commonfabric";
const later = () => { g("deferred", () => "deeper"); };
compute(() => "returned");
let s: Scope;
h("top", "user");"#,
        )];
        let api = [parse("index.d.ts", r#"export type Scope = "space" | "user";"#)];
        let mut env = crate::schema::TypeEnv::with_declarations(&program, &api);
        env.set_check_order(&[0]);
        let order = env.literal_order();
        let rank = |v: &str| order.rank(&json!(v));
        // A call argument's returned expression is checked in place; the
        // other bodies after the file's statements, nested ones last.
        assert!(rank("returned") < rank("top"));
        assert!(rank("top") < rank("deferred"));
        assert!(rank("deferred") < rank("deeper"));
        // Naming the API's `Scope` reads none of its members.
        assert!(rank("user") < usize::MAX);
        assert_eq!(rank("space"), usize::MAX);
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
