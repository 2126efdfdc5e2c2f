//! Contracts: TypeScript types → JSON Schema, following the platform
//! compiler's rules (`docs/specs/schema-generator/ts_to_json_schema_mapping.md`
//! in the Common Fabric docs) as far as they can be applied to syntax alone:
//!
//! - named interfaces, enums and aliases of object/union types hoist into
//!   `$defs` and are referenced with `$ref`; roots stay inline;
//! - `Writable`/`Cell`/`ReadonlyCell`/`WriteonlyCell`/`ComparableCell`/
//!   `OpaqueCell`/`Stream`/`SqliteDb` prepend their brand to `asCell`, `void`
//!   is `{asCell: ["opaque"]}`, `Reactive<T>` is `T`;
//! - `Default<T, V>` and `T | Default<V>` add `default`;
//! - optional properties leave `required`; functions are dropped unless they
//!   return a `Stream`/`Cell`/`SqliteDb`;
//! - `[NAME]`/`[UI]` become `$NAME`/`$UI`; `VNode` is its `$ref`;
//! - JSDoc becomes `description`, and `#hashtags` in it become `tags`.
//!
//! There is no type checker here: what needs one (inferred types, generic
//! instantiation, `typeof`, mapped and conditional types) is reported in
//! `unsupported`, never guessed silently.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value, json};
use swc_common::comments::Comments;
use swc_common::{BytePos, Spanned};
use swc_ecma_ast::{
    Decl, Expr, Lit, ModuleDecl, ModuleItem, Stmt, TsEntityName, TsEnumMemberId, TsKeywordTypeKind, TsLit, TsType,
    TsTypeElement, TsUnionOrIntersectionType,
};

use crate::decls::DeclRef;
use crate::extract::{Parsed, top_level_bindings};
use crate::literal_order::LiteralOrder;

pub const VNODE_REF: &str = "https://commonfabric.org/schemas/vnode.json";

fn wrapper_brand(name: &str) -> Option<&'static str> {
    Some(match name {
        "Cell" | "Writable" => "cell",
        "ReadonlyCell" => "readonly",
        "WriteonlyCell" => "writeonly",
        "ComparableCell" => "comparable",
        "OpaqueCell" => "opaque",
        "Stream" => "stream",
        "SqliteDb" => "sqlite",
        _ => return None,
    })
}

fn scope_of(name: &str) -> Option<&'static str> {
    Some(match name {
        "PerSpace" => "space",
        "PerUser" => "user",
        "PerSession" => "session",
        "PerAny" => "any",
        _ => return None,
    })
}

/// The type declarations of a program's files, by name (first file wins).
pub struct TypeEnv<'a> {
    files: Vec<&'a Parsed>,
    decls: HashMap<String, DeclRef<'a>>,
    /// Synthetic `AnonymousType_N` names of anonymous types found cyclic, by
    /// type identity. Shared by every generator over this program (the
    /// compiler numbers them per generator instance, across the argument and
    /// result schemas).
    anonymous: std::cell::RefCell<Vec<String>>,
    /// The compiler's order for literal union members.
    literals: LiteralOrder,
    /// Local names of renamed imports (`import { A as B }`) → the declared name.
    renames: HashMap<String, String>,
    /// Names bound to pattern factories (`const P = pattern<I, O>(…)`, or a
    /// default import of a program file that exports one) → their output type.
    pattern_outputs: HashMap<String, &'a TsType>,
    /// How many of `files` are the program's own; the rest are declaration
    /// files, whose JSDoc the compiler never carries into a schema.
    program_files: usize,
}

impl<'a> TypeEnv<'a> {
    /// `files[0]` should be the entry: its names take precedence.
    pub fn new(files: &'a [Parsed]) -> TypeEnv<'a> {
        TypeEnv::with_declarations(files, &[])
    }

    /// As [`TypeEnv::new`], with declaration files (the platform's API for
    /// `commonfabric`) consulted after the program's own files.
    pub fn with_declarations(program: &'a [Parsed], declarations: &'a [Parsed]) -> TypeEnv<'a> {
        TypeEnv::with_check_order(program, declarations, &[0])
    }

    /// As [`TypeEnv::with_declarations`], with literals ranked by a full
    /// check of the program's files in `check_order` (indices into
    /// `program`), as the compiler type-checks every file before it
    /// generates any schema.
    pub fn with_check_order(program: &'a [Parsed], declarations: &'a [Parsed], check_order: &[usize]) -> TypeEnv<'a> {
        let files: Vec<&'a Parsed> = program.iter().chain(declarations).collect();
        let mut decls = HashMap::new();
        for (fi, f) in files.iter().enumerate() {
            let Some(module) = &f.module else { continue };
            for item in &module.body {
                let decl = match item {
                    ModuleItem::Stmt(Stmt::Decl(d)) => d,
                    ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(e)) => &e.decl,
                    _ => continue,
                };
                let (name, r) = match decl {
                    Decl::TsInterface(i) => (i.id.sym.to_string(), DeclRef::Interface(fi, i)),
                    Decl::TsTypeAlias(a) => (a.id.sym.to_string(), DeclRef::Alias(fi, a)),
                    Decl::TsEnum(e) => (e.id.sym.to_string(), DeclRef::Enum(e)),
                    _ => continue,
                };
                decls.entry(name).or_insert(r);
            }
        }
        // `import { Original as Local }`: the local name denotes the original declaration.
        let mut renames: HashMap<String, String> = HashMap::new();
        for f in &files {
            let Some(module) = &f.module else { continue };
            for item in &module.body {
                let ModuleItem::ModuleDecl(ModuleDecl::Import(import)) = item else { continue };
                for spec in &import.specifiers {
                    if let swc_ecma_ast::ImportSpecifier::Named(named) = spec
                        && let Some(swc_ecma_ast::ModuleExportName::Ident(original)) = &named.imported
                        && !decls.contains_key(named.local.sym.as_ref())
                        && decls.contains_key(original.sym.as_ref())
                    {
                        renames.insert(named.local.sym.to_string(), original.sym.to_string());
                    }
                }
            }
        }
        let checked = check_order.iter().filter_map(|&i| program.get(i));
        let literals = LiteralOrder::of_files(checked, &decls, &files, program.len());
        TypeEnv {
            files,
            decls,
            renames,
            pattern_outputs: HashMap::new(),
            program_files: program.len(),
            anonymous: Default::default(),
            literals,
        }
    }

    /// The initializer of a top-level `const` (or `let`) named `name` in any
    /// file of the program or its declarations (first file wins).
    fn top_level_const(&self, name: &str) -> Option<&'a Expr> {
        self.files
            .iter()
            .filter_map(|f| f.module.as_ref())
            .find_map(|m| top_level_bindings(m).find(|(n, _)| *n == name))
            .map(|(_, init)| init)
    }

    /// The written return type of a non-generic function named `name` in any
    /// file of the program (first file wins): `function f(…): R`,
    /// `const f = (…): R => …` or `const f = function (…): R {…}`.
    pub(crate) fn function_return(&self, name: &str) -> Option<&'a TsType> {
        self.files[..self.program_files].iter().filter_map(|f| f.module.as_ref()).find_map(|m| {
            m.body.iter().find_map(|item| {
                let decl = match item {
                    ModuleItem::Stmt(Stmt::Decl(d)) => d,
                    ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(e)) => &e.decl,
                    _ => return None,
                };
                match decl {
                    Decl::Fn(f) if f.ident.sym == *name => {
                        let f = &f.function;
                        if f.type_params.is_some() {
                            return None;
                        }
                        f.return_type.as_ref().map(|r| &*r.type_ann)
                    }
                    Decl::Var(v) => v.decls.iter().find_map(|d| match (&d.name, d.init.as_deref()) {
                        (swc_ecma_ast::Pat::Ident(id), Some(init)) if id.id.sym == *name => match init {
                            Expr::Arrow(a) if a.type_params.is_none() => a.return_type.as_ref().map(|r| &*r.type_ann),
                            Expr::Fn(f) if f.function.type_params.is_none() => {
                                f.function.return_type.as_ref().map(|r| &*r.type_ann)
                            }
                            _ => None,
                        },
                        _ => None,
                    }),
                    _ => None,
                }
            })
        })
    }

    /// The compiler's order for this program's literal union members.
    #[cfg(test)]
    pub(crate) fn literal_order(&self) -> &LiteralOrder {
        &self.literals
    }

    /// The output type of the pattern factory bound to `name`, if known.
    pub(crate) fn pattern_output(&self, name: &str) -> Option<&'a TsType> {
        self.pattern_outputs.get(name).copied()
    }

    /// Record the output type of a pattern factory bound to `name`.
    pub fn add_pattern_output(&mut self, name: &str, output: &'a TsType) {
        self.pattern_outputs.entry(name.to_string()).or_insert(output);
    }

    /// The value of a JSON Schema written as a literal (the explicit form
    /// `pattern(fn, argumentSchema, resultSchema)`): object and array
    /// literals, `[NAME]`/`[UI]` keys and elements as `$NAME`/`$UI`, spreads,
    /// and names of top-level constants in the program's files.
    pub fn schema_literal(&self, e: &Expr) -> Option<Value> {
        self.schema_literal_at(e, 0)
    }

    fn schema_literal_at(&self, e: &Expr, depth: usize) -> Option<Value> {
        use swc_ecma_ast::{Prop, PropName, PropOrSpread};
        if depth > 16 {
            return None;
        }
        let constant = |name: &str| self.top_level_const(name).and_then(|init| self.schema_literal_at(init, depth + 1));
        let marker = |name: &str| matches!(name, "NAME" | "UI" | "SELF").then(|| Value::String(format!("${name}")));
        Some(match e {
            Expr::Ident(id) => marker(&id.sym).or_else(|| constant(&id.sym))?,
            Expr::Array(a) => {
                let mut out = Vec::new();
                for el in a.elems.iter().flatten() {
                    match &el.spread {
                        None => out.push(self.schema_literal_at(&el.expr, depth + 1)?),
                        Some(_) => match self.schema_literal_at(&el.expr, depth + 1)? {
                            Value::Array(items) => out.extend(items),
                            _ => return None,
                        },
                    }
                }
                Value::Array(out)
            }
            Expr::Object(o) => {
                let mut map = Map::new();
                for p in &o.props {
                    match p {
                        PropOrSpread::Spread(sp) => match self.schema_literal_at(&sp.expr, depth + 1)? {
                            Value::Object(m) => map.extend(m),
                            _ => return None,
                        },
                        PropOrSpread::Prop(p) => {
                            let Prop::KeyValue(kv) = &**p else { return None };
                            let key = match &kv.key {
                                PropName::Ident(i) => i.sym.to_string(),
                                PropName::Str(s) => s.value.to_string_lossy().into_owned(),
                                PropName::Num(n) => n.value.to_string(),
                                PropName::Computed(c) => match &*c.expr {
                                    Expr::Ident(id) => marker(&id.sym)?.as_str()?.to_string(),
                                    Expr::Lit(Lit::Str(s)) => s.value.to_string_lossy().into_owned(),
                                    _ => return None,
                                },
                                _ => return None,
                            };
                            map.insert(key, self.schema_literal_at(&kv.value, depth + 1)?);
                        }
                    }
                }
                Value::Object(map)
            }
            Expr::Paren(p) => self.schema_literal_at(&p.expr, depth + 1)?,
            Expr::TsAs(a) => self.schema_literal_at(&a.expr, depth + 1)?,
            Expr::TsConstAssertion(c) => self.schema_literal_at(&c.expr, depth + 1)?,
            Expr::TsSatisfies(s) => self.schema_literal_at(&s.expr, depth + 1)?,
            other => expr_value(other)?,
        })
    }

    /// Whether the JSDoc before `pos` carries the block tag `@<tag>`.
    fn jsdoc_has_tag(&self, file: usize, pos: BytePos, tag: &str) -> bool {
        let Some(comments) = self.files[file].comments.get_leading(pos) else { return false };
        let Some(doc) = comments.iter().rev().find(|c| c.text.starts_with('*')) else { return false };
        doc.text
            .lines()
            .map(|l| l.trim().trim_start_matches('*').trim())
            .any(|l| l.strip_prefix('@').is_some_and(|rest| rest.split_whitespace().next() == Some(tag)))
    }

    fn jsdoc(&self, file: usize, pos: BytePos) -> Option<String> {
        if file >= self.program_files {
            return None;
        }
        let comments = self.files[file].comments.get_leading(pos)?;
        let doc = comments.iter().rev().find(|c| c.text.starts_with('*'))?;
        let lines: Vec<&str> = doc
            .text
            .trim_start_matches('*')
            .lines()
            .map(|l| l.trim().trim_start_matches('*').trim())
            // The description ends at the first block tag: the lines after
            // `@deprecated …` continue the tag, as TypeScript reads JSDoc.
            .take_while(|l| !l.starts_with('@'))
            .collect();
        let text = lines.join("\n").trim().to_string();
        (!text.is_empty()).then_some(text)
    }
}

/// A generated schema and what could not be expressed.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub schema: Value,
    /// Constructs that need a type checker and were emitted as `{}`.
    pub unsupported: Vec<String>,
}

/// Generates one root schema with its `$defs`.
pub struct SchemaGen<'e, 'a> {
    env: &'e TypeEnv<'a>,
    defs: BTreeMap<String, Value>,
    in_progress: HashSet<String>,
    referenced: HashSet<String>,
    unsupported: Vec<String>,
    /// The file whose syntax is being read (for JSDoc lookups).
    file: usize,
    /// Type parameters of the generic declarations being expanded, bound to
    /// the schemas of their arguments.
    subst: Vec<HashMap<String, Value>>,
    /// Generating a result schema: the compiler drops `cell` brands there
    /// (a result is read, not written through), keeping streams and opaque.
    result: bool,
    /// Identities of the anonymous types being generated (outermost first),
    /// to notice an anonymous type that contains itself.
    anon_stack: Vec<String>,
    /// Declarations being expanded inline (intersection parts, `Pick`/`Omit`
    /// targets): met again, they are cyclic and are not expanded twice.
    inline_stack: Vec<String>,
}

fn hashtags(text: &str) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find('#') {
        let tail = &rest[i + 1..];
        let tag: String = tail.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !tag.is_empty() {
            let tag = tag.to_lowercase();
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        rest = &tail[tag.len().min(tail.len())..];
        if tag.is_empty() && !tail.is_empty() {
            rest = tail;
        }
    }
    tags
}

fn describe(schema: &mut Value, doc: Option<String>) {
    let (Some(doc), Value::Object(map)) = (doc, schema) else { return };
    if map.contains_key("description") {
        return;
    }
    let tags = hashtags(&doc);
    map.insert("description".into(), Value::String(doc));
    if !tags.is_empty() {
        map.insert("tags".into(), json!(tags));
    }
}

/// The value a type denotes when used as a default (`Default<T, 0>`).
fn literal_value(t: &TsType) -> Option<Value> {
    match t {
        TsType::TsLitType(l) => Some(match &l.lit {
            TsLit::Str(s) => Value::String(s.value.to_string_lossy().into_owned()),
            TsLit::Number(n) => num(n.value),
            TsLit::Bool(b) => Value::Bool(b.value),
            TsLit::BigInt(b) => json!(b.value.to_string().parse::<f64>().ok()?),
            TsLit::Tpl(_) => return None,
        }),
        TsType::TsKeywordType(k) if k.kind == TsKeywordTypeKind::TsNullKeyword => Some(Value::Null),
        TsType::TsTupleType(t) => {
            t.elem_types.iter().map(|e| literal_value(&e.ty)).collect::<Option<Vec<_>>>().map(Value::Array)
        }
        TsType::TsTypeLit(o) => {
            let mut map = Map::new();
            for m in &o.members {
                let TsTypeElement::TsPropertySignature(p) = m else { return None };
                let key = prop_key(&p.key, p.computed)?;
                map.insert(key, literal_value(&p.type_ann.as_ref()?.type_ann)?);
            }
            Some(Value::Object(map))
        }
        TsType::TsParenthesizedType(p) => literal_value(&p.type_ann),
        // `readonly ["label"]` in CFC label tuples.
        TsType::TsTypeOperator(op) => literal_value(&op.type_ann),
        // `AnyOf<X>` inside an IFC label tuple is one atom.
        TsType::TsTypeRef(r) if matches!(&r.type_name, TsEntityName::Ident(id) if id.sym == *"AnyOf") => {
            let x = r.type_params.as_ref()?.params.first()?;
            Some(json!({ "anyOf": literal_value(x)? }))
        }
        // `Record<K, never>` as a default emits no `default` (the compiler's baselines).
        TsType::TsTypeRef(_) => None,
        TsType::TsArrayType(_) => Some(json!([])),
        _ => None,
    }
}

/// A JS number as JSON: integral values as integers, as JavaScript prints them.
pub(crate) fn num(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 { json!(v as i64) } else { json!(v) }
}

/// The JSON value of a literal expression (`as const`, `satisfies` and parentheses see through).
fn expr_value(e: &Expr) -> Option<Value> {
    use swc_ecma_ast::{ExprOrSpread, Prop, PropName, PropOrSpread, UnaryOp};
    Some(match e {
        Expr::Lit(Lit::Str(s)) => Value::String(s.value.to_string_lossy().into_owned()),
        Expr::Lit(Lit::Num(n)) => num(n.value),
        Expr::Lit(Lit::Bool(b)) => Value::Bool(b.value),
        Expr::Lit(Lit::Null(_)) => Value::Null,
        Expr::Tpl(t) if t.exprs.is_empty() => {
            Value::String(t.quasis.iter().map(|q| q.raw.to_string()).collect::<String>())
        }
        Expr::Unary(u) if u.op == UnaryOp::Minus => match expr_value(&u.arg)? {
            Value::Number(n) => num(-n.as_f64()?),
            _ => return None,
        },
        Expr::Array(a) => Value::Array(
            a.elems
                .iter()
                .map(|el| match el {
                    Some(ExprOrSpread { spread: None, expr }) => expr_value(expr),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?,
        ),
        Expr::Object(o) => {
            let mut map = Map::new();
            for p in &o.props {
                let PropOrSpread::Prop(p) = p else { return None };
                let Prop::KeyValue(kv) = &**p else { return None };
                let key = match &kv.key {
                    PropName::Ident(i) => i.sym.to_string(),
                    PropName::Str(s) => s.value.to_string_lossy().into_owned(),
                    PropName::Num(n) => n.value.to_string(),
                    _ => return None,
                };
                map.insert(key, expr_value(&kv.value)?);
            }
            Value::Object(map)
        }
        Expr::Paren(p) => expr_value(&p.expr)?,
        Expr::TsAs(a) => expr_value(&a.expr)?,
        Expr::TsConstAssertion(c) => expr_value(&c.expr)?,
        Expr::TsSatisfies(s) => expr_value(&s.expr)?,
        _ => return None,
    })
}

fn prop_key(key: &Expr, computed: bool) -> Option<String> {
    match key {
        Expr::Ident(id) if computed => Some(format!("${}", id.sym)),
        Expr::Ident(id) => Some(id.sym.to_string()),
        Expr::Lit(Lit::Str(s)) => Some(s.value.to_string_lossy().into_owned()),
        Expr::Lit(Lit::Num(n)) => Some(n.value.to_string()),
        _ => None,
    }
}

/// Prepend a wrapper brand to a schema's `asCell`.
pub(crate) fn prepend_brand(mut inner: Value, brand: &str) -> Value {
    match &mut inner {
        Value::Bool(true) => json!({ "asCell": [brand] }),
        Value::Bool(false) => json!({ "asCell": [brand], "not": true }),
        Value::Object(map) => {
            let entry = map.entry("asCell").or_insert_with(|| json!([]));
            if let Value::Array(a) = entry {
                a.insert(0, json!(brand));
            }
            inner
        }
        _ => inner,
    }
}

fn with_key(mut schema: Value, key: &str, value: Value) -> Value {
    match &mut schema {
        Value::Object(map) => {
            map.insert(key.into(), value);
            schema
        }
        Value::Bool(true) => json!({ key: value }),
        Value::Bool(false) => json!({ "not": true, key: value }),
        _ => schema,
    }
}

/// Merge union members the way the compiler does: nullable pairs become
/// `anyOf [member, null]`, all-literal unions an `enum`, bare primitive types a
/// sorted `type` array, everything else `anyOf`.
fn union_of(members: Vec<Value>, literal_values: Option<Vec<Value>>) -> Value {
    if let Some(values) = literal_values {
        let bools: Vec<&Value> = values.iter().filter(|v| v.is_boolean()).collect();
        if bools.len() == 2 && values.len() == 2 {
            return json!({ "type": "boolean" });
        }
        if bools.len() == 2 && values.len() == 3 && values.contains(&Value::Null) {
            return json!({ "anyOf": [{ "type": "boolean" }, { "type": "null" }] });
        }
        let mut dedup: Vec<Value> = Vec::new();
        for v in values {
            if !dedup.contains(&v) {
                dedup.push(v);
            }
        }
        return json!({ "enum": dedup });
    }
    let non_null: Vec<&Value> = members.iter().filter(|m| **m != json!({ "type": "null" })).collect();
    if non_null.len() == 1 && members.len() == 2 {
        return json!({ "anyOf": [non_null[0].clone(), { "type": "null" }] });
    }
    let mut any_of: Vec<Value> = Vec::new();
    for m in members {
        if merge_into_any_of(&mut any_of, m) {
            return Value::Bool(true);
        }
    }
    match any_of.len() {
        0 => Value::Bool(false),
        1 => any_of.pop().unwrap(),
        _ => json!({ "anyOf": any_of }),
    }
}

/// Whether a schema has no keys but `type` and `enum` (a primitive).
fn is_primitive(v: &Value) -> bool {
    v.as_object().is_some_and(|m| m.keys().all(|k| k == "type" || k == "enum"))
}

/// Add one member schema to a union's `anyOf` the way the compiler's union
/// formatter does (`mergePrimitiveSchemaIntoAnyOf`): duplicates drop out,
/// literals of one type merge into a sorted `enum`, a plain primitive widens
/// the same type's enum away or joins the first plain primitive in a sorted
/// `type` array, and anything else is appended in order. Returns true when
/// the union accepts everything.
fn merge_into_any_of(any_of: &mut Vec<Value>, cur: Value) -> bool {
    match cur {
        Value::Bool(true) => return true,
        Value::Bool(false) => return false,
        _ => {}
    }
    if any_of.contains(&cur) {
        return false;
    }
    let cur_type = cur.get("type").filter(|t| t.is_string());
    let matching = any_of
        .iter()
        .position(|o| is_primitive(o) && o.get("type").is_some_and(|t| t.is_string() && Some(t) == cur_type));
    let cur_enum = cur.get("enum").and_then(|e| e.as_array()).cloned();
    if let (Some(cur_enum), Some(i)) = (&cur_enum, matching)
        && let Some(existing) = any_of[i].get("enum").and_then(|e| e.as_array()).cloned()
    {
        let mut merged = existing;
        for v in cur_enum {
            if !merged.contains(v) {
                merged.push(v.clone());
            }
        }
        let both_booleans = cur_type == Some(&json!("boolean"))
            && merged.contains(&Value::Bool(true))
            && merged.contains(&Value::Bool(false));
        if both_booleans {
            any_of[i].as_object_mut().unwrap().remove("enum");
        } else {
            merged.sort_by(|a, b| js_string(a).encode_utf16().cmp(js_string(b).encode_utf16()));
            any_of[i]["enum"] = Value::Array(merged);
        }
    } else if let Some(i) = matching {
        // A plain `string` (say) widens `"a" | "b"` to any string.
        any_of[i].as_object_mut().unwrap().remove("enum");
    } else if is_primitive(&cur) && cur_enum.is_none() && cur.get("type").is_some() {
        let plain = any_of.iter().position(|o| is_primitive(o) && o.get("enum").is_none());
        match plain {
            Some(i) => {
                let as_list = |t: Option<&Value>| -> Vec<String> {
                    match t {
                        Some(Value::String(s)) => vec![s.clone()],
                        Some(Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
                        _ => Vec::new(),
                    }
                };
                let mut types = as_list(cur.get("type"));
                for t in as_list(any_of[i].get("type")) {
                    if !types.contains(&t) {
                        types.push(t);
                    }
                }
                types.sort();
                any_of[i]["type"] = json!(types);
            }
            None => any_of.push(cur),
        }
    } else {
        any_of.push(cur);
    }
    false
}

impl<'e, 'a> SchemaGen<'e, 'a> {
    /// Whether a value of `schema` can never be `null` or `undefined`:
    /// every member typed, none of them null or undefined, a `$ref` followed
    /// into the definitions made so far. Anything unknown (`true`, an
    /// external reference, a definition still being made) may be nullish.
    pub(crate) fn never_nullish(&self, schema: &Value) -> bool {
        self.never_nullish_within(schema, 0)
    }

    fn never_nullish_within(&self, schema: &Value, depth: usize) -> bool {
        let nullish = |t: &Value| matches!(t.as_str(), Some("null" | "undefined"));
        let Some(o) = schema.as_object() else { return false };
        if depth > 16 {
            return false;
        }
        if let Some(members) = o.get("anyOf") {
            return members.as_array().is_some_and(|m| m.iter().all(|x| self.never_nullish_within(x, depth + 1)));
        }
        if let Some(r) = o.get("$ref").and_then(Value::as_str) {
            let Some(name) = r.strip_prefix("#/$defs/") else { return false };
            return self.defs.get(name).is_some_and(|d| self.never_nullish_within(d, depth + 1));
        }
        if let Some(values) = o.get("enum") {
            return values.as_array().is_some_and(|v| !v.is_empty() && v.iter().all(|x| !x.is_null()));
        }
        match o.get("type") {
            Some(t @ Value::String(_)) => !nullish(t),
            Some(Value::Array(ts)) => !ts.is_empty() && !ts.iter().any(nullish),
            _ => false,
        }
    }

    pub fn new(env: &'e TypeEnv<'a>) -> Self {
        SchemaGen {
            env,
            defs: BTreeMap::new(),
            in_progress: HashSet::new(),
            referenced: HashSet::new(),
            unsupported: Vec::new(),
            file: 0,
            subst: Vec::new(),
            result: false,
            anon_stack: Vec::new(),
            inline_stack: Vec::new(),
        }
    }

    /// A generator for result schemas.
    pub fn for_result(env: &'e TypeEnv<'a>) -> Self {
        SchemaGen { result: true, ..SchemaGen::new(env) }
    }

    fn unsupported(&mut self, what: String) -> Value {
        if !self.unsupported.contains(&what) {
            self.unsupported.push(what);
        }
        json!({})
    }

    /// The schema of a root type with the `$defs` it references.
    pub fn root(mut self, t: &TsType) -> Generated {
        let schema = match t {
            TsType::TsTypeRef(r) if r.type_params.is_none() => match &r.type_name {
                TsEntityName::Ident(id)
                    if self.env.decls.contains_key(id.sym.as_ref())
                        || self.env.renames.contains_key(id.sym.as_ref()) =>
                {
                    let name = self.env.renames.get(id.sym.as_ref()).cloned().unwrap_or_else(|| id.sym.to_string());
                    self.in_progress.insert(name.clone());
                    let mut s = self.named_body(&name);
                    self.in_progress.remove(&name);
                    // The root, and only the root, carries its type's JSDoc.
                    let doc = self.decl_doc(&name);
                    describe(&mut s, doc);
                    if self.referenced.contains(&name) {
                        self.defs.insert(name.clone(), s);
                        json!({ "$ref": format!("#/$defs/{name}") })
                    } else {
                        s
                    }
                }
                _ => self.ty(t),
            },
            _ => self.ty(t),
        };
        self.finish_with(schema)
    }

    /// Attach the `$defs` a schema built with this generator reaches.
    pub fn finish_with(self, mut schema: Value) -> Generated {
        // Attach only the definitions the schema reaches.
        let mut reached: BTreeMap<String, Value> = BTreeMap::new();
        let mut stack = vec![schema.clone()];
        while let Some(v) = stack.pop() {
            collect_refs(&v, &mut |name| {
                if !reached.contains_key(name)
                    && let Some(def) = self.defs.get(name)
                {
                    reached.insert(name.to_string(), def.clone());
                    stack.push(def.clone());
                }
            });
        }
        if !reached.is_empty()
            && let Value::Object(map) = &mut schema
        {
            map.insert("$defs".into(), json!(reached));
        }
        Generated { schema, unsupported: self.unsupported }
    }

    /// The value a `Default`'s second argument denotes: a literal type, or
    /// `typeof CONST` read from the constant's initializer in the program.
    fn default_value(&self, t: &TsType) -> Option<Value> {
        if let TsType::TsTypeQuery(q) = t
            && let swc_ecma_ast::TsTypeQueryExpr::TsEntityName(TsEntityName::Ident(id)) = &q.expr_name
        {
            return self.const_value(id.sym.as_ref());
        }
        literal_value(t)
    }

    /// The JSON value of a top-level `const NAME = <literal>` in the program.
    fn const_value(&self, name: &str) -> Option<Value> {
        self.env.top_level_const(name).and_then(expr_value)
    }

    /// `JSX.Element`, and the type of JSX written in a returned object: the
    /// compiler's `JSXElement` definition (a VNode, a renderable, or an object).
    pub fn jsx_element(&mut self) -> Value {
        self.define(
            "JSXElement",
            json!({ "anyOf": [
                { "$ref": VNODE_REF },
                { "$ref": "#/$defs/UIRenderable" },
                { "type": "object", "properties": {} }
            ]}),
        );
        self.define("UIRenderable", ui_renderable());
        json!({ "$ref": "#/$defs/JSXElement" })
    }

    /// Register a definition built outside the type syntax (the inferred JSX types).
    pub fn define(&mut self, name: &str, schema: Value) {
        self.defs.entry(name.to_string()).or_insert(schema);
    }

    /// The program's type declarations this generator reads.
    pub(crate) fn env(&self) -> &'e TypeEnv<'a> {
        self.env
    }

    /// The declared type of property `key` of an object type (interface, alias
    /// or literal), and whether it is optional.
    pub fn member_type(&self, t: &'a TsType, key: &str) -> Option<(&'a TsType, bool)> {
        let members: &'a [TsTypeElement] = match t {
            TsType::TsTypeLit(l) => &l.members,
            TsType::TsTypeRef(r) => match &r.type_name {
                TsEntityName::Ident(id) => match self.env.decls.get(id.sym.as_ref())? {
                    DeclRef::Interface(_, i) => &i.body.body,
                    DeclRef::Alias(_, a) => return self.member_type(&a.type_ann, key),
                    DeclRef::Enum(_) => return None,
                },
                _ => return None,
            },
            _ => return None,
        };
        members.iter().find_map(|m| match m {
            TsTypeElement::TsPropertySignature(p) if prop_key(&p.key, p.computed).as_deref() == Some(key) => {
                p.type_ann.as_ref().map(|a| (&*a.type_ann, p.optional))
            }
            _ => None,
        })
    }

    /// The type of a required field of a declared interface or object alias.
    fn named_member(&self, name: &str, key: &str) -> Option<&'a TsType> {
        if self.subst.last().is_some_and(|m| m.contains_key(name)) {
            return None;
        }
        let members: &'a [TsTypeElement] = match self.env.decls.get(name)? {
            DeclRef::Interface(_, i) => &i.body.body,
            DeclRef::Alias(_, a) => match &*a.type_ann {
                TsType::TsTypeLit(l) => &l.members,
                _ => return None,
            },
            DeclRef::Enum(_) => return None,
        };
        members.iter().find_map(|m| match m {
            TsTypeElement::TsPropertySignature(p)
                if !p.optional && prop_key(&p.key, p.computed).as_deref() == Some(key) =>
            {
                p.type_ann.as_ref().map(|a| &*a.type_ann)
            }
            _ => None,
        })
    }

    /// The body of a named declaration (not its `$ref`).
    fn named_body(&mut self, name: &str) -> Value {
        let decl = self.env.decls[name];
        let saved = self.file;
        let out = match decl {
            // `interface L extends ReadonlyArray<T> {}` is an array of `T`, and
            // `interface M extends Readonly<Record<string, V>> {}` a record of `V`.
            DeclRef::Interface(fi, i)
                if i.body.body.is_empty() && i.extends.len() == 1 && collection_base(&i.extends[0]).is_some() =>
            {
                self.file = fi;
                let (kind, arg) = collection_base(&i.extends[0]).unwrap();
                match kind {
                    "array" => self.array_of(arg),
                    _ => {
                        let value = self.ty(arg);
                        json!({ "type": "object", "properties": {}, "additionalProperties": value })
                    }
                }
            }
            DeclRef::Interface(fi, i) => {
                self.file = fi;
                let extends: Vec<String> = i
                    .extends
                    .iter()
                    .filter_map(|e| match &*e.expr {
                        Expr::Ident(id) => Some(id.sym.to_string()),
                        _ => None,
                    })
                    .collect();
                self.object(&i.body.body, &extends)
            }
            DeclRef::Alias(fi, a) => {
                self.file = fi;
                self.ty(&a.type_ann)
            }
            DeclRef::Enum(e) => {
                let values: Vec<Value> = e
                    .members
                    .iter()
                    .enumerate()
                    .map(|(i, m)| match m.init.as_deref() {
                        Some(Expr::Lit(Lit::Str(s))) => Value::String(s.value.to_string_lossy().into_owned()),
                        Some(Expr::Lit(Lit::Num(n))) => num(n.value),
                        _ => match &m.id {
                            TsEnumMemberId::Ident(_) | TsEnumMemberId::Str(_) => json!(i),
                        },
                    })
                    .collect();
                json!({ "enum": values })
            }
        };
        self.file = saved;
        out
    }

    /// The JSDoc of a named declaration (before it, or before its `export`).
    fn decl_doc(&self, name: &str) -> Option<String> {
        let (fi, pos) = match self.env.decls[name] {
            DeclRef::Interface(fi, i) => (fi, i.span.lo),
            DeclRef::Alias(fi, a) => (fi, a.span.lo),
            DeclRef::Enum(_) => return None,
        };
        self.env.jsdoc(fi, pos).or_else(|| self.export_doc(fi, pos))
    }

    /// JSDoc written before `export` rather than before the declaration.
    fn export_doc(&self, file: usize, decl_pos: BytePos) -> Option<String> {
        let module = self.env.files[file].module.as_ref()?;
        module.body.iter().find_map(|item| match item {
            ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(e)) if e.decl.span().lo == decl_pos => {
                self.env.jsdoc(file, e.span.lo)
            }
            _ => None,
        })
    }

    /// The type parameters of a generic declaration.
    fn generic_params(&self, name: &str) -> Option<&'a swc_ecma_ast::TsTypeParamDecl> {
        match self.env.decls.get(name)? {
            DeclRef::Interface(_, i) => i.type_params.as_deref(),
            DeclRef::Alias(_, a) => a.type_params.as_deref(),
            DeclRef::Enum(_) => None,
        }
    }

    /// A generic declaration instantiated with `args` is inlined, its
    /// parameters bound to the arguments' schemas (or their defaults).
    fn instantiate(&mut self, name: &str, args: &[&TsType]) -> Value {
        let Some(params) = self.generic_params(name) else {
            return self.unsupported(format!("type arguments on non-generic `{name}`"));
        };
        if self.in_progress.contains(name) {
            return self.unsupported(format!("recursive generic `{name}`"));
        }
        let mut bound = HashMap::new();
        for (i, p) in params.params.iter().enumerate() {
            let schema = match (args.get(i), &p.default) {
                (Some(t), _) => self.ty(t),
                (None, Some(d)) => self.ty(d),
                (None, None) => json!({}),
            };
            bound.insert(p.name.sym.to_string(), schema);
        }
        self.subst.push(bound);
        self.in_progress.insert(name.to_string());
        let body = self.named_body(name);
        self.in_progress.remove(name);
        self.subst.pop();
        body
    }

    /// Whether a named declaration hoists into `$defs`.
    fn hoists(&self, name: &str) -> bool {
        match self.env.decls[name] {
            DeclRef::Interface(_, i) => i.type_params.is_none(),
            DeclRef::Enum(_) => true,
            DeclRef::Alias(_, a) => {
                a.type_params.is_none()
                    && match &*a.type_ann {
                        TsType::TsTypeLit(_) | TsType::TsUnionOrIntersectionType(_) | TsType::TsMappedType(_) => true,
                        // An alias of a `Record<…>` carries its own name (the checker's alias symbol).
                        TsType::TsTypeRef(r) => matches!(&r.type_name, TsEntityName::Ident(id)
                            if matches!(id.sym.as_ref(), "Record" | "Omit" | "Pick" | "Partial")),
                        _ => false,
                    }
            }
        }
    }

    fn reference(&mut self, name: &str) -> Value {
        if !self.hoists(name) {
            if self.in_progress.contains(name) {
                return self.unsupported(format!("recursive alias `{name}`"));
            }
            self.in_progress.insert(name.to_string());
            let s = self.named_body(name);
            self.in_progress.remove(name);
            return s;
        }
        self.referenced.insert(name.to_string());
        if !self.defs.contains_key(name) && !self.in_progress.contains(name) {
            self.in_progress.insert(name.to_string());
            let body = self.named_body(name);
            self.in_progress.remove(name);
            self.defs.insert(name.to_string(), body);
        }
        json!({ "$ref": format!("#/$defs/{name}") })
    }

    fn object(&mut self, members: &[TsTypeElement], extends: &[String]) -> Value {
        let mut properties = Map::new();
        let mut required: Vec<String> = Vec::new();
        let mut additional: Option<Value> = None;
        for base in extends {
            if self.env.decls.contains_key(base.as_str()) {
                let saved = self.file;
                let body = self.named_body(base);
                self.file = saved;
                if let Some(props) = body.get("properties").and_then(|p| p.as_object()) {
                    for (k, v) in props {
                        properties.insert(k.clone(), v.clone());
                    }
                }
                if let Some(req) = body.get("required").and_then(|r| r.as_array()) {
                    required.extend(req.iter().filter_map(|r| r.as_str().map(str::to_string)));
                }
            } else {
                self.unsupported(format!("interface extends `{base}`"));
            }
        }
        for m in members {
            match m {
                TsTypeElement::TsPropertySignature(p) => {
                    let Some(key) = prop_key(&p.key, p.computed) else {
                        self.unsupported("computed property key".into());
                        continue;
                    };
                    let Some(ann) = &p.type_ann else {
                        properties.insert(key.clone(), Value::Bool(true));
                        continue;
                    };
                    let t = &*ann.type_ann;
                    let mut schema = match t {
                        TsType::TsFnOrConstructorType(f) => match self.callable_result(f) {
                            Some(s) => s,
                            None => continue,
                        },
                        _ => self.ty(t),
                    };
                    describe(&mut schema, self.env.jsdoc(self.file, p.span.lo));
                    // A `@deprecated` stream (a verb) is marked `deprecated: true`.
                    if is_stream_schema(&schema) && self.env.jsdoc_has_tag(self.file, p.span.lo, "deprecated") {
                        schema["deprecated"] = Value::Bool(true);
                    }
                    // An optional member typed by a type parameter keeps the
                    // `undefined` its instantiation adds (`result?: T`).
                    if p.optional
                        && let TsType::TsTypeRef(r) = t
                        && r.type_params.is_none()
                        && let TsEntityName::Ident(id) = &r.type_name
                        && self.subst.last().is_some_and(|m| m.contains_key(id.sym.as_ref()))
                    {
                        schema = union_of(vec![json!({ "type": "undefined" }), schema], None);
                    }
                    let optional = p.optional || is_default_with_undefined(t);
                    if !optional {
                        required.retain(|r| r != &key);
                        required.push(key.clone());
                    }
                    properties.insert(key, schema);
                }
                TsTypeElement::TsIndexSignature(ix) => {
                    if let Some(ann) = &ix.type_ann {
                        additional = Some(self.ty(&ann.type_ann));
                    }
                }
                _ => {}
            }
        }
        let mut out = Map::new();
        out.insert("type".into(), json!("object"));
        out.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            out.insert("required".into(), json!(required));
        }
        if let Some(a) = additional {
            out.insert("additionalProperties".into(), a);
        }
        Value::Object(out)
    }

    /// A callable property is kept only when it returns a Stream, Cell or SqliteDb.
    fn callable_result(&mut self, f: &swc_ecma_ast::TsFnOrConstructorType) -> Option<Value> {
        let swc_ecma_ast::TsFnOrConstructorType::TsFnType(f) = f else { return None };
        let TsType::TsTypeRef(r) = &*f.type_ann.type_ann else { return None };
        let TsEntityName::Ident(id) = &r.type_name else { return None };
        match id.sym.as_ref() {
            "Stream" => Some(json!({ "asCell": ["stream"] })),
            "Cell" | "Writable" => Some(json!({ "asCell": ["cell"] })),
            "SqliteDb" => Some(json!({ "asCell": ["sqlite"] })),
            _ => None,
        }
    }

    pub fn ty(&mut self, t: &TsType) -> Value {
        match t {
            TsType::TsKeywordType(k) => self.keyword_type(k.kind),
            TsType::TsLitType(l) => literal_type(&l.lit),
            TsType::TsArrayType(a) => self.array_of(&a.elem_type),
            TsType::TsTupleType(tu) => {
                let members: Vec<Value> = tu.elem_types.iter().map(|e| self.ty(&e.ty)).collect();
                json!({ "type": "array", "items": union_of(members, None) })
            }
            TsType::TsParenthesizedType(p) => self.ty(&p.type_ann),
            TsType::TsOptionalType(o) => self.ty(&o.type_ann),
            TsType::TsTypeOperator(op) => self.ty(&op.type_ann),
            TsType::TsTypeLit(o) => self.object(&o.members, &[]),
            TsType::TsUnionOrIntersectionType(TsUnionOrIntersectionType::TsUnionType(u)) => self.union(&u.types),
            TsType::TsUnionOrIntersectionType(TsUnionOrIntersectionType::TsIntersectionType(i)) => {
                self.intersection(&i.types)
            }
            TsType::TsTypeRef(r) => self.written_type_ref(r),
            TsType::TsFnOrConstructorType(_) => self.unsupported("function type".into()),
            TsType::TsTypeQuery(_) => self.unsupported("typeof type".into()),
            TsType::TsIndexedAccessType(ia) => self.indexed_access(ia),
            TsType::TsMappedType(_) => self.unsupported("mapped type".into()),
            TsType::TsConditionalType(_) => json!({}),
            _ => self.unsupported("type form".into()),
        }
    }

    /// A keyword type (`string`, `void`, `any`, …).
    fn keyword_type(&mut self, kind: TsKeywordTypeKind) -> Value {
        use TsKeywordTypeKind as K;
        match kind {
            K::TsStringKeyword => json!({ "type": "string" }),
            K::TsNumberKeyword => json!({ "type": "number" }),
            K::TsBooleanKeyword => json!({ "type": "boolean" }),
            K::TsBigIntKeyword => json!({ "type": "integer" }),
            K::TsNullKeyword => json!({ "type": "null" }),
            K::TsUndefinedKeyword => json!({ "type": "undefined" }),
            K::TsVoidKeyword => json!({ "asCell": ["opaque"] }),
            K::TsNeverKeyword => Value::Bool(false),
            K::TsAnyKeyword => Value::Bool(true),
            K::TsUnknownKeyword => json!({ "type": "unknown" }),
            K::TsObjectKeyword => json!({ "type": "object", "additionalProperties": true }),
            _ => self.unsupported(format!("keyword type {kind:?}")),
        }
    }

    /// An intersection `A & B`: one object of its parts' properties.
    fn intersection(&mut self, types: &[Box<TsType>]) -> Value {
        // The checker resolves an intersection's properties itself: its
        // named parts contribute their members, not a `$ref`.
        let parts: Vec<Value> = types.iter().map(|t| self.intersection_part(t)).collect();
        let mut properties = Map::new();
        let mut required: Vec<Value> = Vec::new();
        for p in &parts {
            if let Some(props) = p.get("properties").and_then(|x| x.as_object()) {
                for (k, v) in props {
                    properties.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            for r in p.get("required").and_then(|x| x.as_array()).into_iter().flatten() {
                if !required.contains(r) {
                    required.push(r.clone());
                }
            }
        }
        let mut out = json!({ "type": "object", "properties": properties });
        if !required.is_empty() {
            out["required"] = json!(required);
        }
        out
    }

    /// A type reference as written (`Name<Args>`, `JSX.Element`).
    fn written_type_ref(&mut self, r: &swc_ecma_ast::TsTypeRef) -> Value {
        let name = match &r.type_name {
            TsEntityName::Ident(id) => id.sym.to_string(),
            TsEntityName::TsQualifiedName(q) => {
                if q.right.sym == *"Element" && matches!(&q.left, TsEntityName::Ident(l) if l.sym == *"JSX") {
                    return self.jsx_element();
                }
                return self.unsupported(format!("qualified type name `{}`", q.right.sym));
            }
        };
        let args: Vec<&TsType> = r.type_params.iter().flat_map(|p| p.params.iter().map(|b| &**b)).collect();
        self.type_ref(&name, &args)
    }

    /// An indexed access type: an element of a constant tuple, or the
    /// declared type of a named type's field (`Named["field"]`).
    fn indexed_access(&mut self, ia: &swc_ecma_ast::TsIndexedAccessType) -> Value {
        if let Some(mut values) = self.const_tuple_elements(ia) {
            self.env.literals.sort(&mut values);
            return union_of(Vec::new(), Some(values));
        }
        // `Named["field"]`: the declared type of that field.
        if let TsType::TsTypeRef(r) = &*ia.obj_type
            && r.type_params.is_none()
            && let TsEntityName::Ident(id) = &r.type_name
            && let TsType::TsLitType(l) = &*ia.index_type
            && let TsLit::Str(key) = &l.lit
            && let Some(member) = self.named_member(&id.sym, &key.value.to_string_lossy())
        {
            // `A["f"]` whose type is `A["f"]` again is circular (a type error).
            let access = format!("{}[{}]", id.sym, key.value.to_string_lossy());
            if self.inline_stack.contains(&access) {
                return self.unsupported(format!("circular indexed access `{access}`"));
            }
            self.inline_stack.push(access);
            let schema = self.ty(member);
            self.inline_stack.pop();
            return schema;
        }
        self.unsupported("indexed access type".into())
    }

    /// `T[]` / `Array<T>`. TypeScript interns an array type per element type,
    /// so `Named[]` met again while `Named[]` is still being generated is a
    /// cycle through an anonymous type: the compiler names it
    /// `AnonymousType_N`, hoists it to `$defs` and refers to it.
    fn array_of(&mut self, elem: &TsType) -> Value {
        let identity = match elem {
            TsType::TsTypeRef(r) if r.type_params.is_none() => match &r.type_name {
                TsEntityName::Ident(id)
                    if self.env.decls.contains_key(id.sym.as_ref())
                        && self.subst.last().is_none_or(|m| !m.contains_key(id.sym.as_ref())) =>
                {
                    Some(format!("{}[]", id.sym))
                }
                _ => None,
            },
            _ => None,
        };
        let Some(identity) = identity else {
            return json!({ "type": "array", "items": self.ty(elem) });
        };
        self.anonymous(identity, |g| json!({ "type": "array", "items": g.ty(elem) }))
    }

    /// Generate an anonymous type that has a type identity in the compiler
    /// (`Named[]`, `Named | null`): met again while it is still being
    /// generated, it is cyclic, gets a synthetic `AnonymousType_N` name and
    /// is referenced; once named, every occurrence is hoisted to `$defs`.
    fn anonymous(&mut self, identity: String, generate: impl FnOnce(&mut Self) -> Value) -> Value {
        if self.anon_stack.contains(&identity) {
            let name = self.anonymous_name(&identity);
            self.referenced.insert(name.clone());
            return json!({ "$ref": format!("#/$defs/{name}") });
        }
        self.anon_stack.push(identity.clone());
        let schema = generate(self);
        self.anon_stack.pop();
        match self.existing_anonymous_name(&identity) {
            Some(name) => {
                self.defs.entry(name.clone()).or_insert(schema);
                json!({ "$ref": format!("#/$defs/{name}") })
            }
            None => schema,
        }
    }

    /// The CFC aliases (`Confidential<T, C>`, `Integrity<T, I>`, …): the
    /// wrapped type's schema with an `ifc` payload from the type-level
    /// literal arguments, merged shallowly into any `ifc` it already has.
    fn cfc_alias(&mut self, name: &str, args: &[&TsType]) -> Option<Value> {
        let current_principal =
            |kind: &str| json!({ "addIntegrity": [{ "kind": kind, "subject": { "__ctCurrentPrincipal": true } }] });
        let second = || args.get(1).and_then(|t| literal_value(t));
        let payload = match name {
            "Confidential" => json!({ "confidentiality": second()? }),
            "Integrity" => json!({ "integrity": second()? }),
            "AddIntegrity" => json!({ "addIntegrity": second()? }),
            "RequiresIntegrity" => json!({ "requiredIntegrity": second()? }),
            "MaxConfidentiality" => json!({ "maxConfidentiality": second()? }),
            "ExactCopy" => json!({ "exactCopyOf": second()? }),
            "RepresentsCurrentUser" => current_principal("represents-principal"),
            "AuthoredByCurrentUser" => current_principal("authored-by"),
            "Cfc" => match second() {
                Some(Value::Object(m)) => Value::Object(m),
                _ => json!({}),
            },
            _ => return None,
        };
        let mut inner = args.first().map_or(Value::Bool(true), |t| self.ty(t));
        let Value::Object(payload) = payload else { return Some(inner) };
        if payload.is_empty() {
            return Some(inner);
        }
        inner = match inner {
            Value::Bool(true) => json!({}),
            Value::Bool(false) => json!({ "not": true }),
            other => other,
        };
        if let Value::Object(map) = &mut inner {
            let ifc = map.entry("ifc").or_insert_with(|| json!({}));
            if let Value::Object(ifc) = ifc {
                for (k, v) in payload {
                    ifc.insert(k, v);
                }
            }
        }
        Some(inner)
    }

    /// The schema of `f(…).field`, where `f` is declared with a function type
    /// (`declare const f: F`, `type F = (…) => Reactive<State>`) and `State`
    /// declares `field`; an optional field may be `undefined`.
    pub fn declared_call_member(&mut self, function: &str, field: &str, type_args: &[&TsType]) -> Option<Value> {
        let (f, state) = self.declared_function(function)?;
        let (member, optional) = self.member_type(state, field)?;
        let schema = self.instantiated(f, type_args, member)?;
        Some(if optional { union_of(vec![json!({ "type": "undefined" }), schema], None) } else { schema })
    }

    /// The schema of what `f(…)` returns, where `f` is declared with a
    /// function type (see [`SchemaGen::declared_call_member`]).
    pub(crate) fn declared_call_result(&mut self, function: &str, type_args: &[&TsType]) -> Option<Value> {
        let (f, state) = self.declared_function(function)?;
        self.instantiated(f, type_args, state)
    }

    /// `declare const f: F` (through aliases to a function type): the function
    /// type and what it returns, `Reactive<…>` unwrapped.
    fn declared_function(&self, function: &str) -> Option<(&'a swc_ecma_ast::TsFnType, &'a TsType)> {
        let declared: &'a TsType = self.env.files.iter().filter_map(|f| f.module.as_ref()).find_map(|m| {
            m.body.iter().find_map(|item| {
                let decl = match item {
                    ModuleItem::Stmt(Stmt::Decl(Decl::Var(v))) => v,
                    ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(e)) => match &e.decl {
                        Decl::Var(v) => v,
                        _ => return None,
                    },
                    _ => return None,
                };
                decl.decls.iter().find_map(|d| match &d.name {
                    swc_ecma_ast::Pat::Ident(id) if id.id.sym == *function && d.init.is_none() => {
                        id.type_ann.as_ref().map(|a| &*a.type_ann)
                    }
                    _ => None,
                })
            })
        })?;
        // Through aliases to the function type, then its return type.
        let mut t = declared;
        for _ in 0..8 {
            match t {
                TsType::TsTypeRef(r) if r.type_params.is_none() => match &r.type_name {
                    TsEntityName::Ident(id) => match self.env.decls.get(id.sym.as_ref())? {
                        DeclRef::Alias(_, a) if a.type_params.is_none() => t = &a.type_ann,
                        _ => return None,
                    },
                    _ => return None,
                },
                _ => break,
            }
        }
        let TsType::TsFnOrConstructorType(swc_ecma_ast::TsFnOrConstructorType::TsFnType(f)) = t else { return None };
        let mut state: &'a TsType = &f.type_ann.type_ann;
        if let TsType::TsTypeRef(r) = state
            && matches!(&r.type_name, TsEntityName::Ident(id) if id.sym == *"Reactive")
            && let Some(inner) = r.type_params.as_ref().and_then(|p| p.params.first())
        {
            state = inner;
        }
        Some((f, state))
    }

    /// `t` inside a generic function (`<T>(…) => …`) instantiated with the
    /// call's type arguments (or none, for a function that is not generic).
    fn instantiated(&mut self, f: &swc_ecma_ast::TsFnType, type_args: &[&TsType], t: &TsType) -> Option<Value> {
        let params: Vec<String> = f
            .type_params
            .as_ref()
            .map(|p| p.params.iter().map(|p| p.name.sym.to_string()).collect())
            .unwrap_or_default();
        if params.len() != type_args.len() && !params.is_empty() {
            return None;
        }
        let bindings: HashMap<String, Value> =
            params.into_iter().zip(type_args.iter().map(|t| self.ty(t)).collect::<Vec<_>>()).collect();
        self.subst.push(bindings);
        let schema = self.ty(t);
        self.subst.pop();
        Some(schema)
    }

    /// The schema of `P(…).field`, where `P` is a pattern factory whose output
    /// type declares `field` (see [`TypeEnv::add_pattern_output`]).
    pub fn pattern_call_member(&mut self, factory: &str, field: &str) -> Option<Value> {
        let output = self.env.pattern_outputs.get(factory).copied()?;
        let (member, optional) = self.member_type(output, field)?;
        let schema = self.ty(member);
        Some(if optional { union_of(vec![json!({ "type": "undefined" }), schema], None) } else { schema })
    }

    /// One part of an intersection: a declared (non-generic) name or the
    /// platform's `UIRenderable` as its body, anything else as usual.
    fn intersection_part(&mut self, t: &TsType) -> Value {
        if let TsType::TsTypeRef(r) = t
            && r.type_params.is_none()
            && let TsEntityName::Ident(id) = &r.type_name
            && self.subst.last().is_none_or(|m| !m.contains_key(id.sym.as_ref()))
        {
            if self.env.decls.contains_key(id.sym.as_ref())
                && self.generic_params(&id.sym).is_none()
                && !self.inline_stack.iter().any(|n| n == id.sym.as_ref())
            {
                self.inline_stack.push(id.sym.to_string());
                let body = self.named_body(&id.sym);
                self.inline_stack.pop();
                return body;
            }
            if id.sym == *"UIRenderable" {
                return ui_renderable();
            }
        }
        self.ty(t)
    }

    /// For `typeof h` where `h` is a top-level `handler<E, C>(…)` (or
    /// `handler(…)`) constant: `Some(Some(E))`, or `Some(None)` when the event
    /// type is not written.
    fn handler_event_of_typeof(&self, t: &TsType) -> Option<Option<&'a TsType>> {
        let TsType::TsTypeQuery(q) = t else { return None };
        let swc_ecma_ast::TsTypeQueryExpr::TsEntityName(TsEntityName::Ident(name)) = &q.expr_name else { return None };
        let Expr::Call(call) = self.env.top_level_const(&name.sym)? else { return None };
        let swc_ecma_ast::Callee::Expr(callee) = &call.callee else { return None };
        if !matches!(&**callee, Expr::Ident(id) if id.sym == *"handler") {
            return None;
        }
        Some(call.type_args.as_ref().and_then(|a| a.params.first()).map(|b| &**b))
    }

    /// The literal elements of `(typeof X)[number]`, where `X` is a
    /// top-level `[...] as const` array of literals.
    fn const_tuple_elements(&self, ia: &swc_ecma_ast::TsIndexedAccessType) -> Option<Vec<Value>> {
        let mut obj = &*ia.obj_type;
        while let TsType::TsParenthesizedType(p) = obj {
            obj = &p.type_ann;
        }
        let TsType::TsTypeQuery(q) = obj else { return None };
        let swc_ecma_ast::TsTypeQueryExpr::TsEntityName(TsEntityName::Ident(name)) = &q.expr_name else { return None };
        if !matches!(&*ia.index_type, TsType::TsKeywordType(k) if k.kind == TsKeywordTypeKind::TsNumberKeyword) {
            return None;
        }
        let Expr::TsConstAssertion(c) = self.env.top_level_const(&name.sym)? else { return None };
        let Value::Array(values) = expr_value(&c.expr)? else { return None };
        let mut unique: Vec<Value> = Vec::new();
        for v in values {
            if !(v.is_string() || v.is_number() || v.is_boolean() || v.is_null()) {
                return None;
            }
            if !unique.contains(&v) {
                unique.push(v);
            }
        }
        Some(unique)
    }

    /// The members of a union with every member that names a union alias
    /// replaced by that alias's members, as the checker flattens unions.
    fn flattened<'t>(&self, members: Vec<&'t TsType>, depth: usize) -> Vec<&'t TsType>
    where
        'a: 't,
    {
        let mut out = Vec::new();
        for t in members {
            let alias = match t {
                TsType::TsTypeRef(r) if r.type_params.is_none() && depth < 8 => match &r.type_name {
                    TsEntityName::Ident(id) if self.subst.last().is_none_or(|m| !m.contains_key(id.sym.as_ref())) => {
                        match self.env.decls.get(id.sym.as_ref()) {
                            Some(DeclRef::Alias(_, a)) if a.type_params.is_none() => Some(&*a.type_ann),
                            _ => None,
                        }
                    }
                    _ => None,
                },
                _ => None,
            };
            let mut inner = alias;
            while let Some(TsType::TsParenthesizedType(p)) = inner {
                inner = Some(&p.type_ann);
            }
            match inner {
                Some(TsType::TsUnionOrIntersectionType(TsUnionOrIntersectionType::TsUnionType(u)))
                    if !u.types.iter().any(|m| is_default_ref(m)) =>
                {
                    out.extend(self.flattened(u.types.iter().map(|b| &**b).collect(), depth + 1));
                }
                _ => out.push(t),
            }
        }
        out
    }

    /// Where TypeScript's checker orders a union member: the intrinsic types
    /// it creates at start-up first (in creation order), then literals by
    /// the order they are met, then everything else as written.
    fn type_id_rank(&self, t: &TsType) -> usize {
        use TsKeywordTypeKind::*;
        match t {
            TsType::TsKeywordType(k) => match k.kind {
                TsAnyKeyword => 0,
                TsUnknownKeyword => 1,
                TsUndefinedKeyword => 2,
                TsNullKeyword => 3,
                TsStringKeyword => 4,
                TsNumberKeyword => 5,
                TsBigIntKeyword => 6,
                TsBooleanKeyword => 7,
                TsSymbolKeyword => 9,
                TsVoidKeyword => 10,
                TsNeverKeyword => 11,
                TsObjectKeyword => 12,
                TsIntrinsicKeyword => 13,
            },
            TsType::TsLitType(l) => match &l.lit {
                TsLit::Bool(b) => 7 + usize::from(b.value),
                _ => literal_value(t).map_or(usize::MAX / 2, |v| 100 + self.env.literals.rank(&v).min(usize::MAX / 4)),
            },
            _ => usize::MAX / 2,
        }
    }

    /// The schema of the type `Schema<…>` derives from a written JSON Schema:
    /// `type` keywords become their types, `enum` a literal union, an object
    /// its properties (the ones `required` lists are required, the rest
    /// optional). Annotations (`description`, bounds) do not survive into a
    /// type. Other keywords (`anyOf`, `$ref`, `asCell`, …) are `None`.
    fn type_of_json_schema(&mut self, v: &Value, depth: usize) -> Option<Value> {
        if depth > 16 {
            return None;
        }
        let Value::Object(map) = v else { return None };
        if ["anyOf", "oneOf", "allOf", "$ref", "asCell", "asStream", "const", "default"]
            .iter()
            .any(|k| map.contains_key(*k))
        {
            return None;
        }
        if let Some(values) = map.get("enum") {
            let mut values = values.as_array()?.clone();
            if !values.iter().all(|v| v.is_string() || v.is_number()) {
                return None;
            }
            self.env.literals.sort(&mut values);
            return Some(json!({ "enum": values }));
        }
        Some(match map.get("type")?.as_str()? {
            "string" => json!({ "type": "string" }),
            "number" | "integer" => json!({ "type": "number" }),
            "boolean" => json!({ "type": "boolean" }),
            "null" => json!({ "type": "null" }),
            "array" => {
                let items = match map.get("items") {
                    Some(items) => self.type_of_json_schema(items, depth + 1)?,
                    None => Value::Bool(true),
                };
                json!({ "type": "array", "items": items })
            }
            "object" => {
                let written = map.get("properties")?.as_object()?;
                let listed: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map_or(Vec::new(), |r| r.iter().filter_map(Value::as_str).collect());
                let mut properties = Map::new();
                let mut required = Vec::new();
                for (key, sub) in written {
                    properties.insert(key.clone(), self.type_of_json_schema(sub, depth + 1)?);
                    if listed.contains(&key.as_str()) {
                        required.push(Value::String(key.clone()));
                    }
                }
                let mut schema = json!({ "type": "object", "properties": properties });
                if !required.is_empty() {
                    schema["required"] = Value::Array(required);
                }
                schema
            }
            _ => return None,
        })
    }

    /// `Omit<T, K>`, `Pick<T, K>` and `Partial<T>` of an object type `T`
    /// (a declared name or a literal) with `K` string literals.
    fn utility_object(&mut self, name: &str, args: &[&TsType]) -> Option<Value> {
        let target = *args.first()?;
        let mut body = match target {
            TsType::TsTypeRef(r) if r.type_params.is_none() => match &r.type_name {
                TsEntityName::Ident(id)
                    if self.env.decls.contains_key(id.sym.as_ref())
                        && !self.inline_stack.iter().any(|n| n == id.sym.as_ref()) =>
                {
                    self.inline_stack.push(id.sym.to_string());
                    let body = self.named_body(&id.sym);
                    self.inline_stack.pop();
                    body
                }
                _ => return None,
            },
            TsType::TsTypeLit(_) => self.ty(target),
            _ => return None,
        };
        body.get("properties")?.as_object()?;
        let keys: Option<Vec<String>> = match args.get(1) {
            None => None,
            Some(k) => {
                let mut out = Vec::new();
                let members: Vec<&TsType> = match k {
                    TsType::TsUnionOrIntersectionType(TsUnionOrIntersectionType::TsUnionType(u)) => {
                        u.types.iter().map(|b| &**b).collect()
                    }
                    other => vec![*other],
                };
                for m in members {
                    match literal_value(m)? {
                        Value::String(s) => out.push(s),
                        _ => return None,
                    }
                }
                Some(out)
            }
        };
        let keep = |key: &str| match (name, &keys) {
            ("Omit", Some(k)) => !k.iter().any(|x| x == key),
            ("Pick", Some(k)) => k.iter().any(|x| x == key),
            _ => true,
        };
        if let Some(Value::Object(props)) = body.get_mut("properties") {
            props.retain(|k, _| keep(k));
        }
        if let Some(Value::Array(required)) = body.get_mut("required") {
            required.retain(|r| r.as_str().is_some_and(&keep) && name != "Partial");
        }
        if body.get("required").and_then(|r| r.as_array()).is_some_and(|r| r.is_empty()) {
            body.as_object_mut()?.remove("required");
        }
        Some(body)
    }

    /// A cell wrapper (`Writable<T>`, `Cell<T>`, …), directly or through aliases.
    fn is_cell_like(&self, t: &TsType, depth: usize) -> bool {
        let TsType::TsTypeRef(r) = t else { return false };
        let TsEntityName::Ident(id) = &r.type_name else { return false };
        if self.subst.last().is_some_and(|m| m.contains_key(id.sym.as_ref())) {
            return false;
        }
        if wrapper_brand(&id.sym).is_some() {
            return wrapper_brand(&id.sym) == Some("cell");
        }
        match self.env.decls.get(id.sym.as_ref()) {
            Some(DeclRef::Alias(_, a)) if depth < 8 => self.is_cell_like(&a.type_ann, depth + 1),
            _ => false,
        }
    }

    /// `"Named|null"` for a union of one declared, non-generic type and `null`.
    fn nullable_named_identity(&self, members: &[&TsType]) -> Option<String> {
        let is_null = |t: &TsType| matches!(t, TsType::TsKeywordType(k) if k.kind == TsKeywordTypeKind::TsNullKeyword);
        let named = |t: &TsType| match t {
            TsType::TsTypeRef(r) if r.type_params.is_none() => match &r.type_name {
                TsEntityName::Ident(id)
                    if self.env.decls.contains_key(id.sym.as_ref())
                        && self.subst.last().is_none_or(|m| !m.contains_key(id.sym.as_ref())) =>
                {
                    Some(id.sym.to_string())
                }
                _ => None,
            },
            _ => None,
        };
        match members {
            [a, b] if is_null(b) => named(a).map(|n| format!("{n}|null")),
            [a, b] if is_null(a) => named(b).map(|n| format!("{n}|null")),
            _ => None,
        }
    }

    fn existing_anonymous_name(&self, identity: &str) -> Option<String> {
        let names = self.env.anonymous.borrow();
        names.iter().position(|n| n == identity).map(|i| format!("AnonymousType_{}", i + 1))
    }

    fn anonymous_name(&mut self, identity: &str) -> String {
        if let Some(name) = self.existing_anonymous_name(identity) {
            return name;
        }
        let mut names = self.env.anonymous.borrow_mut();
        names.push(identity.to_string());
        format!("AnonymousType_{}", names.len())
    }

    fn type_ref(&mut self, name: &str, args: &[&TsType]) -> Value {
        let shadowed = self.subst.last().is_some_and(|m| m.contains_key(name));
        if !shadowed && let Some(original) = self.env.renames.get(name) {
            let original = original.clone();
            return self.type_ref(&original, args);
        }
        if args.is_empty()
            && let Some(bound) = self.subst.last().and_then(|m| m.get(name))
        {
            return bound.clone();
        }
        if let Some(brand) = wrapper_brand(name) {
            return self.wrapper_type(brand, args);
        }
        if let Some(schema) = self.cfc_alias(name, args) {
            return schema;
        }
        if let Some(scope) = scope_of(name) {
            return self.scoped_type(scope, args);
        }
        if let Some(schema) = self.builtin_type_ref(name, args) {
            return schema;
        }
        if name == "UIRenderable" && !self.env.decls.contains_key(name) {
            self.define("UIRenderable", ui_renderable());
            return json!({ "$ref": "#/$defs/UIRenderable" });
        }
        if self.env.decls.contains_key(name) {
            if !args.is_empty() || self.generic_params(name).is_some() {
                return self.instantiate(name, args);
            }
            return self.reference(name);
        }
        self.unsupported(format!("unresolved type `{name}`"))
    }

    /// A cell wrapper (`Writable<T>`, `Stream<T>`, …): `T` with the
    /// wrapper's brand prepended to `asCell`.
    fn wrapper_type(&mut self, brand: &str, args: &[&TsType]) -> Value {
        let inner = match args.first() {
            Some(t) => self.ty(t),
            None if brand == "sqlite" => Value::Bool(true),
            None => Value::Bool(true),
        };
        if self.result && brand == "cell" {
            // The compiler drops `asCell` from `{asCell: ["cell"]}`: `{}`, not `true`.
            return if inner == Value::Bool(true) { json!({}) } else { inner };
        }
        prepend_brand(inner, brand)
    }

    /// A scope wrapper (`PerUser<T>`, …): `T` with the scope applied.
    fn scoped_type(&mut self, scope: &str, args: &[&TsType]) -> Value {
        let inner = args.first().map_or(Value::Bool(true), |t| self.ty(t));
        // A result unwraps a cell, and the scope was the cell's.
        let scoped_cell = args.first().is_some_and(|t| {
            matches!(t, TsType::TsTypeRef(r) if matches!(&r.type_name, TsEntityName::Ident(id) if wrapper_brand(&id.sym) == Some("cell")))
        });
        if self.result && scoped_cell {
            return inner;
        }
        apply_scope(inner, scope)
    }

    /// The types the compiler knows by name (`ReturnType`, `Default`,
    /// `Array`, `Record`, the utility types, the platform's and the
    /// language's native types); `None` for any other name.
    fn builtin_type_ref(&mut self, name: &str, args: &[&TsType]) -> Option<Value> {
        match name {
            "ReturnType" => Some(self.return_type(args)),
            "Reactive" => {
                let inner = args.first().map_or(Value::Bool(true), |t| self.ty(t));
                // The compiler sees the stream through the alias and again
                // inside it: `Reactive<Stream<E>>` is `asCell: ["stream", "stream"]`.
                let of_stream = args.first().is_some_and(|t| {
                    matches!(t, TsType::TsTypeRef(r) if matches!(&r.type_name, TsEntityName::Ident(id) if wrapper_brand(&id.sym) == Some("stream")))
                });
                Some(if of_stream { prepend_brand(inner, "stream") } else { inner })
            }
            "Default" => {
                let mut s = args.first().map_or(Value::Bool(true), |t| self.ty(t));
                if let Some(v) = args.get(1).and_then(|t| self.default_value(t)) {
                    s = with_key(s, "default", v);
                }
                Some(s)
            }
            "Array" | "ReadonlyArray" => Some(match args.first() {
                Some(t) => self.array_of(t),
                None => json!({ "type": "array", "items": true }),
            }),
            "Record" => {
                let value = args.get(1).map_or(Value::Bool(true), |t| self.ty(t));
                // Number keys make a record an array to the compiler.
                if matches!(args.first(), Some(TsType::TsKeywordType(k)) if k.kind == TsKeywordTypeKind::TsNumberKeyword)
                {
                    return Some(json!({ "type": "array", "items": value }));
                }
                Some(json!({ "type": "object", "properties": {}, "additionalProperties": value }))
            }
            "Schema" if !self.env.decls.contains_key(name) => Some(self.schema_of_constant(args)),
            // The mapped utility types over an object: its properties kept,
            // dropped, or all made optional.
            "Omit" | "Pick" | "Partial" if !self.env.decls.contains_key(name) => {
                if let Some(schema) = self.utility_object(name, args) {
                    return Some(schema);
                }
                Some(self.unsupported(format!("`{name}<…>` of something other than an object type")))
            }
            "VNode" | "JSXElement" => Some(json!({ "$ref": VNODE_REF })),
            "Date" | "RegExp" | "Uint8Array" => Some(json!({ "type": "object" })),
            // The compiler's native types: JSON Schemas and binary buffers are
            // not a meaningful filter, whoever declares them.
            "JSONSchema" | "JSONSchemaObj" | "ArrayBuffer" | "ArrayBufferLike" | "SharedArrayBuffer"
            | "ArrayBufferView" | "Uint8ClampedArray" | "Int8Array" | "Uint16Array" | "Int16Array" | "Uint32Array"
            | "Int32Array" | "Float32Array" | "Float64Array" | "BigInt64Array" | "BigUint64Array" => {
                Some(Value::Bool(true))
            }
            "URL" => Some(json!({ "type": "string", "format": "uri" })),
            _ => None,
        }
    }

    /// `ReturnType<typeof h>` of a handler factory `h = handler<E, C>(…)`:
    /// what applying it gives, a stream of `E`; of a pattern factory, its output.
    fn return_type(&mut self, args: &[&TsType]) -> Value {
        // `ReturnType<typeof handler>`: some handler's stream, event unknown.
        if let Some(TsType::TsTypeQuery(q)) = args.first()
            && matches!(&q.expr_name, swc_ecma_ast::TsTypeQueryExpr::TsEntityName(TsEntityName::Ident(id)) if id.sym == *"handler")
        {
            return json!({ "asCell": ["stream"] });
        }
        // `ReturnType<typeof P>` of a pattern factory: its output.
        if let Some(TsType::TsTypeQuery(q)) = args.first()
            && let swc_ecma_ast::TsTypeQueryExpr::TsEntityName(TsEntityName::Ident(id)) = &q.expr_name
            && let Some(output) = self.env.pattern_outputs.get(id.sym.as_ref()).copied()
        {
            return self.ty(output);
        }
        if let Some(event) = args.first().and_then(|t| self.handler_event_of_typeof(t)) {
            let inner = match event {
                Some(e) => self.ty(e),
                None => Value::Bool(true),
            };
            return prepend_brand(inner, "stream");
        }
        self.unsupported("ReturnType of something other than a handler factory".into())
    }

    /// `Schema<typeof X>`: the type the platform's API derives from a JSON
    /// Schema written as a constant.
    fn schema_of_constant(&mut self, args: &[&TsType]) -> Value {
        if let Some(TsType::TsTypeQuery(q)) = args.first()
            && let swc_ecma_ast::TsTypeQueryExpr::TsEntityName(TsEntityName::Ident(id)) = &q.expr_name
            && let Some(init) = self.env.top_level_const(&id.sym)
            && let Some(written) = self.env.schema_literal(init)
            && let Some(schema) = self.type_of_json_schema(&written, 0)
        {
            return schema;
        }
        self.unsupported("`Schema<…>` of something other than a constant JSON Schema".into())
    }

    fn union(&mut self, types: &[Box<TsType>]) -> Value {
        let (default, mut rest) = self.split_default(types);
        // `any` and `unknown` absorb every other member, a `Default` too.
        if let Some(top) = rest.iter().find(|t| {
            matches!(t, TsType::TsKeywordType(k) if matches!(k.kind, TsKeywordTypeKind::TsAnyKeyword | TsKeywordTypeKind::TsUnknownKeyword))
        }) {
            return self.ty(top);
        }
        if default.is_none() {
            if let Some(alias) = self.covering_alias(&rest) {
                return self.ty(alias);
            }
            rest = self.flattened(rest, 0);
            // The checker's union is ordered by type id; a `Default` union is
            // formatted from its written members instead.
            rest.sort_by_key(|t| self.type_id_rank(t));
        }
        let literals = union_literals(&rest, default.is_none());
        // `Cell<T> | null`: the compiler keeps the checker's order here,
        // `null` (an intrinsic) before the cell.
        if default.is_none()
            && rest.len() == 2
            && let Some(schema) = self.null_or_cell(&rest)
        {
            return schema;
        }
        // `Named | null` (without a `Default`, which makes another type) has
        // an identity of its own in the compiler, as `Named[]` has.
        if default.is_none()
            && rest.len() == 2
            && let Some(identity) = self.nullable_named_identity(&rest)
        {
            let rest: Vec<&TsType> = rest.clone();
            return self.anonymous(identity, |g| {
                let members: Vec<Value> = rest.iter().map(|t| g.ty(t)).collect();
                union_of(members, None)
            });
        }
        let non_null: Vec<Value> = literals.iter().flatten().filter(|v| !v.is_null()).cloned().collect();
        let schema = if let (Some(_), Some(values)) = (&default, &literals)
            && rest.len() > 1
            && let Some(ty) = same_literal_type(&non_null)
        {
            defaulted_literal_enum(non_null, ty, values.contains(&Value::Null))
        } else if rest.len() == 1 {
            self.ty(rest[0])
        } else {
            self.union_members(&rest, literals, default.is_none())
        };
        match default {
            Some(v) => with_key(schema, "default", v),
            None => schema,
        }
    }

    /// `T | Default<V>`: the default applies to the union of the other
    /// members. The default's value, and the members without it (a
    /// two-argument `Default<T, V>` gives its `T`).
    fn split_default<'t>(&self, types: &'t [Box<TsType>]) -> (Option<Value>, Vec<&'t TsType>) {
        let mut default: Option<Value> = None;
        let mut rest: Vec<&TsType> = Vec::new();
        for t in types {
            if let TsType::TsTypeRef(r) = &**t
                && let TsEntityName::Ident(id) = &r.type_name
                && id.sym == *"Default"
            {
                let args: Vec<&TsType> = r.type_params.iter().flat_map(|p| p.params.iter().map(|b| &**b)).collect();
                let value_arg = if args.len() == 1 { args[0] } else { args[args.len() - 1] };
                default = self.default_value(value_arg);
                if args.len() == 2 {
                    rest.push(args[0]);
                }
                continue;
            }
            rest.push(t);
        }
        (default, rest)
    }

    /// `JSONValue | null`, where `JSONValue` already holds `null`, is the
    /// same type as `JSONValue`: the checker keeps the alias's name. The
    /// member whose own members cover all the others, if any.
    fn covering_alias<'t>(&self, rest: &[&'t TsType]) -> Option<&'t TsType> {
        for (i, t) in rest.iter().enumerate() {
            let own = self.flattened(vec![*t], 0);
            if own.len() < 2 {
                continue;
            }
            let own_keys: Vec<Option<String>> = own.iter().map(|m| type_key(m)).collect();
            let others_covered = rest
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .all(|(_, o)| type_key(o).is_some_and(|k| own_keys.contains(&Some(k))));
            if others_covered {
                return Some(*t);
            }
        }
        None
    }

    /// A two-member union of `null` and a cell: `null` first, then the cell.
    fn null_or_cell(&mut self, rest: &[&TsType]) -> Option<Value> {
        let is_null = |t: &TsType| matches!(t, TsType::TsKeywordType(k) if k.kind == TsKeywordTypeKind::TsNullKeyword);
        if let Some(cell) = rest.iter().find(|t| !is_null(t))
            && rest.iter().any(|t| is_null(t))
            && self.is_cell_like(cell, 0)
        {
            let inner = self.ty(cell);
            return Some(json!({ "anyOf": [{ "type": "null" }, inner] }));
        }
        None
    }

    /// The general union: each member's schema, with the literal members
    /// (`literals`) merged in the checker's type-id order.
    fn union_members(&mut self, rest: &[&TsType], literals: Option<Vec<Value>>, no_default: bool) -> Value {
        let mut members: Vec<Value> = Vec::new();
        for t in rest {
            match t {
                // The checker's union holds `boolean` as `false | true`: two
                // literals that merge into a `boolean` member of their own
                // (never into a `type` array). A `Default` union formats the
                // written `boolean` whole.
                TsType::TsKeywordType(k) if k.kind == TsKeywordTypeKind::TsBooleanKeyword && no_default => {
                    members.push(json!({ "type": "boolean", "enum": [false] }));
                    members.push(json!({ "type": "boolean", "enum": [true] }));
                }
                _ => members.push(self.ty(t)),
            }
        }
        // Literal members come out in the checker's type-id order, `null` last.
        let literals = literals.map(|mut values| {
            self.env.literals.sort(&mut values);
            values
        });
        union_of(members, literals)
    }
}

/// The schema of a literal type (`"a"`, `1`, `true`, …).
fn literal_type(lit: &TsLit) -> Value {
    match lit {
        TsLit::Str(s) => json!({ "type": "string", "enum": [s.value.to_string_lossy()] }),
        TsLit::Number(n) => json!({ "type": "number", "enum": [num(n.value)] }),
        TsLit::Bool(b) => json!({ "type": "boolean", "enum": [b.value] }),
        TsLit::BigInt(_) => json!({ "type": "integer" }),
        TsLit::Tpl(_) => json!({ "type": "string" }),
    }
}

/// The values of a union whose members are all literals (`null` and, to the
/// checker, `boolean` as `false | true` among them, the latter only without
/// a default); `None` unless there is a value other than `null`.
fn union_literals(rest: &[&TsType], no_default: bool) -> Option<Vec<Value>> {
    rest.iter()
        .map(|t| match t {
            TsType::TsLitType(_) => literal_value(t).map(|v| vec![v]),
            TsType::TsKeywordType(k) if k.kind == TsKeywordTypeKind::TsNullKeyword => Some(vec![Value::Null]),
            // To the checker, `boolean` is `false | true`.
            TsType::TsKeywordType(k) if k.kind == TsKeywordTypeKind::TsBooleanKeyword && no_default => {
                Some(vec![Value::Bool(false), Value::Bool(true)])
            }
            _ => None,
        })
        .collect::<Option<Vec<Vec<Value>>>>()
        .map(|v| v.into_iter().flatten().collect::<Vec<Value>>())
        .filter(|v| !v.is_empty() && v.iter().any(|x| !x.is_null()))
}

/// The one JSON type all the values share, if they do.
fn same_literal_type(vals: &[Value]) -> Option<&'static str> {
    let t = |v: &Value| match v {
        Value::String(_) => Some("string"),
        Value::Number(_) => Some("number"),
        Value::Bool(_) => Some("boolean"),
        _ => None,
    };
    let first = t(vals.first()?)?;
    vals.iter().all(|v| t(v) == Some(first)).then_some(first)
}

/// With a default, literal members merge on the general path: a typed
/// enum, sorted as JavaScript's `toSorted()` sorts (by string form), and
/// `null` as its own nullable branch.
fn defaulted_literal_enum(mut non_null: Vec<Value>, ty: &str, nullable: bool) -> Value {
    non_null.sort_by(|a, b| js_string(a).encode_utf16().cmp(js_string(b).encode_utf16()));
    let typed = json!({ "type": ty, "enum": non_null });
    if nullable { json!({ "anyOf": [typed, { "type": "null" }] }) } else { typed }
}

/// A value as JavaScript's `String(value)` prints it (the key of `toSorted()`).
fn js_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A key that is equal for the same simple type (keywords, literals, plain
/// names); `None` for anything else.
fn type_key(t: &TsType) -> Option<String> {
    match t {
        TsType::TsKeywordType(k) => Some(format!("kw:{:?}", k.kind)),
        TsType::TsLitType(_) => literal_value(t).map(|v| format!("lit:{v}")),
        TsType::TsTypeRef(r) if r.type_params.is_none() => match &r.type_name {
            TsEntityName::Ident(id) => Some(format!("ref:{}", id.sym)),
            _ => None,
        },
        _ => None,
    }
}

/// `ReadonlyArray<T>`/`Array<T>` → `("array", T)`, and `Record<string, V>`
/// (or `Readonly<Record<string, V>>`) → `("record", V)`, as an interface's base.
fn collection_base(e: &swc_ecma_ast::TsExprWithTypeArgs) -> Option<(&'static str, &TsType)> {
    let Expr::Ident(id) = &*e.expr else { return None };
    let args = &e.type_args.as_ref()?.params;
    match (id.sym.as_ref(), args.as_slice()) {
        ("Array" | "ReadonlyArray", [t]) => Some(("array", t)),
        ("Record", [k, v]) if matches!(&**k, TsType::TsKeywordType(kw) if kw.kind == TsKeywordTypeKind::TsStringKeyword) => {
            Some(("record", v))
        }
        ("Readonly", [inner]) => match &**inner {
            TsType::TsTypeRef(r)
                if matches!(&r.type_name, TsEntityName::Ident(n) if n.sym == *"Record")
                    && r.type_params.as_ref().is_some_and(|p| {
                        p.params.len() == 2
                            && matches!(&*p.params[0], TsType::TsKeywordType(kw) if kw.kind == TsKeywordTypeKind::TsStringKeyword)
                    }) =>
            {
                Some(("record", &r.type_params.as_ref().unwrap().params[1]))
            }
            _ => None,
        },
        _ => None,
    }
}

/// Whether a schema is stream-marked (`asCell` holds `"stream"`): a verb.
pub(crate) fn is_stream_schema(schema: &Value) -> bool {
    schema.get("asCell").and_then(|a| a.as_array()).is_some_and(|a| a.iter().any(|x| x == "stream"))
}

/// The platform's `UIRenderable`: anything with a `[UI]` VNode.
fn ui_renderable() -> Value {
    json!({
        "type": "object",
        "properties": { "$UI": { "$ref": VNODE_REF } },
        "required": ["$UI"]
    })
}

/// Whether a field type carries a default: `Default<T, V>` or `T | Default<V>`.
pub(crate) fn has_default(t: &TsType) -> bool {
    match t {
        TsType::TsUnionOrIntersectionType(swc_ecma_ast::TsUnionOrIntersectionType::TsUnionType(u)) => {
            u.types.iter().any(|m| is_default_ref(m))
        }
        other => is_default_ref(other),
    }
}

/// `Default<…>`, as a union member.
pub(crate) fn is_default_ref(t: &TsType) -> bool {
    matches!(t, TsType::TsTypeRef(r) if matches!(&r.type_name, TsEntityName::Ident(id) if id.sym == *"Default"))
}

fn apply_scope(inner: Value, scope: &str) -> Value {
    let mut inner = inner;
    if let Some(Value::Array(cells)) = inner.get_mut("asCell")
        && let Some(first) = cells.first_mut()
    {
        if let Some(kind) = first.as_str() {
            *first = json!({ "kind": kind, "scope": scope });
        }
        return inner;
    }
    with_key(inner, "scope", json!(scope))
}

/// `Default<T | undefined, V>` makes the property optional.
fn is_default_with_undefined(t: &TsType) -> bool {
    let TsType::TsTypeRef(r) = t else { return false };
    let TsEntityName::Ident(id) = &r.type_name else { return false };
    if id.sym != *"Default" {
        return false;
    }
    r.type_params.as_ref().and_then(|p| p.params.first()).is_some_and(|first| match &**first {
        TsType::TsUnionOrIntersectionType(TsUnionOrIntersectionType::TsUnionType(u)) => u
            .types
            .iter()
            .any(|t| matches!(&**t, TsType::TsKeywordType(k) if k.kind == TsKeywordTypeKind::TsUndefinedKeyword)),
        _ => false,
    })
}

fn collect_refs(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                if k == "$ref" {
                    if let Some(name) = x.as_str().and_then(|s| s.strip_prefix("#/$defs/")) {
                        f(name);
                    }
                } else if k != "$defs" {
                    collect_refs(x, f);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::parse;

    fn gen_for(src: &str, ty: &str) -> Value {
        let files = vec![parse("x.tsx", &format!("{src}\ntype __Root = {ty};\n"))];
        let env = TypeEnv::new(&files);
        let DeclRef::Alias(_, a) = env.decls["__Root"] else { unreachable!() };
        SchemaGen::new(&env).root(&a.type_ann).schema
    }

    #[test]
    fn counter_contract_matches_the_compiler() {
        let src = r#"
interface CounterInput { value?: Writable<number | Default<0>>; }
export interface CounterOutput { [NAME]: string; [UI]: VNode; value: number; increment: Stream<void>; decrement: Stream<void>; }
"#;
        assert_eq!(
            gen_for(src, "CounterInput"),
            json!({"type": "object", "properties": {"value": {"asCell": ["cell"], "default": 0, "type": "number"}}})
        );
        assert_eq!(
            gen_for(src, "CounterOutput"),
            json!({"type": "object",
                "properties": {"$NAME": {"type": "string"}, "$UI": {"$ref": VNODE_REF},
                    "value": {"type": "number"}, "increment": {"asCell": ["stream", "opaque"]}, "decrement": {"asCell": ["stream", "opaque"]}},
                "required": ["$NAME", "$UI", "value", "increment", "decrement"]})
        );
    }

    #[test]
    fn named_types_hoist_unions_merge_and_docs_become_descriptions() {
        let src = r#"
/** One item. #todo */
interface Item { title: string; done?: boolean; }
type Mode = "on" | "off";
interface Root {
  /** All items. */
  items: Item[];
  mode: Mode;
  note: string | undefined;
  maybe: Item | null;
  count: Default<number, 3>;
  kind: "a" | "b" | Default<"a">;
  tags: unknown[] | Default<typeof START>;
  seat: 1 | 2 | null | Default<null>;
  ping: Stream<PingEvent>;
  panel: JSX.Element;
  who: PerUser<Writable<string>>;
  onPick: (x: string) => Stream<string>;
  helper: (x: number) => number;
  secret: Secret<string>;
  boxed: Box<number>;
}
type Secret<T> = T;
interface Box<T> { value: T }
const START = ["x", -1, { k: true }] as const;
type PingEvent = Record<PropertyKey, never>;
"#;
        let s = gen_for(src, "Root");
        assert_eq!(
            s["properties"]["items"],
            json!({"type": "array", "items": {"$ref": "#/$defs/Item"}, "description": "All items."})
        );
        assert!(s["$defs"]["Item"].get("description").is_none(), "only the root carries its type's JSDoc");
        let item = gen_for(src, "Item");
        assert_eq!(item["description"], "One item. #todo");
        assert_eq!(item["tags"], json!(["todo"]));
        assert_eq!(s["$defs"]["Item"]["required"], json!(["title"]));
        assert_eq!(s["properties"]["mode"], json!({"$ref": "#/$defs/Mode"}));
        assert_eq!(s["$defs"]["Mode"], json!({"enum": ["on", "off"]}));
        assert_eq!(s["properties"]["note"], json!({"type": ["string", "undefined"]}));
        assert_eq!(s["properties"]["maybe"], json!({"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}]}));
        assert_eq!(s["properties"]["count"], json!({"type": "number", "default": 3}));
        assert_eq!(s["properties"]["kind"], json!({"type": "string", "enum": ["a", "b"], "default": "a"}));
        assert_eq!(s["properties"]["tags"]["default"], json!(["x", -1, {"k": true}]));
        assert_eq!(s["properties"]["ping"], json!({"$ref": "#/$defs/PingEvent", "asCell": ["stream"]}));
        assert_eq!(s["properties"]["panel"], json!({"$ref": "#/$defs/JSXElement"}));
        assert_eq!(s["$defs"]["UIRenderable"]["required"], json!(["$UI"]));
        assert_eq!(s["$defs"]["PingEvent"], json!({"type": "object", "properties": {}, "additionalProperties": false}));
        assert_eq!(
            s["properties"]["seat"],
            json!({"anyOf": [{"type": "number", "enum": [1, 2]}, {"type": "null"}], "default": null})
        );
        assert_eq!(s["properties"]["who"], json!({"type": "string", "asCell": [{"kind": "cell", "scope": "user"}]}));
        assert_eq!(s["properties"]["onPick"], json!({"asCell": ["stream"]}));
        assert!(s["properties"].get("helper").is_none(), "plain functions are dropped");
        assert_eq!(s["properties"]["secret"], json!({"type": "string"}), "generic aliases are instantiated inline");
        assert_eq!(s["properties"]["boxed"]["properties"]["value"], json!({"type": "number"}));
        assert!(!s["required"].as_array().unwrap().contains(&json!("helper")));
    }

    #[test]
    fn enum_values_come_out_in_the_compilers_order() {
        // Plain literal unions follow the checker's literal creation order:
        // `"number"` exists before any source (a `typeof` name), and `"b"` is
        // met in the code above the type. With a `Default`, the members merge
        // and the enum is sorted by string form, as JavaScript's `toSorted()`.
        let src = r#"
const first = "b";
interface Root {
  kind: "text" | "number" | "b";
  mode: "user" | "admin" | Default<"user">;
  size: 10 | 9 | Default<9>;
  maybe: "z" | null | "b";
}
"#;
        let s = gen_for(src, "Root");
        assert_eq!(s["properties"]["kind"], json!({"enum": ["number", "b", "text"]}));
        assert_eq!(s["properties"]["mode"], json!({"type": "string", "enum": ["admin", "user"], "default": "user"}));
        assert_eq!(s["properties"]["size"], json!({"type": "number", "enum": [10, 9], "default": 9}));
        assert_eq!(s["properties"]["maybe"], json!({"enum": ["b", "z", null]}));
    }

    #[test]
    fn union_members_order_absorption_and_result_cells() {
        let src = r#"
interface Author { name: string }
interface Root {
  plain: Author | undefined;
  withDefault?: Author | Default<{ name: "" }> | undefined;
  loose: any | Default<null>;
  /** @deprecated Old name.
   * Use `plain`. */
  legacy: string;
  draft: PerSession<Writable<string>>;
  anyCells: Writable<any>[];
}
"#;
        // The checker orders a plain union by type id (`undefined` is an
        // intrinsic, created first); a `Default` union keeps the written order.
        let s = gen_for(src, "Root");
        assert_eq!(s["properties"]["plain"], json!({"anyOf": [{"type": "undefined"}, {"$ref": "#/$defs/Author"}]}));
        assert_eq!(s["properties"]["withDefault"]["anyOf"], json!([{"$ref": "#/$defs/Author"}, {"type": "undefined"}]));
        // `any` absorbs the union and its default.
        assert_eq!(s["properties"]["loose"], json!(true));
        // A description stops at the first block tag, continuation lines included.
        assert_eq!(s["properties"]["legacy"], json!({"type": "string"}));
        assert_eq!(
            s["properties"]["draft"],
            json!({"type": "string", "asCell": [{"kind": "cell", "scope": "session"}]})
        );
        // In a result, cells unwrap: the session scope was the cell's, and an
        // `any` cell is `{}`.
        let files = vec![parse("x.tsx", &format!("{src}\ntype __Root = Root;\n"))];
        let env = TypeEnv::new(&files);
        let DeclRef::Alias(_, a) = env.decls["__Root"] else { unreachable!() };
        let r = SchemaGen::for_result(&env).root(&a.type_ann).schema;
        assert_eq!(r["properties"]["draft"], json!({"type": "string"}));
        assert_eq!(r["properties"]["anyCells"], json!({"type": "array", "items": {}}));
    }

    #[test]
    fn union_aliases_flatten_and_const_tuples_index_to_enums() {
        let src = r#"
const SUITS = ["hearts", "spades"] as const;
type Suit = (typeof SUITS)[number];
type Status = "want" | "done";
type Primitive = string | number | null;
interface Root {
  filter: Status | "all";
  value: Primitive | boolean | Status[];
  suit: Suit;
  onPick: Reactive<Stream<{ n: number }>>;
}
"#;
        let s = gen_for(src, "Root");
        // The checker flattens `Status | "all"` into one literal union.
        assert_eq!(s["properties"]["filter"], json!({"enum": ["want", "done", "all"]}));
        // Primitives merge into one `type` array; `boolean` stays its own member.
        assert_eq!(
            s["properties"]["value"],
            json!({"anyOf": [{"type": ["null", "number", "string"]}, {"type": "boolean"}, {"type": "array", "items": {"$ref": "#/$defs/Status"}}]})
        );
        // `(typeof SUITS)[number]` of an `as const` array is its literals, inline.
        assert_eq!(s["properties"]["suit"], json!({"enum": ["hearts", "spades"]}));
        assert_eq!(s["properties"]["onPick"]["asCell"], json!(["stream", "stream"]));
        // Intersections merge the members of named parts (and the platform's
        // `UIRenderable`); `ReturnType<typeof h>` of a handler is its stream.
        let src = r#"
interface Picked { value: string }
interface Ev { n: number }
const pick = handler<Ev, { value: Writable<string> }>((e, s) => {});
interface Root { both: Picked & UIRenderable; onPick: ReturnType<typeof pick> }
"#;
        let s = gen_for(src, "Root");
        assert_eq!(
            s["properties"]["both"],
            json!({"type": "object", "properties": {"value": {"type": "string"}, "$UI": {"$ref": VNODE_REF}}, "required": ["value", "$UI"]})
        );
        assert_eq!(s["properties"]["onPick"], json!({"$ref": "#/$defs/Ev", "asCell": ["stream"]}));
        // `Row["status"]` is the field's type; interfaces that only extend an
        // array or a string record are one; a union the alias already covers
        // keeps the alias.
        let src = r#"
interface Row { status: "ok" | "stale" }
type Json = string | null | JsonList | JsonMap;
interface JsonList extends ReadonlyArray<Json> {}
interface JsonMap extends Readonly<Record<string, Json>> {}
interface Root { status: Row["status"]; last: Json | null }
"#;
        let s = gen_for(src, "Root");
        assert_eq!(s["properties"]["status"], json!({"enum": ["ok", "stale"]}));
        assert_eq!(s["properties"]["last"], json!({"$ref": "#/$defs/Json"}));
        // `Cell<T> | null` keeps `null` first; Omit/Pick/Partial of an object.
        let src = r#"
interface User {
  name: string;
  /** Shown small. */
  avatar: string;
  secret: string;
}
type UserCell = Writable<User>;
type Public = Omit<User, "secret">;
interface Root {
  who: UserCell | null;
  pub: Public;
  names: Pick<User, "name" | "avatar">;
  draft: Partial<User>;
}
"#;
        let u = gen_for(src, "Root");
        assert_eq!(
            u["properties"]["who"],
            json!({"anyOf": [{"type": "null"}, {"$ref": "#/$defs/User", "asCell": ["cell"]}]})
        );
        assert_eq!(u["properties"]["pub"], json!({"$ref": "#/$defs/Public"}));
        assert_eq!(u["$defs"]["Public"]["required"], json!(["name", "avatar"]));
        assert_eq!(u["$defs"]["Public"]["properties"]["avatar"]["description"], json!("Shown small."));
        assert!(u["$defs"]["Public"]["properties"].get("secret").is_none());
        assert_eq!(u["properties"]["names"]["required"], json!(["name", "avatar"]));
        assert!(u["properties"]["draft"].get("required").is_none());
        // Number keys make a record an array.
        let r = gen_for("", "{ picked: Record<number, boolean>; byName: Record<string, number> }");
        assert_eq!(r["properties"]["picked"], json!({"type": "array", "items": {"type": "boolean"}}));
        assert_eq!(r["properties"]["byName"]["additionalProperties"], json!({"type": "number"}));
        assert_eq!(u["properties"]["draft"]["properties"]["secret"], json!({"type": "string"}));
        assert_eq!(s["$defs"]["JsonList"], json!({"type": "array", "items": {"$ref": "#/$defs/Json"}}));
        assert_eq!(
            s["$defs"]["JsonMap"],
            json!({"type": "object", "properties": {}, "additionalProperties": {"$ref": "#/$defs/Json"}})
        );
    }

    #[test]
    fn hashtags_are_lowercased_and_deduplicated() {
        assert_eq!(hashtags("A #Note about #notes and #note again; # alone"), ["note", "notes"]);
    }

    #[test]
    fn schema_of_a_constant_json_schema_is_the_type_it_describes() {
        let src = r#"
const MAIL = {
  type: "object",
  properties: {
    kind: { type: "string", enum: ["bill", "ad"], description: "dropped" },
    score: { type: "integer", minimum: 0 },
    tags: { type: "array", items: { type: "string" } },
    note: { type: "string" },
  },
  required: ["kind", "score", "tags"],
} as const;
const ODD = { anyOf: [{ type: "string" }] } as const;
"#;
        assert_eq!(
            gen_for(src, "Schema<typeof MAIL>"),
            json!({"type": "object", "properties": {
                "kind": {"enum": ["bill", "ad"]}, "score": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string"}}, "note": {"type": "string"}},
                "required": ["kind", "score", "tags"]})
        );
        // What the derivation does not cover is reported, not guessed.
        assert_eq!(gen_for(src, "Schema<typeof ODD>"), json!({}));
    }

    #[test]
    fn cfc_aliases_carry_ifc_and_cyclic_anonymous_arrays_are_hoisted() {
        let s = gen_for(
            "",
            "{ note: Confidential<string, readonly [\"expense-note\"]>; who: AuthoredByCurrentUser<string> }",
        );
        assert_eq!(s["properties"]["note"], json!({"type": "string", "ifc": {"confidentiality": ["expense-note"]}}));
        assert_eq!(s["properties"]["who"]["ifc"]["addIntegrity"][0]["kind"], "authored-by");
        let src = "interface Piece { mentioned: Piece[]; backlinks: Piece[] }";
        let s = gen_for(src, "{ pieces: Piece[] }");
        assert_eq!(s["properties"]["pieces"], json!({"$ref": "#/$defs/AnonymousType_1"}));
        assert_eq!(s["$defs"]["AnonymousType_1"], json!({"type": "array", "items": {"$ref": "#/$defs/Piece"}}));
        assert_eq!(s["$defs"]["Piece"]["properties"]["backlinks"], json!({"$ref": "#/$defs/AnonymousType_1"}));
        // Not cyclic: stays inline.
        let s = gen_for("interface Leaf { name: string }", "{ leaves: Leaf[] }");
        assert_eq!(s["properties"]["leaves"]["type"], "array");
    }

    /// [`TypeEnv::literal_order`]: the compiler's order of literal types.
    mod literal_order {
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
            let env = crate::schema::TypeEnv::with_check_order(&program, &api, &[0]);
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
        fn api_use_contextual_typing_and_inference_create_literals_where_the_checker_does() {
            let api = [parse(
                "index.d.ts",
                r#"export type CellScope = "space" | "user" | "session";
    export type Msg = { role: "user" | "assistant" | "system" | "tool"; content: string };
    export declare const send: (m: Msg) => void;
    export type GenFn = <T = unknown>(params: { tone?: string; pick?: string; skip?: string }) => T;
    export declare const gen: GenFn;
    export declare const plain: (params: { mood?: string }) => void;
    export declare const cell: <T>(value: T) => T;"#,
            )];
            let ranks = |src: &str, values: &[&str]| -> Vec<usize> {
                let program = [parse("main.tsx", src)];
                let env = crate::schema::TypeEnv::with_check_order(&program, &api, &[0]);
                let order = env.literal_order();
                values.iter().map(|v| order.rank(&json!(v))).collect()
            };
            let imports = r#"import { send, gen, plain, cell } from "commonfabric";"#;
            // The first API call instantiates the cell brand types: the scope's
            // literals exist from then on.
            let r = ranks(&format!("{imports}\nh(\"a\");\ncell(1);\nh(\"b\");"), &["a", "user", "b"]);
            assert!(r[0] < r[1] && r[1] < r[2], "{r:?}");
            // A key of a contextually typed object literal resolves that member
            // (the role union, `assistant` included) before what follows.
            let r = ranks(
                &format!("{imports}\nsend({{ role: \"user\", content: \"\" }});\nh(\"later\");"),
                &["assistant", "later"],
            );
            assert!(r[0] < r[1], "{r:?}");
            let r = ranks(
                &format!("{imports}\nconst m: Msg = {{ role: \"user\", content: \"\" }};\nh(\"later\");"),
                &["tool", "later"],
            );
            assert!(r[0] < r[1], "{r:?}");
            // Inferring a generic call's type arguments creates the keys' literal
            // types; a plain call does not.
            let r = ranks(&format!("{imports}\ngen({{ tone: \"t\" }});\nplain({{ mood: \"m\" }});"), &["tone", "mood"]);
            assert!(r[0] < usize::MAX && r[1] == usize::MAX, "{r:?}");
            // A call argument's return reads its bindings' initializers in place;
            // the rest of the body waits for the end of the file.
            let r = ranks(
                &format!(
                    "{imports}\nwrap(() => {{ const r = gen({{ pick: \"x\" }}); const s = gen({{ skip: \"y\" }}); return r; }});\nh(\"later\");"
                ),
                &["pick", "later", "skip"],
            );
            assert!(r[0] < r[1] && r[1] < r[2], "{r:?}");
        }

        #[test]
        fn imported_files_are_read_after_the_entry_in_check_order() {
            let files = [
                parse("main.tsx", r#"import { x } from "./b.ts"; f("main");"#),
                parse("a.ts", r#"export const a = "unreached";"#),
                parse("b.ts", r#"export const x = "imported";"#),
            ];
            let env = crate::schema::TypeEnv::with_check_order(&files, &[], &[0, 2, 1]);
            let order = env.literal_order();
            assert!(order.rank(&json!("main")) < order.rank(&json!("imported")));
            assert!(order.rank(&json!("imported")) < order.rank(&json!("unreached")));
            let env = crate::schema::TypeEnv::new(&files);
            assert_eq!(env.literal_order().rank(&json!("imported")), usize::MAX);
        }
    }
}
