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
//!   a call argument's returned expressions in place (inferring the call's
//!   type arguments needs them), with the initializers of the names they read;
//! - a program declaration's literals at its first reference;
//! - the platform's API declarations not at a reference (the checker
//!   resolves their members one by one as they are used), but: the cell
//!   scope and kind unions at the first call of an API function (its return
//!   type instantiates the cell brands); an API member when an object literal
//!   passed to a call, or written for an annotated variable, has a key of
//!   that name (contextual typing resolves it); and the keys themselves when
//!   the call is generic (inferring its type arguments creates them).
//!
//! Every rule was read off TypeScript's own literal creation order (a full
//! check of each program with the compiler's options, tracing where each
//! literal type is created). What it still misses on the platform's 338
//! baselined patterns comes from expressions the checker reads out of order,
//! such as another file's pattern body checked to infer a call here.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use swc_ecma_ast::{
    ExportAll, ImportDecl, NamedExport, Number, PropName, Str, Tpl, TsEntityName, TsImportType, TsInterfaceDecl,
    TsTplLitType, TsTypeAliasDecl, TsTypeRef,
};
use swc_ecma_visit::{Visit, VisitWith};

use crate::decls::DeclRef;
use crate::extract::Parsed;
use crate::walk::{for_each_nested_statement, pattern_names};

/// The literals TypeScript's checker creates before it reads any source, in
/// creation order: the empty string, zero, then the `typeof` result names.
const PRE_CREATED_STRINGS: [&str; 9] =
    ["", "string", "number", "bigint", "boolean", "symbol", "undefined", "object", "function"];

/// The platform's API aliases the checker resolves the first time a program
/// calls an API function (its return type instantiates the cell brand types,
/// their scope and kind).
const API_PRELUDE_TYPES: [&str; 2] = ["CellScope", "CellKind"];

/// The API module the platform's declarations describe.
const API_MODULE: &str = "commonfabric";

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
    /// Ranks for a program whose files the checker reads in this order (the
    /// entry first, then its imports depth-first): each file in text order,
    /// a referenced declaration at its first reference.
    ///
    /// Declarations from file index `declaration_files` on (the platform's
    /// API declarations) are not read at a reference: the checker resolves
    /// their members only when they are used, which syntax cannot follow.
    pub(crate) fn of_files<'p, 'a>(
        files: impl Iterator<Item = &'p Parsed>,
        decls: &HashMap<String, DeclRef<'a>>,
        all_files: &[&'a Parsed],
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
            api_imports: HashSet::new(),
            generic_functions: generic_api_functions(decls, all_files, declaration_files),
            pull: Vec::new(),
            prelude_done: false,
            api_members: object_members_from(decls, declaration_files),
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
    /// The API's functions that are generic (declared with a generic
    /// function type, or an interface with a generic call signature).
    generic_functions: HashSet<String>,
    /// Names imported from the API module, and whether the prelude was read.
    api_imports: HashSet<String>,
    prelude_done: bool,
    /// The API declarations' object members by name, not read yet.
    api_members: HashMap<String, Vec<&'a swc_ecma_ast::TsType>>,
    /// Bindings of the function bodies whose returned expressions are read
    /// in place: a name read there pulls in its initializer, once.
    pull: Vec<HashMap<String, swc_ecma_ast::Expr>>,
}

/// The `const`/`let` initializers at the top of a function body, by each
/// name they bind (a destructuring binds all its names to the initializer).
fn body_initializers(body: &swc_ecma_ast::FunctionBody) -> HashMap<String, swc_ecma_ast::Expr> {
    let mut out = HashMap::new();
    for stmt in &body.stmts {
        if let swc_ecma_ast::Stmt::Decl(swc_ecma_ast::Decl::Var(v)) = stmt {
            for d in &v.decls {
                let Some(init) = &d.init else { continue };
                for name in pattern_names(&d.name) {
                    out.insert(name, (**init).clone());
                }
            }
        }
    }
    out
}

/// The names of the API's `declare const f: F` whose type `F` is generic: a
/// function type with type parameters, or an interface with a generic call
/// signature, through aliases.
fn generic_api_functions<'a>(
    decls: &HashMap<String, DeclRef<'a>>,
    files: &[&'a Parsed],
    from: usize,
) -> HashSet<String> {
    use swc_ecma_ast::{Decl, ModuleDecl, ModuleItem, Stmt, TsFnOrConstructorType, TsType};
    let generic = |t: &TsType| -> bool {
        let mut t = t;
        for _ in 0..8 {
            match t {
                TsType::TsFnOrConstructorType(TsFnOrConstructorType::TsFnType(f)) => return f.type_params.is_some(),
                TsType::TsTypeRef(r) => {
                    let TsEntityName::Ident(id) = &r.type_name else { return false };
                    match decls.get(id.sym.as_ref()) {
                        Some(DeclRef::Alias(_, a)) => t = &a.type_ann,
                        Some(DeclRef::Interface(_, i)) => {
                            return i.body.body.iter().any(|m| {
                                matches!(m, swc_ecma_ast::TsTypeElement::TsCallSignatureDecl(c) if c.type_params.is_some())
                            });
                        }
                        _ => return false,
                    }
                }
                _ => return false,
            }
        }
        false
    };
    let mut out = HashSet::new();
    for f in files.iter().skip(from) {
        let Some(module) = &f.module else { continue };
        for item in &module.body {
            let var = match item {
                ModuleItem::Stmt(Stmt::Decl(Decl::Var(v))) => v,
                ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(e)) => match &e.decl {
                    Decl::Var(v) => v,
                    _ => continue,
                },
                _ => continue,
            };
            for d in &var.decls {
                if let swc_ecma_ast::Pat::Ident(id) = &d.name
                    && d.init.is_none()
                    && let Some(ann) = &id.type_ann
                    && generic(&ann.type_ann)
                {
                    out.insert(id.id.sym.to_string());
                }
            }
        }
    }
    out
}

/// The members of the object types (interfaces, object aliases) declared in
/// files `from..`, by member name.
fn object_members_from<'a>(
    decls: &HashMap<String, DeclRef<'a>>,
    from: usize,
) -> HashMap<String, Vec<&'a swc_ecma_ast::TsType>> {
    let mut out: HashMap<String, Vec<&'a swc_ecma_ast::TsType>> = HashMap::new();
    let mut names: Vec<&String> = decls.keys().collect();
    names.sort();
    for name in names {
        let (f, members): (usize, &'a [swc_ecma_ast::TsTypeElement]) = match decls[name] {
            DeclRef::Interface(f, i) => (f, &i.body.body),
            DeclRef::Alias(f, a) => match &*a.type_ann {
                swc_ecma_ast::TsType::TsTypeLit(l) => (f, &l.members),
                _ => continue,
            },
            DeclRef::Enum(_) => continue,
        };
        if f < from {
            continue;
        }
        for m in members {
            if let swc_ecma_ast::TsTypeElement::TsPropertySignature(p) = m
                && let swc_ecma_ast::Expr::Ident(key) = &*p.key
                && let Some(t) = &p.type_ann
            {
                out.entry(key.sym.to_string()).or_default().push(&t.type_ann);
            }
        }
    }
    out
}

/// The expressions a function body's `return`s return, not those of
/// functions nested in it.
fn returned_expressions(body: &swc_ecma_ast::FunctionBody) -> Vec<&swc_ecma_ast::Expr> {
    let mut out = Vec::new();
    for_each_nested_statement(&body.stmts, &mut |stmt| {
        if let swc_ecma_ast::Stmt::Return(r) = stmt {
            out.extend(r.arg.as_deref());
        }
    });
    out
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

impl Collector<'_, '_, '_> {
    /// A call argument's returned expressions, read in place (inference
    /// needs them), with the initializers of the body's names they read.
    fn returns_in_place(&mut self, body: &swc_ecma_ast::FunctionBody) {
        let pull = self.active();
        if pull {
            self.pull.push(body_initializers(body));
        }
        for e in returned_expressions(body) {
            e.visit_with(self);
        }
        if pull {
            self.pull.pop();
        }
    }

    /// The first call of an API function reads the API prelude.
    fn api_call(&mut self, callee: &swc_ecma_ast::Expr) {
        if self.prelude_done || !self.active() {
            return;
        }
        let swc_ecma_ast::Expr::Ident(id) = callee else { return };
        if !self.api_imports.contains(id.sym.as_ref()) {
            return;
        }
        self.prelude_done = true;
        for name in API_PRELUDE_TYPES {
            if let Some(DeclRef::Alias(f, alias)) = self.decls.get(name).copied()
                && f >= self.declaration_files
            {
                self.resolving += 1;
                alias.visit_children_with(self);
                self.resolving -= 1;
            }
        }
    }

    /// An object literal with a contextual type: each key names a member of
    /// that type, which the checker resolves, and becomes a literal type.
    fn contextual_object(&mut self, o: &swc_ecma_ast::ObjectLit, depth: usize, keys: bool) {
        use swc_ecma_ast::{Expr, Prop, PropOrSpread};
        if depth > 8 || !self.active() {
            return;
        }
        for p in &o.props {
            let PropOrSpread::Prop(p) = p else { continue };
            let (key, value): (String, Option<&Expr>) = match &**p {
                Prop::KeyValue(kv) => match &kv.key {
                    PropName::Ident(i) => (i.sym.to_string(), Some(&*kv.value)),
                    PropName::Str(s) => (s.value.to_string_lossy().into_owned(), Some(&*kv.value)),
                    _ => continue,
                },
                Prop::Shorthand(i) => (i.sym.to_string(), None),
                _ => continue,
            };
            if let Some(types) = self.api_members.remove(&key) {
                self.resolving += 1;
                for t in types {
                    t.visit_with(self);
                }
                self.resolving -= 1;
            }
            if keys {
                self.note(Value::String(key));
            }
            if let Some(value) = value {
                self.contextual_value(value, depth + 1, keys);
            }
        }
    }

    /// A contextually typed object literal, or array of them (see
    /// [`Collector::contextual_object`]); anything else is left alone.
    fn contextual_value(&mut self, e: &swc_ecma_ast::Expr, depth: usize, keys: bool) {
        use swc_ecma_ast::Expr;
        match e {
            Expr::Object(o) => self.contextual_object(o, depth, keys),
            Expr::Array(a) => {
                for el in a.elems.iter().flatten() {
                    if let Expr::Object(o) = &*el.expr {
                        self.contextual_object(o, depth, keys);
                    }
                }
            }
            _ => {}
        }
    }

    /// Walk a deferred function body one level deeper (see `pass`).
    fn deferred(&mut self, body: &impl VisitWith<Self>) {
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        body.visit_with(self);
        self.depth -= 1;
    }
}

impl Visit for Collector<'_, '_, '_> {
    fn visit_ident(&mut self, i: &swc_ecma_ast::Ident) {
        let pulled = self.pull.iter_mut().rev().find_map(|frame| frame.remove(i.sym.as_ref()));
        if let Some(init) = pulled {
            init.visit_with(self);
        }
    }
    fn visit_new_expr(&mut self, n: &swc_ecma_ast::NewExpr) {
        n.visit_children_with(self);
        self.api_call(&n.callee);
    }
    fn visit_var_declarator(&mut self, d: &swc_ecma_ast::VarDeclarator) {
        // `const x: T = { … }`: the initializer is contextually typed by `T`.
        if let swc_ecma_ast::Pat::Ident(id) = &d.name
            && id.type_ann.is_some()
        {
            id.type_ann.visit_with(self);
            if let Some(init) = d.init.as_deref() {
                self.contextual_value(init, 0, false);
            }
            d.init.visit_with(self);
            return;
        }
        d.visit_children_with(self);
    }
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
        // Inferring a generic call's type arguments from an object literal
        // creates its keys' literal types.
        let generic = match &c.callee {
            swc_ecma_ast::Callee::Expr(callee) => match &**callee {
                Expr::Ident(id) => c.type_args.is_some() || self.generic_functions.contains(id.sym.as_ref()),
                _ => false,
            },
            _ => false,
        };
        for arg in &c.args {
            if let Expr::Object(o) = &*arg.expr {
                self.contextual_object(o, 0, generic);
            }
            match &*arg.expr {
                Expr::Arrow(a) => match &*a.body {
                    ArrowFunctionBody::Expr(e) => e.visit_with(self),
                    ArrowFunctionBody::FunctionBody(b) => self.returns_in_place(b),
                },
                Expr::Fn(f) => {
                    if let Some(b) = &f.function.body {
                        self.returns_in_place(b);
                    }
                }
                _ => {}
            }
            arg.visit_with(self);
        }
        if let swc_ecma_ast::Callee::Expr(callee) = &c.callee {
            self.api_call(callee);
        }
    }
    fn visit_arrow_expr(&mut self, a: &swc_ecma_ast::ArrowExpr) {
        a.params.visit_with(self);
        a.type_params.visit_with(self);
        a.return_type.visit_with(self);
        self.deferred(&a.body);
    }
    fn visit_fn_expr(&mut self, f: &swc_ecma_ast::FnExpr) {
        let f = &f.function;
        f.params.visit_with(self);
        f.type_params.visit_with(self);
        f.return_type.visit_with(self);
        self.deferred(&f.body);
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
    fn visit_import_decl(&mut self, i: &ImportDecl) {
        if i.src.value == *API_MODULE {
            for spec in &i.specifiers {
                if let swc_ecma_ast::ImportSpecifier::Named(n) = spec {
                    self.api_imports.insert(n.local.sym.to_string());
                }
            }
        }
    }
    fn visit_named_export(&mut self, _: &NamedExport) {}
    fn visit_export_all(&mut self, _: &ExportAll) {}
    fn visit_ts_import_type(&mut self, _: &TsImportType) {}
    fn visit_prop_name(&mut self, p: &PropName) {
        if let PropName::Computed(c) = p {
            c.visit_with(self);
        }
    }
}
