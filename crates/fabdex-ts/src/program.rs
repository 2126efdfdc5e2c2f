//! Programs: an entry file plus the closure of its relative imports, and the
//! contract (argument and result schemas) of its default-exported pattern.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use swc_ecma_ast::{Callee, Decl, Expr, ModuleDecl, ModuleItem, Pat, Stmt, TsType};

use crate::extract::{Parsed, parse};
use crate::schema::{SchemaGen, TypeEnv};

/// The order in which a relative specifier is tried against the files that exist.
pub const RESOLUTION_SUFFIXES: [&str; 8] = ["", ".ts", ".tsx", ".js", ".jsx", ".mts", ".mjs", ".d.ts"];

/// Resolve `spec` (relative to `from`, a `/`-separated path) to an existing
/// path: `spec` itself, then with each suffix, then `spec/index.ts`.
pub fn resolve_relative(from: &str, spec: &str, exists: impl Fn(&str) -> bool) -> Option<String> {
    let base = if let Some(abs) = spec.strip_prefix('/') {
        abs.to_string()
    } else {
        let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
        let mut parts: Vec<&str> = if dir.is_empty() { Vec::new() } else { dir.split('/').collect() };
        for seg in spec.split('/') {
            match seg {
                "." | "" => {}
                ".." => {
                    parts.pop()?;
                }
                s => parts.push(s),
            }
        }
        parts.join("/")
    };
    RESOLUTION_SUFFIXES
        .iter()
        .map(|s| format!("{base}{s}"))
        .chain(std::iter::once(format!("{base}/index.ts")))
        .find(|p| exists(p))
}

/// A pattern's contract as extracted from source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contract {
    #[serde(rename = "argumentSchema", skip_serializing_if = "Option::is_none")]
    pub argument_schema: Option<Value>,
    #[serde(rename = "resultSchema", skip_serializing_if = "Option::is_none")]
    pub result_schema: Option<Value>,
    /// `"partial"` when part of the contract could not be derived from syntax.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inferred: Option<String>,
    /// What could not be expressed, and why.
    pub notes: Vec<String>,
}

/// The `pattern(...)` call the entry default-exports: its type arguments, or
/// the annotation of its function's parameter when there are none.
fn pattern_types(parsed: &Parsed) -> Option<(Option<&TsType>, Option<&TsType>)> {
    let module = parsed.module.as_ref()?;
    let mut default_name = None;
    let mut default_call = None;
    for item in &module.body {
        if let ModuleItem::ModuleDecl(ModuleDecl::ExportDefaultExpr(e)) = item {
            match &*e.expr {
                Expr::Ident(id) => default_name = Some(id.sym.to_string()),
                Expr::Call(c) => default_call = Some(c),
                _ => {}
            }
        }
    }
    if default_call.is_none() {
        let name = default_name?;
        for item in &module.body {
            let decl = match item {
                ModuleItem::Stmt(Stmt::Decl(Decl::Var(v))) => v,
                ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(e)) => match &e.decl {
                    Decl::Var(v) => v,
                    _ => continue,
                },
                _ => continue,
            };
            for d in &decl.decls {
                if let (Pat::Ident(id), Some(init)) = (&d.name, &d.init)
                    && id.id.sym == *name
                    && let Expr::Call(c) = &**init
                {
                    default_call = Some(c);
                }
            }
        }
    }
    let call = default_call?;
    let Callee::Expr(callee) = &call.callee else { return None };
    if !matches!(&**callee, Expr::Ident(id) if id.sym == *"pattern") {
        return None;
    }
    let params = call.type_args.as_ref().map(|t| &t.params);
    let input = params.and_then(|p| p.first()).map(|b| &**b);
    let output = params.and_then(|p| p.get(1)).map(|b| &**b);
    let input = input.or_else(|| {
        let Expr::Arrow(arrow) = &*call.args.first()?.expr else { return None };
        match arrow.params.first()? {
            Pat::Object(o) => o.type_ann.as_ref().map(|a| &*a.type_ann),
            Pat::Ident(i) => i.type_ann.as_ref().map(|a| &*a.type_ann),
            _ => None,
        }
    });
    Some((input, output))
}

/// The contract of a program: `files[0]` is the entry, the rest its imports.
pub fn program_contract(files: &[(String, String)]) -> Contract {
    let parsed: Vec<Parsed> = files.iter().map(|(p, t)| parse(p, t)).collect();
    let env = TypeEnv::new(&parsed);
    let mut notes = Vec::new();
    let Some((input, output)) = parsed.first().and_then(pattern_types) else {
        return Contract {
            argument_schema: None,
            result_schema: None,
            inferred: Some("partial".into()),
            notes: vec!["the entry does not default-export a `pattern(...)` call".into()],
        };
    };
    let mut schema_of = |t: Option<&TsType>, what: &str| -> Option<Value> {
        let t = t?;
        let generator = if what == "result" { SchemaGen::for_result(&env) } else { SchemaGen::new(&env) };
        let g = generator.root(t);
        notes.extend(g.unsupported.into_iter().map(|u| format!("{what}: {u}")));
        Some(g.schema)
    };
    let argument_schema = schema_of(input, "argument");
    let result_schema = schema_of(output, "result");
    let partial = output.is_none() || input.is_none() || !notes.is_empty();
    if output.is_none() {
        notes.push("result type not written: inferring it from the returned object needs a type checker".into());
    }
    Contract { argument_schema, result_schema, inferred: partial.then(|| "partial".into()), notes }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_in_the_documented_order() {
        let files = ["a/b.ts", "a/c.tsx", "a/d/index.ts", "e.ts"];
        let exists = |p: &str| files.contains(&p);
        assert_eq!(resolve_relative("a/x.tsx", "./b", exists).as_deref(), Some("a/b.ts"));
        assert_eq!(resolve_relative("a/x.tsx", "./c", exists).as_deref(), Some("a/c.tsx"));
        assert_eq!(resolve_relative("a/x.tsx", "./d", exists).as_deref(), Some("a/d/index.ts"));
        assert_eq!(resolve_relative("a/x.tsx", "../e.ts", exists).as_deref(), Some("e.ts"));
        assert_eq!(resolve_relative("a/x.tsx", "../../e.ts", exists), None);
        assert_eq!(resolve_relative("a/x.tsx", "./missing", exists), None);
    }

    #[test]
    fn contract_across_files_and_inline_parameter_types() {
        let entry = r#"import { pattern } from "commonfabric";
import type { Item } from "./types.ts";
interface Input { items: Item[] }
export default pattern<Input, { count: number }>(({ items }) => ({ count: items.length }));
"#;
        let types = "export interface Item { name: string }\n";
        let c = program_contract(&[("main.tsx".into(), entry.into()), ("types.ts".into(), types.into())]);
        assert_eq!(c.argument_schema.as_ref().unwrap()["$defs"]["Item"]["required"], serde_json::json!(["name"]));
        assert_eq!(c.result_schema.as_ref().unwrap()["required"], serde_json::json!(["count"]));
        assert_eq!(c.inferred, None, "{:?}", c.notes);

        let inline =
            "import { pattern } from \"commonfabric\";\nexport default pattern(({ a }: { a: string }) => ({ a }));\n";
        let c = program_contract(&[("x.tsx".into(), inline.into())]);
        assert_eq!(c.argument_schema.unwrap()["properties"]["a"], serde_json::json!({"type": "string"}));
        assert_eq!(c.result_schema, None);
        assert_eq!(c.inferred.as_deref(), Some("partial"), "an unwritten result type is never presented as exact");
    }
}
