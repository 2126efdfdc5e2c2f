//! One TS/TSX file → imports, exports and `pattern(...)` definitions.

use std::collections::HashMap;

use fabdex_model::records::Diagnostic;
use swc_common::comments::{Comments, SingleThreadedComments};
use swc_common::sync::Lrc;
use swc_common::{BytePos, FileName, SourceMap, Span, Spanned};
use swc_ecma_ast::{
    Callee, Decl, DefaultDecl, EsVersion, ExportDecl, ExportDefaultExpr, ExportSpecifier, Expr, ImportSpecifier,
    Module, ModuleDecl, ModuleExportName, ModuleItem, NamedExport, Pat, Stmt, TsEntityName, TsType, VarDeclarator,
};
use swc_ecma_parser::{Syntax, TsSyntax, parse_file_as_module};

use crate::cf_spec;
pub use fabdex_model::ts::{
    ExportKind, ExportRecord, ImportKind, ImportRecord, ImportedName, PatternRecord, TsExtraction,
};

/// Modules the platform provides at run time.
pub const RUNTIME_MODULES: [&str; 4] = ["commonfabric", "commonfabric/schema", "commonfabric/cfc", "turndown"];

struct Ctx<'a> {
    cm: &'a SourceMap,
    comments: &'a SingleThreadedComments,
    text: &'a str,
    /// Local names bound to the runtime's `pattern` and `handler`.
    pattern_fns: Vec<String>,
    handler_fns: Vec<String>,
}

impl Ctx<'_> {
    fn line(&self, pos: BytePos) -> u32 {
        self.cm.lookup_char_pos(pos).line as u32
    }

    fn lines(&self, span: Span) -> (u32, u32) {
        (self.line(span.lo), self.line(BytePos(span.hi.0.saturating_sub(1).max(span.lo.0))))
    }

    fn snippet(&self, span: Span) -> &str {
        let start = self.cm.lookup_byte_offset(span.lo).pos.0 as usize;
        let end = self.cm.lookup_byte_offset(span.hi).pos.0 as usize;
        self.text.get(start..end.min(self.text.len())).unwrap_or("")
    }

    fn signature(&self, span: Span) -> String {
        let first = self.snippet(span).lines().next().unwrap_or("").trim();
        first.chars().take(200).collect()
    }

    /// The JSDoc block (`/** … */`) right before `pos`, cleaned of its stars.
    fn jsdoc(&self, pos: BytePos) -> Option<String> {
        let comments = self.comments.get_leading(pos)?;
        let doc = comments.iter().rev().find(|c| c.text.starts_with('*'))?;
        let cleaned: Vec<&str> =
            doc.text.trim_start_matches('*').lines().map(|l| l.trim().trim_start_matches('*').trim()).collect();
        let text = cleaned.join("\n").trim().to_string();
        (!text.is_empty()).then_some(text)
    }

    /// An export record for a declaration spanning `span`; `documented` reads its JSDoc.
    fn export(&self, name: String, kind: ExportKind, default: bool, span: Span, documented: bool) -> ExportRecord {
        let (line_start, line_end) = self.lines(span);
        ExportRecord {
            name,
            kind,
            default,
            line_start,
            line_end,
            jsdoc: if documented { self.jsdoc(span.lo) } else { None },
            signature: self.signature(span),
        }
    }

    fn call_kind(&self, expr: &Expr) -> Option<(ExportKind, Option<String>, Option<String>)> {
        let Expr::Call(call) = strip(expr) else { return None };
        let Callee::Expr(callee) = &call.callee else { return None };
        let Expr::Ident(id) = strip(callee) else { return None };
        let name = id.sym.as_ref();
        let type_arg = |i: usize| call.type_args.as_ref().and_then(|t| t.params.get(i)).map(|t| type_name(self, t));
        if self.pattern_fns.iter().any(|p| p == name) {
            Some((ExportKind::Pattern, type_arg(0), type_arg(1)))
        } else if self.handler_fns.iter().any(|p| p == name) {
            Some((ExportKind::Handler, type_arg(0), type_arg(1)))
        } else {
            None
        }
    }
}

/// Parentheses, `as` and `satisfies` around an expression do not change what it is.
pub(crate) fn strip(expr: &Expr) -> &Expr {
    match expr {
        Expr::Paren(p) => strip(&p.expr),
        Expr::TsAs(a) => strip(&a.expr),
        Expr::TsSatisfies(s) => strip(&s.expr),
        Expr::TsConstAssertion(c) => strip(&c.expr),
        other => other,
    }
}

/// A type argument as written: a plain name for references, the source text otherwise.
fn type_name(ctx: &Ctx, t: &TsType) -> String {
    if let TsType::TsTypeRef(r) = t
        && r.type_params.is_none()
        && let TsEntityName::Ident(id) = &r.type_name
    {
        return id.sym.to_string();
    }
    ctx.snippet(t.span()).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn export_name(n: &ModuleExportName) -> String {
    match n {
        ModuleExportName::Ident(i) => i.sym.to_string(),
        ModuleExportName::Str(s) => s.value.to_string_lossy().into_owned(),
    }
}

fn import_kind(spec: &str) -> ImportKind {
    if RUNTIME_MODULES.contains(&spec) {
        ImportKind::Runtime
    } else if spec.starts_with("./") || spec.starts_with("../") || spec.starts_with('/') {
        ImportKind::Relative
    } else if spec.starts_with("cf:") {
        ImportKind::Cf
    } else {
        ImportKind::Other
    }
}

/// One parsed file: its module (when swc could parse it), comments, source
/// map and parse diagnostics.
pub struct Parsed {
    pub module: Option<Module>,
    pub comments: SingleThreadedComments,
    pub cm: Lrc<SourceMap>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Top-level `const NAME = init` bindings of a module, exported or not, in order.
pub(crate) fn top_level_bindings(module: &Module) -> impl Iterator<Item = (&str, &Expr)> {
    module.body.iter().flat_map(|item| {
        let decls: &[VarDeclarator] = match item {
            ModuleItem::Stmt(Stmt::Decl(Decl::Var(v))) => &v.decls,
            ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(e)) => match &e.decl {
                Decl::Var(v) => &v.decls,
                _ => &[],
            },
            _ => &[],
        };
        decls.iter().filter_map(|d| match (&d.name, &d.init) {
            (Pat::Ident(id), Some(init)) => Some((id.id.sym.as_ref(), &**init)),
            _ => None,
        })
    })
}

/// Parse one file. `path` decides TSX (`.tsx`) or TS syntax.
pub fn parse(path: &str, text: &str) -> Parsed {
    let cm: Lrc<SourceMap> = Default::default();
    let fm = cm.new_source_file(Lrc::new(FileName::Custom(path.to_string())), text.to_string());
    let comments = SingleThreadedComments::default();
    let syntax = Syntax::Typescript(TsSyntax {
        tsx: path.ends_with(".tsx") || path.ends_with(".jsx"),
        dts: path.ends_with(".d.ts"),
        ..Default::default()
    });
    let mut errors = Vec::new();
    let parsed = parse_file_as_module(&fm, syntax, EsVersion::latest(), Some(&comments), &mut errors);
    let diag = |span: Span, message: String| {
        let loc = cm.lookup_char_pos(span.lo);
        Diagnostic { line: loc.line as u32, column: loc.col_display as u32 + 1, message }
    };
    let mut diagnostics: Vec<Diagnostic> = errors.iter().map(|e| diag(e.span(), e.kind().msg().into_owned())).collect();
    let module = match parsed {
        Ok(m) => Some(m),
        Err(e) => {
            diagnostics.push(diag(e.span(), e.kind().msg().into_owned()));
            None
        }
    };
    Parsed { module, comments, cm, diagnostics }
}

/// Extract one file. `path` decides TSX (`.tsx`) or TS syntax.
pub fn extract(path: &str, text: &str) -> TsExtraction {
    let parsed = parse(path, text);
    let mut out = TsExtraction { diagnostics: parsed.diagnostics.clone(), ..Default::default() };
    let Some(module) = &parsed.module else {
        out.parse_failed = true;
        return out;
    };
    let (cm, comments) = (&parsed.cm, &parsed.comments);
    let mut ctx = Ctx { cm, comments, text, pattern_fns: Vec::new(), handler_fns: Vec::new() };
    collect_imports(&ctx, module, &mut out);
    for imp in out.imports.iter().filter(|i| i.kind == ImportKind::Runtime) {
        for n in &imp.names {
            match n.imported.as_str() {
                "pattern" => ctx.pattern_fns.push(n.local.clone()),
                "handler" => ctx.handler_fns.push(n.local.clone()),
                _ => {}
            }
        }
    }
    collect_exports(&ctx, module, &mut out);
    out
}

fn collect_imports(ctx: &Ctx, module: &Module, out: &mut TsExtraction) {
    for item in &module.body {
        let ModuleItem::ModuleDecl(decl) = item else { continue };
        let (src, names, type_only, span, reexport) = match decl {
            ModuleDecl::Import(i) => {
                let names = i
                    .specifiers
                    .iter()
                    .map(|s| match s {
                        ImportSpecifier::Named(n) => ImportedName {
                            imported: n.imported.as_ref().map_or_else(|| n.local.sym.to_string(), export_name),
                            local: n.local.sym.to_string(),
                            type_only: n.is_type_only,
                        },
                        ImportSpecifier::Default(d) => ImportedName {
                            imported: "default".into(),
                            local: d.local.sym.to_string(),
                            type_only: false,
                        },
                        ImportSpecifier::Namespace(ns) => {
                            ImportedName { imported: "*".into(), local: ns.local.sym.to_string(), type_only: false }
                        }
                    })
                    .collect();
                (&i.src, names, i.type_only, i.span, false)
            }
            ModuleDecl::ExportNamed(e) if e.src.is_some() => {
                let names = e
                    .specifiers
                    .iter()
                    .map(|s| match s {
                        ExportSpecifier::Named(n) => ImportedName {
                            imported: export_name(&n.orig),
                            local: n.exported.as_ref().map_or_else(|| export_name(&n.orig), export_name),
                            type_only: n.is_type_only,
                        },
                        ExportSpecifier::Default(d) => ImportedName {
                            imported: "default".into(),
                            local: d.exported.sym.to_string(),
                            type_only: false,
                        },
                        ExportSpecifier::Namespace(ns) => {
                            ImportedName { imported: "*".into(), local: export_name(&ns.name), type_only: false }
                        }
                    })
                    .collect();
                (e.src.as_ref().unwrap(), names, e.type_only, e.span, true)
            }
            ModuleDecl::ExportAll(e) => (&e.src, Vec::new(), e.type_only, e.span, true),
            _ => continue,
        };
        let specifier = src.value.to_string_lossy().into_owned();
        let kind = import_kind(&specifier);
        let (cf, error) = match cf_spec::parse(&specifier) {
            Ok(r) => (r, None),
            Err(e) => (None, Some(e.to_string())),
        };
        out.imports.push(ImportRecord {
            specifier,
            kind,
            names,
            type_only,
            line: ctx.line(span.lo),
            cf,
            error,
            reexport,
        });
    }
}

/// A top-level binding initialised by `pattern(...)` or `handler(...)`.
struct CallBinding {
    kind: ExportKind,
    input: Option<String>,
    output: Option<String>,
    /// The whole declaration.
    span: Span,
    /// Where its JSDoc would end.
    doc_pos: BytePos,
}

fn collect_exports(ctx: &Ctx, module: &Module, out: &mut TsExtraction) {
    let calls = call_bindings(ctx, module);
    let mut default_binding: Option<String> = None;

    for item in &module.body {
        let ModuleItem::ModuleDecl(decl) = item else { continue };
        match decl {
            ModuleDecl::ExportDecl(e) => push_export_decl(ctx, e, &calls, out),
            ModuleDecl::ExportNamed(e) => push_named_exports(ctx, e, &calls, &mut default_binding, out),
            ModuleDecl::ExportAll(e) => {
                out.exports.push(ctx.export("*".into(), ExportKind::Reexport, false, e.span, false));
            }
            ModuleDecl::ExportDefaultDecl(e) => {
                let kind = match &e.decl {
                    DefaultDecl::Class(_) => ExportKind::Class,
                    DefaultDecl::Fn(_) => ExportKind::Function,
                    DefaultDecl::TsInterfaceDecl(_) => ExportKind::Interface,
                };
                out.exports.push(ctx.export("default".into(), kind, true, e.span, true));
            }
            ModuleDecl::ExportDefaultExpr(e) => push_default_expr_export(ctx, e, &calls, &mut default_binding, out),
            _ => {}
        }
    }

    push_named_patterns(ctx, &calls, default_binding.as_deref(), out);
    out.patterns.sort_by_key(|p| p.line_start);
    out.is_entry = out.patterns.iter().any(|p| p.default_export);
}

/// Top-level bindings initialised by pattern(...) or handler(...), exported or not.
fn call_bindings(ctx: &Ctx, module: &Module) -> HashMap<String, CallBinding> {
    let mut calls: HashMap<String, CallBinding> = HashMap::new();
    let mut note_var = |d: &VarDeclarator, doc_pos: BytePos, span: Span| {
        if let (Pat::Ident(id), Some(init)) = (&d.name, &d.init)
            && let Some((kind, i, o)) = ctx.call_kind(init)
        {
            calls.insert(id.id.sym.to_string(), CallBinding { kind, input: i, output: o, span, doc_pos });
        }
    };
    for item in &module.body {
        match item {
            ModuleItem::Stmt(Stmt::Decl(Decl::Var(v))) => v.decls.iter().for_each(|d| note_var(d, v.span.lo, v.span)),
            ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(e)) => {
                if let Decl::Var(v) = &e.decl {
                    v.decls.iter().for_each(|d| note_var(d, e.span.lo, e.span));
                }
            }
            _ => {}
        }
    }
    calls
}

/// The names an `export <declaration>` exports, each with its kind.
fn push_export_decl(ctx: &Ctx, e: &ExportDecl, calls: &HashMap<String, CallBinding>, out: &mut TsExtraction) {
    let mut push = |name: String, kind: ExportKind| out.exports.push(ctx.export(name, kind, false, e.span, true));
    match &e.decl {
        Decl::Class(c) => push(c.ident.sym.to_string(), ExportKind::Class),
        Decl::Fn(f) => push(f.ident.sym.to_string(), ExportKind::Function),
        Decl::Var(v) => {
            for d in &v.decls {
                if let Pat::Ident(id) = &d.name {
                    let name = id.id.sym.to_string();
                    let kind = calls.get(&name).map_or(ExportKind::Const, |c| c.kind);
                    push(name, kind);
                }
            }
        }
        Decl::TsInterface(i) => push(i.id.sym.to_string(), ExportKind::Interface),
        Decl::TsTypeAlias(t) => push(t.id.sym.to_string(), ExportKind::Type),
        Decl::TsEnum(en) => push(en.id.sym.to_string(), ExportKind::Enum),
        _ => {}
    }
}

/// The names an `export { … }` (or `export { … } from "…"`) exports; a local
/// name exported as `default` becomes the default binding.
fn push_named_exports(
    ctx: &Ctx,
    e: &NamedExport,
    calls: &HashMap<String, CallBinding>,
    default_binding: &mut Option<String>,
    out: &mut TsExtraction,
) {
    for s in &e.specifiers {
        let (orig, exported) = match s {
            ExportSpecifier::Named(n) => {
                (export_name(&n.orig), n.exported.as_ref().map_or_else(|| export_name(&n.orig), export_name))
            }
            ExportSpecifier::Default(d) => ("default".to_string(), d.exported.sym.to_string()),
            ExportSpecifier::Namespace(ns) => ("*".to_string(), export_name(&ns.name)),
        };
        let kind =
            if e.src.is_some() { ExportKind::Reexport } else { calls.get(&orig).map_or(ExportKind::Const, |c| c.kind) };
        if exported == "default" && e.src.is_none() {
            *default_binding = Some(orig.clone());
        }
        let default = exported == "default";
        out.exports.push(ctx.export(exported, kind, default, e.span, false));
    }
}

/// `export default <expression>`: a name becomes the default binding, and
/// a `pattern(...)` written in place is the pattern `default`.
fn push_default_expr_export(
    ctx: &Ctx,
    e: &ExportDefaultExpr,
    calls: &HashMap<String, CallBinding>,
    default_binding: &mut Option<String>,
    out: &mut TsExtraction,
) {
    let (line_start, line_end) = ctx.lines(e.span);
    let kind = match strip(&e.expr) {
        Expr::Ident(id) => {
            *default_binding = Some(id.sym.to_string());
            calls.get(id.sym.as_ref()).map_or(ExportKind::Const, |c| c.kind)
        }
        other => match ctx.call_kind(other) {
            Some((kind, input, output)) => {
                if kind == ExportKind::Pattern {
                    out.patterns.push(PatternRecord {
                        name: "default".into(),
                        line_start,
                        line_end,
                        input_type: input,
                        output_type: output,
                        default_export: true,
                        jsdoc: ctx.jsdoc(e.span.lo),
                    });
                }
                kind
            }
            None => ExportKind::Const,
        },
    };
    out.exports.push(ctx.export("default".into(), kind, true, e.span, true));
}

/// Named pattern definitions, in source order.
fn push_named_patterns(
    ctx: &Ctx,
    calls: &HashMap<String, CallBinding>,
    default_binding: Option<&str>,
    out: &mut TsExtraction,
) {
    let mut named: Vec<(&String, &CallBinding)> = calls.iter().filter(|(_, c)| c.kind == ExportKind::Pattern).collect();
    named.sort_by_key(|(_, c)| c.span.lo);
    for (name, c) in named {
        let (line_start, line_end) = ctx.lines(c.span);
        out.patterns.push(PatternRecord {
            name: name.clone(),
            line_start,
            line_end,
            input_type: c.input.clone(),
            output_type: c.output.clone(),
            default_export: default_binding == Some(name.as_str()),
            jsdoc: ctx.jsdoc(c.doc_pos),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COUNTER: &str = r#"import { Default, handler, NAME, pattern, Stream, UI, type VNode, Writable } from "commonfabric";
import { formatCount } from "./format.ts";
import type { Theme } from "../theme/mod.ts";
import Inbox from "cf:pattern:abcdefghijABCDEFGHIJ0123456789_-abcdefghijk";
import Broken from "cf:Bad";
export { helper as renamed } from "./helpers.ts";

/** What the tally takes. */
interface TallyInput {
  /** The starting count. */
  count?: Writable<number | Default<0>>;
}

/** A simple tally. #counter */
export interface TallyOutput {
  [NAME]: string;
  [UI]: VNode;
  count: number;
  bump: Stream<void>;
}

const bump = handler<void, { count: Writable<number> }>((_, { count }) => {
  count.set(count.get() + 1);
});

export function double(n: number): number {
  return n * 2;
}

/** The tally pattern. */
const Tally = pattern<TallyInput, TallyOutput>(({ count }) => {
  return { [NAME]: "Tally", [UI]: <div>{count}</div>, count, bump: bump({ count }) };
});

export default Tally;
"#;

    #[test]
    fn imports_with_kinds_names_and_cf_references() {
        let out = extract("tally/tally.tsx", COUNTER);
        assert!(!out.parse_failed, "{:?}", out.diagnostics);
        let kinds: Vec<(ImportKind, &str, u32)> =
            out.imports.iter().map(|i| (i.kind, i.specifier.as_str(), i.line)).collect();
        assert_eq!(
            kinds,
            [
                (ImportKind::Runtime, "commonfabric", 1),
                (ImportKind::Relative, "./format.ts", 2),
                (ImportKind::Relative, "../theme/mod.ts", 3),
                (ImportKind::Cf, "cf:pattern:abcdefghijABCDEFGHIJ0123456789_-abcdefghijk", 4),
                (ImportKind::Cf, "cf:Bad", 5),
                (ImportKind::Relative, "./helpers.ts", 6),
            ]
        );
        let vnode = out.imports[0].names.iter().find(|n| n.local == "VNode").unwrap();
        assert!(vnode.type_only);
        assert!(out.imports[2].type_only);
        assert_eq!(
            out.imports[3].cf.as_ref().unwrap().pattern_id(),
            Some("abcdefghijABCDEFGHIJ0123456789_-abcdefghijk")
        );
        assert_eq!(out.imports[3].names[0].imported, "default");
        assert!(out.imports[4].error.as_deref().unwrap().contains("not a slug"), "{:?}", out.imports[4]);
        assert!(out.imports[5].reexport);
        assert_eq!(
            out.imports[5].names[0],
            ImportedName { imported: "helper".into(), local: "renamed".into(), type_only: false }
        );
    }

    #[test]
    fn exports_and_the_default_pattern() {
        let out = extract("tally/tally.tsx", COUNTER);
        let exports: Vec<(&str, ExportKind, bool)> =
            out.exports.iter().map(|e| (e.name.as_str(), e.kind, e.default)).collect();
        assert_eq!(
            exports,
            [
                ("renamed", ExportKind::Reexport, false),
                ("TallyOutput", ExportKind::Interface, false),
                ("double", ExportKind::Function, false),
                ("default", ExportKind::Pattern, true),
            ]
        );
        let output = &out.exports[1];
        assert_eq!(output.jsdoc.as_deref(), Some("A simple tally. #counter"));
        assert_eq!(output.signature, "export interface TallyOutput {");
        assert_eq!((output.line_start, output.line_end), (15, 20));
        assert_eq!(out.exports[2].signature, "export function double(n: number): number {");
        assert!(out.is_entry);
        assert_eq!(out.patterns.len(), 1);
        let p = &out.patterns[0];
        assert_eq!(p.name, "Tally");
        assert_eq!(p.input_type.as_deref(), Some("TallyInput"));
        assert_eq!(p.output_type.as_deref(), Some("TallyOutput"));
        assert!(p.default_export);
        assert_eq!(p.jsdoc.as_deref(), Some("The tally pattern."));
        assert_eq!(p.line_start, 31);
    }

    #[test]
    fn inline_default_pattern_and_non_entries() {
        let src =
            "import { pattern as p } from \"commonfabric\";\nexport default p<{ a: string }>(({ a }) => ({ a }));\n";
        let out = extract("x.ts", src);
        assert!(out.is_entry, "{out:?}");
        assert_eq!(out.patterns[0].input_type.as_deref(), Some("{ a: string }"));
        let helper = extract("helpers.ts", "export const answer = 42;\nexport type Id = string;\n");
        assert!(!helper.is_entry);
        assert_eq!(helper.exports.iter().map(|e| e.kind).collect::<Vec<_>>(), [ExportKind::Const, ExportKind::Type]);
    }

    #[test]
    fn broken_source_is_reported_not_dropped() {
        let out = extract(
            "bad.tsx",
            "import { pattern } from \"commonfabric\";\nexport default pattern(() => {\n  return <div>;\n",
        );
        assert!(!out.diagnostics.is_empty());
        assert!(out.diagnostics.iter().all(|d| d.line >= 1 && d.column >= 1));
    }
}
