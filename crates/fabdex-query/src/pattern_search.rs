//! Pattern search: text, tags and contracts, with a fit verdict per hit.
//!
//! Every program is scored with BM25F over twelve weighted fields (its
//! name, description, tags, contracts and profile), read from the
//! snapshot's term table (`fabdex_snapshot::pattern_terms`), so a search
//! analyses no program text and decodes only the rows it shows. A word found
//! in what a pattern *returns* counts for more than the same word in prose
//! about it. Contract requests (`--returns`, `--accepts`) and the
//! caller's handles (`--have`) are then checked against the schemas and
//! reported as the `fit` verdict: a close textual match and a component that
//! meets the task look different in the answer, not only in the score.

use std::collections::BTreeSet;

use fabdex_model::Limits;
use fabdex_model::registry::{PatternKind, Quality};
use fabdex_model::ts::{DocRole, ProgramRow};
pub(crate) use fabdex_snapshot::pattern_terms::effective_schemas;
use fabdex_snapshot::pattern_terms::{Field, PatternTerms, ProgramFacets};
use fabdex_snapshot::patterns_table::tier_factor;
use fabdex_snapshot::search_schema::terms;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::patterns::render_type;
use crate::weights::PatternDense;
use crate::{Engine, QueryError};

/// Which lever of [`PatternLevers`] a field belongs to.
fn field_enabled(field: Field, l: &PatternLevers) -> bool {
    match field {
        Field::Catalog | Field::Keywords => l.catalog,
        Field::Readme => l.readme,
        Field::Links => l.links,
        Field::ModuleDoc | Field::Ui | Field::Actions => l.own_text,
        _ => true,
    }
}

/// The parts of pattern ranking that can be switched off, to measure each
/// (`examples/pattern_ablation.rs`). Everything is on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatternLevers {
    /// Catalog sections and their keywords.
    pub catalog: bool,
    pub readme: bool,
    pub links: bool,
    /// Module comment, `[NAME]`, UI text, action names.
    pub own_text: bool,
    /// Fixtures and legacy programs rank below the rest.
    pub tiers: bool,
    /// BM25F (one saturation over the weighted fields) instead of a sum of per-field BM25.
    pub bm25f: bool,
    /// The corpus-learned semantic model's similarity, beside BM25F.
    pub semantic: bool,
    /// The sentence-embedding cosine of each program's profile, when the
    /// index has program embeddings (and the query does not turn them off).
    pub dense: bool,
}

impl Default for PatternLevers {
    fn default() -> Self {
        PatternLevers {
            catalog: true,
            readme: true,
            links: true,
            own_text: true,
            tiers: true,
            bm25f: true,
            semantic: true,
            dense: true,
        }
    }
}

/// Weight of the semantic similarity (cosine, 0–1) beside the BM25F score.
const SEMANTIC_WEIGHT: f64 = 4.0;
/// A program no query word matched is still a candidate when its semantic
/// similarity reaches this.
const SEMANTIC_ALONE: f32 = 0.35;
/// A program no query word matched is still a candidate when its
/// sentence-embedding cosine reaches this.
const DENSE_ALONE: f32 = 0.40;

/// Each program's cosine with the query in the corpus-learned semantic
/// space (0 when either has no vector); the programs' vectors were made at
/// build time (`fabdex_snapshot::pattern_terms`).
fn semantic_similarities(table: &PatternTerms, model: &fabdex_semantic::Model, query: &[String]) -> Option<Vec<f32>> {
    let q = model.embed(&fabdex_snapshot::semantic::query_bag(query))?;
    let cosine = |v: &[f32]| v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>().max(0.0);
    Some((0..table.programs()).map(|i| table.vector(i).map_or(0.0, cosine)).collect())
}

/// `query` moved `share` of the way towards the mean of the best passages
/// of the `depth` programs closest to it (Rocchio feedback), renormalised.
/// `sims` are each program's best cosine with `query`, `passages(p)` its
/// passage vectors one after another.
fn feedback_query<'v>(
    query: &[f32],
    sims: &[f32],
    passages: impl Fn(usize) -> std::borrow::Cow<'v, [f32]>,
    share: f32,
    depth: usize,
) -> Vec<f32> {
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let dim = query.len();
    let mut order: Vec<usize> = (0..sims.len()).collect();
    order.sort_by(|&a, &b| sims[b].total_cmp(&sims[a]).then(a.cmp(&b)));
    let mut centroid = vec![0.0f32; dim];
    for &p in order.iter().take(depth) {
        let vectors = passages(p);
        if let Some(best) = vectors.chunks_exact(dim).max_by(|a, b| dot(a, query).total_cmp(&dot(b, query))) {
            centroid.iter_mut().zip(best).for_each(|(c, v)| *c += v);
        }
    }
    let norm = dot(&centroid, &centroid).sqrt();
    if norm == 0.0 || share <= 0.0 {
        return query.to_vec();
    }
    let mut moved: Vec<f32> = query.iter().zip(&centroid).map(|(q, c)| (1.0 - share) * q + share * c / norm).collect();
    let len = dot(&moved, &moved).sqrt().max(f32::EPSILON);
    moved.iter_mut().for_each(|v| *v /= len);
    moved
}

/// Matched query terms per field of one program, in field order.
type Matched = Vec<(Field, Vec<String>)>;

/// BM25F over the term table, for every program at once: each query
/// term's frequencies in a program's fields, length-normalised per field and
/// weighted, are saturated once (so a word repeated across a program's
/// catalog entry, keywords and UI counts as one strong match, not five);
/// with `levers.bm25f` off, per-field BM25 scores are summed. The result and
/// argument contracts are scored per field either way. Returns each
/// program's score and its matched terms per field.
fn score_programs(table: &PatternTerms, query: &[String], levers: &PatternLevers) -> (Vec<f64>, Vec<Matched>) {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    // How much of its own per-field score a contract match adds beside the prose.
    const CONTRACT_SHARE: f64 = 0.4;
    let n = table.programs();
    let mut scores = vec![0.0; n];
    let mut matched: Vec<Matched> = vec![Vec::new(); n];
    for t in query {
        let Some((df, postings)) = table.term(t) else { continue };
        let idf = (1.0 + (n as f64 - f64::from(df) + 0.5) / (f64::from(df) + 0.5)).ln();
        // A term's postings come in program order, then field order.
        for group in postings.chunk_by(|a, b| a.program == b.program) {
            let program = group[0].program as usize;
            let (mut weighted, mut summed, mut contract) = (0.0, 0.0, 0.0);
            for posting in group.iter().filter(|p| field_enabled(p.field, levers)) {
                let field = posting.field;
                let fi = field.index();
                let tf = f64::from(posting.frequency);
                let norm = 1.0 - B + B * f64::from(table.len_of(program, fi)) / table.avg_len(fi);
                let bm25 = field.weight() * idf * tf * (K1 + 1.0) / (tf + K1 * norm);
                if matches!(field, Field::Result | Field::Argument) {
                    // The contract is evidence of a different kind from the
                    // prose: it keeps its own per-field score, as before.
                    contract += CONTRACT_SHARE * bm25;
                } else {
                    weighted += field.weight() * tf / norm;
                    summed += bm25;
                }
                match matched[program].iter_mut().find(|(f, _)| *f == field) {
                    Some((_, ts)) => ts.push(t.clone()),
                    None => matched[program].push((field, vec![t.clone()])),
                }
            }
            scores[program] +=
                contract + if levers.bm25f { idf * weighted * (K1 + 1.0) / (weighted + K1) } else { summed };
        }
    }
    for m in &mut matched {
        m.sort_by_key(|(f, _)| f.index());
    }
    (scores, matched)
}

/// Where a field's matched terms came from, for `why`: the address of the
/// note (catalog, README, link) or of the entry file (own text) holding the
/// first of them.
fn field_source(p: &ProgramRow, field: Field, terms_matched: &[String]) -> Option<String> {
    let role = match field {
        Field::Catalog | Field::Keywords => DocRole::Catalog,
        Field::Readme => DocRole::Readme,
        Field::Links => DocRole::Link,
        Field::ModuleDoc | Field::Ui | Field::Actions => {
            return p.files.first().map(|f| p.file_address(&f.name));
        }
        _ => return None,
    };
    let holds = |text: &str| terms(text).iter().any(|t| terms_matched.contains(t));
    let notes =
        p.profile.docs.iter().filter(|n| n.role == role || (field == Field::Keywords && n.role == DocRole::Readme));
    let mut first = None;
    for n in notes {
        let text = if field == Field::Keywords { n.keywords.join(" ") } else { format!("{} {}", n.heading, n.text) };
        if holds(&text) {
            return Some(n.address.clone());
        }
        first.get_or_insert_with(|| n.address.clone());
    }
    first
}

/// A requested contract field: `NAME` or `NAME:TYPE`. In JSON either that
/// text or `{"name", "type"?}`, since the CLI's spelling is what callers
/// copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "FieldSpecJson")]
pub struct FieldSpec {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    #[serde(rename = "type")]
    pub ty: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum FieldSpecJson {
    Text(String),
    Object {
        name: String,
        #[serde(rename = "type", default)]
        ty: Option<String>,
    },
}

impl TryFrom<FieldSpecJson> for FieldSpec {
    type Error = QueryError;
    fn try_from(json: FieldSpecJson) -> Result<FieldSpec, QueryError> {
        match json {
            FieldSpecJson::Text(spec) => FieldSpec::parse(&spec, "field"),
            FieldSpecJson::Object { name, ty } => Ok(FieldSpec { name, ty }),
        }
    }
}

impl schemars::JsonSchema for FieldSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FieldSpec".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A contract field: `NAME` or `NAME:TYPE`, or {\"name\", \"type\"?}.",
            "anyOf": [
                {"type": "string"},
                {"type": "object", "properties": {"name": {"type": "string"}, "type": {"type": "string"}}, "required": ["name"]}
            ]
        })
    }
}

impl FieldSpec {
    /// Parse `NAME[:TYPE]`; `what` names the option in errors.
    pub fn parse(spec: &str, what: &str) -> Result<FieldSpec, QueryError> {
        let (name, ty) = match spec.split_once(':') {
            Some((n, t)) => (n.trim(), Some(t.trim())),
            None => (spec.trim(), None),
        };
        if name.is_empty() || ty.is_some_and(str::is_empty) {
            return Err(QueryError::InvalidArgument(format!("{what} `{spec}`: expected NAME or NAME:TYPE")));
        }
        Ok(FieldSpec { name: name.to_string(), ty: ty.map(str::to_string) })
    }
}

/// What `search patterns` takes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatternQuery {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub accepts: Vec<FieldSpec>,
    #[serde(default)]
    pub returns: Vec<FieldSpec>,
    #[serde(default)]
    pub kind: Option<PatternKind>,
    #[serde(default)]
    pub min_quality: Option<Quality>,
    #[serde(default)]
    pub depends_on: Option<String>,
    /// Only programs of this tier (`fixture`, `legacy`, `exemplar`, …, or
    /// `none` for programs without one); a tier asked for is not ranked down.
    #[serde(default)]
    pub tier: Option<String>,
    /// Handles the caller holds: `TOKEN:TYPE`.
    #[serde(default)]
    pub have: Vec<FieldSpec>,
    #[serde(default)]
    pub limit: Option<usize>,
    /// `false`: rank without the index's sentence embeddings of programs
    /// (no model is loaded). Unset: use them when the index has them.
    /// `true`: require them; an index without them is an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<bool>,
}

/// A contract field that was requested and found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FieldMatch {
    pub requested: String,
    /// The field found, and its type as TypeScript.
    pub field: String,
    #[serde(rename = "type")]
    pub ty: String,
}

/// A required input, and the handle that satisfies it (if any).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InputFit {
    pub input: String,
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub description: Option<String>,
    /// The `--have` token bound to it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub by: Option<String>,
}

/// How well a pattern fits the request, from its contract.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fit {
    /// With `--returns`/`--accepts`: `meets` (every requested field found and
    /// every required input bound by `--have`), `needs-inputs` (every
    /// requested field found, some required input unbound), `partial` (some
    /// requested fields found) or `textual` (none found). Without them:
    /// `contract-match` (query words matched contract fields) or `textual`
    /// (only the name, description or tags matched). `missing` lists unbound
    /// required inputs in every case.
    pub verdict: String,
    /// Which schemas were used: `extracted`, `declared` or `none`.
    pub contract: String,
    pub returns: Vec<FieldMatch>,
    #[serde(rename = "notReturned")]
    pub not_returned: Vec<String>,
    pub accepts: Vec<FieldMatch>,
    #[serde(rename = "notAccepted")]
    pub not_accepted: Vec<String>,
    /// Required inputs bound by a `--have` token.
    pub satisfied: Vec<InputFit>,
    /// Required inputs (no default) that no `--have` token binds.
    pub missing: Vec<InputFit>,
}

impl Fit {
    /// The fit of a hit whose text the release policy withholds: nothing of
    /// its contract (names, types, descriptions) is shown.
    pub fn withheld() -> Fit {
        Fit { verdict: "withheld".into(), contract: "withheld".into(), ..Fit::default() }
    }
}

/// One ranked pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PatternHit {
    pub rank: usize,
    /// Citable: `pattern:<id>` (the program's main file).
    pub address: String,
    #[serde(rename = "patternId")]
    pub pattern_id: String,
    #[serde(rename = "importHint")]
    pub import_hint: String,
    pub entry: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub hashtags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<PatternKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality: Option<Quality>,
    pub origin: String,
    /// `verified`, `mismatch` or `unverifiable`.
    pub identity: String,
    #[serde(rename = "hasSource")]
    pub has_source: bool,
    /// The program's tier in its library (`exemplar`, `demo`, `fixture`, `legacy`, …), when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tier: Option<String>,
    /// Where the tier came from: the catalog section's address, or `path:<entry>`.
    #[serde(rename = "tierSource", skip_serializing_if = "Option::is_none", default)]
    pub tier_source: Option<String>,
    pub score: f64,
    /// Why it is here: matched terms per field (`<field>: <terms>`, or
    /// `<field>: <source address>: <terms>` for a field read from a catalog,
    /// README, linking section or the entry's own text), tags, contract fields.
    pub why: Vec<String>,
    pub fit: Fit,
    /// Set when the operator's policy withholds this origin's text: `description` is then absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub denied: Option<String>,
}

/// The answer of `search patterns`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PatternSearch {
    pub snapshot: String,
    pub query: PatternQuery,
    /// Analyzed query terms.
    pub terms: Vec<String>,
    /// Programs that passed the filters and matched something.
    pub matched: usize,
    pub hits: Vec<PatternHit>,
    /// Hits left out by the limit.
    pub omitted: usize,
    /// How text was ranked: `bm25f+semantic` (BM25F fused with the
    /// snapshot's corpus-learned semantic model), `bm25f+semantic+embeddings`
    /// (and with the sentence-embedding cosine of each program's profile,
    /// on an index built with a model), or `bm25f` (no query word the model
    /// knows, or no text asked).
    pub mode: String,
}

/// Letters and digits, lowercased: `mail_db`, `mailDb` and `MailDB` compare equal.
fn squash(s: &str) -> String {
    s.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect()
}

/// Does a property schema have the requested type? Accepts JSON types
/// (`array`, `string`, …), `cell`/`stream`, definition names and `T[]`; any
/// other word must appear in the TypeScript rendering.
fn type_matches(schema: &Value, rendered: &str, wanted: &str) -> bool {
    let w = wanted.trim().to_ascii_lowercase();
    let json_type = schema.get("type").and_then(|t| t.as_str()).unwrap_or("");
    let cells: Vec<String> = schema
        .get("asCell")
        .and_then(|c| c.as_array())
        .map(|c| c.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    match w.as_str() {
        "array" | "list" => json_type == "array",
        "string" | "number" | "integer" | "boolean" | "object" => {
            json_type == w || (w == "number" && json_type == "integer")
        }
        "cell" | "writable" => cells.iter().any(|c| c == "cell"),
        "stream" => cells.iter().any(|c| c == "stream"),
        _ => {
            if let Some(inner) = w.strip_suffix("[]") {
                return json_type == "array" && schema.get("items").is_some_and(|i| type_matches(i, rendered, inner));
            }
            let rendered = rendered.to_ascii_lowercase();
            rendered.split(|c: char| !c.is_alphanumeric() && c != '_').any(|word| squash(word) == squash(&w))
        }
    }
}

/// Top-level properties of a contract (through a root `$ref`), each with whether it is required.
pub fn schema_properties(schema: Option<&Value>) -> Vec<(&str, &Value, bool)> {
    let Some(schema) = schema else { return vec![] };
    let resolved = match schema.get("$ref").and_then(|r| r.as_str()).and_then(|r| r.strip_prefix("#/$defs/")) {
        Some(name) => schema.get("$defs").and_then(|d| d.get(name)).unwrap_or(schema),
        None => schema,
    };
    let required: Vec<&str> = resolved
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|x| x.as_str()).collect())
        .unwrap_or_default();
    resolved
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|props| props.iter().map(|(k, v)| (k.as_str(), v, required.contains(&k.as_str()))).collect())
        .unwrap_or_default()
}

fn find_field(props: &[(&str, &Value, bool)], spec: &FieldSpec, defs: Option<&Value>) -> Option<FieldMatch> {
    props.iter().find_map(|(name, schema, _)| {
        if squash(name) != squash(&spec.name) {
            return None;
        }
        let rendered = render_type(schema, defs);
        if let Some(ty) = &spec.ty
            && !type_matches(schema, &rendered, ty)
        {
            return None;
        }
        Some(FieldMatch { requested: spec_text(spec), field: name.to_string(), ty: rendered })
    })
}

fn spec_text(spec: &FieldSpec) -> String {
    match &spec.ty {
        Some(t) => format!("{}:{t}", spec.name),
        None => spec.name.clone(),
    }
}

/// The arguments a caller must bind: in `required` and without a default.
pub fn required_inputs<'s>(props: &'s [(&'s str, &'s Value, bool)]) -> impl Iterator<Item = (&'s str, &'s Value)> {
    props.iter().filter(|(_, schema, required)| *required && schema.get("default").is_none()).map(|(n, s, _)| (*n, *s))
}

/// The fit of one program; `contract_terms` says whether query terms matched
/// its contract fields; `with_inputs` also checks its required inputs against `--have`.
fn fit(p: &ProgramRow, q: &PatternQuery, contract_terms: bool, with_inputs: bool) -> Fit {
    let (arg, res, which) = effective_schemas(p);
    let res_props = schema_properties(res);
    let arg_props = schema_properties(arg);
    let mut out = Fit { contract: which.to_string(), ..Fit::default() };
    for spec in &q.returns {
        match find_field(&res_props, spec, res.and_then(|r| r.get("$defs"))) {
            Some(m) => out.returns.push(m),
            None => out.not_returned.push(spec_text(spec)),
        }
    }
    for spec in &q.accepts {
        match find_field(&arg_props, spec, arg.and_then(|a| a.get("$defs"))) {
            Some(m) => out.accepts.push(m),
            None => out.not_accepted.push(spec_text(spec)),
        }
    }
    let defs = arg.and_then(|a| a.get("$defs"));
    let mut used = BTreeSet::new();
    for (name, schema) in required_inputs(&arg_props).filter(|_| with_inputs) {
        let rendered = render_type(schema, defs);
        let by_name = q.have.iter().enumerate().find(|(i, h)| {
            !used.contains(i)
                && squash(&h.name) == squash(name)
                && h.ty.as_ref().is_none_or(|t| type_matches(schema, &rendered, t))
        });
        let by_type = || {
            q.have
                .iter()
                .enumerate()
                .find(|(i, h)| !used.contains(i) && h.ty.as_ref().is_some_and(|t| type_matches(schema, &rendered, t)))
        };
        let input = InputFit {
            input: name.to_string(),
            ty: rendered.clone(),
            description: schema.get("description").and_then(|d| d.as_str()).map(str::to_string),
            by: None,
        };
        match by_name.or_else(by_type) {
            Some((i, h)) => {
                used.insert(i);
                out.satisfied.push(InputFit { by: Some(h.name.clone()), ..input });
            }
            None => out.missing.push(input),
        }
    }
    let requested = !q.returns.is_empty() || !q.accepts.is_empty();
    let all_found = out.not_returned.is_empty() && out.not_accepted.is_empty();
    let any_found = !out.returns.is_empty() || !out.accepts.is_empty();
    out.verdict = if requested && !all_found {
        if any_found { "partial" } else { "textual" }
    } else if !requested {
        if contract_terms { "contract-match" } else { "textual" }
    } else if !out.missing.is_empty() {
        "needs-inputs"
    } else {
        "meets"
    }
    .to_string();
    out
}

fn quality_factor(q: Option<Quality>) -> f64 {
    match q {
        Some(Quality::Proven) => 1.1,
        Some(Quality::Penalized) => 0.8,
        _ => 1.0,
    }
}

fn normalize_tag(t: &str) -> String {
    t.trim().trim_start_matches('#').to_lowercase()
}

/// Does the program pass `--tier`? `none` asks for programs without a tier.
fn tier_passes(program: &ProgramFacets, wanted: Option<&str>) -> bool {
    let Some(w) = wanted else { return true };
    let w = w.trim().to_ascii_lowercase();
    match &program.tier {
        Some(t) => *t == w || t.trim_end_matches('s') == w.trim_end_matches('s'),
        None => w == "none",
    }
}

/// `why` for one matched field: with the address of its source, when it has one.
fn why_line(p: &ProgramRow, field: Field, ts: &[String]) -> String {
    match field_source(p, field, ts) {
        Some(src) => format!("{}: {src}: {}", field.label(), ts.join(", ")),
        None => format!("{}: {}", field.label(), ts.join(", ")),
    }
}

impl Engine {
    /// Each program's sentence-embedding cosine with the query text, when
    /// the index has program embeddings and neither the query nor the
    /// levers turn them off. Asking for them on an index without them is an
    /// error, never a silent lexical ranking.
    fn program_dense(
        &self,
        q: &PatternQuery,
        levers: &PatternLevers,
        has_text: bool,
    ) -> Result<Option<Vec<f32>>, QueryError> {
        match q.embeddings {
            Some(false) => return Ok(None),
            Some(true) if !self.snap.has_program_embeddings() => {
                return Err(QueryError::InvalidArgument(
                    "this index has no sentence embeddings of programs: rebuild it with a model (`fabdex models add DIR`, then `fabdex index`), or search without embeddings".into(),
                ));
            }
            _ => {}
        }
        let opts = self.pattern_dense;
        if !self.snap.has_program_embeddings() || !levers.dense || !has_text || opts.weight <= 0.0 {
            return Ok(None);
        }
        let Some(table) = self.snap.program_embeddings().map_err(QueryError::from_open)? else { return Ok(None) };
        let (mut query, _) = self.embed_query(&table.header, &q.text)?;
        if opts.feedback > 0.0 {
            let sims = table.similarities(&query);
            query = feedback_query(&query, &sims, |p| table.vectors(p), opts.feedback, opts.feedback_depth);
        }
        Ok(Some(table.similarities(&query)))
    }

    /// Change the weight of the programs' sentence-embedding cosine (sweeps; the default is [`PATTERN_DENSE_WEIGHT`]).
    pub fn set_pattern_dense_weight(&mut self, weight: f64) {
        self.pattern_dense.weight = weight;
    }

    /// Change how pattern search forms the programs' sentence-embedding cosine (ablations).
    pub fn set_pattern_dense(&mut self, dense: PatternDense) {
        self.pattern_dense = dense;
    }

    /// Ranked patterns for a query; see [`PatternQuery`].
    pub fn search_patterns(&self, q: &PatternQuery) -> Result<PatternSearch, QueryError> {
        self.search_patterns_with(q, &PatternLevers::default())
    }

    /// [`Engine::search_patterns`] with some ranking levers switched off (for ablation).
    pub fn search_patterns_with(&self, q: &PatternQuery, levers: &PatternLevers) -> Result<PatternSearch, QueryError> {
        let asked = self.asked(q)?;
        let table = self.snap.pattern_terms().map_err(QueryError::from_open)?;
        let semantic = match levers.semantic && !asked.terms.is_empty() {
            true => {
                let models = self.snap.semantic().map_err(QueryError::from_open)?;
                semantic_similarities(table, &models.units, &asked.terms)
            }
            false => None,
        };
        let dense = self.program_dense(q, levers, !asked.terms.is_empty())?;
        let scores = Scores { text: score_programs(table, &asked.terms, levers), semantic: &semantic, dense: &dense };
        let mut candidates = self.candidates(q, levers, &asked, table, scores);
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.entry.cmp(b.entry)));
        let matched = candidates.len();
        candidates.truncate(asked.limit);
        let hits: Vec<PatternHit> =
            candidates.into_iter().enumerate().map(|(rank, c)| self.hit(rank, c, q, &asked)).collect();
        Ok(PatternSearch {
            snapshot: self.snapshot_id().to_string(),
            query: q.clone(),
            terms: asked.terms,
            matched,
            omitted: matched - hits.len(),
            hits,
            mode: match (semantic.is_some(), dense.is_some()) {
                (true, true) => "bm25f+semantic+embeddings",
                (false, true) => "bm25f+embeddings",
                (true, false) => "bm25f+semantic",
                (false, false) => "bm25f",
            }
            .to_string(),
        })
    }

    /// The query checked and read: its bounds, terms, tags and dependency.
    fn asked(&self, q: &PatternQuery) -> Result<Asked, QueryError> {
        let limit = q.limit.unwrap_or(Limits::SEARCH_DEFAULT_LIMIT);
        if limit == 0 || limit > Limits::SEARCH_MAX_LIMIT {
            return Err(QueryError::InvalidArgument(format!(
                "limit {limit} is out of range: it must be between 1 and {}",
                Limits::SEARCH_MAX_LIMIT
            )));
        }
        if q.text.chars().count() > Limits::QUERY_MAX_CHARS {
            return Err(QueryError::InvalidArgument(format!(
                "query is {} chars long; the most accepted is {}",
                q.text.chars().count(),
                Limits::QUERY_MAX_CHARS
            )));
        }
        let depends_on = q.depends_on.as_ref().map(|id| {
            self.program(id)
                .map(|p| p.pattern_id.clone())
                .unwrap_or_else(|_| id.trim().trim_start_matches("cf:pattern:").to_string())
        });
        let mut terms = terms(&q.text);
        terms.dedup();
        let mut seen = BTreeSet::new();
        terms.retain(|t| seen.insert(t.clone()));
        let tags: Vec<String> = q.tags.iter().map(|t| normalize_tag(t)).collect();
        let nothing_asked = terms.is_empty()
            && q.returns.is_empty()
            && q.accepts.is_empty()
            && tags.is_empty()
            && q.kind.is_none()
            && q.min_quality.is_none()
            && q.tier.is_none()
            && depends_on.is_none();
        if nothing_asked {
            return Err(QueryError::InvalidArgument(
                "nothing to search for: give TEXT (with words other than stop words), --tag, --accepts, --returns or a filter"
                    .into(),
            ));
        }
        Ok(Asked {
            limit,
            terms,
            tags,
            depends_on,
            // Fit changes the score only when the caller asked for contract
            // fields or named handles; otherwise it is computed for shown hits only.
            fit_scores: !q.returns.is_empty() || !q.accepts.is_empty() || !q.have.is_empty(),
            requested: (q.returns.len() + q.accepts.len()) as f64,
        })
    }

    /// Every program that passes the filters and matches something, scored.
    fn candidates<'a>(
        &'a self,
        q: &PatternQuery,
        levers: &PatternLevers,
        asked: &Asked,
        table: &'a PatternTerms,
        scores: Scores<'_>,
    ) -> Vec<Candidate<'a>> {
        let (text_scores, mut text_matches) = scores.text;
        let requested = asked.requested;
        let mut candidates = Vec::new();
        for i in 0..table.programs() {
            let facets = table.facets(i);
            if !passes_filters(facets, q, asked) {
                continue;
            }
            let (text_score, matched) = (text_scores[i], std::mem::take(&mut text_matches[i]));
            let similarity = scores.semantic.as_ref().map_or(0.0, |s| s[i]);
            let dense_cos = scores.dense.as_ref().map_or(0.0, |d| d[i].max(0.0));
            let contract_terms = matched.iter().any(|(f, _)| matches!(f, Field::Result | Field::Argument));
            // Only a contract request or named handles need the program's row here.
            let fit =
                asked.fit_scores.then(|| fit(&self.snap.patterns.programs[i], q, contract_terms, !q.have.is_empty()));
            // Contract requests weigh like strong text matches: each field
            // found adds, each missing one subtracts; so does each unbound input.
            let (found, contract_score, unbound) = match &fit {
                Some(f) => {
                    let found = (f.returns.len() + f.accepts.len()) as f64;
                    let contract =
                        if requested > 0.0 { 10.0 * found / requested - 2.0 * (requested - found) } else { 0.0 };
                    let unbound = if q.have.is_empty() { 0.0 } else { f.missing.len() as f64 };
                    (found, contract, unbound)
                }
                None => (0.0, 0.0, 0.0),
            };
            let matched_anything = text_score > 0.0
                || found > 0.0
                || similarity >= SEMANTIC_ALONE
                || dense_cos >= DENSE_ALONE
                || (asked.terms.is_empty() && requested == 0.0);
            if !matched_anything {
                continue;
            }
            // Fixtures and legacy programs rank below the rest, unless asked for by tier.
            let standing = match (&facets.tier, levers.tiers && q.tier.is_none()) {
                (Some(t), true) => tier_factor(t),
                _ => 1.0,
            };
            let semantic_score =
                SEMANTIC_WEIGHT * f64::from(similarity) + self.pattern_dense.weight * f64::from(dense_cos);
            let score =
                (text_score + semantic_score + contract_score - unbound) * quality_factor(facets.quality) * standing;
            candidates.push(Candidate {
                program: i,
                entry: &facets.entry,
                score: (score * 1000.0).round() / 1000.0,
                matched,
                fit,
                similarity,
                dense: dense_cos,
            });
        }
        candidates
    }

    /// A shown hit: its program's row decoded, its fit and `why`.
    fn hit(&self, rank: usize, c: Candidate<'_>, q: &PatternQuery, asked: &Asked) -> PatternHit {
        let p = &self.snap.patterns.programs[c.program];
        let meta = p.published.as_ref();
        let contract_terms = c.matched.iter().any(|(f, _)| matches!(f, Field::Result | Field::Argument));
        let fit = match c.fit {
            Some(f) if !q.have.is_empty() => f,
            _ => fit(p, q, contract_terms, true),
        };
        let mut why: Vec<String> = c.matched.iter().map(|(f, ts)| why_line(p, *f, ts)).collect();
        if c.similarity > 0.0 {
            why.push(format!("semantic: {:.2} (corpus-learned model)", c.similarity));
        }
        if let (true, Ok(Some(table))) = (c.dense > 0.0, self.snap.program_embeddings()) {
            why.push(format!("embeddings: {:.2} ({})", c.dense, table.header.model.name));
        }
        why.extend(asked.tags.iter().map(|t| format!("tag #{t}")));
        why.extend(fit.returns.iter().map(|m| format!("returns {}: {}", m.field, m.ty)));
        why.extend(fit.accepts.iter().map(|m| format!("accepts {}: {}", m.field, m.ty)));
        if let Some(dep) = &asked.depends_on {
            why.push(format!("depends on {dep}"));
        }
        PatternHit {
            rank: rank + 1,
            address: format!("pattern:{}", p.pattern_id),
            pattern_id: p.pattern_id.clone(),
            import_hint: format!("import X from \"cf:pattern:{}\"", p.pattern_id),
            entry: p.entry.clone(),
            description: p.description.clone(),
            hashtags: p.hashtags.clone(),
            kind: meta.and_then(|m| m.kind),
            quality: meta.and_then(|m| m.quality),
            origin: p.origin.clone(),
            identity: p.identity.status.as_str().to_string(),
            has_source: p.has_source,
            tier: p.profile.tier.as_ref().map(|t| t.tier.clone()),
            tier_source: p.profile.tier.as_ref().map(|t| t.source.clone()),
            score: c.score,
            why,
            fit,
            denied: None,
        }
    }
}

/// What a pattern query asks, checked.
struct Asked {
    limit: usize,
    /// Analysed query words, each once, in order.
    terms: Vec<String>,
    /// `--tag`s, normalised.
    tags: Vec<String>,
    /// The pattern id `--depends-on` names.
    depends_on: Option<String>,
    /// Whether the fit verdict changes the score (contract fields or handles asked).
    fit_scores: bool,
    /// Contract fields asked for (`--returns` and `--accepts`).
    requested: f64,
}

/// The per-program scores a search combines.
struct Scores<'s> {
    /// BM25F and the matched terms per field ([`score_programs`]).
    text: (Vec<f64>, Vec<Matched>),
    /// Cosine in the corpus-learned space.
    semantic: &'s Option<Vec<f32>>,
    /// Sentence-embedding cosine of the profile.
    dense: &'s Option<Vec<f32>>,
}

/// A program that passed the filters and matched, before the cut to `limit`.
struct Candidate<'a> {
    program: usize,
    entry: &'a str,
    score: f64,
    matched: Matched,
    fit: Option<Fit>,
    similarity: f32,
    dense: f32,
}

/// Does the program pass `--kind`, `--min-quality`, `--depends-on`, `--tag` and `--tier`?
fn passes_filters(facets: &ProgramFacets, q: &PatternQuery, asked: &Asked) -> bool {
    if q.kind.is_some() && facets.kind != q.kind {
        return false;
    }
    if let Some(min) = q.min_quality
        && facets.quality.is_none_or(|have| have < min)
    {
        return false;
    }
    if let Some(dep) = &asked.depends_on
        && !facets.dependencies.contains(dep)
    {
        return false;
    }
    asked.tags.iter().all(|t| facets.hashtags.iter().any(|h| &normalize_tag(h) == t))
        && tier_passes(facets, q.tier.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_match_json_types_cells_definitions_and_arrays() {
        let arr = json!({"type": "array", "items": {"$ref": "#/$defs/MessageHeader"}});
        assert!(type_matches(&arr, "MessageHeader[]", "array"));
        assert!(type_matches(&arr, "MessageHeader[]", "list"));
        assert!(type_matches(&arr, "MessageHeader[]", "MessageHeader"));
        assert!(!type_matches(&arr, "MessageHeader[]", "string"));
        let db = json!({"$ref": "#/$defs/MailDatabase", "asCell": ["cell"]});
        assert!(type_matches(&db, "Writable<MailDatabase>", "MailDatabase"));
        assert!(type_matches(&db, "Writable<MailDatabase>", "cell"));
        assert!(!type_matches(&db, "Writable<MailDatabase>", "stream"));
        assert!(type_matches(&json!({"type": "integer"}), "number", "number"));
    }

    #[test]
    fn feedback_moves_the_query_towards_the_best_passages_of_the_closest_programs() {
        let s = std::f32::consts::FRAC_1_SQRT_2;
        // Program 0: passages along x and y; program 1: along z; program 2: along -x.
        let programs: [Vec<f32>; 3] = [vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0], vec![-1.0, 0.0, 0.0]];
        let passages = |p: usize| std::borrow::Cow::Borrowed(programs[p].as_slice());
        let query = [s, 0.0, s];
        let sims = [s, s, -s];
        // Depth 2: programs 0 and 1; program 0's best passage for the query is along x.
        let moved = feedback_query(&query, &sims, passages, 0.5, 2);
        let expected = {
            let v = [0.5 * s + 0.5 * s, 0.0, 0.5 * s + 0.5 * s];
            let n = (v[0] * v[0] + v[2] * v[2]).sqrt();
            [v[0] / n, 0.0, v[2] / n]
        };
        for (a, b) in moved.iter().zip(expected) {
            assert!((a - b).abs() < 1e-6, "{moved:?} vs {expected:?}");
        }
        // Depth 1 (ties to the lower program): towards x only, and still a unit vector.
        let moved = feedback_query(&query, &sims, passages, 0.5, 1);
        assert!(moved[0] > moved[2] && moved[1] == 0.0, "{moved:?}");
        assert!((moved.iter().map(|v| v * v).sum::<f32>() - 1.0).abs() < 1e-6);
        // A quarter of the way: 0.75 · query + 0.25 · x, renormalised.
        let moved = feedback_query(&query, &sims, passages, 0.25, 1);
        let (x, z) = (0.75 * s + 0.25, 0.75 * s);
        let n = (x * x + z * z).sqrt();
        assert!((moved[0] - x / n).abs() < 1e-6 && (moved[2] - z / n).abs() < 1e-6, "{moved:?}");
        assert_eq!(feedback_query(&query, &sims, passages, 0.0, 2), query.to_vec(), "share 0 leaves the query");
    }

    #[test]
    fn field_specs_parse_and_reject_empty_parts() {
        assert_eq!(FieldSpec::parse("db:MailDatabase", "--have").unwrap().ty.as_deref(), Some("MailDatabase"));
        assert_eq!(FieldSpec::parse("messages", "--returns").unwrap().ty, None);
        let err = FieldSpec::parse(":x", "--returns").unwrap_err().to_string();
        assert!(err.contains("--returns `:x`"), "{err}");
        assert!(FieldSpec::parse("a:", "--have").is_err());
    }
}
