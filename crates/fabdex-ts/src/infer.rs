//! The schema of an expression's type, for the forms whose type syntax
//! decides without a type checker: literals and operators, calls of
//! functions with a written return type, `computed(() => …)` through its
//! returns, array methods that keep or fix their type, and names bound to
//! any of these. Anything else is `None`, and the caller reports it as
//! needing a type checker rather than guessing.

use std::collections::HashMap;

use serde_json::{Value, json};
use swc_ecma_ast::{
    ArrowExpr, ArrowFunctionBody, BinExpr, BinaryOp, CallExpr, Callee, Decl, Expr, Lit, MemberExpr, MemberProp,
    ObjectLit, Pat, Stmt, TsType, UnaryOp,
};

use crate::schema::{SchemaGen, has_default};
use crate::walk::{for_each_nested_statement, pattern_names};

/// How deep names may lead through their initializers.
const MAX_DEPTH: usize = 12;

/// What a name is bound to.
#[derive(Clone, Copy)]
pub(crate) enum Binding<'a> {
    /// `const x = init` (or `let`).
    Init(&'a Expr),
    /// `const x: T = …`: the written type decides.
    Typed(&'a TsType),
    /// `const { field: x } = init`.
    Field(&'a Expr, &'a str),
}

/// The names an expression can see, innermost scope last.
pub(crate) struct Scope<'a> {
    /// Bindings, one map per function body (the module's first).
    frames: Vec<HashMap<&'a str, Binding<'a>>>,
    /// The pattern's input type and the field names its parameter binds.
    input: Option<&'a TsType>,
    params: Vec<String>,
    /// Parameters of the callbacks being read: their types are unknown.
    hidden: Vec<String>,
}

impl<'a> Scope<'a> {
    /// `module` and `body` are the module's and the pattern body's bindings;
    /// `params` the input fields the pattern's parameter destructures.
    pub(crate) fn new(
        module: HashMap<&'a str, Binding<'a>>,
        body: HashMap<&'a str, Binding<'a>>,
        input: Option<&'a TsType>,
        params: Vec<String>,
    ) -> Self {
        Scope { frames: vec![module, body], input, params, hidden: Vec::new() }
    }

    /// The written type of a name bound in the module or the pattern body.
    pub(crate) fn written_type(&self, name: &str) -> Option<&'a TsType> {
        match self.binding(name)? {
            Binding::Typed(t) => Some(t),
            Binding::Init(_) | Binding::Field(..) => None,
        }
    }

    fn binding(&self, name: &str) -> Option<Binding<'a>> {
        self.frames.iter().rev().find_map(|f| f.get(name).copied())
    }
}

/// The schema of `e`'s type, or `None` when syntax does not decide it.
pub(crate) fn expr_schema<'a>(e: &'a Expr, scope: &mut Scope<'a>, generator: &mut SchemaGen<'_, 'a>) -> Option<Value> {
    schema_at(e, scope, generator, 0)
}

fn string() -> Value {
    json!({ "type": "string" })
}
fn number() -> Value {
    json!({ "type": "number" })
}
fn boolean() -> Value {
    json!({ "type": "boolean" })
}

fn is_array(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("array")
}

/// `f(…).field`, where `f` is a builtin declared with a function type (with
/// the platform's API declarations) or a pattern factory with a known output.
pub(crate) fn call_member<'a>(init: &'a Expr, field: &str, g: &mut SchemaGen<'_, 'a>) -> Option<Value> {
    let Expr::Call(c) = Expr::unwrap_parens(init) else { return None };
    let Callee::Expr(callee) = &c.callee else { return None };
    let Expr::Ident(f) = &**callee else { return None };
    let type_args: Vec<&TsType> = c.type_args.iter().flat_map(|a| a.params.iter().map(|b| &**b)).collect();
    g.declared_call_member(&f.sym, field, &type_args).or_else(|| g.pattern_call_member(&f.sym, field))
}

fn schema_at<'a>(e: &'a Expr, scope: &mut Scope<'a>, g: &mut SchemaGen<'_, 'a>, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let again = |e: &'a Expr, scope: &mut Scope<'a>, g: &mut SchemaGen<'_, 'a>| schema_at(e, scope, g, depth + 1);
    match e {
        Expr::Paren(p) => again(&p.expr, scope, g),
        Expr::TsNonNull(n) => again(&n.expr, scope, g),
        Expr::TsSatisfies(s) => again(&s.expr, scope, g),
        Expr::TsAs(a) => Some(g.ty(&a.type_ann)),
        Expr::Lit(Lit::Str(_)) | Expr::Tpl(_) => Some(string()),
        Expr::Lit(Lit::Num(_)) => Some(number()),
        Expr::Lit(Lit::Bool(_)) => Some(boolean()),
        Expr::Unary(u) => unary_schema(u.op),
        Expr::Bin(b) => binary_schema(b, scope, g, depth),
        Expr::Object(o) => object_literal_schema(o, scope, g, depth),
        Expr::Cond(c) => {
            let (a, b) = (again(&c.cons, scope, g)?, again(&c.alt, scope, g)?);
            (a == b).then_some(a)
        }
        Expr::Ident(id) => name_at(&id.sym, scope, g, depth),
        Expr::Member(m) => member_schema(e, m, scope, g, depth),
        Expr::Call(c) => call_schema(c, scope, g, depth),
        _ => None,
    }
}

/// The schema of a unary operator's result, which the operator alone decides.
fn unary_schema(op: UnaryOp) -> Option<Value> {
    match op {
        UnaryOp::Bang => Some(boolean()),
        UnaryOp::TypeOf => Some(string()),
        UnaryOp::Minus | UnaryOp::Plus | UnaryOp::Tilde => Some(number()),
        _ => None,
    }
}

/// The schema of a binary operator's result: fixed by the operator, or for
/// `+` by its operands (`depth` is the binary expression's).
fn binary_schema<'a>(b: &'a BinExpr, scope: &mut Scope<'a>, g: &mut SchemaGen<'_, 'a>, depth: usize) -> Option<Value> {
    match b.op {
        BinaryOp::Sub
        | BinaryOp::Mul
        | BinaryOp::Div
        | BinaryOp::Mod
        | BinaryOp::Exp
        | BinaryOp::BitAnd
        | BinaryOp::BitOr
        | BinaryOp::BitXor
        | BinaryOp::LShift
        | BinaryOp::RShift
        | BinaryOp::ZeroFillRShift => Some(number()),
        BinaryOp::EqEq
        | BinaryOp::NotEq
        | BinaryOp::EqEqEq
        | BinaryOp::NotEqEq
        | BinaryOp::Lt
        | BinaryOp::LtEq
        | BinaryOp::Gt
        | BinaryOp::GtEq
        | BinaryOp::In
        | BinaryOp::InstanceOf => Some(boolean()),
        BinaryOp::Add => {
            let (l, r) = (schema_at(&b.left, scope, g, depth + 1), schema_at(&b.right, scope, g, depth + 1));
            if l == Some(string()) || r == Some(string()) {
                Some(string())
            } else if l == Some(number()) && r == Some(number()) {
                Some(number())
            } else {
                None
            }
        }
        // TypeScript types `a ?? b` as `a`'s type when `a` can never be null
        // or undefined; otherwise as `a`'s non-null part and `b`'s type
        // reduced to a union by subtype, which needs the checker.
        BinaryOp::NullishCoalescing => {
            let left = schema_at(&b.left, scope, g, depth + 1)?;
            g.never_nullish(&left).then_some(left)
        }
        _ => None,
    }
}

/// An object literal: each property's type, all required (`depth` is the
/// literal's).
fn object_literal_schema<'a>(
    o: &'a ObjectLit,
    scope: &mut Scope<'a>,
    g: &mut SchemaGen<'_, 'a>,
    depth: usize,
) -> Option<Value> {
    let mut properties = serde_json::Map::new();
    for p in &o.props {
        let swc_ecma_ast::PropOrSpread::Prop(p) = p else { return None };
        let (key, schema) = match &**p {
            swc_ecma_ast::Prop::KeyValue(kv) => {
                let key = match &kv.key {
                    swc_ecma_ast::PropName::Ident(i) => i.sym.to_string(),
                    swc_ecma_ast::PropName::Str(s) => s.value.to_string_lossy().into_owned(),
                    _ => return None,
                };
                (key, schema_at(&kv.value, scope, g, depth + 1)?)
            }
            swc_ecma_ast::Prop::Shorthand(id) => (id.sym.to_string(), name_at(&id.sym, scope, g, depth + 1)?),
            _ => return None,
        };
        properties.insert(key, schema);
    }
    let required: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
    let mut schema = json!({ "type": "object", "properties": properties });
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    Some(schema)
}

/// A member access `e` (which is `m`): `.length` of an array or string, a
/// field of a bound builtin or factory call, or a field's written type.
fn member_schema<'a>(
    e: &'a Expr,
    m: &'a MemberExpr,
    scope: &mut Scope<'a>,
    g: &mut SchemaGen<'_, 'a>,
    depth: usize,
) -> Option<Value> {
    match &m.prop {
        MemberProp::Ident(p) if p.sym == *"length" => {
            let target = schema_at(&m.obj, scope, g, depth + 1)?;
            (is_array(&target) || target == string()).then(number)
        }
        MemberProp::Ident(p) => {
            let bound_call = match Expr::unwrap_parens(&m.obj) {
                Expr::Ident(id) => match scope.binding(&id.sym) {
                    Some(Binding::Init(init)) => Some(init),
                    _ => None,
                },
                _ => None,
            };
            bound_call
                .and_then(|init| call_member(init, &p.sym, g))
                .or_else(|| declared_type(e, scope, g, depth).map(|t| g.ty(t)))
        }
        _ => None,
    }
}

/// A call: of a function by name, or of a method (`depth` is the call's).
fn call_schema<'a>(c: &'a CallExpr, scope: &mut Scope<'a>, g: &mut SchemaGen<'_, 'a>, depth: usize) -> Option<Value> {
    let Callee::Expr(callee) = &c.callee else { return None };
    match &**callee {
        Expr::Ident(f) => named_call_schema(c, f.sym.as_ref(), scope, g, depth),
        Expr::Member(m) => method_call_schema(c, m, scope, g, depth),
        _ => None,
    }
}

/// A call of the function `name`: a local arrow with a written return type,
/// a conversion builtin, `computed(…)`, or a function declared with its
/// return type.
fn named_call_schema<'a>(
    c: &'a CallExpr,
    name: &'a str,
    scope: &mut Scope<'a>,
    g: &mut SchemaGen<'_, 'a>,
    depth: usize,
) -> Option<Value> {
    if scope.hidden.iter().any(|h| h == name) {
        return None;
    }
    match scope.binding(name) {
        Some(Binding::Init(Expr::Arrow(a))) if a.type_params.is_none() => {
            return a.return_type.as_ref().map(|r| g.ty(&r.type_ann));
        }
        // `declare const f: (…) => R`: read below, as declared.
        Some(Binding::Typed(TsType::TsFnOrConstructorType(_) | TsType::TsTypeRef(_))) => {}
        Some(_) => return None,
        None => {}
    }
    match name {
        "String" => return Some(string()),
        "Number" | "parseInt" | "parseFloat" => return Some(number()),
        "Boolean" | "isNaN" | "isFinite" => return Some(boolean()),
        "computed" => {
            if let Some(t) = c.type_args.as_ref().and_then(|a| a.params.first()) {
                return Some(g.ty(t));
            }
            let Expr::Arrow(arrow) = &*c.args.first()?.expr else { return None };
            return arrow_return(arrow, scope, g, depth + 1);
        }
        _ => {}
    }
    if let Some(t) = g.env().function_return(name) {
        return Some(g.ty(t));
    }
    // A builtin declared with a function type (with the platform's
    // API declarations): what it returns, instantiated with the
    // call's type arguments.
    let type_args: Vec<&TsType> = c.type_args.iter().flat_map(|a| a.params.iter().map(|b| &**b)).collect();
    g.declared_call_result(name, &type_args)
}

/// A method call `m(…)`: a static builtin (`Math.…`, `JSON.stringify`), or a
/// method whose name fixes its type or keeps its target's.
fn method_call_schema<'a>(
    c: &'a CallExpr,
    m: &'a MemberExpr,
    scope: &mut Scope<'a>,
    g: &mut SchemaGen<'_, 'a>,
    depth: usize,
) -> Option<Value> {
    let MemberProp::Ident(method) = &m.prop else { return None };
    let method = method.sym.as_ref();
    if let Expr::Ident(obj) = &*m.obj {
        match (obj.sym.as_ref(), method) {
            ("Math", _) => return Some(number()),
            ("Object", "keys") => return Some(json!({ "type": "array", "items": string() })),
            ("JSON", "stringify") => return Some(string()),
            ("Array", "isArray") | ("Number", "isFinite" | "isInteger" | "isNaN") => {
                return Some(boolean());
            }
            ("Date", "now") => return Some(number()),
            _ => {}
        }
    }
    match method {
        "some" | "every" | "includes" | "startsWith" | "endsWith" | "has" | "test" => Some(boolean()),
        "join" | "toFixed" | "toString" | "trim" | "trimStart" | "trimEnd" | "toLowerCase" | "toUpperCase"
        | "padStart" | "padEnd" | "toISOString" | "toLocaleString" | "toLocaleDateString" | "toLocaleTimeString"
        | "repeat" | "replace" | "replaceAll" | "charAt" | "substring" => Some(string()),
        "indexOf" | "lastIndexOf" | "findIndex" | "findLastIndex" | "getTime" | "localeCompare" | "charCodeAt" => {
            Some(number())
        }
        // These keep the array's (or string's) type.
        "filter" | "sort" | "slice" | "reverse" | "toSorted" | "toReversed" | "concat" => {
            let target = schema_at(&m.obj, scope, g, depth + 1)?;
            (is_array(&target) || target == string()).then_some(target)
        }
        "reduce" => {
            let init = c.args.get(1)?;
            schema_at(&init.expr, scope, g, depth + 1)
        }
        "map" => map_call_schema(c, m, scope, g, depth),
        _ => None,
    }
}

/// `target.map(callback)` on an array: an array of what the callback returns.
fn map_call_schema<'a>(
    c: &'a CallExpr,
    m: &'a MemberExpr,
    scope: &mut Scope<'a>,
    g: &mut SchemaGen<'_, 'a>,
    depth: usize,
) -> Option<Value> {
    // Decided from the written type when there is one,
    // so no schema is generated for the target itself.
    let declared = declared_type(&m.obj, scope, g, depth + 1);
    let element = declared.and_then(|t| array_element(t, 0));
    let array = match declared {
        Some(_) => element.is_some(),
        None => schema_at(&m.obj, scope, g, depth + 1).is_some_and(|t| is_array(&t)),
    };
    if !array {
        return None;
    }
    let item = match &*c.args.first()?.expr {
        Expr::Ident(f) => g.env().function_return(&f.sym).map(|t| g.ty(t))?,
        Expr::Arrow(arrow) => map_callback_item(arrow, element, scope, g, depth)?,
        _ => return None,
    };
    Some(json!({ "type": "array", "items": item }))
}

/// What a `map` callback returns, its first parameter bound to the element
/// type (`element`, when known) or to its own written type.
fn map_callback_item<'a>(
    arrow: &'a ArrowExpr,
    element: Option<&'a TsType>,
    scope: &mut Scope<'a>,
    g: &mut SchemaGen<'_, 'a>,
    depth: usize,
) -> Option<Value> {
    // The callback's first parameter is the element.
    let typed = match (arrow.params.first(), element) {
        (Some(Pat::Ident(p)), Some(t)) if p.type_ann.is_none() => Some((p.id.sym.as_ref(), Binding::Typed(t))),
        (Some(Pat::Ident(p)), _) => p.type_ann.as_ref().map(|a| (p.id.sym.as_ref(), Binding::Typed(&a.type_ann))),
        _ => None,
    };
    match typed {
        Some((name, binding)) => {
            scope.frames.push(HashMap::from([(name, binding)]));
            let hidden_rest: Vec<&Pat> = arrow.params.iter().skip(1).collect();
            let before = scope.hidden.len();
            scope.hidden.extend(hidden_rest.into_iter().flat_map(pattern_names));
            let out = arrow_body(arrow, scope, g, depth + 1);
            scope.hidden.truncate(before);
            scope.frames.pop();
            out
        }
        None => arrow_return(arrow, scope, g, depth + 1),
    }
}

/// The schema of a name's type (see [`expr_schema`]).
pub(crate) fn name_schema<'a>(name: &str, scope: &mut Scope<'a>, g: &mut SchemaGen<'_, 'a>) -> Option<Value> {
    name_at(name, scope, g, 0)
}

fn name_at<'a>(name: &str, scope: &mut Scope<'a>, g: &mut SchemaGen<'_, 'a>, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH || scope.hidden.iter().any(|h| h == name) {
        return None;
    }
    match scope.binding(name) {
        Some(Binding::Typed(t)) => Some(g.ty(t)),
        Some(Binding::Init(init)) => {
            schema_at(init, scope, g, depth + 1).or_else(|| declared_type(init, scope, g, depth + 1).map(|t| g.ty(t)))
        }
        Some(Binding::Field(init, field)) => call_member(init, field, g).or_else(|| {
            let (t, optional) = g.member_type(declared_type(init, scope, g, depth + 1)?, field)?;
            (!optional).then(|| g.ty(t))
        }),
        None if scope.params.iter().any(|p| p == name) => input_field(scope.input?, name, g),
        None => None,
    }
}

/// The written type an expression has, followed through names and fields:
/// a name with a written type, a call of a pattern factory (its output
/// type), and a field of either (`const { ui } = tracker`, `ui.previewUI`).
fn declared_type<'a>(e: &'a Expr, scope: &Scope<'a>, g: &SchemaGen<'_, 'a>, depth: usize) -> Option<&'a TsType> {
    if depth > MAX_DEPTH {
        return None;
    }
    let field_of = |obj: &'a Expr, field: &str| {
        let (t, optional) = g.member_type(declared_type(obj, scope, g, depth + 1)?, field)?;
        (!optional).then_some(t)
    };
    match e {
        Expr::Paren(p) => declared_type(&p.expr, scope, g, depth + 1),
        Expr::TsNonNull(n) => declared_type(&n.expr, scope, g, depth + 1),
        Expr::Ident(id) if !scope.hidden.iter().any(|h| h == id.sym.as_ref()) => match scope.binding(&id.sym) {
            Some(Binding::Typed(t)) => Some(t),
            Some(Binding::Init(init)) => declared_type(init, scope, g, depth + 1),
            Some(Binding::Field(init, field)) => field_of(init, field),
            // A field of the pattern's input, as written.
            None if scope.params.iter().any(|p| p == id.sym.as_ref()) => {
                g.member_type(scope.input?, &id.sym).map(|(t, _)| t)
            }
            None => None,
        },
        Expr::Member(m) => match &m.prop {
            MemberProp::Ident(p) => field_of(&m.obj, &p.sym),
            _ => None,
        },
        Expr::Call(c) => {
            let Callee::Expr(callee) = &c.callee else { return None };
            let Expr::Ident(f) = &**callee else { return None };
            g.env().pattern_output(&f.sym)
        }
        _ => None,
    }
}

/// The type of what an arrow function returns: its expression body, or the
/// one type all its `return`s agree on. An empty `[]` or `{}` returned
/// beside an array or object of another type is absorbed by it, as the
/// checker's subtype reduction absorbs `never[]` and `{}`.
fn arrow_return<'a>(
    arrow: &'a ArrowExpr,
    scope: &mut Scope<'a>,
    g: &mut SchemaGen<'_, 'a>,
    depth: usize,
) -> Option<Value> {
    let params: Vec<String> = arrow.params.iter().flat_map(pattern_names).collect();
    let hidden_before = scope.hidden.len();
    scope.hidden.extend(params);
    let result = arrow_body(arrow, scope, g, depth);
    scope.hidden.truncate(hidden_before);
    result
}

/// [`arrow_return`] with the parameters already bound (or hidden).
fn arrow_body<'a>(
    arrow: &'a ArrowExpr,
    scope: &mut Scope<'a>,
    g: &mut SchemaGen<'_, 'a>,
    depth: usize,
) -> Option<Value> {
    match &*arrow.body {
        ArrowFunctionBody::Expr(e) => schema_at(e, scope, g, depth),
        ArrowFunctionBody::FunctionBody(block) => {
            let mut frame = HashMap::new();
            let mut returns = Vec::new();
            collect_body(&block.stmts, &mut frame, &mut returns);
            scope.frames.push(frame);
            let result = agree(&returns, scope, g, depth);
            scope.frames.pop();
            result
        }
    }
}

/// The element type of an array type, through `Default<…>` members of a
/// union and the wrappers that keep an array (`Writable<T[]>`, `Default<T[], …>`).
fn array_element(t: &TsType, depth: usize) -> Option<&TsType> {
    if depth > 8 {
        return None;
    }
    match t {
        TsType::TsArrayType(a) => Some(&a.elem_type),
        TsType::TsParenthesizedType(p) => array_element(&p.type_ann, depth + 1),
        TsType::TsTypeOperator(o) => array_element(&o.type_ann, depth + 1),
        TsType::TsTypeRef(r) => {
            let swc_ecma_ast::TsEntityName::Ident(id) = &r.type_name else { return None };
            let first = r.type_params.as_ref().and_then(|p| p.params.first())?;
            match id.sym.as_ref() {
                "Array" | "ReadonlyArray" => Some(first),
                "Writable" | "Cell" | "Default" | "OpaqueRef" | "Reactive" | "ReadonlyCell" | "PerSpace"
                | "PerUser" | "PerSession" => array_element(first, depth + 1),
                _ => None,
            }
        }
        TsType::TsUnionOrIntersectionType(swc_ecma_ast::TsUnionOrIntersectionType::TsUnionType(u)) => {
            let mut members = u.types.iter().filter(|m| {
                !matches!(&***m, TsType::TsTypeRef(r) if matches!(&r.type_name, swc_ecma_ast::TsEntityName::Ident(i) if i.sym == *"Default"))
            });
            let only = members.next()?;
            if members.next().is_some() {
                return None;
            }
            array_element(only, depth + 1)
        }
        _ => None,
    }
}

fn agree<'a>(
    returns: &[Option<&'a Expr>],
    scope: &mut Scope<'a>,
    g: &mut SchemaGen<'_, 'a>,
    depth: usize,
) -> Option<Value> {
    let empty = |e: &Expr| match e {
        Expr::Array(a) if a.elems.is_empty() => Some("array"),
        Expr::Object(o) if o.props.is_empty() => Some("object"),
        _ => None,
    };
    let mut found: Option<Value> = None;
    let mut empties = Vec::new();
    for r in returns {
        let r = (*r)?;
        if let Some(kind) = empty(r) {
            empties.push(kind);
            continue;
        }
        let s = schema_at(r, scope, g, depth)?;
        match &found {
            None => found = Some(s),
            Some(f) if *f == s => {}
            Some(_) => return None,
        }
    }
    let found = found?;
    let kind = found.get("type").and_then(Value::as_str);
    empties.iter().all(|e| Some(*e) == kind).then_some(found)
}

/// The body's `const`/`let` initializers (so later names can be read) and
/// its `return` arguments, through nested blocks but not nested functions.
fn collect_body<'a>(stmts: &'a [Stmt], frame: &mut HashMap<&'a str, Binding<'a>>, returns: &mut Vec<Option<&'a Expr>>) {
    for_each_nested_statement(stmts, &mut |stmt| match stmt {
        Stmt::Return(r) => returns.push(r.arg.as_deref()),
        Stmt::Decl(Decl::Var(v)) => bind_declarators(&v.decls, frame),
        _ => {}
    });
}

/// A destructured input field's type, with its `Default` resolved away (so
/// an optional field with a default is present).
fn input_field<'a>(input: &'a TsType, name: &str, g: &mut SchemaGen<'_, 'a>) -> Option<Value> {
    match g.member_type(input, name)? {
        (t, optional) if !optional || has_default(t) => {
            let mut s = g.ty(t);
            if let Some(map) = s.as_object_mut() {
                map.remove("default");
            }
            Some(s)
        }
        _ => None,
    }
}

/// Bind each `name = init` or `name: T = …` declarator; a written type wins.
pub(crate) fn bind_declarators<'a>(
    decls: &'a [swc_ecma_ast::VarDeclarator],
    frame: &mut HashMap<&'a str, Binding<'a>>,
) {
    for d in decls {
        if let (Pat::Object(o), Some(init)) = (&d.name, &d.init) {
            for prop in &o.props {
                match prop {
                    swc_ecma_ast::ObjectPatProp::Assign(a) if a.value.is_none() => {
                        frame.insert(a.key.sym.as_ref(), Binding::Field(init, a.key.sym.as_ref()));
                    }
                    swc_ecma_ast::ObjectPatProp::KeyValue(kv) => {
                        if let (swc_ecma_ast::PropName::Ident(key), Pat::Ident(local)) = (&kv.key, &*kv.value) {
                            frame.insert(local.id.sym.as_ref(), Binding::Field(init, key.sym.as_ref()));
                        }
                    }
                    _ => {}
                }
            }
            continue;
        }
        let Pat::Ident(id) = &d.name else { continue };
        let binding = match (&id.type_ann, &d.init) {
            (Some(ann), _) => Binding::Typed(&ann.type_ann),
            (None, Some(init)) => Binding::Init(init),
            (None, None) => continue,
        };
        frame.insert(id.id.sym.as_ref(), binding);
    }
}
