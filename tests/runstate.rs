//! Deep-research runs as files: a valid two-round run validates; one mutation
//! per rule fails with that rule, naming the file and the JSON pointer; and
//! resume planning takes each branch of the contract's "Resume Existing Run".

use std::fs;
use std::path::Path;

use fabdex_runstate::artifacts::{EvidenceContext, check_evidence};
use fabdex_runstate::meta::validate_run;
use fabdex_runstate::plan::{Action, apply, plan};
use serde_json::{Value, json};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn write_json(root: &Path, rel: &str, v: &Value) {
    write(root, rel, &serde_json::to_string_pretty(v).unwrap());
}

fn spec() -> Value {
    json!({
        "task": "How should a pattern read a user's mail?",
        "dimensions": [
            {"id": "api", "title": "The reading API", "questions": ["What does the reader take?"]},
            {"id": "examples", "title": "Existing patterns", "questions": ["Which patterns read mail?"]}
        ],
        "successCriteria": {"passThreshold": 3.8, "criteria": [
            {"id": "accuracy", "description": "Claims match the sources", "weight": 2.0},
            {"id": "clarity", "description": "An author can act on it", "weight": 1.0}
        ]}
    })
}

fn evidence(dim: &str, round: u32) -> Value {
    json!({
        "dimension": dim, "round": round, "status": "complete",
        "sources": [{"id": "s1", "location": format!("https://example.org/{dim}"), "title": "A source"}],
        "claims": [{"id": "c1", "text": format!("{dim} claim"), "sourceIds": ["s1"]},
                   {"id": "c2", "text": format!("{dim} other claim"), "sourceIds": ["s1"]}],
        "contradictions": [{"id": "x1", "claimIds": ["c1", "c2"], "note": "they disagree on defaults"}],
        "openQuestions": []
    })
}

fn eval(round: u32, accuracy: f64, clarity: f64, overall: f64, verdict: &str) -> Value {
    json!({
        "round": round,
        "scores": [{"criterion": "accuracy", "score": accuracy, "rationale": "r"},
                   {"criterion": "clarity", "score": clarity, "rationale": "r"}],
        "overall_score": overall, "pass": verdict == "PASS", "verdict": verdict, "weak_dimensions": []
    })
}

fn item(id: &str, role: &str, round: u32, dim: Option<&str>, status: &str, attempt: u32, paths: &[&str]) -> Value {
    let mut v =
        json!({"id": id, "role": role, "round": round, "status": status, "attempt": attempt, "output_paths": paths});
    if let Some(d) = dim {
        v["dimension"] = json!(d);
    }
    v
}

fn round(n: u32, dims: &[&str], score: f64, verdict: &str) -> Value {
    json!({"number": n, "status": "completed", "researched_dimensions": dims,
           "draft_path": format!("drafts/draft_v{n}.md"), "eval_path": format!("evals/eval_v{n}.json"),
           "feedback_path": format!("feedback/feedback_v{n}.md"), "score": score, "verdict": verdict})
}

/// A valid completed run: round 1 researched both dimensions and was REVISEd;
/// round 2 rewrote the draft and passed.
fn valid_run(root: &Path) -> Value {
    write_json(root, "spec.json", &spec());
    write_json(root, "context/evidence_api.json", &evidence("api", 1));
    write_json(root, "context/evidence_examples.json", &evidence("examples", 1));
    fs::create_dir_all(root.join("context/.staging")).unwrap();
    write(root, "drafts/draft_v1.md", "# Reading mail\n\nThe reader takes a database [@api/c1]; see [@examples/c1].\n");
    let final_draft = "# Reading mail\n\nThe reader takes a database [@api/c1] and defaults disagree [@api/c2]; see [@examples/c1].\n";
    write(root, "drafts/draft_v2.md", final_draft);
    write_json(root, "evals/eval_v1.json", &eval(1, 3.0, 3.6, 3.2, "REVISE"));
    write(root, "feedback/feedback_v1.md", "# Feedback v1\n\nVerdict: REVISE\n\nName the defaults.\n");
    write_json(root, "evals/eval_v2.json", &eval(2, 4.0, 4.3, 4.1, "PASS"));
    write(root, "feedback/feedback_v2.md", "# Feedback v2\n\nVerdict: PASS\n");
    write(root, "final_report.md", final_draft);
    let meta = json!({
        "task_id": "reading-mail-20261202-170000",
        "status": "completed", "phase": "finalized", "round": 2, "max_rounds": 5, "pass_threshold": 3.8,
        "rounds": [round(1, &["api", "examples"], 3.2, "REVISE"), round(2, &[], 4.1, "PASS")],
        "best": {"round": 2, "score": 4.1, "passed": true, "draft_path": "drafts/draft_v2.md"},
        "last_error": null,
        "work_items": [
            item("planner", "planner", 0, None, "completed", 1, &["spec.json"]),
            item("scout-api-1", "scout", 1, Some("api"), "completed", 1, &["context/evidence_api.json"]),
            item("scout-examples-1", "scout", 1, Some("examples"), "completed", 2, &["context/evidence_examples.json"]),
            item("writer-1", "writer", 1, None, "completed", 1, &["drafts/draft_v1.md"]),
            item("evaluator-1", "evaluator", 1, None, "completed", 1, &["evals/eval_v1.json", "feedback/feedback_v1.md"]),
            item("writer-2", "writer", 2, None, "completed", 1, &["drafts/draft_v2.md"]),
            item("evaluator-2", "evaluator", 2, None, "completed", 1, &["evals/eval_v2.json", "feedback/feedback_v2.md"])
        ],
        "created_at": "2026-12-02T17:00:00Z", "updated_at": "2026-12-02T17:30:00Z"
    });
    write_json(root, "meta.json", &meta);
    meta
}

#[test]
fn a_valid_multi_round_run_validates() {
    let dir = tempfile::tempdir().unwrap();
    valid_run(dir.path());
    assert_eq!(validate_run(dir.path()), vec![]);
    let p = plan(dir.path());
    assert!(
        matches!(&p.actions[..], [Action::Outcome { status: fabdex_runstate::meta::RunStatus::Completed, report: Some(r) }] if r.ends_with("final_report.md"))
    );
}

type Mutation = fn(&Path, &mut Value);

#[test]
fn each_rule_has_a_failing_fixture() {
    let cases: Vec<(&str, Mutation)> = vec![
        ("path-escape", |_, m| m["work_items"][3]["output_paths"] = json!(["../outside.md"])),
        ("path-escape", |_, m| m["rounds"][0]["draft_path"] = json!("/etc/passwd")),
        ("attempt-limit", |_, m| m["work_items"][1]["attempt"] = json!(3)),
        ("one-planner", |_, m| {
            let p = m["work_items"][0].clone();
            let mut p2 = p.clone();
            p2["id"] = json!("planner-again");
            m["work_items"].as_array_mut().unwrap().push(p2);
        }),
        ("one-scout-per-dimension", |_, m| {
            m["work_items"].as_array_mut().unwrap().remove(2);
        }),
        ("one-writer-evaluator", |_, m| {
            m["work_items"].as_array_mut().unwrap().remove(4);
        }),
        ("scout-dimension", |_, m| m["work_items"][1]["dimension"] = json!("pricing")),
        ("ownership", |_, m| m["work_items"][3]["output_paths"] = json!(["drafts/draft_v9.md"])),
        ("partial-scout", |_, m| m["work_items"][3]["status"] = json!("partial")),
        ("planner-round", |_, m| m["work_items"][0]["round"] = json!(1)),
        ("max-rounds", |_, m| m["max_rounds"] = json!(7)),
        ("running-not-finalized", |_, m| m["status"] = json!("running")),
        ("terminal-finalized", |_, m| m["phase"] = json!("writing")),
        ("best-selection", |_, m| {
            m["best"] = json!({"round": 1, "score": 3.2, "passed": false, "draft_path": "drafts/draft_v1.md"})
        }),
        ("reject-absorbing", |root, m| {
            m["rounds"][0]["verdict"] = json!("REJECT");
            write_json(root, "evals/eval_v1.json", &eval(1, 3.0, 3.6, 3.2, "REJECT"));
            write(root, "feedback/feedback_v1.md", "Verdict: REJECT\n");
        }),
        ("round-record", |_, m| m["rounds"][1]["score"] = json!(4.5)),
        ("round-numbers", |_, m| m["round"] = json!(3)),
        ("final-report", |root, _| write(root, "final_report.md", "# Something else\n")),
        ("best-report", |_, m| {
            m["status"] = json!("exhausted");
            m["rounds"][1]["verdict"] = json!("REVISE");
        }),
        ("exhausted-why", |_, m| m["status"] = json!("exhausted")),
        ("completed-passes", |_, m| {
            m["rounds"][1]["verdict"] = json!("REVISE");
            m["best"]["passed"] = json!(false);
        }),
        ("failed-justified", |_, m| m["status"] = json!("failed")),
        ("decide", |_, m| {
            m["status"] = json!("running");
            m["phase"] = json!("evaluating");
        }),
        ("pass-threshold", |_, m| m["pass_threshold"] = json!(3.5)),
        ("draft-citations", |root, _| write(root, "drafts/draft_v1.md", "Claims [@api/c9] and [@pricing/c1].\n")),
        ("draft-citations", |root, _| write(root, "drafts/draft_v1.md", "No citations at all.\n")),
        ("partial-open-questions", |root, _| {
            let mut e = evidence("api", 1);
            e["status"] = json!("partial");
            write_json(root, "context/evidence_api.json", &e);
        }),
        ("claim-sources", |root, _| {
            let mut e = evidence("api", 1);
            e["claims"][0]["sourceIds"] = json!(["s7"]);
            write_json(root, "context/evidence_api.json", &e);
        }),
        ("contradiction-claims", |root, _| {
            let mut e = evidence("api", 1);
            e["contradictions"][0]["claimIds"] = json!(["c1"]);
            write_json(root, "context/evidence_api.json", &e);
        }),
        ("evidence-dimension", |root, _| {
            let mut e = evidence("api", 1);
            e["dimension"] = json!("pricing");
            write_json(root, "context/evidence_api.json", &e);
        }),
        ("unique-id", |root, _| {
            let mut e = evidence("api", 1);
            e["claims"][1]["id"] = json!("c1");
            write_json(root, "context/evidence_api.json", &e);
        }),
        ("overall-score", |root, _| write_json(root, "evals/eval_v2.json", &eval(2, 4.0, 4.3, 4.6, "PASS"))),
        ("pass-verdict", |root, _| {
            let mut e = eval(1, 3.0, 3.6, 3.2, "REVISE");
            e["pass"] = json!(true);
            write_json(root, "evals/eval_v1.json", &e);
        }),
        ("eval-criteria", |root, _| {
            let mut e = eval(1, 3.0, 3.6, 3.2, "REVISE");
            e["scores"].as_array_mut().unwrap().pop();
            write_json(root, "evals/eval_v1.json", &e);
        }),
        ("weak-dimensions", |root, m| {
            let mut e = eval(1, 3.0, 3.6, 3.2, "RESEARCH");
            e["weak_dimensions"] = json!([]);
            write_json(root, "evals/eval_v1.json", &e);
            m["rounds"][0]["verdict"] = json!("RESEARCH");
            write(root, "feedback/feedback_v1.md", "Verdict: RESEARCH\n");
        }),
        ("feedback-pair", |root, _| write(root, "feedback/feedback_v1.md", "Please try harder.\n")),
        ("pass-threshold", |root, _| {
            let mut s = spec();
            s["successCriteria"]["passThreshold"] = json!(6.0);
            write_json(root, "spec.json", &s);
        }),
        ("slug", |root, _| {
            let mut s = spec();
            s["dimensions"][0]["id"] = json!("The API");
            write_json(root, "spec.json", &s);
        }),
        ("schema", |root, _| write(root, "spec.json", "{\"task\": 3}")),
        ("json", |root, _| write(root, "meta.json", "{not json")),
        ("missing", |root, _| fs::remove_file(root.join("drafts/draft_v1.md")).unwrap()),
    ];
    for (rule, mutate) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut meta = valid_run(dir.path());
        mutate(dir.path(), &mut meta);
        if fs::read_to_string(dir.path().join("meta.json")).unwrap().starts_with('{')
            && !fs::read_to_string(dir.path().join("meta.json")).unwrap().starts_with("{not")
        {
            write_json(dir.path(), "meta.json", &meta);
        }
        let violations = validate_run(dir.path());
        let hit = violations.iter().find(|v| v.rule == rule);
        assert!(hit.is_some(), "{rule}: {violations:#?}");
        let hit = hit.unwrap();
        assert!(!hit.file.is_empty() && !hit.message.is_empty(), "{rule}: {hit:?}");
        assert!(hit.to_string().contains(&format!("[{rule}]")));
    }
}

#[test]
fn round_two_evidence_keeps_every_prior_source_claim_and_contradiction() {
    let prior: fabdex_runstate::artifacts::Evidence = serde_json::from_value(evidence("api", 1)).unwrap();
    let ctx = EvidenceContext { prior: Some(&prior), ..Default::default() };
    let mut next = evidence("api", 2);
    next["claims"].as_array_mut().unwrap().push(json!({"id": "c3", "text": "new", "sourceIds": ["s1"]}));
    assert_eq!(check_evidence("e.json", &next.to_string(), &ctx).1, vec![]);
    let mut removed = next.clone();
    removed["claims"].as_array_mut().unwrap().remove(0);
    let v = check_evidence("e.json", &removed.to_string(), &ctx).1;
    assert!(v.iter().any(|x| x.rule == "prior-kept" && x.message.contains("claims `c1` was removed")), "{v:?}");
    let mut rewritten = next.clone();
    rewritten["sources"][0]["title"] = json!("Another title");
    let v = check_evidence("e.json", &rewritten.to_string(), &ctx).1;
    assert!(v.iter().any(|x| x.rule == "prior-kept" && x.message.contains("sources `s1` was rewritten")), "{v:?}");
    let mut dropped = next;
    dropped["contradictions"] = json!([]);
    assert!(check_evidence("e.json", &dropped.to_string(), &ctx).1.iter().any(|x| x.rule == "prior-kept"));
}

/// A run in round 1 with both Scouts running (staged outputs possibly present).
fn researching(root: &Path, attempts: (u32, u32)) -> Value {
    write_json(root, "spec.json", &spec());
    fs::create_dir_all(root.join("context/.staging")).unwrap();
    let meta = json!({
        "task_id": "t", "status": "running", "phase": "researching", "round": 1, "max_rounds": 5, "pass_threshold": 3.8,
        "rounds": [{"number": 1, "status": "researching", "researched_dimensions": ["api", "examples"],
                    "draft_path": null, "eval_path": null, "feedback_path": null, "score": null, "verdict": "pending"}],
        "best": null, "last_error": null,
        "work_items": [
            item("planner", "planner", 0, None, "completed", 1, &["spec.json"]),
            item("scout-api-1", "scout", 1, Some("api"), "running", attempts.0, &["context/.staging/scout-api-1.json"]),
            item("scout-examples-1", "scout", 1, Some("examples"), "running", attempts.1, &["context/.staging/scout-examples-1.json"])
        ],
        "created_at": "2026-12-02T17:00:00Z", "updated_at": "2026-12-02T17:10:00Z"
    });
    write_json(root, "meta.json", &meta);
    meta
}

#[test]
fn resume_promotes_valid_staged_output_and_resets_or_fails_the_rest() {
    // A stale Scout whose staged output validates is promoted, not respawned;
    // one with no output and an attempt left goes back to pending.
    let dir = tempfile::tempdir().unwrap();
    researching(dir.path(), (1, 1));
    write_json(dir.path(), "context/.staging/scout-api-1.json", &evidence("api", 1));
    let p = plan(dir.path());
    assert!(
        matches!(&p.actions[0], Action::Promote { work_item, to, .. } if work_item == "scout-api-1" && to == "context/evidence_api.json"),
        "{p:?}"
    );
    assert!(
        matches!(&p.actions[1], Action::Reset { work_item, error } if work_item == "scout-examples-1" && error.contains("missing")),
        "{p:?}"
    );
    assert!(
        matches!(&p.actions[2], Action::Spawn { work_item, attempt: 2, .. } if work_item == "scout-examples-1"),
        "the one remaining attempt: {p:?}"
    );
    let after = apply(dir.path(), &p, "2026-12-02T17:20:00Z").unwrap();
    assert_eq!(after, vec![], "the run validates after applying");
    assert!(dir.path().join("context/evidence_api.json").exists());
    assert!(!dir.path().join("context/.staging/scout-api-1.json").exists());
    let meta: Value = serde_json::from_str(&fs::read_to_string(dir.path().join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["work_items"][1]["status"], "completed");
    assert_eq!(meta["work_items"][1]["output_paths"], json!(["context/evidence_api.json"]));
    assert_eq!(meta["work_items"][2]["status"], "pending");
    assert_eq!(meta["work_items"][2]["attempt"], 1, "the attempt count is kept, never incremented by recovery");

    // Invalid staged output at attempt 2: the item fails and so does the run.
    let dir = tempfile::tempdir().unwrap();
    researching(dir.path(), (2, 1));
    write(dir.path(), "context/.staging/scout-api-1.json", "{\"dimension\": \"api\"}");
    let p = plan(dir.path());
    assert!(matches!(&p.actions[0], Action::Fail { work_item, .. } if work_item == "scout-api-1"), "{p:?}");
    assert!(!p.actions.iter().any(|a| matches!(a, Action::Spawn { .. })), "nothing is spawned after a failure");
    let after = apply(dir.path(), &p, "2026-12-02T17:20:00Z").unwrap();
    let meta: Value = serde_json::from_str(&fs::read_to_string(dir.path().join("meta.json")).unwrap()).unwrap();
    assert_eq!((meta["status"].as_str(), meta["phase"].as_str()), (Some("failed"), Some("finalized")));
    assert_eq!(meta["work_items"][1]["attempt"], 2);
    assert!(after.iter().all(|v| v.rule != "failed-justified"), "{after:?}");
}

#[test]
fn resume_returns_terminal_outcomes_stops_on_escaping_paths_and_starts_at_the_earliest_phase() {
    // Terminal: the recorded outcome, nothing spawned.
    let dir = tempfile::tempdir().unwrap();
    valid_run(dir.path());
    assert!(matches!(&plan(dir.path()).actions[..], [Action::Outcome { .. }]));

    // Escaping paths: reported, never repaired.
    let dir = tempfile::tempdir().unwrap();
    let mut meta = researching(dir.path(), (1, 1));
    meta["work_items"][1]["output_paths"] = json!(["../../elsewhere.json"]);
    write_json(dir.path(), "meta.json", &meta);
    assert!(matches!(&plan(dir.path()).actions[..], [Action::Stop { reason }] if reason.contains("escaping")));

    // A stale running Writer whose draft validates is reconciled, not respawned.
    let dir = tempfile::tempdir().unwrap();
    let mut meta = valid_run(dir.path());
    meta["status"] = json!("running");
    meta["phase"] = json!("writing");
    meta["round"] = json!(2);
    meta["rounds"][1] = json!({"number": 2, "status": "writing", "researched_dimensions": [], "draft_path": null,
                               "eval_path": null, "feedback_path": null, "score": null, "verdict": "pending"});
    meta["best"] = json!({"round": 1, "score": 3.2, "passed": false, "draft_path": "drafts/draft_v1.md"});
    meta["work_items"][5]["status"] = json!("running");
    meta["work_items"].as_array_mut().unwrap().pop();
    fs::remove_file(dir.path().join("final_report.md")).unwrap();
    write_json(dir.path(), "meta.json", &meta);
    let p = plan(dir.path());
    assert!(matches!(&p.actions[0], Action::Reconcile { work_item, .. } if work_item == "writer-2"), "{p:?}");
    assert!(matches!(&p.actions[1], Action::Checkpoint { step } if step.contains("Evaluator")), "{p:?}");

    // A pending Planner is the earliest incomplete phase.
    let dir = tempfile::tempdir().unwrap();
    let mut meta = researching(dir.path(), (1, 1));
    meta["work_items"] = json!([item("planner", "planner", 0, None, "pending", 0, &["spec.json"])]);
    meta["rounds"] = json!([]);
    meta["round"] = json!(0);
    meta["phase"] = json!("planning");
    write_json(dir.path(), "meta.json", &meta);
    assert!(
        matches!(&plan(dir.path()).actions[..], [Action::Spawn { work_item, attempt: 1, .. }] if work_item == "planner")
    );
}

#[test]
fn plateau_best_selection_and_ledger_citations() {
    use fabdex_runstate::meta::{Round, RoundStatus, plateau, select_best};
    let r = |n: u32, score: f64, verdict: &str| Round {
        number: n,
        status: RoundStatus::Completed,
        researched_dimensions: vec![],
        draft_path: Some(format!("drafts/draft_v{n}.md")),
        eval_path: None,
        feedback_path: None,
        score: Some(score),
        verdict: verdict.into(),
    };
    assert!(plateau(&[r(1, 3.0, "REVISE"), r(2, 3.1, "REVISE"), r(3, 3.2, "REVISE")]));
    assert!(!plateau(&[r(1, 3.0, "REVISE"), r(2, 3.3, "REVISE"), r(3, 3.35, "REVISE")]), "one improvement of 0.3");
    assert!(!plateau(&[r(1, 3.0, "REVISE"), r(2, 3.05, "REVISE")]), "needs three evaluations");
    // Passing beats a higher non-passing score; ties go to the later round.
    let best = select_best(&[r(1, 4.5, "REVISE"), r(2, 3.9, "PASS"), r(3, 3.9, "PASS")]).unwrap();
    assert_eq!((best.round, best.passed), (3, true));
    let best = select_best(&[r(1, 3.5, "REVISE"), r(2, 3.5, "REVISE"), r(3, 3.4, "REVISE")]).unwrap();
    assert_eq!((best.round, best.passed), (2, false));

    // --ledger: fabdex-address sources must be citations of the run.
    let mut e = evidence("api", 1);
    e["sources"][0]["location"] = json!("doc:docs/a.md#x");
    let citations: std::collections::BTreeMap<String, String> =
        [("cit-1".to_string(), "doc:docs/a.md#x@0".to_string())].into_iter().collect();
    let ctx = EvidenceContext { citations: Some(&citations), ..Default::default() };
    let v = check_evidence("e.json", &e.to_string(), &ctx).1;
    assert!(v.iter().any(|x| x.rule == "ledger-citation" && x.pointer == "/sources/0/citation"), "{v:?}");
    e["sources"][0]["citation"] = json!("cit-1");
    assert_eq!(check_evidence("e.json", &e.to_string(), &ctx).1, vec![]);
    e["sources"][0]["citation"] = json!("cit-2");
    assert!(
        check_evidence("e.json", &e.to_string(), &ctx)
            .1
            .iter()
            .any(|x| x.message.contains("not a citation of the run"))
    );
}

#[test]
fn the_cli_names_the_file_pointer_and_rule() {
    let dir = tempfile::tempdir().unwrap();
    let mut meta = valid_run(dir.path());
    meta["work_items"][1]["attempt"] = json!(3);
    write_json(dir.path(), "meta.json", &meta);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fabdex"))
        .args(["run", "validate-run", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("meta.json /work_items/1/attempt: [attempt-limit] attempt 3"), "{text}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fabdex"))
        .args(["run", "validate", "eval", dir.path().join("evals/eval_v2.json").to_str().unwrap(), "--spec"])
        .arg(dir.path().join("spec.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let out =
        std::process::Command::new(env!("CARGO_BIN_EXE_fabdex")).args(["run", "schema", "meta"]).output().unwrap();
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(schema["properties"]["work_items"].is_object());
}

#[test]
fn promotion_of_round_two_evidence_requires_the_prior_and_failed_items_are_not_respawned() {
    let dir = tempfile::tempdir().unwrap();
    let mut meta = researching(dir.path(), (1, 1));
    // Round 1 is done; round 2 re-researches `api`, whose canonical round-1 evidence exists.
    write_json(dir.path(), "context/evidence_api.json", &evidence("api", 1));
    meta["rounds"][0] = round(1, &["api", "examples"], 3.2, "RESEARCH");
    meta["rounds"]
        .as_array_mut()
        .unwrap()
        .push(json!({"number": 2, "status": "researching", "researched_dimensions": ["api"],
        "draft_path": null, "eval_path": null, "feedback_path": null, "score": null, "verdict": "pending"}));
    meta["round"] = json!(2);
    meta["work_items"][1] =
        item("scout-api-1", "scout", 1, Some("api"), "completed", 1, &["context/evidence_api.json"]);
    meta["work_items"][2] =
        item("scout-examples-1", "scout", 1, Some("examples"), "completed", 1, &["context/evidence_examples.json"]);
    meta["work_items"].as_array_mut().unwrap().push(item(
        "scout-api-2",
        "scout",
        2,
        Some("api"),
        "running",
        1,
        &["context/.staging/scout-api-2.json"],
    ));
    write_json(dir.path(), "meta.json", &meta);
    let mut dropped = evidence("api", 2);
    dropped["claims"].as_array_mut().unwrap().remove(1);
    dropped["contradictions"] = json!([]);
    write_json(dir.path(), "context/.staging/scout-api-2.json", &dropped);
    let p = plan(dir.path());
    assert!(
        matches!(&p.actions[0], Action::Reset { work_item, error } if work_item == "scout-api-2" && error.contains("prior-kept")),
        "a staged output that drops prior claims is not promoted: {p:?}"
    );
    write_json(dir.path(), "context/.staging/scout-api-2.json", &evidence("api", 2));
    assert!(matches!(&plan(dir.path()).actions[0], Action::Promote { .. }));

    // A failed item is never respawned (no attempt 3).
    let dir = tempfile::tempdir().unwrap();
    let mut meta = researching(dir.path(), (1, 1));
    meta["work_items"][0]["status"] = json!("failed");
    meta["work_items"][0]["attempt"] = json!(2);
    write_json(dir.path(), "meta.json", &meta);
    let p = plan(dir.path());
    assert!(!p.actions.iter().any(|a| matches!(a, Action::Spawn { work_item, .. } if work_item == "planner")), "{p:?}");
}

#[test]
fn a_pending_item_with_both_attempts_used_fails_instead_of_a_third_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let mut meta = researching(dir.path(), (1, 1));
    meta["work_items"][1]["status"] = json!("pending");
    meta["work_items"][1]["attempt"] = json!(2);
    meta["work_items"][2]["status"] = json!("pending");
    write_json(dir.path(), "meta.json", &meta);
    let p = plan(dir.path());
    assert!(matches!(&p.actions[0], Action::Fail { work_item, .. } if work_item == "scout-api-1"), "{p:?}");
    assert!(!p.actions.iter().any(|a| matches!(a, Action::Spawn { attempt: 3, .. })));
}
