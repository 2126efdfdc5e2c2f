//! Admission: the host-side checks that separate what the host can confirm
//! from what the model recommends. Every rule reports a [`Problem`] naming
//! the rule, the JSON pointer in the kit and what is wrong; the admitted kit
//! keeps only what passed, with sources, pattern records, missing inputs, run
//! and exposure filled by the host.

use std::collections::{BTreeMap, BTreeSet};

use fabdex_ledger::{Contents, ItemKind};
use fabdex_query::{Engine, Inspection};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::kit::{Bounds, ExampleKind, Handle, Kit, KitStatus, Missing, RecommendationKind, Source};
use crate::placeholders::placeholders;

/// One reason a kit is not complete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Problem {
    /// `bounds`, `sources`, `rule-without-read`, `pattern-not-inspected`,
    /// `pattern-unverified`, `pattern-unknown`, `unknown-handle`,
    /// `missing-input`, `example-json`, `example-pattern`, `example-argument`,
    /// `syntax`, `import-not-selected`, `import-name`, `result-field`,
    /// `placeholder`, `recommendation`.
    pub rule: String,
    /// JSON pointer into the proposed kit.
    pub pointer: String,
    pub message: String,
}

/// The answer of `fabdex kit admit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Admission {
    pub status: KitStatus,
    pub problems: Vec<Problem>,
    pub kit: Kit,
}

struct Ctx<'a> {
    engine: &'a Engine,
    problems: Vec<Problem>,
}

impl Ctx<'_> {
    fn problem(&mut self, rule: &str, pointer: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem { rule: rule.into(), pointer: pointer.into(), message: message.into() });
    }
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn short(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if chars(&flat) > 80 { format!("{}…", flat.chars().take(80).collect::<String>()) } else { flat }
}

/// A released ledger item by citation id, with its record's sequence number.
struct Cited {
    kind: ItemKind,
    source: Source,
}

fn citations(contents: &Contents) -> BTreeMap<String, Cited> {
    let mut out = BTreeMap::new();
    for r in &contents.records {
        for i in r.call.items.iter().filter(|i| i.released) {
            if let (Some(id), Some(digest)) = (&i.citation, &i.digest) {
                out.entry(id.clone()).or_insert_with(|| Cited {
                    kind: i.kind,
                    source: Source {
                        id: id.clone(),
                        address: i.address.clone(),
                        origin: i.origin.clone(),
                        kind: serde_json::to_value(i.kind)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default(),
                        offset: i.offset,
                        end: i.end,
                        digest: digest.clone(),
                        seq: r.seq,
                    },
                });
            }
        }
    }
    out
}

/// Pattern ids the run inspected (released `record` items).
fn inspected(contents: &Contents) -> BTreeSet<String> {
    contents
        .records
        .iter()
        .flat_map(|r| &r.call.items)
        .filter(|i| i.released && i.kind == ItemKind::Record)
        .filter_map(|i| i.address.strip_prefix("pattern:").map(str::to_string))
        .collect()
}

fn check_bounds(ctx: &mut Ctx<'_>, kit: &Kit) {
    let mut text = |ptr: &str, s: &str, max: usize| {
        if chars(s) > max {
            ctx.problem("bounds", ptr, format!("{} chars, at most {max}", chars(s)));
        }
    };
    text("/task", &kit.task, Bounds::TASK);
    text("/summary", &kit.summary, Bounds::SUMMARY);
    text("/recommendation/rationale", &kit.recommendation.rationale, Bounds::RATIONALE);
    for (i, s) in kit.steps.iter().enumerate() {
        text(&format!("/steps/{i}/text"), &s.text, Bounds::TEXT);
    }
    for (i, r) in kit.rules.iter().enumerate() {
        text(&format!("/rules/{i}/rule"), &r.rule, Bounds::TEXT);
    }
    for (i, v) in kit.verification.iter().enumerate() {
        text(&format!("/verification/{i}"), v, Bounds::TEXT);
    }
    for (i, input) in kit.inputs.iter().enumerate() {
        text(&format!("/inputs/{i}/name"), &input.name, Bounds::TEXT);
        text(&format!("/inputs/{i}/token"), &input.token, Bounds::TEXT);
        text(&format!("/inputs/{i}/purpose"), &input.purpose, Bounds::TEXT);
    }
    for (i, p) in kit.patterns.iter().enumerate() {
        text(&format!("/patterns/{i}/role"), &p.role, Bounds::TEXT);
    }
    if let Some(e) = &kit.example {
        text("/example/content", &e.content, Bounds::EXAMPLE);
    }
    let lists = [
        ("/inputs", kit.inputs.len(), Bounds::INPUTS),
        ("/patterns", kit.patterns.len(), Bounds::PATTERNS),
        ("/steps", kit.steps.len(), Bounds::STEPS),
        ("/rules", kit.rules.len(), Bounds::RULES),
        ("/verification", kit.verification.len(), Bounds::VERIFICATION),
    ];
    for (ptr, n, max) in lists {
        if n > max {
            ctx.problem("bounds", ptr, format!("{n} items, at most {max}"));
        }
    }
}

/// Keep the citations that are in the ledger; report the others.
fn admit_ids(
    ctx: &mut Ctx<'_>,
    ptr: &str,
    ids: &[String],
    cited: &BTreeMap<String, Cited>,
    used: &mut Vec<String>,
    run: &str,
) -> Vec<String> {
    if ids.len() > Bounds::SOURCE_IDS {
        ctx.problem("bounds", ptr, format!("{} source ids, at most {}", ids.len(), Bounds::SOURCE_IDS));
    }
    let mut kept = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        if cited.contains_key(id) {
            kept.push(id.clone());
            if !used.contains(id) {
                used.push(id.clone());
            }
        } else {
            ctx.problem(
                "sources",
                format!("{ptr}/{i}"),
                format!("`{id}` is not a citation in run `{run}`'s ledger (cite only what the run read)"),
            );
        }
    }
    kept
}

/// The host's record of a selected pattern, embedded in the kit.
fn record(p: &Inspection) -> Value {
    json!({
        "patternId": p.pattern_id,
        "entry": p.entry,
        "importHint": p.import_hint,
        "origin": p.origin,
        "identity": p.identity.status,
        "description": p.description,
        "argumentSchema": p.argument_schema,
        "resultSchema": p.result_schema,
        "exports": p.exports.iter().map(|e| if e.default { "default".to_string() } else { e.name.clone() }).collect::<Vec<_>>(),
    })
}

/// Required arguments of a schema (see [`fabdex_query::required_inputs`]), with type text and description.
fn required_arguments(schema: Option<&Value>) -> Vec<(String, String, Option<String>)> {
    let props = fabdex_query::schema_properties(schema);
    fabdex_query::required_inputs(&props)
        .map(|(name, prop)| {
            let description = prop.get("description").and_then(|d| d.as_str()).map(str::to_string);
            (name.to_string(), fabdex_query::render_type(prop), description)
        })
        .collect()
}

fn result_fields(schema: Option<&Value>) -> BTreeSet<String> {
    fabdex_query::schema_properties(schema).into_iter().map(|(name, _, _)| name.to_string()).collect()
}

/// Admit a proposed kit against the run's ledger, the snapshot and the handle inventory.
pub fn admit(engine: &Engine, contents: &Contents, handles: &[Handle], proposed: &Kit) -> Admission {
    let mut ctx = Ctx { engine, problems: Vec::new() };
    let run = contents.run.clone();
    let mut kit = proposed.clone();
    check_bounds(&mut ctx, &kit);
    admit_sources(&mut ctx, &mut kit, &citations(contents), &run);
    let selected = admit_patterns(&mut ctx, &mut kit, contents, &run);
    let tokens: BTreeSet<&str> = handles.iter().map(|h| h.token.as_str()).collect();
    admit_inputs(&mut ctx, &mut kit, &tokens);
    let bound_inputs: BTreeSet<String> = kit.inputs.iter().map(|i| i.name.clone()).collect();
    let bound_by_example = check_example(&mut ctx, &kit, &selected, &tokens, &bound_inputs);
    kit.missing = missing_inputs(&mut ctx, &selected, &bound_by_example, &bound_inputs);
    find_placeholders(&mut ctx, &kit, proposed);
    recommendation_needs(&mut ctx, &kit);
    kit.run = Some(run);
    kit.exposure = fabdex_ledger::audit::exposure(contents).origins;
    kit.status =
        if ctx.problems.is_empty() && kit.missing.is_empty() { KitStatus::Complete } else { KitStatus::Incomplete };
    Admission { status: kit.status, problems: ctx.problems, kit }
}

/// Sources: only citations in the ledger; rules need a read. The kit's
/// sources are the citations its steps, example and kept rules use.
fn admit_sources(ctx: &mut Ctx<'_>, kit: &mut Kit, cited: &BTreeMap<String, Cited>, run: &str) {
    let mut used: Vec<String> = Vec::new();
    for (i, step) in kit.steps.iter_mut().enumerate() {
        step.source_ids = admit_ids(ctx, &format!("/steps/{i}/sourceIds"), &step.source_ids, cited, &mut used, run);
    }
    if let Some(example) = kit.example.as_mut() {
        example.source_ids = admit_ids(ctx, "/example/sourceIds", &example.source_ids, cited, &mut used, run);
    }
    let mut rules = Vec::new();
    for (i, mut rule) in std::mem::take(&mut kit.rules).into_iter().enumerate() {
        // A dropped rule's citations do not become sources.
        let mut rule_ids = Vec::new();
        rule.source_ids = admit_ids(ctx, &format!("/rules/{i}/sourceIds"), &rule.source_ids, cited, &mut rule_ids, run);
        if rule.source_ids.iter().any(|id| cited[id].kind == ItemKind::Read) {
            for id in rule_ids {
                if !used.contains(&id) {
                    used.push(id);
                }
            }
            rules.push(rule);
        } else {
            ctx.problem(
                "rule-without-read",
                format!("/rules/{i}"),
                format!("rule \"{}\" cites no text the run read (a `read` citation); dropped", short(&rule.rule)),
            );
        }
    }
    kit.rules = rules;
    kit.sources = used.iter().map(|id| cited[id].source.clone()).collect();
}

/// Patterns: inspected by the run, identity verified; each gets the host's
/// record. Returns the admitted patterns' inspections.
fn admit_patterns(ctx: &mut Ctx<'_>, kit: &mut Kit, contents: &Contents, run: &str) -> Vec<Inspection> {
    let engine = ctx.engine;
    let seen = inspected(contents);
    let mut selected: Vec<Inspection> = Vec::new();
    let mut patterns = Vec::new();
    for (i, mut p) in std::mem::take(&mut kit.patterns).into_iter().enumerate() {
        let ptr = format!("/patterns/{i}");
        let Ok(found) = engine.inspect(&p.pattern_id) else {
            ctx.problem("pattern-unknown", ptr, format!("no pattern `{}` in the index", p.pattern_id));
            continue;
        };
        if !seen.contains(&found.pattern_id) {
            ctx.problem(
                "pattern-not-inspected",
                ptr,
                format!("run `{run}` never inspected pattern `{}`; inspect it before selecting it", found.pattern_id),
            );
            continue;
        }
        if found.identity.status != fabdex_model::ts::IdentityStatus::Verified {
            ctx.problem(
                "pattern-unverified",
                ptr,
                format!(
                    "pattern `{}` has identity `{}`: {}",
                    found.pattern_id,
                    found.identity.status.as_str(),
                    found.identity.reasons.join("; ")
                ),
            );
            continue;
        }
        p.pattern_id = found.pattern_id.clone();
        p.record = Some(record(&found));
        selected.push(found);
        patterns.push(p);
    }
    kit.patterns = patterns;

    selected
}

/// Inputs: granted handles only.
fn admit_inputs(ctx: &mut Ctx<'_>, kit: &mut Kit, tokens: &BTreeSet<&str>) {
    let mut inputs = Vec::new();
    for (i, input) in std::mem::take(&mut kit.inputs).into_iter().enumerate() {
        if tokens.contains(input.token.as_str()) {
            inputs.push(input);
        } else {
            ctx.problem(
                "unknown-handle",
                format!("/inputs/{i}/token"),
                format!("`{}` is not a granted handle (granted: {})", input.token, join(tokens)),
            );
        }
    }
    kit.inputs = inputs;
}

/// The example, by kind; returns which arguments of which pattern it binds.
fn check_example(
    ctx: &mut Ctx<'_>,
    kit: &Kit,
    selected: &[Inspection],
    tokens: &BTreeSet<&str>,
    bound_inputs: &BTreeSet<String>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut bound_by_example: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    if let Some(example) = kit.example.clone() {
        match example.kind {
            ExampleKind::RunPatternInput => {
                check_run_example(ctx, &example.content, selected, tokens, &mut bound_by_example)
            }
            ExampleKind::PatternSource => {
                check_source_example(ctx, &example.content, selected, bound_inputs, &mut bound_by_example)
            }
        }
    }

    bound_by_example
}

/// Missing inputs: required arguments of selected patterns bound by no
/// granted input and not by the example.
fn missing_inputs(
    ctx: &mut Ctx<'_>,
    selected: &[Inspection],
    bound_by_example: &BTreeMap<String, BTreeSet<String>>,
    bound_inputs: &BTreeSet<String>,
) -> Vec<Missing> {
    let mut missing = Vec::new();
    for p in selected {
        for (arg, ty, description) in required_arguments(p.argument_schema.as_ref()) {
            let by_example = bound_by_example.get(&p.pattern_id).is_some_and(|keys| keys.contains(&arg));
            if by_example || bound_inputs.contains(&arg) {
                continue;
            }
            missing.push(Missing {
                kind: "input".into(),
                pattern_id: p.pattern_id.clone(),
                argument: arg.clone(),
                ty: ty.clone(),
                description,
                resolution: format!(
                    "grant a handle holding `{ty}` and bind it as input `{arg}`; until then the kit can only describe how {} would be used, not run it",
                    p.entry
                ),
            });
            ctx.problem(
                "missing-input",
                "/inputs",
                format!("required argument `{arg}` ({ty}) of {} is bound by no granted handle", p.entry),
            );
        }
    }

    missing
}

/// Placeholders anywhere the model wrote text.
fn find_placeholders(ctx: &mut Ctx<'_>, kit: &Kit, proposed: &Kit) {
    let mut texts: Vec<(String, &str)> = vec![
        ("/task".into(), kit.task.as_str()),
        ("/summary".into(), kit.summary.as_str()),
        ("/recommendation/rationale".into(), kit.recommendation.rationale.as_str()),
    ];
    texts.extend(kit.steps.iter().enumerate().map(|(i, s)| (format!("/steps/{i}/text"), s.text.as_str())));
    texts.extend(proposed.rules.iter().enumerate().map(|(i, r)| (format!("/rules/{i}/rule"), r.rule.as_str())));
    texts.extend(kit.verification.iter().enumerate().map(|(i, v)| (format!("/verification/{i}"), v.as_str())));
    texts.extend(proposed.inputs.iter().enumerate().map(|(i, x)| (format!("/inputs/{i}/purpose"), x.purpose.as_str())));
    texts.extend(proposed.patterns.iter().enumerate().map(|(i, p)| (format!("/patterns/{i}/role"), p.role.as_str())));
    if let Some(e) = &kit.example {
        texts.push(("/example/content".into(), e.content.as_str()));
    }
    let mut found_placeholders = Vec::new();
    for (ptr, text) in texts {
        for (what, line) in placeholders(text) {
            found_placeholders.push((ptr.clone(), format!("{what} (line {line})")));
        }
    }
    for (ptr, message) in found_placeholders {
        ctx.problem("placeholder", ptr, message);
    }
}

/// What the recommendation needs: its kind of example, a rule, a pattern.
fn recommendation_needs(ctx: &mut Ctx<'_>, kit: &Kit) {
    let example_kind = kit.example.as_ref().map(|e| e.kind);
    let needed = match kit.recommendation.kind {
        RecommendationKind::DirectRun => (example_kind != Some(ExampleKind::RunPatternInput))
            .then_some("a direct-run recommendation needs a `run-pattern-input` example"),
        RecommendationKind::Compose | RecommendationKind::Author => (example_kind != Some(ExampleKind::PatternSource))
            .then_some("a compose or author recommendation needs a `pattern-source` example"),
        RecommendationKind::FocusedApi => {
            kit.rules.is_empty().then_some("a focused-api recommendation needs at least one rule citing a read")
        }
    };
    if let Some(message) = needed {
        ctx.problem("recommendation", "/recommendation/kind", message);
    }
    if matches!(kit.recommendation.kind, RecommendationKind::DirectRun | RecommendationKind::Compose)
        && kit.patterns.is_empty()
    {
        ctx.problem("recommendation", "/patterns", "no admitted pattern to run or compose");
    }
}

fn join(tokens: &BTreeSet<&str>) -> String {
    if tokens.is_empty() {
        "none".into()
    } else {
        tokens.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
    }
}

fn check_run_example(
    ctx: &mut Ctx<'_>,
    content: &str,
    selected: &[Inspection],
    tokens: &BTreeSet<&str>,
    bound: &mut BTreeMap<String, BTreeSet<String>>,
) {
    let value: Value = match serde_json::from_str(content) {
        Ok(v) => v,
        Err(e) => {
            ctx.problem("example-json", "/example/content", format!("not valid JSON: {e}"));
            return;
        }
    };
    let Some(id) = value.get("patternId").and_then(|v| v.as_str()) else {
        ctx.problem("example-json", "/example/content", "expected {\"patternId\": …, \"argument\": {…}}");
        return;
    };
    let Some(p) = selected.iter().find(|p| p.pattern_id == id || p.aliases.iter().any(|a| a == id)) else {
        ctx.problem("example-pattern", "/example/content", format!("`{id}` is not a selected (admitted) pattern"));
        return;
    };
    let empty = serde_json::Map::new();
    let argument = value.get("argument").and_then(|a| a.as_object()).unwrap_or(&empty);
    let props = fabdex_query::schema_properties(p.argument_schema.as_ref());
    let keys = bound.entry(p.pattern_id.clone()).or_default();
    for (key, v) in argument {
        if !props.iter().any(|(name, _, _)| name == key) {
            ctx.problem(
                "example-argument",
                format!("/example/content/argument/{key}"),
                format!("{} takes no argument `{key}`", p.entry),
            );
            continue;
        }
        if let Some(token) = v.get("$handle").and_then(|t| t.as_str())
            && !tokens.contains(token)
        {
            ctx.problem(
                "unknown-handle",
                format!("/example/content/argument/{key}"),
                format!("`{token}` is not a granted handle"),
            );
            continue;
        }
        keys.insert(key.clone());
    }
}

fn check_source_example(
    ctx: &mut Ctx<'_>,
    content: &str,
    selected: &[Inspection],
    bound_inputs: &BTreeSet<String>,
    bound: &mut BTreeMap<String, BTreeSet<String>>,
) {
    let path = "example.tsx";
    let extraction = fabdex_ts::extract(path, content);
    for d in &extraction.diagnostics {
        ctx.problem("syntax", "/example/content", format!("{}:{}: {}", d.line, d.column, d.message));
    }
    let params = fabdex_ts::reads::pattern_parameters(path, content);
    let mut locals: Vec<(String, &Inspection)> = Vec::new();
    for imp in &extraction.imports {
        let Some(cf) = &imp.cf else {
            if let Some(err) = &imp.error {
                ctx.problem("import-not-selected", "/example/content", format!("line {}: {err}", imp.line));
            }
            continue;
        };
        let Some(id) = cf.pattern_id() else { continue };
        let Some(p) = selected.iter().find(|p| p.pattern_id == id) else {
            let known = ctx.engine.inspect(id).is_ok();
            ctx.problem(
                "import-not-selected",
                "/example/content",
                if known {
                    format!("line {}: imports `cf:pattern:{id}`, which is not a selected (admitted) pattern", imp.line)
                } else {
                    format!("line {}: imports `cf:pattern:{id}`, which is in no index (an invented id?)", imp.line)
                },
            );
            continue;
        };
        let exports: BTreeSet<String> =
            p.exports.iter().map(|e| if e.default { "default".to_string() } else { e.name.clone() }).collect();
        for name in &imp.names {
            if name.imported != "*" && !exports.contains(&name.imported) {
                ctx.problem(
                    "import-name",
                    "/example/content",
                    format!("line {}: {} exports no `{}` (exports: {})", imp.line, p.entry, name.imported, {
                        exports.iter().cloned().collect::<Vec<_>>().join(", ")
                    }),
                );
            }
            locals.push((name.local.clone(), p));
        }
    }
    let names: Vec<&str> = locals.iter().map(|(l, _)| l.as_str()).collect();
    for read in fabdex_ts::reads::result_reads(path, content, &names) {
        let Some((_, p)) = locals.iter().find(|(l, _)| *l == read.callee) else { continue };
        let fields = result_fields(p.result_schema.as_ref());
        if !fields.contains(&read.field) {
            ctx.problem(
                "result-field",
                "/example/content",
                format!(
                    "line {}: reads `{}.{}`, but the result of {} has no `{}` (fields: {})",
                    read.line,
                    read.callee,
                    read.field,
                    p.entry,
                    read.field,
                    fields.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            );
        }
    }
    // An argument passed in the source is bound, unless it is passed straight
    // through from the composition's own argument: then a granted input must bind it.
    for key in fabdex_ts::reads::call_arguments(path, content, &names) {
        let Some((_, p)) = locals.iter().find(|(l, _)| *l == key.callee) else { continue };
        let through = key.identifier.as_ref().filter(|id| params.contains(id));
        if through.is_none_or(|id| bound_inputs.contains(id)) {
            bound.entry(p.pattern_id.clone()).or_default().insert(key.key.clone());
        }
    }
}
