//! Walks over a function body's statements and a binding's names, shared
//! by the result inference and the literal-order scan.

use swc_ecma_ast::{Pat, Stmt};

/// Call `f` on each statement of a function body, and on the statements
/// nested in its blocks, branches, loops, `try` and `switch`, but not in
/// nested functions: the statements a `return` there returns from.
pub(crate) fn for_each_nested_statement<'a>(stmts: &'a [Stmt], f: &mut impl FnMut(&'a Stmt)) {
    for stmt in stmts {
        nested_statement(stmt, f);
    }
}

fn nested_statement<'a>(stmt: &'a Stmt, f: &mut impl FnMut(&'a Stmt)) {
    f(stmt);
    match stmt {
        Stmt::Block(b) => for_each_nested_statement(&b.stmts, f),
        Stmt::If(i) => {
            nested_statement(&i.cons, f);
            if let Some(alt) = &i.alt {
                nested_statement(alt, f);
            }
        }
        Stmt::For(l) => nested_statement(&l.body, f),
        Stmt::ForOf(l) => nested_statement(&l.body, f),
        Stmt::ForIn(l) => nested_statement(&l.body, f),
        Stmt::While(l) => nested_statement(&l.body, f),
        Stmt::DoWhile(l) => nested_statement(&l.body, f),
        Stmt::Labeled(l) => nested_statement(&l.body, f),
        Stmt::Try(t) => {
            for_each_nested_statement(&t.block.stmts, f);
            if let Some(h) = &t.handler {
                for_each_nested_statement(&h.body.stmts, f);
            }
            if let Some(fin) = &t.finalizer {
                for_each_nested_statement(&fin.stmts, f);
            }
        }
        Stmt::Switch(sw) => {
            for case in &sw.cases {
                for_each_nested_statement(&case.cons, f);
            }
        }
        _ => {}
    }
}

/// The names a parameter or binding pattern binds.
pub(crate) fn pattern_names(p: &Pat) -> Vec<String> {
    match p {
        Pat::Ident(i) => vec![i.id.sym.to_string()],
        Pat::Array(a) => a.elems.iter().flatten().flat_map(pattern_names).collect(),
        Pat::Object(o) => o
            .props
            .iter()
            .flat_map(|prop| match prop {
                swc_ecma_ast::ObjectPatProp::Assign(a) => vec![a.key.sym.to_string()],
                swc_ecma_ast::ObjectPatProp::KeyValue(kv) => pattern_names(&kv.value),
                swc_ecma_ast::ObjectPatProp::Rest(r) => pattern_names(&r.arg),
            })
            .collect(),
        Pat::Assign(a) => pattern_names(&a.left),
        Pat::Rest(r) => pattern_names(&r.arg),
        _ => Vec::new(),
    }
}
