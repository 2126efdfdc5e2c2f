//! `meta.json`: the durable, resumable state of a run, and the whole-run
//! validation that checks it against every artifact on disk.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::artifacts::{
    Eval, Evidence, EvidenceContext, Report, Spec, Verdict, Violation, check_draft, check_eval, check_evidence,
    check_feedback, check_spec, parse,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Completed,
    Exhausted,
    Failed,
}

impl RunStatus {
    pub fn terminal(self) -> bool {
        self != RunStatus::Running
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Planning,
    Researching,
    Writing,
    Evaluating,
    Finalized,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Planner,
    Scout,
    Writer,
    Evaluator,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ItemStatus {
    Pending,
    Running,
    Completed,
    /// A Scout's valid incomplete evidence (with open questions).
    Partial,
    Failed,
}

/// One attempt-tracked unit of role work. The list is append-only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkItem {
    pub id: String,
    pub role: Role,
    pub round: u32,
    /// Scouts: the dimension researched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimension: Option<String>,
    pub status: ItemStatus,
    /// 0 before the first spawn, 1 during it, 2 during the only retry.
    pub attempt: u32,
    /// Relative to RUN_ROOT.
    pub output_paths: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoundStatus {
    Researching,
    Writing,
    Evaluating,
    Completed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Round {
    pub number: u32,
    pub status: RoundStatus,
    pub researched_dimensions: Vec<String>,
    pub draft_path: Option<String>,
    pub eval_path: Option<String>,
    pub feedback_path: Option<String>,
    pub score: Option<f64>,
    /// `pending` until evaluated, then the eval's verdict.
    pub verdict: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Best {
    pub round: u32,
    pub score: f64,
    pub passed: bool,
    pub draft_path: String,
}

/// `meta.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub task_id: String,
    pub status: RunStatus,
    pub phase: Phase,
    pub round: u32,
    /// 5.
    pub max_rounds: u32,
    /// 3.8 until the spec sets it.
    pub pass_threshold: f64,
    pub rounds: Vec<Round>,
    pub best: Option<Best>,
    pub last_error: Option<String>,
    pub work_items: Vec<WorkItem>,
    pub created_at: String,
    pub updated_at: String,
}

/// A path relative to RUN_ROOT that cannot escape it.
pub fn inside(path: &str) -> bool {
    let drive_absolute = path.len() > 1 && path.as_bytes()[1] == b':';
    let escapes = path.is_empty() || path.starts_with('/') || path.contains('\\') || drive_absolute;
    !escapes && path.split('/').all(|s| !s.is_empty() && s != "." && s != "..")
}

/// The paths a work item owns, by role and state.
pub fn owned_paths(item: &WorkItem) -> Vec<String> {
    match item.role {
        Role::Planner => vec!["spec.json".into()],
        Role::Scout => match item.status {
            ItemStatus::Completed | ItemStatus::Partial => {
                vec![format!("context/evidence_{}.json", item.dimension.as_deref().unwrap_or(""))]
            }
            _ => vec![format!("context/.staging/{}.json", item.id)],
        },
        Role::Writer => vec![format!("drafts/draft_v{}.md", item.round)],
        Role::Evaluator => {
            vec![format!("evals/eval_v{}.json", item.round), format!("feedback/feedback_v{}.md", item.round)]
        }
    }
}

/// The round that should be best: passing over non-passing, highest score, ties to the later round.
pub fn select_best(rounds: &[Round]) -> Option<Best> {
    let mut best: Option<Best> = None;
    for r in rounds.iter().filter(|r| r.status == RoundStatus::Completed) {
        let (Some(score), Some(draft)) = (r.score, &r.draft_path) else { continue };
        if r.verdict == "REJECT" {
            continue;
        }
        let passed = r.verdict == "PASS";
        let better = match &best {
            None => true,
            Some(b) => (passed, score, r.number) >= (b.passed, b.score, b.round) && (passed || !b.passed),
        };
        if better {
            best = Some(Best { round: r.number, score, passed, draft_path: draft.clone() });
        }
    }
    best
}

/// Three or more evaluations, and each of the last two improvements is below 0.15.
pub fn plateau(rounds: &[Round]) -> bool {
    let scores: Vec<f64> =
        rounds.iter().filter(|r| r.status == RoundStatus::Completed).filter_map(|r| r.score).collect();
    scores.len() >= 3 && {
        let n = scores.len();
        scores[n - 1] - scores[n - 2] < 0.15 && scores[n - 2] - scores[n - 3] < 0.15
    }
}

/// Parse and check `meta.json` alone (schema and internal rules).
pub fn check_meta(file: &str, text: &str) -> (Option<Meta>, Vec<Violation>) {
    let mut r = Report::new(file);
    let Some(meta) = parse::<Meta>(&mut r, text) else { return (None, r.out) };
    meta_rules(&mut r, &meta);
    (Some(meta), r.out)
}

fn meta_rules(r: &mut Report<'_>, m: &Meta) {
    if m.max_rounds != 5 {
        r.add("/max_rounds", "max-rounds", format!("max_rounds is {}, the contract sets 5", m.max_rounds));
    }
    if m.status == RunStatus::Running && m.phase == Phase::Finalized {
        r.add("/phase", "running-not-finalized", "a running run never has phase `finalized`");
    }
    if m.status.terminal() && m.phase != Phase::Finalized {
        r.add("/phase", "terminal-finalized", "a terminal run has phase `finalized`");
    }
    let mut ids = BTreeSet::new();
    for (i, w) in m.work_items.iter().enumerate() {
        if !ids.insert(w.id.as_str()) {
            r.add(format!("/work_items/{i}/id"), "unique-id", format!("work item `{}` appears twice", w.id));
        }
        item_rules(r, m, i, w);
    }
    let planners = m.work_items.iter().filter(|w| w.role == Role::Planner).count();
    if planners != 1 {
        r.add("/work_items", "one-planner", format!("{planners} Planner items (exactly one)"));
    }
    for (i, round) in m.rounds.iter().enumerate() {
        round_rules(r, m, i, round);
    }
    history_rules(r, m);
    status_rules(r, m);
}

/// One work item's rules: attempts, owned paths, role, dimension and round.
fn item_rules(r: &mut Report<'_>, m: &Meta, i: usize, w: &WorkItem) {
    let p = format!("/work_items/{i}");
    if w.attempt > 2 {
        r.add(format!("{p}/attempt"), "attempt-limit", format!("attempt {} (never 3 or more)", w.attempt));
    }
    if w.status == ItemStatus::Running && w.attempt == 0 {
        r.add(format!("{p}/attempt"), "attempt-limit", "a running item has attempt 1 or 2");
    }
    for (j, path) in w.output_paths.iter().enumerate() {
        if !inside(path) {
            r.add(format!("{p}/output_paths/{j}"), "path-escape", format!("`{path}` is not a path inside RUN_ROOT"));
        }
    }
    if w.output_paths != owned_paths(w) {
        r.add(
            format!("{p}/output_paths"),
            "ownership",
            format!("a {:?} item in state {:?} owns exactly {:?}", w.role, w.status, owned_paths(w)),
        );
    }
    if w.status == ItemStatus::Partial && w.role != Role::Scout {
        r.add(format!("{p}/status"), "partial-scout", "only Scout items can be partial");
    }
    match (w.role, &w.dimension) {
        (Role::Scout, None) => r.add(format!("{p}/dimension"), "scout-dimension", "a Scout item names its dimension"),
        (Role::Scout, Some(d)) => {
            let selected =
                m.rounds.iter().find(|x| x.number == w.round).is_some_and(|x| x.researched_dimensions.contains(d));
            if !selected {
                r.add(format!("{p}/dimension"), "scout-dimension", format!("round {} did not select `{d}`", w.round));
            }
        }
        (_, Some(_)) => r.add(format!("{p}/dimension"), "scout-dimension", "only Scout items name a dimension"),
        _ => {}
    }
    if w.role == Role::Planner && w.round != 0 {
        r.add(format!("{p}/round"), "planner-round", "the Planner works in round 0");
    }
    if w.role != Role::Planner && !m.rounds.iter().any(|x| x.number == w.round) {
        r.add(format!("{p}/round"), "item-round", format!("round {} does not exist", w.round));
    }
}

/// One round's rules: its number, paths, Scouts, verdict and completion record.
fn round_rules(r: &mut Report<'_>, m: &Meta, i: usize, round: &Round) {
    let p = format!("/rounds/{i}");
    if round.number != i as u32 + 1 {
        r.add(format!("{p}/number"), "round-numbers", format!("round {} is at position {}", round.number, i + 1));
    }
    for path in [&round.draft_path, &round.eval_path, &round.feedback_path].into_iter().flatten() {
        if !inside(path) {
            r.add(p.clone(), "path-escape", format!("`{path}` is not a path inside RUN_ROOT"));
        }
    }
    for d in &round.researched_dimensions {
        let n = m
            .work_items
            .iter()
            .filter(|w| w.role == Role::Scout && w.round == round.number && w.dimension.as_ref() == Some(d))
            .count();
        if n != 1 {
            r.add(
                format!("{p}/researched_dimensions"),
                "one-scout-per-dimension",
                format!("dimension `{d}` has {n} Scout items in round {}", round.number),
            );
        }
    }
    if !matches!(round.verdict.as_str(), "pending" | "PASS" | "REVISE" | "RESEARCH" | "REJECT") {
        r.add(
            format!("{p}/verdict"),
            "round-record",
            format!("verdict `{}` is not pending, PASS, REVISE, RESEARCH or REJECT", round.verdict),
        );
    }
    if round.status == RoundStatus::Completed
        && (round.eval_path.is_none() || round.feedback_path.is_none() || round.draft_path.is_none())
    {
        r.add(p.clone(), "round-record", "a completed round records its draft, eval and feedback paths");
    }
    if round.status == RoundStatus::Completed {
        for role in [Role::Writer, Role::Evaluator] {
            let n = m.work_items.iter().filter(|w| w.role == role && w.round == round.number).count();
            if n != 1 {
                r.add(
                    p.clone(),
                    "one-writer-evaluator",
                    format!("completed round {} has {n} {role:?} items (exactly one)", round.number),
                );
            }
        }
        if round.score.is_none() || round.verdict == "pending" {
            r.add(p.clone(), "round-record", "a completed round records its score and verdict");
        }
    }
}

/// The rounds as a history: how many, and REJECT absorbing.
fn history_rules(r: &mut Report<'_>, m: &Meta) {
    if m.rounds.len() > m.max_rounds as usize {
        r.add("/rounds", "max-rounds", format!("{} rounds, at most max_rounds {}", m.rounds.len(), m.max_rounds));
    }
    if m.round as usize != m.rounds.len() {
        r.add("/round", "round-numbers", format!("round is {}, but {} rounds are recorded", m.round, m.rounds.len()));
    }
    // REJECT is absorbing.
    if let Some(pos) = m.rounds.iter().position(|x| x.verdict == "REJECT") {
        if pos + 1 != m.rounds.len() {
            r.add("/rounds", "reject-absorbing", "no round may follow a REJECT");
        }
        let n = m.rounds[pos].number;
        if m.work_items.iter().any(|w| w.round > n) {
            r.add("/work_items", "reject-absorbing", "no work item may follow a REJECT");
        }
        if m.status != RunStatus::Failed {
            r.add("/status", "reject-absorbing", "a REJECT fails the run");
        }
    }
}

/// The best round and the run's status against the rounds and items.
fn status_rules(r: &mut Report<'_>, m: &Meta) {
    // Best.
    let expected = select_best(&m.rounds);
    if m.best != expected {
        r.add("/best", "best-selection", format!("best should be {:?}", expected.as_ref().map(|b| b.round)));
    }
    match m.status {
        RunStatus::Completed | RunStatus::Exhausted => {
            if m.rounds.last().is_none_or(|x| x.status != RoundStatus::Completed) {
                r.add("/rounds", "finalize-ready", "a finalized run's latest round is completed");
            }
            if m.work_items.iter().any(|w| !matches!(w.status, ItemStatus::Completed | ItemStatus::Partial)) {
                r.add(
                    "/work_items",
                    "finalize-ready",
                    "every work item of a completed or exhausted run is completed or partial",
                );
            }
            let passed = m.best.as_ref().is_some_and(|b| b.passed);
            if m.status == RunStatus::Completed && !passed {
                r.add("/best", "completed-passes", "a completed run's best round passed");
            }
            if m.status == RunStatus::Exhausted {
                if passed {
                    r.add("/best", "exhausted-fails", "an exhausted run's best did not pass");
                }
                if m.rounds.len() < m.max_rounds as usize && !plateau(&m.rounds) {
                    r.add("/status", "exhausted-why", "exhausted needs max_rounds reached or a plateau");
                }
            }
        }
        RunStatus::Failed => {
            if m.work_items.iter().any(|w| w.status == ItemStatus::Running) {
                r.add("/work_items", "failed-justified", "a failed run has no running work item");
            }
            let justified = m.work_items.iter().any(|w| w.status == ItemStatus::Failed && w.attempt == 2)
                || m.rounds.iter().any(|x| x.verdict == "REJECT");
            if !justified {
                r.add("/status", "failed-justified", "a failed run needs an attempt-2 failed item or a REJECT");
            }
            if m.best.as_ref().is_some_and(|b| b.passed) && m.rounds.iter().any(|x| x.verdict == "REJECT") {
                r.add("/best", "failed-justified", "a failed run stays non-passing");
            }
        }
        RunStatus::Running => {
            if m.rounds.last().is_some_and(|x| x.status == RoundStatus::Completed && x.verdict == "PASS") {
                r.add("/status", "decide", "the latest round passed: the run must be finalized as completed");
            }
        }
    }
}

/// Validate a whole run: meta.json against itself and against every artifact on disk.
pub fn validate_run(root: &Path) -> Vec<Violation> {
    let meta_text = match std::fs::read_to_string(root.join("meta.json")) {
        Ok(t) => t,
        Err(e) => return vec![missing("meta.json", e.to_string())],
    };
    let (meta, mut out) = check_meta("meta.json", &meta_text);
    let Some(meta) = meta else { return out };
    if out.iter().any(|v| v.rule == "path-escape") {
        // Never read outside RUN_ROOT: stop at malformed or escaping paths.
        return out;
    }
    let read = |p: &str| std::fs::read_to_string(root.join(p)).ok();
    let spec = run_spec(&meta, &read, &mut out);
    let evidence = run_evidence(&meta, spec.as_ref(), &read, &mut out);
    for round in &meta.rounds {
        round_artifacts(&meta, round, spec.as_ref(), &evidence, &read, &mut out);
    }
    run_reports(root, &meta, &mut out);
    out
}

/// A file the run records that is not there.
fn missing(file: &str, message: impl Into<String>) -> Violation {
    Violation { file: file.into(), pointer: String::new(), rule: "missing".into(), message: message.into() }
}

/// The run's spec, checked, and its pass threshold against meta's.
fn run_spec(meta: &Meta, read: &dyn Fn(&str) -> Option<String>, out: &mut Vec<Violation>) -> Option<Spec> {
    let planner_done = meta.work_items.iter().any(|w| w.role == Role::Planner && w.status == ItemStatus::Completed);
    let spec: Option<Spec> = match read("spec.json") {
        Some(text) => {
            let (spec, v) = check_spec("spec.json", &text);
            out.extend(v);
            spec
        }
        None if planner_done => {
            out.push(missing("spec.json", "the Planner completed but spec.json is missing"));
            None
        }
        None => None,
    };
    if let Some(spec) = &spec
        && meta.round >= 1
        && (meta.pass_threshold - spec.success_criteria.pass_threshold).abs() > 1e-9
    {
        out.push(Violation {
            file: "meta.json".into(),
            pointer: "/pass_threshold".into(),
            rule: "pass-threshold".into(),
            message: format!(
                "{} is not the spec's passThreshold {}",
                meta.pass_threshold, spec.success_criteria.pass_threshold
            ),
        });
    }
    spec
}

/// The evidence of every completed or partial Scout item, checked against
/// its item, by dimension.
fn run_evidence(
    meta: &Meta,
    spec: Option<&Spec>,
    read: &dyn Fn(&str) -> Option<String>,
    out: &mut Vec<Violation>,
) -> BTreeMap<String, Evidence> {
    let mut evidence: BTreeMap<String, Evidence> = BTreeMap::new();
    for w in meta
        .work_items
        .iter()
        .filter(|w| w.role == Role::Scout && matches!(w.status, ItemStatus::Completed | ItemStatus::Partial))
    {
        let path = &w.output_paths[0];
        let Some(text) = read(path) else {
            out.push(missing(path, format!("Scout item `{}` is {:?} but its evidence is missing", w.id, w.status)));
            continue;
        };
        let (ev, v) = check_evidence(path, &text, &EvidenceContext { spec, ..Default::default() });
        out.extend(v);
        let Some(ev) = ev else { continue };
        if ev.round != w.round {
            out.push(Violation {
                file: path.clone(),
                pointer: "/round".into(),
                rule: "evidence-round".into(),
                message: format!("evidence of round {}, but its Scout item is of round {}", ev.round, w.round),
            });
        }
        let partial = ev.status == crate::artifacts::EvidenceStatus::Partial;
        if partial != (w.status == ItemStatus::Partial) {
            out.push(Violation {
                file: "meta.json".into(),
                pointer: format!("/work_items/{}", w.id),
                rule: "partial-scout".into(),
                message: "item status and evidence status disagree".into(),
            });
        }
        evidence.insert(ev.dimension.clone(), ev);
    }
    evidence
}

/// One round's draft, eval and feedback, each checked, and the eval against
/// what meta records of the round.
fn round_artifacts(
    meta: &Meta,
    round: &Round,
    spec: Option<&Spec>,
    evidence: &BTreeMap<String, Evidence>,
    read: &dyn Fn(&str) -> Option<String>,
    out: &mut Vec<Violation>,
) {
    if let Some(d) = &round.draft_path {
        match read(d) {
            None => out.push(missing(d, "recorded draft is missing")),
            Some(text) => out.extend(check_draft(d, &text, evidence)),
        }
    }
    let mut eval: Option<Eval> = None;
    if let Some(e) = &round.eval_path {
        match read(e) {
            None => out.push(missing(e, "recorded eval is missing")),
            Some(text) => {
                let (ev, v) = check_eval(e, &text, spec);
                out.extend(v);
                if let Some(ev) = &ev {
                    eval_record(meta, round, e, ev, out);
                }
                eval = ev;
            }
        }
    }
    if let Some(f) = &round.feedback_path {
        match read(f) {
            None => out.push(missing(f, "recorded feedback is missing")),
            Some(text) => out.extend(check_feedback(f, &text, eval.as_ref())),
        }
    }
}

/// An eval against its round's record in meta, and a REJECT against the run's status.
fn eval_record(meta: &Meta, round: &Round, path: &str, ev: &Eval, out: &mut Vec<Violation>) {
    if ev.round != round.number {
        out.push(Violation {
            file: path.into(),
            pointer: "/round".into(),
            rule: "round-record".into(),
            message: format!("eval of round {}, recorded in round {}", ev.round, round.number),
        });
    }
    let verdict =
        serde_json::to_value(ev.verdict).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    if round.verdict != verdict || round.score != Some(ev.overall_score) {
        out.push(Violation {
            file: "meta.json".into(),
            pointer: format!("/rounds/{}", round.number - 1),
            rule: "round-record".into(),
            message: format!(
                "round {} records {} / {:?}, its eval says {verdict} / {}",
                round.number, round.verdict, round.score, ev.overall_score
            ),
        });
    }
    if ev.verdict == Verdict::Reject && meta.status != RunStatus::Failed {
        out.push(Violation {
            file: "meta.json".into(),
            pointer: "/status".into(),
            rule: "reject-absorbing".into(),
            message: "a validated REJECT fails the run".into(),
        });
    }
}

/// The final and best reports against the run's status and its best draft.
fn run_reports(root: &Path, meta: &Meta, out: &mut Vec<Violation>) {
    let best_text = meta.best.as_ref().and_then(|b| std::fs::read(root.join(&b.draft_path)).ok());
    let final_report = std::fs::read(root.join("final_report.md")).ok();
    let best_report = std::fs::read(root.join("best_report.md")).ok();
    let mut report = |file: &str, rule: &str, message: &str| {
        out.push(Violation { file: file.into(), pointer: String::new(), rule: rule.into(), message: message.into() })
    };
    match meta.status {
        RunStatus::Completed => {
            if final_report.is_none() || final_report != best_text {
                report(
                    "final_report.md",
                    "final-report",
                    "a completed run has final_report.md byte-identical to the best draft",
                );
            }
        }
        RunStatus::Exhausted => {
            if best_report.is_none() || best_report != best_text {
                report(
                    "best_report.md",
                    "best-report",
                    "an exhausted run has best_report.md byte-identical to the best draft",
                );
            }
            if final_report.is_some() {
                report("final_report.md", "final-report", "an exhausted run has no final_report.md");
            }
        }
        RunStatus::Failed | RunStatus::Running => {
            if final_report.is_some() {
                report("final_report.md", "final-report", "only a completed run has final_report.md");
            }
        }
    }
}
