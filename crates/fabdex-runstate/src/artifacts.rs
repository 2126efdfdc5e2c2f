//! The artifacts of a research run and their deterministic validation.
//!
//! Every check reports a [`Violation`]: the file, the JSON pointer (or
//! `line N` for Markdown) and the rule that failed, with a message.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One failed rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Violation {
    pub file: String,
    pub pointer: String,
    pub rule: String,
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "{}: [{}] {}", self.file, self.rule, self.message)
        } else {
            write!(f, "{} {}: [{}] {}", self.file, self.pointer, self.rule, self.message)
        }
    }
}

pub(crate) struct Report<'a> {
    pub file: &'a str,
    pub out: Vec<Violation>,
}

impl<'a> Report<'a> {
    pub fn new(file: &'a str) -> Report<'a> {
        Report { file, out: vec![] }
    }
    pub fn add(&mut self, pointer: impl Into<String>, rule: &str, message: impl Into<String>) {
        self.out.push(Violation {
            file: self.file.into(),
            pointer: pointer.into(),
            rule: rule.into(),
            message: message.into(),
        });
    }
}

/// A research dimension of the spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dimension {
    /// Slug: `[a-z0-9][a-z0-9-]*`.
    pub id: String,
    pub title: String,
    /// What the Scout must answer.
    pub questions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Criterion {
    pub id: String,
    pub description: String,
    /// Relative weight in `overall_score` (> 0).
    pub weight: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SuccessCriteria {
    /// Score (1–5) an evaluation must reach to pass.
    pub pass_threshold: f64,
    pub criteria: Vec<Criterion>,
}

/// `spec.json`, written by the Planner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Spec {
    pub task: String,
    pub dimensions: Vec<Dimension>,
    pub success_criteria: SuccessCriteria,
}

/// A source a Scout used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvidenceSource {
    pub id: String,
    /// A URL or a fabdex address (`doc:` / `pattern:`).
    pub location: String,
    #[serde(default)]
    pub title: String,
    /// For fabdex addresses: the citation id of the read in the run's ledger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Claim {
    pub id: String,
    pub text: String,
    pub source_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Contradiction {
    pub id: String,
    pub claim_ids: Vec<String>,
    pub note: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EvidenceStatus {
    Complete,
    /// Valid but incomplete: must list open questions.
    Partial,
}

/// `context/evidence_{dimension}.json` (staged first at `context/.staging/{work item}.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Evidence {
    pub dimension: String,
    pub round: u32,
    pub status: EvidenceStatus,
    pub sources: Vec<EvidenceSource>,
    pub claims: Vec<Claim>,
    #[serde(default)]
    pub contradictions: Vec<Contradiction>,
    #[serde(default)]
    pub open_questions: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Pass,
    /// Writing defects only: rewrite without new research.
    Revise,
    /// Research gaps: `weak_dimensions` name what to research again.
    Research,
    /// Unsalvageable: absorbing, the run fails.
    Reject,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Score {
    pub criterion: String,
    /// 0–5.
    pub score: f64,
    pub rationale: String,
}

/// `evals/eval_v{N}.json`, written by the Evaluator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Eval {
    pub round: u32,
    pub scores: Vec<Score>,
    /// Weighted mean of `scores` by the spec's criterion weights (±0.01).
    pub overall_score: f64,
    /// True exactly when `verdict` is PASS, which needs `overall_score >= passThreshold`.
    pub pass: bool,
    pub verdict: Verdict,
    #[serde(default)]
    pub weak_dimensions: Vec<String>,
}

fn is_slug(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && s.len() <= 64
}

/// Parse JSON into `T`, or one `schema` violation naming where.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(r: &mut Report<'_>, text: &str) -> Option<T> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            r.add(format!("line {}", e.line()), "json", format!("not valid JSON: {e}"));
            return None;
        }
    };
    match serde_json::from_value(value) {
        Ok(t) => Some(t),
        Err(e) => {
            r.add("", "schema", e.to_string());
            None
        }
    }
}

fn unique<'a>(r: &mut Report<'_>, pointer: &str, ids: impl Iterator<Item = &'a str>) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::new();
    for (i, id) in ids.enumerate() {
        if !seen.insert(id) {
            r.add(format!("{pointer}/{i}/id"), "unique-id", format!("id `{id}` appears twice"));
        }
    }
    seen
}

pub fn check_spec(file: &str, text: &str) -> (Option<Spec>, Vec<Violation>) {
    let mut r = Report::new(file);
    let Some(spec) = parse::<Spec>(&mut r, text) else { return (None, r.out) };
    if spec.dimensions.is_empty() {
        r.add("/dimensions", "spec-dimensions", "at least one dimension");
    }
    for (i, d) in spec.dimensions.iter().enumerate() {
        if !is_slug(&d.id) {
            r.add(format!("/dimensions/{i}/id"), "slug", format!("`{}` is not a slug ([a-z0-9][a-z0-9-]*)", d.id));
        }
        if d.questions.is_empty() {
            r.add(format!("/dimensions/{i}/questions"), "spec-dimensions", "a dimension needs at least one question");
        }
    }
    unique(&mut r, "/dimensions", spec.dimensions.iter().map(|d| d.id.as_str()));
    let t = spec.success_criteria.pass_threshold;
    if !(1.0..=5.0).contains(&t) {
        r.add("/successCriteria/passThreshold", "pass-threshold", format!("{t} is not between 1 and 5"));
    }
    if spec.success_criteria.criteria.is_empty() {
        r.add("/successCriteria/criteria", "spec-criteria", "at least one criterion");
    }
    for (i, c) in spec.success_criteria.criteria.iter().enumerate() {
        if c.weight <= 0.0 {
            r.add(format!("/successCriteria/criteria/{i}/weight"), "spec-criteria", "weight must be > 0");
        }
    }
    unique(&mut r, "/successCriteria/criteria", spec.success_criteria.criteria.iter().map(|c| c.id.as_str()));
    (Some(spec), r.out)
}

/// Options of an evidence check.
#[derive(Default)]
pub struct EvidenceContext<'a> {
    pub spec: Option<&'a Spec>,
    /// The canonical evidence of the previous round (round 2+).
    pub prior: Option<&'a Evidence>,
    /// Citation ids of the run's ledger, when sources must be citations.
    pub citations: Option<&'a BTreeMap<String, String>>,
}

pub fn check_evidence(file: &str, text: &str, ctx: &EvidenceContext<'_>) -> (Option<Evidence>, Vec<Violation>) {
    let mut r = Report::new(file);
    let Some(ev) = parse::<Evidence>(&mut r, text) else { return (None, r.out) };
    if let Some(spec) = ctx.spec
        && !spec.dimensions.iter().any(|d| d.id == ev.dimension)
    {
        r.add("/dimension", "evidence-dimension", format!("`{}` is not a dimension of the spec", ev.dimension));
    }
    if ev.round == 0 {
        r.add("/round", "evidence-round", "evidence belongs to round 1 or later");
    }
    let sources = unique(&mut r, "/sources", ev.sources.iter().map(|s| s.id.as_str()));
    let claims = unique(&mut r, "/claims", ev.claims.iter().map(|c| c.id.as_str()));
    unique(&mut r, "/contradictions", ev.contradictions.iter().map(|c| c.id.as_str()));
    for (i, c) in ev.claims.iter().enumerate() {
        if c.source_ids.is_empty() {
            r.add(format!("/claims/{i}/sourceIds"), "claim-sources", "a claim cites at least one source");
        }
        for (j, s) in c.source_ids.iter().enumerate() {
            if !sources.contains(s.as_str()) {
                r.add(format!("/claims/{i}/sourceIds/{j}"), "claim-sources", format!("no source `{s}`"));
            }
        }
    }
    for (i, x) in ev.contradictions.iter().enumerate() {
        if x.claim_ids.len() < 2 {
            r.add(
                format!("/contradictions/{i}/claimIds"),
                "contradiction-claims",
                "a contradiction names two or more claims",
            );
        }
        for (j, c) in x.claim_ids.iter().enumerate() {
            if !claims.contains(c.as_str()) {
                r.add(format!("/contradictions/{i}/claimIds/{j}"), "contradiction-claims", format!("no claim `{c}`"));
            }
        }
    }
    if ev.status == EvidenceStatus::Partial && ev.open_questions.is_empty() {
        r.add("/openQuestions", "partial-open-questions", "partial evidence must list its open questions");
    }
    citations_of_the_run(&mut r, &ev, ctx.citations);
    if let Some(prior) = ctx.prior {
        prior_kept(&mut r, &ev, prior);
    }
    (Some(ev), r.out)
}

/// Each fabdex-address source against the citations of the run it claims to have read.
fn citations_of_the_run(r: &mut Report<'_>, ev: &Evidence, citations: Option<&BTreeMap<String, String>>) {
    for (i, s) in ev.sources.iter().enumerate() {
        let fabdex = s.location.starts_with("doc:") || s.location.starts_with("pattern:");
        if let (true, Some(citations)) = (fabdex, citations) {
            match &s.citation {
                None => r.add(
                    format!("/sources/{i}/citation"),
                    "ledger-citation",
                    format!("`{}` is a fabdex address: give the citation id of the run's read", s.location),
                ),
                Some(c) => match citations.get(c) {
                    None => r.add(
                        format!("/sources/{i}/citation"),
                        "ledger-citation",
                        format!("`{c}` is not a citation of the run"),
                    ),
                    Some(address) if address.split('@').next() != s.location.split('@').next() => r.add(
                        format!("/sources/{i}/location"),
                        "ledger-citation",
                        format!("citation `{c}` is of `{address}`, not `{}`", s.location),
                    ),
                    Some(_) => {}
                },
            }
        }
    }
}

/// Round 2+ evidence keeps every source, claim and contradiction of the prior, unchanged.
fn prior_kept(r: &mut Report<'_>, ev: &Evidence, prior: &Evidence) {
    if prior.dimension != ev.dimension {
        r.add("/dimension", "prior-kept", format!("prior evidence is for `{}`", prior.dimension));
    }
    if ev.round <= prior.round {
        r.add("/round", "prior-kept", format!("round {} does not follow the prior round {}", ev.round, prior.round));
    }
    let keep = |r: &mut Report<'_>, what: &str, prior: Vec<(&str, String)>, now: Vec<(&str, String)>| {
        let now: BTreeMap<&str, String> = now.into_iter().collect();
        for (id, before) in prior {
            match now.get(id) {
                None => r.add(format!("/{what}"), "prior-kept", format!("prior {what} `{id}` was removed")),
                Some(after) if *after != before => {
                    r.add(format!("/{what}"), "prior-kept", format!("prior {what} `{id}` was rewritten"))
                }
                Some(_) => {}
            }
        }
    };
    keep(
        r,
        "sources",
        prior.sources.iter().map(|s| (s.id.as_str(), js(s))).collect(),
        ev.sources.iter().map(|s| (s.id.as_str(), js(s))).collect(),
    );
    keep(
        r,
        "claims",
        prior.claims.iter().map(|s| (s.id.as_str(), js(s))).collect(),
        ev.claims.iter().map(|s| (s.id.as_str(), js(s))).collect(),
    );
    keep(
        r,
        "contradictions",
        prior.contradictions.iter().map(|s| (s.id.as_str(), js(s))).collect(),
        ev.contradictions.iter().map(|s| (s.id.as_str(), js(s))).collect(),
    );
}

fn js<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Citations in a draft: `[@<dimension>/<claim>]`.
pub fn draft_citations(text: &str) -> Vec<(u32, String, String)> {
    static RE: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\[@([a-z0-9][a-z0-9-]*)/([^\]\s]+)\]").expect("regex"));
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for c in RE.captures_iter(line) {
            out.push((i as u32 + 1, c[1].to_string(), c[2].to_string()));
        }
    }
    out
}

/// Load every canonical evidence file of a context directory.
pub fn load_evidence_dir(dir: &Path) -> BTreeMap<String, Evidence> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(dim) = name.strip_prefix("evidence_").and_then(|n| n.strip_suffix(".json"))
            && let Some(ev) =
                std::fs::read_to_string(e.path()).ok().and_then(|t| serde_json::from_str::<Evidence>(&t).ok())
        {
            out.insert(dim.to_string(), ev);
        }
    }
    out
}

pub fn check_draft(file: &str, text: &str, evidence: &BTreeMap<String, Evidence>) -> Vec<Violation> {
    let mut r = Report::new(file);
    if text.trim().is_empty() {
        r.add("line 1", "draft-empty", "the draft is empty");
        return r.out;
    }
    let cites = draft_citations(text);
    if cites.is_empty() {
        r.add("line 1", "draft-citations", "a draft cites evidence as [@<dimension>/<claim id>]");
    }
    for (line, dim, claim) in cites {
        match evidence.get(&dim) {
            None => r.add(format!("line {line}"), "draft-citations", format!("no evidence for dimension `{dim}`")),
            Some(ev) if !ev.claims.iter().any(|c| c.id == claim) => {
                r.add(format!("line {line}"), "draft-citations", format!("evidence `{dim}` has no claim `{claim}`"))
            }
            Some(_) => {}
        }
    }
    r.out
}

pub fn check_eval(file: &str, text: &str, spec: Option<&Spec>) -> (Option<Eval>, Vec<Violation>) {
    let mut r = Report::new(file);
    let Some(ev) = parse::<Eval>(&mut r, text) else { return (None, r.out) };
    for (i, s) in ev.scores.iter().enumerate() {
        if !(0.0..=5.0).contains(&s.score) {
            r.add(format!("/scores/{i}/score"), "score-range", format!("{} is not between 0 and 5", s.score));
        }
    }
    if let Some(spec) = spec {
        let mut total = 0.0;
        let mut weights = 0.0;
        for (i, c) in spec.success_criteria.criteria.iter().enumerate() {
            let found: Vec<&Score> = ev.scores.iter().filter(|s| s.criterion == c.id).collect();
            if found.len() != 1 {
                r.add(
                    "/scores",
                    "eval-criteria",
                    format!("criterion `{}` is scored {} times (once expected)", c.id, found.len()),
                );
                let _ = i;
                continue;
            }
            total += found[0].score * c.weight;
            weights += c.weight;
        }
        for (i, s) in ev.scores.iter().enumerate() {
            if !spec.success_criteria.criteria.iter().any(|c| c.id == s.criterion) {
                r.add(
                    format!("/scores/{i}/criterion"),
                    "eval-criteria",
                    format!("`{}` is not a criterion of the spec", s.criterion),
                );
            }
        }
        if weights > 0.0 && (total / weights - ev.overall_score).abs() > 0.01 {
            r.add(
                "/overall_score",
                "overall-score",
                format!("{} is not the weighted mean of the scores ({:.2})", ev.overall_score, total / weights),
            );
        }
        if ev.verdict == Verdict::Pass && ev.overall_score < spec.success_criteria.pass_threshold {
            r.add(
                "/verdict",
                "pass-threshold",
                format!("PASS needs overall_score >= {}", spec.success_criteria.pass_threshold),
            );
        }
        for (i, d) in ev.weak_dimensions.iter().enumerate() {
            if !spec.dimensions.iter().any(|x| &x.id == d) {
                r.add(
                    format!("/weak_dimensions/{i}"),
                    "weak-dimensions",
                    format!("`{d}` is not a dimension of the spec"),
                );
            }
        }
    }
    if ev.pass != (ev.verdict == Verdict::Pass) {
        r.add("/pass", "pass-verdict", "`pass` is true exactly when the verdict is PASS");
    }
    if ev.verdict == Verdict::Research && ev.weak_dimensions.is_empty() {
        r.add("/weak_dimensions", "weak-dimensions", "a RESEARCH verdict names the weak dimensions");
    }
    (Some(ev), r.out)
}

pub fn check_feedback(file: &str, text: &str, eval: Option<&Eval>) -> Vec<Violation> {
    let mut r = Report::new(file);
    if text.trim().is_empty() {
        r.add("line 1", "feedback-empty", "the feedback is empty");
        return r.out;
    }
    if let Some(ev) = eval {
        let verdict =
            serde_json::to_value(ev.verdict).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        if !text.contains(&format!("Verdict: {verdict}")) {
            r.add("line 1", "feedback-pair", format!("feedback must state `Verdict: {verdict}` (its eval's verdict)"));
        }
        for d in &ev.weak_dimensions {
            if !text.contains(d.as_str()) {
                r.add("line 1", "feedback-pair", format!("feedback must address weak dimension `{d}`"));
            }
        }
    }
    r.out
}
