//! Resume planning: from the files on disk, the next thing an orchestrator
//! must do, without changing anything; `apply` performs the state-only
//! transitions (Scout promotion renames, work-item status updates) and
//! re-validates.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::artifacts::{
    Evidence, EvidenceContext, EvidenceStatus, Spec, check_draft, check_eval, check_evidence, check_feedback,
    check_spec, load_evidence_dir,
};
use crate::meta::{ItemStatus, Meta, Phase, Role, RoundStatus, RunStatus, WorkItem, check_meta, validate_run};

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Action {
    /// The run is terminal: report its outcome, spawn nothing.
    Outcome { status: RunStatus, report: Option<String> },
    /// Validation failed in a way that must not be repaired silently (malformed meta, escaping paths).
    Stop { reason: String },
    /// A stale running Scout whose staged output validates: rename it into place, then mark the item.
    Promote { work_item: String, from: String, to: String, status: ItemStatus },
    /// A stale running item whose output validates: mark it completed.
    Reconcile { work_item: String, status: ItemStatus },
    /// A stale running item with missing or invalid output and attempt < 2: back to pending (one attempt left).
    Reset { work_item: String, error: String },
    /// A stale running item with missing or invalid output at attempt 2: it fails, and the run with it.
    Fail { work_item: String, error: String },
    /// Spawn a fresh agent for a pending work item.
    Spawn { role: Role, work_item: String, round: u32, output_paths: Vec<String>, attempt: u32 },
    /// Root bookkeeping the orchestrator performs next (not a spawn).
    Checkpoint { step: String },
}

/// What `fabdex run plan` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub actions: Vec<Action>,
}

fn output_error(root: &Path, item: &WorkItem, spec: Option<&Spec>) -> Result<Option<EvidenceStatus>, String> {
    let read = |p: &str| std::fs::read_to_string(root.join(p)).map_err(|_| format!("`{p}` is missing"));
    let first = |v: Vec<crate::artifacts::Violation>| v.first().map(|x| x.to_string());
    match item.role {
        Role::Planner => {
            let (_, v) = check_spec("spec.json", &read("spec.json")?);
            first(v).map_or(Ok(None), Err)
        }
        Role::Scout => {
            let staged = format!("context/.staging/{}.json", item.id);
            let canonical = format!("context/evidence_{}.json", item.dimension.as_deref().unwrap_or(""));
            let (path, text, prior) = match read(&staged) {
                // A round 2+ staged output must keep the canonical prior evidence it replaces.
                Ok(t) => (staged, t, read(&canonical).ok().and_then(|p| serde_json::from_str::<Evidence>(&p).ok())),
                Err(_) => (canonical.clone(), read(&canonical).map_err(|_| format!("`{staged}` is missing"))?, None),
            };
            let prior = prior.filter(|p| p.round < item.round);
            let (ev, v) =
                check_evidence(&path, &text, &EvidenceContext { spec, prior: prior.as_ref(), ..Default::default() });
            if let Some(e) = first(v) {
                return Err(e);
            }
            let ev = ev.ok_or("unreadable evidence")?;
            if Some(&ev.dimension) != item.dimension.as_ref() || ev.round != item.round {
                return Err(format!("`{path}` is evidence for `{}` round {}", ev.dimension, ev.round));
            }
            Ok(Some(ev.status))
        }
        Role::Writer => {
            let p = format!("drafts/draft_v{}.md", item.round);
            let evidence = load_evidence_dir(&root.join("context"));
            first(check_draft(&p, &read(&p)?, &evidence)).map_or(Ok(None), Err)
        }
        Role::Evaluator => {
            let e = format!("evals/eval_v{}.json", item.round);
            let f = format!("feedback/feedback_v{}.md", item.round);
            let (eval, v) = check_eval(&e, &read(&e)?, spec);
            if let Some(err) = first(v) {
                return Err(err);
            }
            first(check_feedback(&f, &read(&f)?, eval.as_ref())).map_or(Ok(None), Err)
        }
    }
}

/// The plan for a run folder.
pub fn plan(root: &Path) -> Plan {
    let meta = match trusted_meta(root) {
        Ok(meta) => meta,
        Err(plan) => return plan,
    };
    let spec = std::fs::read_to_string(root.join("spec.json")).ok().and_then(|t| check_spec("spec.json", &t).0);
    let mut actions = Vec::new();
    if reconcile_running(root, &meta, spec.as_ref(), &mut actions) {
        actions.push(Action::Checkpoint { step: "set status failed and phase finalized; spawn nothing".into() });
        return Plan { actions };
    }
    next_phase(&meta, &mut actions);
    let _ = Phase::Planning;
    Plan { actions }
}

/// meta.json parsed and safe to act on, or the plan that stops (or reports
/// a terminal run's outcome) instead.
fn trusted_meta(root: &Path) -> Result<Meta, Plan> {
    let Ok(text) = std::fs::read_to_string(root.join("meta.json")) else {
        return Err(Plan { actions: vec![Action::Stop { reason: "meta.json is missing".into() }] });
    };
    let (meta, violations) = check_meta("meta.json", &text);
    let Some(meta) = meta else {
        return Err(Plan {
            actions: vec![Action::Stop {
                reason: violations.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("; "),
            }],
        });
    };
    let escaping: Vec<String> = violations.iter().filter(|v| v.rule == "path-escape").map(|v| v.to_string()).collect();
    if !escaping.is_empty() {
        return Err(Plan {
            actions: vec![Action::Stop {
                reason: format!("malformed or escaping paths, not repaired: {}", escaping.join("; ")),
            }],
        });
    }
    if meta.status.terminal() {
        let report = match meta.status {
            RunStatus::Completed => Some(root.join("final_report.md").display().to_string()),
            RunStatus::Exhausted => Some(root.join("best_report.md").display().to_string()),
            _ => None,
        };
        return Err(Plan { actions: vec![Action::Outcome { status: meta.status, report }] });
    }
    Ok(meta)
}

/// The stale running items, artifact first: promote or reconcile what
/// validates, reset what may be retried, fail what may not. True if one failed.
fn reconcile_running(root: &Path, meta: &Meta, spec: Option<&Spec>, actions: &mut Vec<Action>) -> bool {
    // Stale running items first: artifact first, never respawn what validates.
    let mut failed = false;
    for item in meta.work_items.iter().filter(|w| w.status == ItemStatus::Running) {
        match output_error(root, item, spec) {
            Ok(status) => {
                let status =
                    if status == Some(EvidenceStatus::Partial) { ItemStatus::Partial } else { ItemStatus::Completed };
                if item.role == Role::Scout && root.join(format!("context/.staging/{}.json", item.id)).exists() {
                    actions.push(Action::Promote {
                        work_item: item.id.clone(),
                        from: format!("context/.staging/{}.json", item.id),
                        to: format!("context/evidence_{}.json", item.dimension.as_deref().unwrap_or("")),
                        status,
                    });
                } else {
                    actions.push(Action::Reconcile { work_item: item.id.clone(), status });
                }
            }
            Err(error) if item.attempt < 2 => actions.push(Action::Reset { work_item: item.id.clone(), error }),
            Err(error) => {
                failed = true;
                actions.push(Action::Fail { work_item: item.id.clone(), error });
            }
        }
    }
    failed
}

/// The earliest incomplete phase (Planner, Scouts, Writer, Evaluator,
/// Decide) as actions, given what reconciling already planned.
fn next_phase(meta: &Meta, actions: &mut Vec<Action>) {
    // Owned, so that the state of an item does not borrow the actions it adds to.
    let reconciled: Vec<String> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Promote { work_item, .. } | Action::Reconcile { work_item, .. } => Some(work_item.clone()),
            _ => None,
        })
        .collect();
    let reset: Vec<String> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Reset { work_item, .. } => Some(work_item.clone()),
            _ => None,
        })
        .collect();
    let state = |w: &WorkItem| -> ItemStatus {
        if reconciled.contains(&w.id) {
            ItemStatus::Completed
        } else if reset.contains(&w.id) {
            ItemStatus::Pending
        } else {
            w.status
        }
    };
    // The earliest incomplete phase: Planner, Scouts, Writer, Evaluator, Decide.
    if let Some(w) = meta.work_items.iter().find(|w| w.status == ItemStatus::Failed) {
        actions.push(Action::Checkpoint {
            step: format!(
                "work item `{}` failed at attempt {}: set status failed and phase finalized; spawn nothing",
                w.id, w.attempt
            ),
        });
        return;
    }
    // Never a third attempt: an item whose two attempts are used up fails the run.
    if let Some(w) = meta.work_items.iter().find(|w| state(w) == ItemStatus::Pending && w.attempt >= 2) {
        actions.push(Action::Fail {
            work_item: w.id.clone(),
            error: w.error.clone().unwrap_or_else(|| "both attempts used; no third attempt".into()),
        });
        actions.push(Action::Checkpoint { step: "set status failed and phase finalized; spawn nothing".into() });
        return;
    }
    let spawn = |w: &WorkItem| Action::Spawn {
        role: w.role,
        work_item: w.id.clone(),
        round: w.round,
        output_paths: crate::meta::owned_paths(w),
        attempt: w.attempt + 1,
    };
    let done = |s: ItemStatus| matches!(s, ItemStatus::Completed | ItemStatus::Partial);
    let planner = meta.work_items.iter().find(|w| w.role == Role::Planner);
    if let Some(p) = planner.filter(|p| !done(state(p))) {
        actions.push(spawn(p));
        return;
    }
    if meta.rounds.is_empty() {
        actions.push(Action::Checkpoint { step: "copy spec.successCriteria.passThreshold to meta.pass_threshold, create round 1 with a Scout item per spec dimension, phase researching".into() });
        return;
    }
    let round = meta.round;
    let scouts: Vec<&WorkItem> = meta.work_items.iter().filter(|w| w.role == Role::Scout && w.round == round).collect();
    let pending_scouts: Vec<&WorkItem> = scouts.iter().copied().filter(|w| state(w) == ItemStatus::Pending).collect();
    if !pending_scouts.is_empty() {
        let running = scouts.iter().filter(|w| state(w) == ItemStatus::Running).count();
        for w in pending_scouts.into_iter().take(3usize.saturating_sub(running)) {
            actions.push(spawn(w));
        }
        return;
    }
    if scouts.iter().any(|w| state(w) == ItemStatus::Running) {
        actions.push(Action::Checkpoint { step: "wait for the running Scouts".into() });
        return;
    }
    writer_and_evaluator(meta, &state, &spawn, actions);
}

/// The round's Writer, then its Evaluator, then the decision.
fn writer_and_evaluator(
    meta: &Meta,
    state: &dyn Fn(&WorkItem) -> ItemStatus,
    spawn: &dyn Fn(&WorkItem) -> Action,
    actions: &mut Vec<Action>,
) {
    let round = meta.round;
    let done = |s: ItemStatus| matches!(s, ItemStatus::Completed | ItemStatus::Partial);
    let writer = meta.work_items.iter().find(|w| w.role == Role::Writer && w.round == round);
    match writer {
        None => {
            actions.push(Action::Checkpoint {
                step: format!("phase writing: append a pending Writer item for round {round}"),
            });
            return;
        }
        Some(w) if !done(state(w)) => {
            actions.push(spawn(w));
            return;
        }
        Some(_) => {}
    }
    let evaluator = meta.work_items.iter().find(|w| w.role == Role::Evaluator && w.round == round);
    match evaluator {
        None => actions.push(Action::Checkpoint {
            step: format!("record the draft, phase evaluating: append a pending Evaluator item for round {round}"),
        }),
        Some(w) if !done(state(w)) => actions.push(spawn(w)),
        Some(_) => {
            let recorded = meta.rounds.last().is_some_and(|r| r.status == RoundStatus::Completed);
            actions.push(Action::Checkpoint {
                step: if recorded {
                    "decide: PASS → final_report.md (completed); REJECT → failed; plateau or max_rounds → best_report.md (exhausted); else next round".into()
                } else {
                    format!("record round {round}'s eval (score, verdict, paths), mark it completed and update best; then decide")
                },
            });
        }
    }
}

/// Perform the plan's state-only transitions, write meta.json atomically and
/// re-validate the run. Returns the violations after applying.
pub fn apply(root: &Path, plan: &Plan, now: &str) -> anyhow::Result<Vec<crate::artifacts::Violation>> {
    let state_only = |a: &&Action| {
        matches!(a, Action::Promote { .. } | Action::Reconcile { .. } | Action::Reset { .. } | Action::Fail { .. })
    };
    if !plan.actions.iter().any(|a| state_only(&a)) {
        return Ok(validate_run(root));
    }
    let text = std::fs::read_to_string(root.join("meta.json"))?;
    let mut meta: Meta = serde_json::from_str(&text)?;
    // Failures last, so `last_error` names what failed the run.
    let mut ordered: Vec<&Action> = plan.actions.iter().filter(|a| !matches!(a, Action::Fail { .. })).collect();
    ordered.extend(plan.actions.iter().filter(|a| matches!(a, Action::Fail { .. })));
    for a in ordered {
        match a {
            Action::Promote { work_item, from, to, status } => {
                std::fs::rename(root.join(from), root.join(to))?;
                let w = item(&mut meta, work_item)?;
                w.output_paths = vec![to.clone()];
                w.status = *status;
                w.error = None;
            }
            Action::Reconcile { work_item, status } => {
                let w = item(&mut meta, work_item)?;
                w.status = *status;
                w.output_paths = crate::meta::owned_paths(w);
                w.error = None;
            }
            Action::Reset { work_item, error } => {
                let w = item(&mut meta, work_item)?;
                w.status = ItemStatus::Pending;
                w.error = Some(error.clone());
                meta.last_error = Some(error.clone());
            }
            Action::Fail { work_item, error } => {
                let w = item(&mut meta, work_item)?;
                w.status = ItemStatus::Failed;
                w.error = Some(error.clone());
                meta.last_error = Some(error.clone());
                meta.status = RunStatus::Failed;
                meta.phase = Phase::Finalized;
            }
            _ => {}
        }
    }
    meta.updated_at = now.to_string();
    let tmp = root.join(format!("meta.json.tmp{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec_pretty(&meta)?)?;
    std::fs::rename(&tmp, root.join("meta.json"))?;
    Ok(validate_run(root))
}

fn item<'a>(meta: &'a mut Meta, id: &str) -> anyhow::Result<&'a mut WorkItem> {
    meta.work_items.iter_mut().find(|w| w.id == id).ok_or_else(|| anyhow::anyhow!("no work item `{id}`"))
}
