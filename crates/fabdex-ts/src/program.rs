//! Programs: an entry file plus the closure of its relative imports, and the
//! contract (argument and result schemas) of its default-exported pattern.

pub use fabdex_model::ts::Contract;
use serde_json::Value;
use std::collections::HashMap;

use serde_json::json;
use swc_ecma_ast::{
    ArrowFunctionBody, CallExpr, Callee, Decl, Expr, Lit, MemberProp, ModuleDecl, ModuleItem, ObjectLit, ObjectPatProp,
    Pat, Prop, PropName, PropOrSpread, Stmt, TsType,
};

use swc_common::Spanned;
use swc_ecma_visit::{Visit, VisitWith};

use crate::extract::{Parsed, parse, strip, top_level_bindings};
use crate::infer::{Binding, Scope, bind_declarators, call_member, expr_schema, name_schema};
use crate::schema::{SchemaGen, TypeEnv, has_default, is_stream_schema};

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

/// The `pattern(...)` call the entry default-exports: its type arguments, or
/// the annotation of its function's parameter when there are none.
fn pattern_call(parsed: &Parsed) -> Option<&CallExpr> {
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
        default_call = top_level_bindings(module).find_map(|(n, init)| match init {
            Expr::Call(c) if n == name => Some(c),
            _ => None,
        });
    }
    let call = default_call?;
    let Callee::Expr(callee) = &call.callee else { return None };
    matches!(&**callee, Expr::Ident(id) if id.sym == *"pattern").then_some(call)
}

/// The pattern's input and output types: its type arguments, or the
/// annotation of its function's parameter when there are none.
fn pattern_types(call: &CallExpr) -> (Option<&TsType>, Option<&TsType>) {
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
    (input, output)
}

/// The object literal the pattern function returns, and the names it
/// destructured from its input.
/// The pattern function's returned object literal, the input field names
/// it destructures, and the name of its whole-input parameter, if any.
fn returned_object(call: &CallExpr) -> Option<(&ObjectLit, Vec<String>, Option<String>)> {
    let Expr::Arrow(arrow) = &*call.args.first()?.expr else { return None };
    let whole = match arrow.params.first() {
        Some(Pat::Ident(i)) => Some(i.id.sym.to_string()),
        _ => None,
    };
    let params: Vec<String> = match arrow.params.first() {
        Some(Pat::Object(o)) => o
            .props
            .iter()
            .filter_map(|p| match p {
                ObjectPatProp::Assign(a) => Some(a.key.sym.to_string()),
                ObjectPatProp::KeyValue(kv) => match &kv.key {
                    PropName::Ident(i) => Some(i.sym.to_string()),
                    _ => None,
                },
                ObjectPatProp::Rest(_) => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let object = match &*arrow.body {
        ArrowFunctionBody::Expr(e) => match Expr::unwrap_parens(e) {
            Expr::Object(o) => o,
            _ => return None,
        },
        ArrowFunctionBody::FunctionBody(b) => b.stmts.iter().rev().find_map(|s| match s {
            Stmt::Return(r) => match r.arg.as_deref().map(Expr::unwrap_parens) {
                Some(Expr::Object(o)) => Some(o),
                _ => None,
            },
            _ => None,
        })?,
    };
    Some((object, params, whole))
}

/// The `const` bindings at the top of the pattern function's body.
fn body_constants(call: &CallExpr) -> HashMap<&str, &Expr> {
    let mut out = HashMap::new();
    let Some(Expr::Arrow(arrow)) = call.args.first().map(|a| &*a.expr) else { return out };
    let ArrowFunctionBody::FunctionBody(body) = &*arrow.body else { return out };
    for stmt in &body.stmts {
        if let Stmt::Decl(Decl::Var(v)) = stmt {
            for d in &v.decls {
                if let (Pat::Ident(id), Some(init)) = (&d.name, &d.init) {
                    out.insert(id.id.sym.as_ref(), &**init);
                }
            }
        }
    }
    out
}

/// Whether a call makes a stream (a bound module-level handler, or `action`),
/// and its event type when one is written (`None`: `void`).
fn stream_event<'a>(c: &'a CallExpr, handlers: &HashMap<String, Option<&'a TsType>>) -> Option<Option<&'a TsType>> {
    let Callee::Expr(callee) = &c.callee else { return None };
    let Expr::Ident(id) = &**callee else { return None };
    if let Some(event) = handlers.get(id.sym.as_ref()) {
        return Some(*event);
    }
    if id.sym != *"action" {
        return None;
    }
    if let Some(t) = c.type_args.as_ref().and_then(|t| t.params.first()) {
        return Some(Some(&**t));
    }
    let Some(Expr::Arrow(arrow)) = c.args.first().map(|a| &*a.expr) else { return Some(None) };
    Some(match arrow.params.first() {
        None => None,
        Some(Pat::Ident(i)) => i.type_ann.as_ref().map(|a| &*a.type_ann),
        Some(Pat::Object(o)) => o.type_ann.as_ref().map(|a| &*a.type_ann),
        Some(_) => None,
    })
}

/// Module-level `const X = handler<Event, Context>(...)` bindings and their event types.
fn module_handlers(parsed: &Parsed) -> HashMap<String, Option<&TsType>> {
    let Some(module) = &parsed.module else { return HashMap::new() };
    top_level_bindings(module)
        .filter_map(|(name, init)| {
            let Expr::Call(c) = init else { return None };
            let Callee::Expr(callee) = &c.callee else { return None };
            matches!(&**callee, Expr::Ident(h) if h.sym == *"handler")
                .then(|| (name.to_string(), c.type_args.as_ref().and_then(|t| t.params.first()).map(|t| &**t)))
        })
        .collect()
}

/// The compiler's verb-listing mark: a result stream whose handler binds
/// session-scoped state, with no event of its own, is a UI wrapper
/// (`tier: "wrapper"`). Mirrors the compiler's name-based correlation in one
/// file: returned property → its value through `const`s (the pattern body's,
/// then the module's) → an applied handler factory (`h({ … })`) or an
/// `action(() => …)` → session-scoped state bound by the factory's context
/// type, by the application's bindings, or captured by the action.
fn mark_wrapper_tier<'a>(
    call: &'a CallExpr,
    module: Option<&'a swc_ecma_ast::Module>,
    env: &TypeEnv,
    argument: Option<&Value>,
    result: &mut Value,
) {
    let Some((object, _, _)) = returned_object(call) else { return };
    let locals = body_constants(call);
    let module_consts: HashMap<&str, &'a Expr> = module.map(|m| top_level_bindings(m).collect()).unwrap_or_default();
    let session_names = session_scoped_fields(argument, result);
    let session_bound =
        |name: &str| session_names.iter().any(|n| n == name) || locals.get(name).is_some_and(|e| is_session_cell(e));
    let mut wrappers: Vec<String> = Vec::new();
    for prop in &object.props {
        let PropOrSpread::Prop(prop) = prop else { continue };
        let Some((name, value)) = returned_verb(prop, &locals, &module_consts) else { continue };
        if is_wrapper_verb(value, &locals, &module_consts, env, &session_bound) {
            wrappers.push(name);
        }
    }
    mark_wrappers(result, wrappers);
}

/// The fields the pattern's own schemas (argument, then result) mark session-scoped.
fn session_scoped_fields(argument: Option<&Value>, result: &Value) -> Vec<String> {
    let mut session_names: Vec<String> = Vec::new();
    for schema in [argument, Some(result)].into_iter().flatten() {
        if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
            for (name, s) in props {
                if has_session_scope(s) {
                    session_names.push(name.clone());
                }
            }
        }
    }
    session_names
}

/// Whether a body constant holds a session cell: `new Writable.perSession(…)`.
fn is_session_cell(e: &Expr) -> bool {
    match Expr::unwrap_parens(e) {
        Expr::New(n) => {
            matches!(&*n.callee, Expr::Member(m) if matches!(&m.prop, MemberProp::Ident(p) if p.sym == *"perSession"))
        }
        Expr::Call(c) => {
            matches!(&c.callee, Callee::Expr(e) if matches!(&**e, Expr::Member(m) if matches!(&m.prop, MemberProp::Ident(p) if p.sym == *"perSession")))
        }
        _ => false,
    }
}

/// An expression followed through the `const`s it names (the pattern
/// body's, then the module's), a few steps at most.
fn resolve_constant<'a>(
    mut e: &'a Expr,
    locals: &HashMap<&str, &'a Expr>,
    module: &HashMap<&str, &'a Expr>,
) -> &'a Expr {
    for _ in 0..8 {
        let inner = strip(e);
        match inner {
            Expr::Ident(id) => match locals.get(id.sym.as_ref()).or_else(|| module.get(id.sym.as_ref())) {
                Some(next) => e = next,
                None => return inner,
            },
            _ => return inner,
        }
    }
    strip(e)
}

/// A returned property's name and value; a shorthand stands for the
/// constant it names (`None` when it names none, or the key is not written out).
fn returned_verb<'a>(
    prop: &'a Prop,
    locals: &HashMap<&str, &'a Expr>,
    module_consts: &HashMap<&str, &'a Expr>,
) -> Option<(String, &'a Expr)> {
    match prop {
        Prop::Shorthand(id) => {
            let v = locals.get(id.sym.as_ref()).or_else(|| module_consts.get(id.sym.as_ref()))?;
            Some((id.sym.to_string(), v))
        }
        Prop::KeyValue(kv) => match &kv.key {
            PropName::Ident(i) => Some((i.sym.to_string(), &*kv.value)),
            PropName::Str(s) => Some((s.value.to_string_lossy().into_owned(), &*kv.value)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a returned value is a UI wrapper: an `action(…)` capturing
/// session state, or an applied handler factory with a void event and
/// session state.
fn is_wrapper_verb<'a>(
    value: &'a Expr,
    locals: &HashMap<&str, &'a Expr>,
    module_consts: &HashMap<&str, &'a Expr>,
    env: &TypeEnv,
    session_bound: &dyn Fn(&str) -> bool,
) -> bool {
    let Expr::Call(applied) = resolve_constant(value, locals, module_consts) else { return false };
    let Callee::Expr(callee) = &applied.callee else { return false };
    match resolve_constant(callee, locals, module_consts) {
        // `action(() => …)`: no event; its state is what it captures.
        Expr::Ident(id) if id.sym == *"action" => match applied.args.first().map(|a| strip(&a.expr)) {
            Some(Expr::Arrow(arrow)) if arrow.params.is_empty() => {
                let mut names = Vec::new();
                collect_identifiers(&arrow.body, &mut names);
                names.iter().any(|n| session_bound(n))
            }
            _ => false,
        },
        Expr::Call(factory) if is_handler_factory(factory) => is_session_handler(factory, applied, env, session_bound),
        _ => false,
    }
}

/// Whether a call is `handler<…>(…)`, which makes a handler factory.
fn is_handler_factory(factory: &CallExpr) -> bool {
    matches!(&factory.callee, Callee::Expr(e) if matches!(&**e, Expr::Ident(id) if id.sym == *"handler"))
}

/// `h({ … })` where `h = handler<E, C>(…)`: a void event, and session
/// state in `C` or bound by the application.
fn is_session_handler(
    factory: &CallExpr,
    applied: &CallExpr,
    env: &TypeEnv,
    session_bound: &dyn Fn(&str) -> bool,
) -> bool {
    let types = factory.type_args.as_ref().map(|a| &a.params);
    let void_event = types.and_then(|t| t.first()).is_some_and(
        |e| matches!(&**e, TsType::TsKeywordType(k) if k.kind == swc_ecma_ast::TsKeywordTypeKind::TsVoidKeyword),
    );
    let state_scoped =
        types.and_then(|t| t.get(1)).is_some_and(|c| has_session_scope(&SchemaGen::new(env).root(c).schema));
    let bound = applied.args.first().map(|a| strip(&a.expr)).is_some_and(|b| match b {
        Expr::Object(o) => o.props.iter().any(|p| match p {
            PropOrSpread::Prop(p) => match &**p {
                Prop::Shorthand(id) => session_bound(&id.sym),
                Prop::KeyValue(kv) => {
                    matches!(strip(&kv.value), Expr::Ident(id) if session_bound(&id.sym))
                }
                _ => false,
            },
            _ => false,
        }),
        _ => false,
    });
    void_event && (state_scoped || bound)
}

/// Marks `tier: "wrapper"` on the result's named stream fields that have no tier yet.
fn mark_wrappers(result: &mut Value, wrappers: Vec<String>) {
    let Some(props) = result.get_mut("properties").and_then(|p| p.as_object_mut()) else { return };
    for name in wrappers {
        if let Some(schema) = props.get_mut(&name)
            && is_stream_schema(schema)
            && schema.get("tier").is_none()
        {
            schema["tier"] = json!("wrapper");
        }
    }
}

/// A `"scope": "session"` anywhere in a schema.
fn has_session_scope(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, x)| (k == "scope" && x == "session") || has_session_scope(x)),
        Value::Array(a) => a.iter().any(has_session_scope),
        _ => false,
    }
}

/// Every identifier an arrow function's body refers to.
fn collect_identifiers(body: &ArrowFunctionBody, out: &mut Vec<String>) {
    struct Names<'o>(&'o mut Vec<String>);
    impl Visit for Names<'_> {
        fn visit_ident(&mut self, id: &swc_ecma_ast::Ident) {
            self.0.push(id.sym.to_string());
        }
    }
    body.visit_with(&mut Names(out));
}

/// For a name bound in the body to `f<…>(…)` (a call of a name), that call.
fn bound_call<'e>(e: &Expr, locals: &HashMap<&str, &'e Expr>) -> Option<&'e Expr> {
    let Expr::Ident(id) = e else { return None };
    let init = *locals.get(id.sym.as_ref())?;
    let Expr::Call(c) = Expr::unwrap_parens(init) else { return None };
    matches!(&c.callee, Callee::Expr(callee) if matches!(&**callee, Expr::Ident(_))).then_some(init)
}

/// `new Writable<T>(init)`, `new Cell(init)`, `Writable.of<T>(init)`,
/// `Writable.perSession(init)` and `cell<T>(init)`, each optionally named with
/// `.for(cause)`: the written type argument and the initial value.
fn cell_constructor(e: &Expr) -> Option<(Option<&TsType>, Option<&Expr>)> {
    let is_cell = |name: &str| matches!(name, "Writable" | "Cell");
    match e {
        Expr::New(n) => {
            let callee_ok = match &*n.callee {
                Expr::Ident(id) => is_cell(&id.sym),
                Expr::Member(m) => matches!(&*m.obj, Expr::Ident(id) if is_cell(&id.sym)),
                _ => false,
            };
            callee_ok.then(|| {
                let t = n.type_args.as_ref().and_then(|a| a.params.first()).map(|b| &**b);
                (t, n.args.as_ref().and_then(|a| a.first()).map(|a| &*a.expr))
            })
        }
        Expr::Call(c) => {
            let Callee::Expr(callee) = &c.callee else { return None };
            // `.for(cause)` names a cell and returns the same cell.
            if let Expr::Member(m) = &**callee
                && matches!(&m.prop, MemberProp::Ident(p) if p.sym == *"for")
            {
                return cell_constructor(Expr::unwrap_parens(&m.obj));
            }
            let callee_ok = match &**callee {
                Expr::Ident(id) => id.sym == *"cell",
                Expr::Member(m) => {
                    matches!(&*m.obj, Expr::Ident(id) if is_cell(&id.sym))
                        && matches!(&m.prop, MemberProp::Ident(p) if matches!(p.sym.as_ref(), "of" | "perSession" | "perUser" | "perSpace"))
                }
                _ => false,
            };
            callee_ok.then(|| {
                let t = c.type_args.as_ref().and_then(|a| a.params.first()).map(|b| &**b);
                (t, c.args.first().map(|a| &*a.expr))
            })
        }
        _ => None,
    }
}

/// The result schema inferred from the returned object, as the compiler
/// infers it for the cases syntax decides: literals widen to their type, JSX
/// is a `JSXElement`, and a destructured input field keeps its declared type.
/// Anything else makes the result partial (listed in the notes).
fn infer_result(
    call: &CallExpr,
    input: Option<&TsType>,
    env: &TypeEnv,
    handlers: &HashMap<String, Option<&TsType>>,
    module: Option<&swc_ecma_ast::Module>,
) -> (Option<Value>, Vec<String>) {
    let Some((object, params, whole)) = returned_object(call) else {
        return (None, vec!["result: the pattern does not return an object literal".into()]);
    };
    let locals = body_constants(call);
    let module_consts: HashMap<&str, &Expr> = module.map(|m| top_level_bindings(m).collect()).unwrap_or_default();
    let mut generator = SchemaGen::for_result(env);
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    let mut notes = Vec::new();
    let (top_frame, body_frame) = binding_frames(call, module);
    let mut scope = Scope::new(top_frame, body_frame, input, params.clone());
    let names = ResultNames {
        input,
        params: &params,
        whole: whole.as_deref(),
        locals: &locals,
        module_consts: &module_consts,
        handlers,
    };
    let mut rebuilt_properties: Vec<(String, Value)> = Vec::new();
    let mut forces_rebuild = false;
    for prop in &object.props {
        let PropOrSpread::Prop(prop) = prop else {
            notes.push("result: spread in the returned object".into());
            continue;
        };
        let (key, value) = result_key_value(prop);
        let Some(key) = key else {
            notes.push("result: a property whose name is not written out".into());
            continue;
        };
        let read = read_result_property(&names, &key, value, &mut scope, &mut generator);
        forces_rebuild |= read.scope_wrapped;
        match read.schema {
            Some(s) => {
                rebuilt_properties.push((key.clone(), read.rebuilt.unwrap_or_else(|| s.clone())));
                properties.insert(key.clone(), s);
                required.push(key);
            }
            None => notes.push(format!("result: `{key}` needs a type checker to infer")),
        }
    }
    apply_rebuild(&mut properties, rebuilt_properties, forces_rebuild);
    let mut schema = json!({ "type": "object", "properties": properties });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    let g = generator.finish_with(schema);
    notes.extend(g.unsupported.into_iter().map(|u| format!("result: {u}")));
    (Some(g.schema), notes)
}

/// What a returned property's value may name: the pattern's input type and
/// the fields its parameter binds (or the name of the whole input), the
/// body's and the module's constants, and the module's handler factories.
struct ResultNames<'n, 'a> {
    input: Option<&'a TsType>,
    params: &'n [String],
    whole: Option<&'n str>,
    locals: &'n HashMap<&'a str, &'a Expr>,
    module_consts: &'n HashMap<&'a str, &'a Expr>,
    handlers: &'n HashMap<String, Option<&'a TsType>>,
}

impl<'a> ResultNames<'_, 'a> {
    /// The constant a name is bound to, in the pattern body or else at the
    /// top of the module.
    fn constant(&self, name: &str) -> Option<&'a Expr> {
        self.locals.get(name).or_else(|| self.module_consts.get(name)).copied()
    }
}

/// One returned property read: its schema (`None` when a type checker is
/// needed), what the compiler's per-property rebuild would give instead,
/// and whether its written type carries a scope (which forces the rebuild).
struct PropertyRead {
    schema: Option<Value>,
    rebuilt: Option<Value>,
    scope_wrapped: bool,
}

/// A returned property's key as written (a computed `[NAME]` as `$NAME`)
/// and its value (`None` for a shorthand).
fn result_key_value(prop: &Prop) -> (Option<String>, Option<&Expr>) {
    match prop {
        Prop::Shorthand(id) => (Some(id.sym.to_string()), None),
        Prop::KeyValue(kv) => (
            match &kv.key {
                PropName::Ident(i) => Some(i.sym.to_string()),
                PropName::Str(s) => Some(s.value.to_string_lossy().into_owned()),
                PropName::Computed(c) => match &*c.expr {
                    Expr::Ident(i) => Some(format!("${}", i.sym)),
                    _ => None,
                },
                _ => None,
            },
            Some(&*kv.value),
        ),
        _ => (None, None),
    }
}

/// The schemas of the returned property `key` (whose value is `value`, or
/// the name `key` itself for a shorthand).
fn read_result_property<'a>(
    names: &ResultNames<'_, 'a>,
    key: &str,
    value: Option<&'a Expr>,
    scope: &mut Scope<'a>,
    generator: &mut SchemaGen<'_, 'a>,
) -> PropertyRead {
    let params = names.params;
    let ident = match value.map(Expr::unwrap_parens) {
        None => Some(key.to_string()),
        Some(Expr::Ident(i)) => Some(i.sym.to_string()),
        _ => None,
    };
    let written = value;
    let input_field = whole_input_field(value, names.whole);
    // A name bound in the pattern body stands for its initializer.
    // A handler factory returned unbound is a stream with no known event.
    let unbound_handler = matches!(value.map(Expr::unwrap_parens), None | Some(Expr::Ident(_)))
        && ident.as_ref().is_some_and(|name| {
            !params.contains(name)
                && !names.locals.contains_key(name.as_str())
                && names.handlers.contains_key(name.as_str())
        });
    // A name bound in the pattern body, or else at the top of the module,
    // stands for its initializer.
    let value = match &ident {
        Some(name) if !params.contains(name) => names.constant(name).or(value),
        _ => value,
    };
    // A name bound with a written type (`const x: T = …`) has that type.
    let written_type =
        ident.as_deref().filter(|name| !params.contains(&name.to_string())).and_then(|name| scope.written_type(name));
    let schema = match written_type {
        Some(t) => Some(generator.ty(t)),
        None if unbound_handler => Some(json!({ "asCell": ["stream"] })),
        None => value_form_schema(names, key, value, ident.as_deref(), input_field, generator),
    };
    // Failing the forms above, what syntax decides of the value's type.
    let schema = schema.or_else(|| match (value, ident.as_deref()) {
        (Some(v), _) => expr_schema(v, scope, generator),
        (None, Some(name)) => name_schema(name, scope, generator),
        (None, None) => None,
    });
    let explicit = rebuild_written_type(names, ident.as_deref(), scope, generator);
    let rebuilt = rebuilt_schema(written, explicit, generator);
    PropertyRead { schema, rebuilt, scope_wrapped: explicit.is_some_and(mentions_scope_wrapper) }
}

/// `state.value`, where `state` is the whole input, is the field `value`.
fn whole_input_field(value: Option<&Expr>, whole: Option<&str>) -> Option<String> {
    match value.map(Expr::unwrap_parens) {
        Some(Expr::Member(m)) => match (&*m.obj, &m.prop) {
            (Expr::Ident(obj), MemberProp::Ident(field)) if whole == Some(obj.sym.as_ref()) => {
                Some(field.sym.to_string())
            }
            _ => None,
        },
        _ => None,
    }
}

/// The schema of a returned value by its form, as the compiler infers it:
/// streams, literals, cells, JSX, fields of builtin results and of the input.
fn value_form_schema<'a>(
    names: &ResultNames<'_, 'a>,
    key: &str,
    value: Option<&'a Expr>,
    ident: Option<&str>,
    input_field: Option<String>,
    generator: &mut SchemaGen<'_, 'a>,
) -> Option<Value> {
    match value.map(Expr::unwrap_parens) {
        // A bound handler or an action is a stream of its event.
        Some(Expr::Call(c)) if stream_event(c, names.handlers).is_some() => {
            let event = stream_event(c, names.handlers).flatten();
            let inner = match event {
                Some(t) => generator.ty(t),
                None => json!({ "asCell": ["opaque"] }),
            };
            Some(crate::schema::prepend_brand(inner, "stream"))
        }
        Some(Expr::Lit(Lit::Str(_)) | Expr::Tpl(_)) => Some(json!({ "type": "string" })),
        // `str` templates are strings; `[NAME]` is a string by the platform's contract.
        Some(Expr::TaggedTpl(t)) if matches!(&*t.tag, Expr::Ident(i) if i.sym == *"str") => {
            Some(json!({ "type": "string" }))
        }
        Some(Expr::Call(_)) if key == "$NAME" => Some(json!({ "type": "string" })),
        Some(Expr::Lit(Lit::Num(_))) => Some(json!({ "type": "number" })),
        // `state.field`, where `state = f(…)` and `f` is declared with a
        // function type (the platform's builtins, with its API declarations).
        Some(Expr::Member(m))
            if matches!(&m.prop, MemberProp::Ident(_))
                && bound_call(Expr::unwrap_parens(&m.obj), names.locals).is_some() =>
        {
            let MemberProp::Ident(field) = &m.prop else { unreachable!() };
            let init = bound_call(Expr::unwrap_parens(&m.obj), names.locals).unwrap();
            call_member(init, &field.sym, generator)
        }
        Some(Expr::Member(m)) if matches!(&m.prop, MemberProp::Ident(p) if p.sym == *"length") => {
            literal_length_schema(names, &m.obj)
        }
        Some(Expr::Lit(Lit::Bool(_))) => Some(json!({ "type": "boolean" })),
        Some(e @ (Expr::New(_) | Expr::Call(_))) if cell_constructor(e).is_some() => cell_value_schema(e, generator),
        Some(Expr::JSXElement(_) | Expr::JSXFragment(_)) => Some(generator.jsx_element()),
        _ => {
            let field = input_field.or(ident.map(str::to_string).filter(|name| names.params.contains(name)));
            match (field, names.input) {
                (Some(name), Some(input)) => destructured_field_schema(input, &name, generator),
                _ => None,
            }
        }
    }
}

/// The `.length` of an array literal bound by name is a number; of an
/// `as const` one (a tuple), its literal length.
fn literal_length_schema(names: &ResultNames<'_, '_>, target: &Expr) -> Option<Value> {
    let target = match Expr::unwrap_parens(target) {
        Expr::Ident(id) => names.constant(id.sym.as_ref()),
        _ => None,
    };
    match target.map(Expr::unwrap_parens) {
        Some(Expr::TsConstAssertion(c)) => match Expr::unwrap_parens(&c.expr) {
            Expr::Array(a) => Some(json!({ "type": "number", "enum": [a.elems.len()] })),
            _ => None,
        },
        Some(Expr::Array(_)) => Some(json!({ "type": "number" })),
        _ => None,
    }
}

/// A cell made in the body (`new Writable<T>(…)`, `Writable.of(…)`,
/// `cell(…)`): a result unwraps it to `T`, or to its initial value's
/// widened type.
fn cell_value_schema(e: &Expr, generator: &mut SchemaGen<'_, '_>) -> Option<Value> {
    let (type_arg, first) = cell_constructor(e).unwrap();
    match (type_arg, first.map(Expr::unwrap_parens)) {
        (Some(t), _) => Some(generator.ty(t)),
        (None, Some(Expr::Lit(Lit::Str(_)))) => Some(json!({ "type": "string" })),
        (None, Some(Expr::Lit(Lit::Num(_)))) => Some(json!({ "type": "number" })),
        (None, Some(Expr::Lit(Lit::Bool(_)))) => Some(json!({ "type": "boolean" })),
        _ => None,
    }
}

/// A field of the input, as destructured by the pattern's parameter.
fn destructured_field_schema<'a>(input: &'a TsType, name: &str, generator: &mut SchemaGen<'_, 'a>) -> Option<Value> {
    match generator.member_type(input, name) {
        // The destructured value has the field's type with its `Default`
        // resolved away (so an optional field with a default is present).
        Some((t, optional)) if !optional || has_default(t) => Some(generator.ty(t)).map(|mut s| {
            if let Some(map) = s.as_object_mut() {
                map.remove("default");
            }
            s
        }),
        _ => None,
    }
}

/// The written type the compiler's per-property rebuild keeps for a
/// returned name (see `rebuild_needed` in [`apply_rebuild`]).
fn rebuild_written_type<'a>(
    names: &ResultNames<'_, 'a>,
    ident: Option<&str>,
    scope: &Scope<'a>,
    generator: &SchemaGen<'_, 'a>,
) -> Option<&'a TsType> {
    let name = ident?;
    if names.params.iter().any(|p| p == name) {
        // Measured: the rebuilt type of a destructured field keeps its
        // written type (and default) only when a scope wraps it.
        let (t, _) = generator.member_type(names.input?, name)?;
        (preserved_binding_type(t) && mentions_scope_wrapper(t)).then_some(t)
    } else {
        scope.written_type(name)
    }
}

/// What the compiler's per-property rebuild would give instead (see
/// `rebuild_needed` in [`apply_rebuild`]): a literal keeps its literal
/// type, and a name with a written type keeps that type.
fn rebuilt_schema(
    written: Option<&Expr>,
    explicit: Option<&TsType>,
    generator: &mut SchemaGen<'_, '_>,
) -> Option<Value> {
    match written.map(Expr::unwrap_parens) {
        Some(Expr::Lit(Lit::Str(s))) => Some(json!({ "type": "string", "enum": [s.value.to_string_lossy()] })),
        Some(Expr::Tpl(t)) if t.exprs.is_empty() && t.quasis.len() == 1 => {
            let text = t.quasis[0].cooked.as_ref().map(|c| c.to_string_lossy().into_owned());
            text.map(|text| json!({ "type": "string", "enum": [text] }))
        }
        Some(Expr::Lit(Lit::Num(n))) => Some(json!({ "type": "number", "enum": [crate::schema::num(n.value)] })),
        Some(Expr::Lit(Lit::Bool(b))) => Some(json!({ "type": "boolean", "enum": [b.value] })),
        _ => explicit.map(|t| generator.ty(t)),
    }
}

/// The compiler rebuilds an inferred result property by property when
/// the inferred type mentions `any` or `unknown` outside a named type, or
/// a returned name's written type carries a scope (`PerUser<…>`); the
/// rebuild is dropped when any property is itself `any` or `unknown`.
fn apply_rebuild(
    properties: &mut serde_json::Map<String, Value>,
    rebuilt_properties: Vec<(String, Value)>,
    forces_rebuild: bool,
) {
    let rebuild_needed = forces_rebuild || properties.values().any(mentions_any_or_unknown);
    if rebuild_needed && !rebuilt_properties.iter().any(|(_, s)| is_any_or_unknown(s)) {
        for (key, s) in rebuilt_properties {
            properties.insert(key, s);
        }
    }
}

/// The bindings of the module's top level and of the pattern body, for
/// reading the types of the names a result returns.
fn binding_frames<'x>(
    call: &'x CallExpr,
    module: Option<&'x swc_ecma_ast::Module>,
) -> (HashMap<&'x str, Binding<'x>>, HashMap<&'x str, Binding<'x>>) {
    let mut top = HashMap::new();
    for item in module.map(|m| m.body.as_slice()).unwrap_or_default() {
        match item {
            ModuleItem::Stmt(Stmt::Decl(Decl::Var(v))) => bind_declarators(&v.decls, &mut top),
            ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(e)) => {
                if let Decl::Var(v) = &e.decl {
                    bind_declarators(&v.decls, &mut top)
                }
            }
            _ => {}
        }
    }
    let mut body = HashMap::new();
    if let Some(Expr::Arrow(arrow)) = call.args.first().map(|a| &*a.expr)
        && let ArrowFunctionBody::FunctionBody(block) = &*arrow.body
    {
        for stmt in &block.stmts {
            if let Stmt::Decl(Decl::Var(v)) = stmt {
                bind_declarators(&v.decls, &mut body);
            }
        }
    }
    (top, body)
}

/// The name a type reference spells (`A`, or `B` of `ns.B`).
fn type_ref_name(r: &swc_ecma_ast::TsTypeRef) -> &str {
    match &r.type_name {
        swc_ecma_ast::TsEntityName::Ident(i) => i.sym.as_ref(),
        swc_ecma_ast::TsEntityName::TsQualifiedName(q) => q.right.sym.as_ref(),
    }
}

/// The members of a union or an intersection.
fn union_or_intersection_members(u: &swc_ecma_ast::TsUnionOrIntersectionType) -> &[Box<TsType>] {
    match u {
        swc_ecma_ast::TsUnionOrIntersectionType::TsUnionType(u) => &u.types,
        swc_ecma_ast::TsUnionOrIntersectionType::TsIntersectionType(i) => &i.types,
    }
}

/// Whether the compiler keeps a destructured field's written type as the
/// value's type: `Default<…>`, a scope (`PerUser<…>`, …), or a `Writable`
/// of one, alone or in a union or intersection.
fn preserved_binding_type(t: &TsType) -> bool {
    match t {
        TsType::TsParenthesizedType(p) => preserved_binding_type(&p.type_ann),
        TsType::TsTypeRef(r) => match type_ref_name(r) {
            "Writable" => r.type_params.as_ref().is_some_and(|a| a.params.iter().any(|t| preserved_binding_type(t))),
            "PerSpace" | "PerUser" | "PerSession" | "PerAny" | "Default" => true,
            _ => false,
        },
        TsType::TsUnionOrIntersectionType(u) => {
            union_or_intersection_members(u).iter().any(|t| preserved_binding_type(t))
        }
        _ => false,
    }
}

/// Whether a written type mentions a scope wrapper (`PerUser<…>`, …) in a
/// type argument, a union or intersection member, an array element or a
/// property of a type literal.
fn mentions_scope_wrapper(t: &TsType) -> bool {
    match t {
        TsType::TsParenthesizedType(p) => mentions_scope_wrapper(&p.type_ann),
        TsType::TsTypeRef(r) => {
            matches!(type_ref_name(r), "PerSpace" | "PerUser" | "PerSession" | "PerAny")
                || r.type_params.as_ref().is_some_and(|a| a.params.iter().any(|t| mentions_scope_wrapper(t)))
        }
        TsType::TsUnionOrIntersectionType(u) => {
            union_or_intersection_members(u).iter().any(|t| mentions_scope_wrapper(t))
        }
        TsType::TsArrayType(a) => mentions_scope_wrapper(&a.elem_type),
        TsType::TsTypeLit(l) => l.members.iter().any(|m| match m {
            swc_ecma_ast::TsTypeElement::TsPropertySignature(p) => {
                p.type_ann.as_ref().is_some_and(|a| mentions_scope_wrapper(&a.type_ann))
            }
            _ => false,
        }),
        _ => false,
    }
}

fn is_any_or_unknown(schema: &Value) -> bool {
    *schema == Value::Bool(true) || *schema == json!({ "type": "unknown" })
}

/// Whether a generated schema has `any` (`true`) or `unknown` anywhere but
/// inside a named type (`$defs`, reached by `$ref`), as the compiler's
/// printed type would spell it out.
fn mentions_any_or_unknown(schema: &Value) -> bool {
    let Value::Object(map) = schema else { return *schema == Value::Bool(true) };
    if map.get("type").and_then(Value::as_str) == Some("unknown") {
        return true;
    }
    let sub = |key: &str| map.get(key);
    let in_map =
        |key: &str| sub(key).and_then(Value::as_object).is_some_and(|m| m.values().any(mentions_any_or_unknown));
    let in_list = |key: &str| sub(key).and_then(Value::as_array).is_some_and(|l| l.iter().any(mentions_any_or_unknown));
    in_map("properties")
        || sub("items").is_some_and(mentions_any_or_unknown)
        || sub("additionalProperties").is_some_and(mentions_any_or_unknown)
        || in_list("anyOf")
        || in_list("oneOf")
        || in_list("allOf")
}

/// The order the compiler type-checks a program's files in: the entry, then
/// each file it imports (relative specifiers, in text order), depth-first.
/// Files nothing reaches follow in the order given.
fn check_order(files: &[(String, String)], parsed: &[Parsed]) -> Vec<usize> {
    fn visit(i: usize, files: &[(String, String)], parsed: &[Parsed], order: &mut Vec<usize>) {
        if order.contains(&i) {
            return;
        }
        order.push(i);
        let Some(module) = &parsed[i].module else { return };
        for item in &module.body {
            let spec = match item {
                ModuleItem::ModuleDecl(ModuleDecl::Import(d)) => &d.src,
                ModuleItem::ModuleDecl(ModuleDecl::ExportAll(d)) => &d.src,
                ModuleItem::ModuleDecl(ModuleDecl::ExportNamed(d)) => match &d.src {
                    Some(src) => src,
                    None => continue,
                },
                _ => continue,
            };
            let spec = spec.value.to_string_lossy();
            if !spec.starts_with('.') && !spec.starts_with('/') {
                continue;
            }
            let Some(target) = resolve_relative(&files[i].0, &spec, |p| files.iter().any(|(x, _)| x == p)) else {
                continue;
            };
            if let Some(j) = files.iter().position(|(x, _)| *x == target) {
                visit(j, files, parsed, order);
            }
        }
    }
    let mut order = Vec::new();
    for i in 0..files.len() {
        visit(i, files, parsed, &mut order);
    }
    order
}

/// Pattern factories the program can name, with their output types: any
/// file's `const P = pattern<I, O>(…)`, and a default import (`import P from
/// "./p.tsx"`) of a program file whose default export is such a pattern.
fn register_pattern_outputs<'a>(env: &mut TypeEnv<'a>, files: &[(String, String)], parsed: &'a [Parsed]) {
    let output_of = |c: &'a CallExpr| -> Option<&'a TsType> {
        let Callee::Expr(callee) = &c.callee else { return None };
        if !matches!(&**callee, Expr::Ident(id) if id.sym == *"pattern") {
            return None;
        }
        c.type_args.as_ref().and_then(|a| a.params.get(1)).map(|b| &**b)
    };
    for (i, p) in parsed.iter().enumerate() {
        let Some(module) = &p.module else { continue };
        for (name, init) in top_level_bindings(module) {
            if let Expr::Call(c) = init
                && let Some(output) = output_of(c)
            {
                env.add_pattern_output(name, output);
            }
        }
        for item in &module.body {
            let ModuleItem::ModuleDecl(ModuleDecl::Import(import)) = item else { continue };
            let Some(local) = import.specifiers.iter().find_map(|s| match s {
                swc_ecma_ast::ImportSpecifier::Default(d) => Some(d.local.sym.to_string()),
                _ => None,
            }) else {
                continue;
            };
            let spec = import.src.value.to_string_lossy();
            let Some(target) = resolve_relative(&files[i].0, &spec, |p| files.iter().any(|(x, _)| x == p)) else {
                continue;
            };
            let Some(j) = files.iter().position(|(x, _)| *x == target) else { continue };
            if let Some(output) = pattern_call(&parsed[j]).and_then(output_of) {
                env.add_pattern_output(&local, output);
            }
        }
    }
}

/// The explicit type arguments of the entry's calls and `new` expressions
/// (`wish<T>`, `new Writable<T>`, `handler<E, C>`, inner `pattern<I, O>`, …),
/// inner calls first, then in source order, leaving out the main `pattern`
/// call. The compiler's transformers generate a schema for each of these
/// before the pattern's own, with one generator per file, so an anonymous
/// type they find cyclic is already named `AnonymousType_1` when the
/// pattern's contract is generated.
fn schema_sites(module: &swc_ecma_ast::Module, main: &CallExpr) -> Vec<TsType> {
    struct Sites {
        main: swc_common::Span,
        out: Vec<TsType>,
    }
    impl Visit for Sites {
        fn visit_call_expr(&mut self, c: &CallExpr) {
            c.visit_children_with(self);
            if c.span != self.main
                && let Some(args) = &c.type_args
            {
                self.out.extend(args.params.iter().map(|t| (**t).clone()));
            }
        }
        fn visit_new_expr(&mut self, n: &swc_ecma_ast::NewExpr) {
            n.visit_children_with(self);
            if let Some(args) = &n.type_args {
                self.out.extend(args.params.iter().map(|t| (**t).clone()));
            } else if let Some(Expr::TsAs(cast)) =
                n.args.as_ref().and_then(|a| a.first()).map(|a| Expr::unwrap_parens(&a.expr))
            {
                // `new Writable(null as T | null)`: the cell's type is the cast's.
                self.out.push((*cast.type_ann).clone());
            }
        }
    }
    let mut sites = Sites { main: main.span(), out: Vec::new() };
    module.visit_with(&mut sites);
    sites.out
}

/// The contract of a program: `files[0]` is the entry, the rest its imports.
pub fn program_contract(files: &[(String, String)]) -> Contract {
    program_contract_with(files, &[])
}

/// As [`program_contract`], resolving names the program does not declare
/// against `declarations` (parsed once, shared by every program): the
/// platform's API for `commonfabric`, as the compiler resolves it.
pub fn program_contract_with(files: &[(String, String)], declarations: &[Parsed]) -> Contract {
    let parsed: Vec<Parsed> = files.iter().map(|(p, t)| parse(p, t)).collect();
    let mut env = TypeEnv::with_check_order(&parsed, declarations, &check_order(files, &parsed));
    register_pattern_outputs(&mut env, files, &parsed);
    let mut notes = Vec::new();
    let Some(call) = parsed.first().and_then(pattern_call) else {
        return Contract {
            argument_schema: None,
            result_schema: None,
            inferred: Some("partial".into()),
            notes: vec!["the entry does not default-export a `pattern(...)` call".into()],
        };
    };
    // Name the anonymous types the compiler meets before the contract.
    if let Some(module) = &parsed[0].module {
        for t in schema_sites(module, call) {
            let _ = SchemaGen::new(&env).root(&t);
        }
    }
    // The explicit form, `pattern(fn, argumentSchema, resultSchema)`: the
    // schemas are written out and used as they are.
    if call.type_args.is_none() && call.args.len() >= 3 {
        let argument = env.schema_literal(&call.args[1].expr);
        let result = env.schema_literal(&call.args[2].expr);
        if let (Some(argument_schema), Some(result_schema)) = (argument, result) {
            return Contract {
                argument_schema: Some(argument_schema),
                result_schema: Some(result_schema),
                inferred: None,
                notes: Vec::new(),
            };
        }
        notes.push("the explicit schemas are not literal values; the contract is inferred from the function".into());
    }
    let mut schema_of = |t: Option<&TsType>, what: &str| -> Option<Value> {
        let t = t?;
        let generator = if what == "result" { SchemaGen::for_result(&env) } else { SchemaGen::new(&env) };
        let g = generator.root(t);
        notes.extend(g.unsupported.into_iter().map(|u| format!("{what}: {u}")));
        Some(g.schema)
    };
    let (input, output) = pattern_types(call);
    // A pattern function without parameters takes nothing: the compiler's `false`.
    let takes_nothing = input.is_none()
        && matches!(call.args.first().map(|a| &*a.expr), Some(Expr::Arrow(arrow)) if arrow.params.is_empty());
    let argument_schema = if takes_nothing { Some(Value::Bool(false)) } else { schema_of(input, "argument") };
    let mut result_schema = schema_of(output, "result");
    let mut inferred_result = false;
    if output.is_none() {
        let handlers = module_handlers(&parsed[0]);
        let (schema, result_notes) = infer_result(call, input, &env, &handlers, parsed[0].module.as_ref());
        result_schema = schema;
        notes.extend(result_notes);
        inferred_result = true;
    }
    if let Some(result) = result_schema.as_mut() {
        mark_wrapper_tier(call, parsed[0].module.as_ref(), &env, argument_schema.as_ref(), result);
    }
    let partial = (input.is_none() && !takes_nothing) || !notes.is_empty();
    let inferred = match (partial, inferred_result) {
        (true, _) => Some("partial".to_string()),
        (false, true) => Some("complete".to_string()),
        (false, false) => None,
    };
    Contract { argument_schema, result_schema, inferred, notes }
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
    fn inferred_result_reads_fields_of_the_whole_input_parameter() {
        let entry = r#"import { pattern, NAME } from "commonfabric";
interface State { value: number | Default<0>; label: string }
export default pattern<State>((state) => ({ [NAME]: "Counter", value: state.value, label: state.label }));
"#;
        let c = program_contract(&[("main.tsx".into(), entry.into())]);
        let result = c.result_schema.unwrap();
        assert_eq!(result["properties"]["value"], serde_json::json!({"type": "number"}));
        assert_eq!(result["properties"]["label"], serde_json::json!({"type": "string"}));
        assert_eq!(c.inferred.as_deref(), Some("complete"), "{:?}", c.notes);

        // An optional field with a default is present once destructured; one
        // without may be undefined, which needs a checker.
        let entry = r#"import { pattern, NAME } from "commonfabric";
interface Input { title?: string | Default<"Untitled">; note?: string }
export default pattern<Input>(({ title, note }) => ({ [NAME]: title, note }));
"#;
        let c = program_contract(&[("main.tsx".into(), entry.into())]);
        assert_eq!(c.result_schema.unwrap()["properties"]["$NAME"], serde_json::json!({"type": "string"}));
        assert!(c.notes.iter().any(|n| n.contains("`note`")), "{:?}", c.notes);
    }

    #[test]
    fn inferred_result_reads_module_constants_tuples_and_unbound_handlers() {
        let entry = r#"import { handler, pattern, NAME, Writable } from "commonfabric";
const TITLES = ["a", "b", "c"] as const;
export const COUNT = 14;
const bump = handler<unknown, { n: number }>((_, s) => {});
export default pattern<Record<string, never>>(() => {
  const shown = [1, 2];
  const draft = new Writable("");
  const items = Writable.of<string[]>([]);
  const named = new Writable<number[]>([]).for("named");
  return { titles: TITLES.length, count: COUNT, shown: shown.length, bump, draft, items, named };
});
"#;
        let c = program_contract(&[("main.tsx".into(), entry.into())]);
        let p = &c.result_schema.unwrap()["properties"];
        assert_eq!(p["titles"], serde_json::json!({"type": "number", "enum": [3]}));
        assert_eq!(p["count"], serde_json::json!({"type": "number"}));
        assert_eq!(p["shown"], serde_json::json!({"type": "number"}));
        assert_eq!(p["bump"], serde_json::json!({"asCell": ["stream"]}));
        // Cells made in the body unwrap in the result.
        assert_eq!(p["draft"], serde_json::json!({"type": "string"}));
        assert_eq!(p["items"], serde_json::json!({"type": "array", "items": {"type": "string"}}));
        assert_eq!(p["named"], serde_json::json!({"type": "array", "items": {"type": "number"}}));
    }

    #[test]
    fn inferred_result_reads_computed_returns_function_types_and_factory_outputs() {
        let child = r#"import { pattern, UI } from "commonfabric";
export interface ChildOutput { ui: { preview: number; label?: string }; count: number }
const Child = pattern<Record<string, never>, ChildOutput>(() => ({ ui: { preview: 1 }, count: 0 }));
export default Child;
"#;
        let entry = r#"import { computed, pattern, NAME } from "commonfabric";
import Child from "./child.tsx";
interface Item { price: number }
interface Node { label: string; children: Node[] }
const TREE: Node = { label: "root", children: [] };
function show(node: Node): any { return node; }
declare const talk: (params: unknown) => { pending: boolean };
interface Job<T> { busy: boolean; value?: T }
declare const run: <T>(params: unknown) => Job<T>;
const totals = (items: Item[]): Item[] => items;
function label(n: number): string { return `${n}`; }
export default pattern<{ items: Item[] }>(({ items }) => {
  const child = Child({});
  const { ui } = child;
  const { pending: busy } = talk({});
  const shown = TREE.children.map(show);
  const tools: Record<string, number> = {};
  const kept = computed(() => totals(items).filter((i) => i.price > 0));
  const sum = computed(() => {
    if (items.length === 0) return 0;
    return items.reduce((acc, i) => acc + i.price, 0);
  });
  const mixed = computed(() => (items.length > 1 ? "many" : 1));
  const byName = computed(() => {
    const out: Record<string, number> = {};
    if (!items) return {};
    return out;
  });
  return {
    kept, sum, byName, tools, mixed, busy, shown,
    text: computed(() => label(items.length)),
    preview: ui.preview,
    count: child.count,
    flags: items.map((i) => i.price > 1),
    rows: items.map((i) => ({ cost: i.price, at: label(i.price), state: run<Item>({}) })),
  };
});
"#;
        let c = program_contract(&[("main.tsx".into(), entry.into()), ("child.tsx".into(), child.into())]);
        let result = c.result_schema.unwrap();
        let p = &result["properties"];
        // `map` types its callback's parameter with the element type; an
        // object literal is its properties' types; a declared builtin's
        // result is its (instantiated) return type, where an optional member
        // typed by the type parameter keeps `undefined`.
        assert_eq!(
            p["rows"],
            serde_json::json!({"type": "array", "items": {"type": "object",
                "properties": {"cost": {"type": "number"}, "at": {"type": "string"},
                    "state": {"type": "object", "properties": {"busy": {"type": "boolean"},
                        "value": {"anyOf": [{"type": "undefined"}, {"$ref": "#/$defs/Item"}]}},
                        "required": ["busy"]}},
                "required": ["at", "cost", "state"]}})
        );
        let item = serde_json::json!({"type": "array", "items": {"$ref": "#/$defs/Item"}});
        assert_eq!(p["kept"], item);
        assert_eq!(p["sum"], serde_json::json!({"type": "number"}));
        let record =
            serde_json::json!({"type": "object", "properties": {}, "additionalProperties": {"type": "number"}});
        assert_eq!(p["byName"], record);
        assert_eq!(p["tools"], record);
        assert_eq!(p["text"], serde_json::json!({"type": "string"}));
        assert_eq!(p["preview"], serde_json::json!({"type": "number"}));
        assert_eq!(p["count"], serde_json::json!({"type": "number"}));
        assert_eq!(p["flags"], serde_json::json!({"type": "array", "items": {"type": "boolean"}}));
        assert_eq!(p["busy"], serde_json::json!({"type": "boolean"}));
        // `map` over a recursive type's array: decided from the written
        // type, so no definition of `Node` is generated or kept.
        assert_eq!(p["shown"], serde_json::json!({"type": "array", "items": true}));
        assert!(result.get("$defs").and_then(|d| d.get("Node")).is_none(), "{result}");
        // Returns that disagree need a type checker: reported, not guessed.
        assert!(p.get("mixed").is_none(), "{result}");
        assert!(c.notes.iter().any(|n| n.contains("`mixed`")), "{:?}", c.notes);
    }

    #[test]
    fn a_result_mentioning_any_is_rebuilt_with_literal_types() {
        let entry = r#"import { handler, pattern, NAME, PerUser, Default } from "commonfabric";
const poke = handler<{ k: number }, { n: number }>((_, s) => {});
export default pattern<{ n: number }>(({ n }) => {
  return { [NAME]: "Title", n, poke: poke({ n }), loose: [] as any[] };
});
"#;
        let c = program_contract(&[("main.tsx".into(), entry.into())]);
        let p = &c.result_schema.unwrap()["properties"];
        assert_eq!(p["$NAME"], serde_json::json!({"type": "string", "enum": ["Title"]}));
        // Without `any` or a scope, a literal widens.
        let plain = entry.replace(", loose: [] as any[]", "");
        let c = program_contract(&[("main.tsx".into(), plain)]);
        assert_eq!(c.result_schema.unwrap()["properties"]["$NAME"], serde_json::json!({"type": "string"}));
        // A returned input field written with a scope forces the rebuild,
        // and keeps its written type (default included).
        let scoped = r#"import { pattern, NAME, PerUser, Default } from "commonfabric";
export default pattern<{ me: PerUser<string | Default<"">> }>(({ me }) => ({ [NAME]: `Home`, me }));
"#;
        let c = program_contract(&[("main.tsx".into(), scoped.into())]);
        let p = &c.result_schema.unwrap()["properties"];
        assert_eq!(p["$NAME"], serde_json::json!({"type": "string", "enum": ["Home"]}));
        assert_eq!(p["me"], serde_json::json!({"type": "string", "default": "", "scope": "user"}));
    }

    #[test]
    fn session_bound_verbs_are_wrappers_and_deprecated_verbs_are_marked() {
        let entry = r#"import { action, handler, pattern, Stream, Writable } from "commonfabric";
interface Output {
  save: Stream<void>;
  reset: Stream<void>;
  add: Stream<{ text: string }>;
  /** @deprecated Use `save`. */
  store: Stream<void>;
}
const clear = handler<void, { items: Writable<string[]> }>((_, { items }) => items.set([]));
export default pattern<Record<string, never>, Output>(() => {
  const draft = new Writable.perSession("");
  const items = new Writable<string[]>([]);
  const save = action(() => items.push(draft.get()));
  const add = action((e: { text: string }) => draft.set(e.text));
  return { save, reset: clear({ items }), add, store: save };
});
"#;
        let c = program_contract(&[("main.tsx".into(), entry.into())]);
        let p = &c.result_schema.unwrap()["properties"];
        // `save` captures the session draft and takes no event: a UI wrapper.
        assert_eq!(p["save"]["tier"], serde_json::json!("wrapper"));
        assert_eq!(p["store"]["tier"], serde_json::json!("wrapper"));
        // `reset` binds no session state; `add` has an event of its own.
        assert!(p["reset"].get("tier").is_none(), "{}", p["reset"]);
        assert!(p["add"].get("tier").is_none(), "{}", p["add"]);
        assert_eq!(p["store"]["deprecated"], serde_json::json!(true));
        assert!(p["save"].get("deprecated").is_none());
    }

    #[test]
    fn renamed_imports_resolve_to_the_declared_name() {
        let entry = r#"import { pattern, handler, Stream } from "commonfabric";
import { type Settings as Input, type Item as Entry } from "./types.ts";
interface Output { first: Entry; rate: ReturnType<typeof handler> }
export default pattern<Input, Output>(({ items }) => ({ first: items[0], rate: undefined as any }));
"#;
        let types = "export interface Settings { items: Item[] }\nexport interface Item { name: string }\n";
        let c = program_contract(&[("main.tsx".into(), entry.into()), ("types.ts".into(), types.into())]);
        let arg = c.argument_schema.unwrap();
        // The root is inlined; the item is hoisted under its declared name.
        assert_eq!(arg["properties"]["items"]["items"], serde_json::json!({"$ref": "#/$defs/Item"}));
        let result = c.result_schema.unwrap();
        assert_eq!(result["properties"]["first"], serde_json::json!({"$ref": "#/$defs/Item"}));
        assert_eq!(result["properties"]["rate"], serde_json::json!({"asCell": ["stream"]}));
    }

    /// The platform's `generate` and `fetchJson`, declared as its API does.
    fn generate_and_fetch_declarations() -> Parsed {
        parse(
            "commonfabric/index.ts",
            "export interface GenerateState { pending: boolean; result?: string }\n\
             export type GenerateFunction = (params: { prompt: string }) => Reactive<GenerateState>;\n\
             export declare const generate: GenerateFunction;\n\
             export type FetchJsonFunction = <T>(params: { url: string }) => Reactive<{ pending: boolean; result: T }>;\n\
             export declare const fetchJson: FetchJsonFunction;\n",
        )
    }

    #[test]
    fn nullish_coalescing_is_its_left_side_when_that_is_never_nullish() {
        let entry = r#"import { computed, fetchJson, generate, pattern } from "commonfabric";
interface Repo { name: string }
export default pattern<Record<string, never>>(() => {
  const fetched = fetchJson<Repo>({ url: "x" });
  const data = fetched.result;
  const answer = generate({ prompt: "hi" });
  const shown = computed(() => data ?? { name: "Unknown" });
  const count = 3 ?? "none";
  const text = answer.result ?? "…";
  return { shown, count, text };
});
"#;
        let api = generate_and_fetch_declarations();
        let c = program_contract_with(&[("main.tsx".into(), entry.into())], &[api]);
        let result = c.result_schema.clone().unwrap();
        let p = &result["properties"];
        // A never-nullish left side is the whole type (TypeScript's rule).
        assert_eq!(p["shown"], serde_json::json!({"$ref": "#/$defs/Repo"}), "{result:#}");
        assert_eq!(p["count"], serde_json::json!({"type": "number"}));
        // An optional left side would need the checker's union reduction: not guessed.
        assert!(p.get("text").is_none(), "{result:#}");
        assert!(c.notes.iter().any(|n| n.contains("`text` needs a type checker")), "{:?}", c.notes);
    }

    #[test]
    fn builtin_results_resolve_through_declared_function_types() {
        let entry = r#"import { fetchJson, generate, pattern } from "commonfabric";
interface Repo { name: string }
export default pattern<Record<string, never>>(() => {
  const answer = generate({ prompt: "hi" });
  const repo = fetchJson<Repo>({ url: "x" });
  return { text: answer.result, busy: answer.pending, repo: repo.result };
});
"#;
        let api = generate_and_fetch_declarations();
        let c = program_contract_with(&[("main.tsx".into(), entry.into())], &[api]);
        let p = &c.result_schema.unwrap()["properties"];
        assert_eq!(p["text"], serde_json::json!({"type": ["string", "undefined"]}));
        assert_eq!(p["busy"], serde_json::json!({"type": "boolean"}));
        // A generic builtin is instantiated with the call's type argument.
        assert_eq!(p["repo"], serde_json::json!({"$ref": "#/$defs/Repo"}));
        // Without the declarations it needs a checker, and says so.
        let c = program_contract(&[("main.tsx".into(), entry.into())]);
        assert!(c.notes.iter().any(|n| n.contains("`text`")), "{:?}", c.notes);
    }

    #[test]
    fn return_type_of_a_pattern_factory_is_its_output() {
        let entry = r#"import { pattern } from "commonfabric";
import Child from "./child.tsx";
const Local = pattern<{ a: string }, LocalOut>(({ a }) => ({ b: a }));
interface LocalOut { b: string }
interface Output { child: ReturnType<typeof Child>; local: ReturnType<typeof Local> }
export default pattern<Record<string, never>, Output>(() => ({ child: Child({}), local: Local({ a: "x" }) }));
"#;
        let child = r#"import { pattern } from "commonfabric";
export interface ChildOut { count: number }
export default pattern<Record<string, never>, ChildOut>(() => ({ count: 1 }));
"#;
        let c = program_contract(&[("main.tsx".into(), entry.into()), ("child.tsx".into(), child.into())]);
        let result = c.result_schema.unwrap();
        assert_eq!(result["properties"]["child"], serde_json::json!({"$ref": "#/$defs/ChildOut"}));
        assert_eq!(result["$defs"]["ChildOut"]["required"], serde_json::json!(["count"]));
        assert_eq!(result["properties"]["local"], serde_json::json!({"$ref": "#/$defs/LocalOut"}));
    }

    #[test]
    fn explicit_schemas_are_used_as_written() {
        let entry = r#"import { pattern, NAME, UI } from "commonfabric";
const RESULT = { type: "object", properties: { [NAME]: { type: "string" }, [UI]: true }, required: [NAME, UI] } as const;
export default pattern(() => ({ [NAME]: "x", [UI]: <b /> }), false as const, { ...RESULT });
"#;
        let c = program_contract(&[("main.tsx".into(), entry.into())]);
        assert_eq!(c.argument_schema, Some(serde_json::json!(false)));
        assert_eq!(
            c.result_schema,
            Some(
                serde_json::json!({"type": "object", "properties": {"$NAME": {"type": "string"}, "$UI": true}, "required": ["$NAME", "$UI"]})
            )
        );
        assert_eq!(c.inferred, None);
    }

    #[test]
    fn anonymous_types_met_in_the_body_are_named_before_the_contract() {
        // `Node[]` is first met at `wish<Node[]>` (root: the array, then
        // `Node`, whose `children` is the array again: a cycle), and
        // `Node | null` at the cast, so both are named before the contract,
        // in that order, and the contract refers to them.
        let entry = r##"import { pattern, wish, Writable, Default } from "commonfabric";
interface Node { label: string; parent: Node | null; children: Node[] }
interface Input { root: Node | Default<null>; all: Node[] }
export default pattern<Input, Node>(({ root }) => {
  const found = wish<Node[]>({ query: "#node" });
  const current = new Writable(null as Node | null);
  return root;
});
"##;
        let c = program_contract(&[("main.tsx".into(), entry.into())]);
        let arg = c.argument_schema.unwrap();
        assert_eq!(
            arg["$defs"]["AnonymousType_1"],
            serde_json::json!({"type": "array", "items": {"$ref": "#/$defs/Node"}})
        );
        assert_eq!(
            arg["$defs"]["AnonymousType_2"],
            serde_json::json!({"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]})
        );
        assert_eq!(arg["properties"]["all"], serde_json::json!({"$ref": "#/$defs/AnonymousType_1"}));
        assert_eq!(
            arg["$defs"]["Node"]["properties"]["parent"],
            serde_json::json!({"$ref": "#/$defs/AnonymousType_2"})
        );
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

        let inline = r#"import { pattern, NAME, UI } from "commonfabric";
export default pattern(({ a }: { a: string }) => ({ [NAME]: "A", [UI]: <b>{a}</b>, a }));
"#;
        let c = program_contract(&[("x.tsx".into(), inline.into())]);
        assert_eq!(c.argument_schema.unwrap()["properties"]["a"], serde_json::json!({"type": "string"}));
        let result = c.result_schema.unwrap();
        assert_eq!(result["properties"]["$NAME"], serde_json::json!({"type": "string"}));
        assert_eq!(result["properties"]["$UI"], serde_json::json!({"$ref": "#/$defs/JSXElement"}));
        assert_eq!(result["properties"]["a"], serde_json::json!({"type": "string"}));
        assert!(result["$defs"]["UIRenderable"].is_object());
        assert_eq!(c.inferred.as_deref(), Some("complete"), "{:?}", c.notes);

        let named = r#"import { computed, pattern, str, NAME } from "commonfabric";
export default pattern(({ a }: { a: string }) => ({ [NAME]: computed(() => a), label: str`x ${a}` }));
"#;
        let c = program_contract(&[("x.tsx".into(), named.into())]);
        let result = c.result_schema.unwrap();
        assert_eq!(result["properties"]["$NAME"], serde_json::json!({"type": "string"}));
        assert_eq!(result["properties"]["label"], serde_json::json!({"type": "string"}));

        let nothing =
            "import { pattern, NAME } from \"commonfabric\";\nexport default pattern(() => ({ [NAME]: \"Hi\" }));\n";
        let c = program_contract(&[("x.tsx".into(), nothing.into())]);
        assert_eq!(c.argument_schema, Some(serde_json::Value::Bool(false)), "no parameter: takes nothing");
        assert_eq!(c.inferred.as_deref(), Some("complete"), "{:?}", c.notes);

        let streams = r#"import { action, handler, pattern, Writable } from "commonfabric";
const add = handler<{ n: number }, { total: Writable<number> }>(({ n }, { total }) => total.set(total.get() + n));
export default pattern(({ total }: { total: Writable<number> }) => {
  const addIt = add({ total });
  const reset = action(() => total.set(0));
  return { addIt, reset };
});
"#;
        let c = program_contract(&[("x.tsx".into(), streams.into())]);
        let result = c.result_schema.unwrap();
        assert_eq!(
            result["properties"]["addIt"],
            serde_json::json!({"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"], "asCell": ["stream"]})
        );
        assert_eq!(result["properties"]["reset"], serde_json::json!({"asCell": ["stream", "opaque"]}));

        let opaque = r#"import { pattern } from "commonfabric";
import { describe } from "./elsewhere.ts";
export default pattern(({ a }: { a: string }) => ({ n: describe(a), size: a.length }));
"#;
        let c = program_contract(&[("x.tsx".into(), opaque.into())]);
        assert_eq!(c.result_schema.as_ref().unwrap()["properties"]["size"], serde_json::json!({"type": "number"}));
        assert_eq!(c.inferred.as_deref(), Some("partial"), "a guess is never presented as exact");
        assert!(c.notes.iter().any(|n| n.contains("`n` needs a type checker")), "{:?}", c.notes);
    }
}

#[cfg(test)]
mod property_tests {
    use super::*;
    use proptest::prelude::*;

    /// Fragments of pattern programs; random sequences of them make programs
    /// that are often broken and sometimes cyclic, in the forms the schema
    /// generator handles.
    const FRAGMENTS: [&str; 40] = [
        "interface A {",
        "interface B extends A {",
        "interface L extends ReadonlyArray<A> {}",
        "a: string;",
        "b?: A | null;",
        "c: A[];",
        "d: \"x\" | \"y\" | Default<\"x\">;",
        "e: Writable<B | null>;",
        "f: Record<number, A>;",
        "g: Omit<A, \"a\">;",
        "h: (typeof C)[number];",
        "i: ReturnType<typeof h>;",
        "j: A[\"a\"];",
        "k: Reactive<Stream<A>>;",
        "}",
        "type T = A | T[] | null;",
        "type U = T | boolean | any;",
        "const C = [\"p\", 1, true] as const;",
        "const h = handler<void, { n: Writable<number> }>((_, s) => {});",
        "const P = pattern<A, B>(() => ({}));",
        "import Child from \"./b.tsx\";",
        "import { A as Z } from \"./b.tsx\";",
        "export default pattern<A, B>((state) => {",
        "export default pattern(({ a }: A) => ({ a, n: C.length }), false as const, { type: \"object\" });",
        "const draft = new Writable.perSession(\"\");",
        "const s = action(() => draft.get());",
        "const w = wish<A[]>({ query: \"#a\" });",
        "const r = generateText({ prompt: \"q\" });",
        "return { [NAME]: \"n\", [UI]: <div />, s, t: r.result, c: Child({}).x, v: state.a };",
        "});",
        "(",
        ")",
        "{",
        ";",
        "<",
        ">",
        "|",
        "&",
        "Default<",
        "Z",
    ];

    /// Type forms for the fields of a well-formed program whose types refer
    /// to each other (so cycles through arrays, unions and aliases arise).
    const TYPES: [&str; 24] = [
        "string",
        "A",
        "B | null",
        "A[]",
        "T",
        "T | null",
        "\"x\" | \"y\" | Default<\"y\">",
        "number | Default<3>",
        "Writable<B | null>",
        "Writable<A[] | Default<[]>>",
        "Record<number, A>",
        "Record<string, T>",
        "Omit<A, \"f0\">",
        "Pick<B, \"f1\" | \"f2\">",
        "(typeof C)[number]",
        "ReturnType<typeof h>",
        "A[\"f0\"]",
        "Reactive<Stream<A>>",
        "L",
        "any | Default<null>",
        "boolean | string | null",
        "Partial<B>",
        "PerSession<Writable<string>>",
        "Z",
    ];

    fn program(a: &[usize], b: &[usize], t: &[usize]) -> String {
        let fields =
            |ix: &[usize]| ix.iter().enumerate().map(|(n, &i)| format!("  f{n}: {};\n", TYPES[i])).collect::<String>();
        let alias = t.iter().map(|&i| TYPES[i]).collect::<Vec<_>>().join(" | ");
        let alias = if alias.is_empty() { "A".to_string() } else { alias };
        format!(
            "import {{ pattern, handler, Writable }} from \"commonfabric\";\n\
             import {{ A as Z }} from \"./a.tsx\";\n\
             const C = [\"p\", \"q\"] as const;\n\
             const h = handler<void, {{ n: Writable<number> }}>((_, s) => {{}});\n\
             interface A {{\n{}}}\ninterface B extends A {{\n{}}}\n\
             interface L extends ReadonlyArray<A> {{}}\ntype T = {alias};\n\
             export default pattern<A, B>((state) => {{\n  const w = wish<T[]>({{ query: \"#t\" }});\n  return {{ ...state }};\n}});\n",
            fields(a),
            fields(b)
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        #[test]
        fn contracts_of_well_formed_cyclic_programs_never_panic(
            a in proptest::collection::vec(0..TYPES.len(), 0..6),
            b in proptest::collection::vec(0..TYPES.len(), 0..6),
            t in proptest::collection::vec(0..TYPES.len(), 0..4),
        ) {
            let text = program(&a, &b, &t);
            let c = program_contract(&[("a.tsx".to_string(), text.clone())]);
            // A well-formed program always yields both schemas.
            prop_assert!(c.argument_schema.is_some(), "{text}");
            prop_assert!(c.result_schema.is_some(), "{text}");
        }

        #[test]
        fn contracts_never_panic_on_broken_or_cyclic_programs(
            entry in proptest::collection::vec(0..FRAGMENTS.len(), 0..40),
            other in proptest::collection::vec(0..FRAGMENTS.len(), 0..20),
        ) {
            let text = |ix: &[usize]| ix.iter().map(|&i| FRAGMENTS[i]).collect::<Vec<_>>().join("\n");
            let files = [("a.tsx".to_string(), text(&entry)), ("b.tsx".to_string(), text(&other))];
            let _ = program_contract(&files);
            let api = [parse("commonfabric/index.ts", &text(&other))];
            let _ = program_contract_with(&files, &api);
        }
    }
}
