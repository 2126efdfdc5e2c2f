//! Run artifacts as a model writes them (`meta.json`, `spec.json`, evidence,
//! drafts, evals, feedback), through the checks of `fabdex run validate`.

use std::collections::BTreeMap;

use fabdex_runstate::artifacts::{self as a, EvidenceContext, Violation};
use fabdex_runstate::meta::check_meta;
use serde::Serialize;

/// Any text as every run artifact, each check fed what the others parsed.
///
/// - No check panics.
/// - Every violation names the file it was given and a rule, and points
///   into it by JSON pointer (empty or `/…`) or by `line N`.
/// - What a check accepts without a violation is accepted again after a
///   round trip through its own JSON.
pub fn run_artifacts(text: &str) {
    let (meta, v) = check_meta("meta.json", text);
    well_formed("meta.json", &v);
    if let Some(meta) = meta.filter(|_| v.is_empty()) {
        stays_valid("meta.json", &meta, |t| check_meta("meta.json", t).1);
    }

    let (spec, v) = a::check_spec("spec.json", text);
    well_formed("spec.json", &v);
    let spec = spec.filter(|_| v.is_empty());
    if let Some(spec) = &spec {
        stays_valid("spec.json", spec, |t| a::check_spec("spec.json", t).1);
    }

    let ctx = EvidenceContext { spec: spec.as_ref(), ..Default::default() };
    let (evidence, v) = a::check_evidence("evidence/e.json", text, &ctx);
    well_formed("evidence/e.json", &v);
    let mut cited = BTreeMap::new();
    if let Some(evidence) = evidence.filter(|_| v.is_empty()) {
        stays_valid("evidence/e.json", &evidence, |t| a::check_evidence("evidence/e.json", t, &ctx).1);
        cited.insert("e".to_string(), evidence);
    }

    well_formed("draft.md", &a::check_draft("draft.md", text, &cited));
    let (eval, v) = a::check_eval("eval.json", text, spec.as_ref());
    well_formed("eval.json", &v);
    let eval = eval.filter(|_| v.is_empty());
    if let Some(eval) = &eval {
        stays_valid("eval.json", eval, |t| a::check_eval("eval.json", t, spec.as_ref()).1);
    }
    well_formed("feedback.json", &a::check_feedback("feedback.json", text, eval.as_ref()));
}

fn well_formed(file: &str, violations: &[Violation]) {
    for v in violations {
        assert_eq!(v.file, file, "a violation names another file: {v}");
        assert!(!v.rule.is_empty() && !v.message.is_empty(), "a violation without a rule or message: {v:?}");
        let p = &v.pointer;
        assert!(
            p.is_empty() || p.starts_with('/') || p.strip_prefix("line ").is_some_and(|n| n.parse::<u64>().is_ok()),
            "{file}: `{p}` is neither a JSON pointer nor a line"
        );
    }
}

fn stays_valid<T: Serialize>(file: &str, value: &T, check: impl Fn(&str) -> Vec<Violation>) {
    let json = serde_json::to_string(value).expect("a parsed artifact serialises");
    let again = check(&json);
    assert!(again.is_empty(), "{file}: accepted, but not after a round trip through its own JSON: {again:?}\n{json}");
}
