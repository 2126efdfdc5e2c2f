//! The words the loop says to the model: the system prompt, the task
//! message (with the opening pass or the carried kit), and the two repair
//! requests. Kept in one place so what the model is told can be read, and
//! tested, as text.

use fabdex_kit::Admission;
use serde_json::{Value, json};

use crate::budget::Budgets;
use crate::prior::Carried;
use crate::service::Request;

pub fn system(b: &Budgets) -> String {
    format!(
        "You research one task for a Common Fabric pattern author and answer with an implementation kit.\n\
         Common Fabric apps are patterns: reactive TypeScript/TSX programs imported as `cf:pattern:<id>`.\n\
         Use the tools to search and read the documentation, the skills and the pattern index. They are read-only.\n\
         Rules the host checks when it admits your kit:\n\
         - Cite what you read: every step, rule and example lists `sourceIds`, the `citation` ids that tool results \
           gave you (`cit-…`). A rule needs the citation of a `read` or `read_source` result.\n\
         - Select only patterns you inspected with `inspect_pattern` in this research.\n\
         - Bind inputs only to granted handle tokens (`list_handles`); never infer a handle from a connector's or \
           pattern's name. If a required input has no granted handle, leave it unbound: the host reports it missing.\n\
         - No placeholders (TODO, `...`, <your-id>) and no invented ids.\n\
         Budgets: {} model turns, {} tool calls, {} chars per read, {} chars of tool results in all, {} s. \
         A call over budget is not made and you are told why; then submit what you have.\n\
         Finish by calling `submit_kit` with the kit (its parameters are the kit's schema).",
        b.turns, b.tool_calls, b.read_chars, b.total_chars, b.seconds
    )
}

/// The task, the grants, and what the host already did for it.
pub fn task(req: &Request, opening: &[(String, Value, String)], carried: Option<&Carried>) -> String {
    let mut out = format!("Task: {}\n\n", req.task);
    if req.grants.handles.is_empty() {
        out.push_str("Granted handles: none.\n");
    } else {
        let tokens: Vec<&str> = req.grants.handles.iter().map(|h| h.token.as_str()).collect();
        out.push_str(&format!("Granted handles: {} (see `list_handles`, `describe_handle`).\n", tokens.join(", ")));
    }
    if !req.pattern_refs.is_empty() {
        out.push_str(&format!("Attached patterns: {}.\n", req.pattern_refs.join(", ")));
    }
    if let Some(c) = carried {
        let kit = serde_json::to_string(&c.kit).unwrap_or_default();
        out.push_str(&format!(
            "\nThis is a follow-up to research run `{}`. Its kit is carried forward: extend it rather than starting \
             again. Its citations are valid in this research; do not repeat its opening searches.\nEarlier kit: {kit}\n",
            c.summary.run
        ));
    }
    out.push_str(&opening_calls(opening));
    out
}

/// The host's opening calls and their results, as the task message ends.
pub fn opening_calls(opening: &[(String, Value, String)]) -> String {
    let mut out = String::new();
    if !opening.is_empty() {
        out.push_str("\nThe host already made these calls for you:\n");
        for (tool, args, result) in opening {
            out.push_str(&format!("\n{tool} {}\n{result}\n", json!(args)));
        }
    }
    out
}

pub fn format_repair(why: &str) -> String {
    format!(
        "Your answer was not a kit: {why}. Call `submit_kit` with the kit now (a JSON object in `fabdex kit schema`). \
         This is the only reminder."
    )
}

pub fn admission_repair(first: &Admission, turns: u32) -> String {
    let mut out = String::from("The host's admission of your kit found problems:\n");
    for p in &first.problems {
        out.push_str(&format!("- [{}] {}: {}\n", p.rule, p.pointer, p.message));
    }
    for m in &first.kit.missing {
        out.push_str(&format!("- missing {} `{}` of {}: {}\n", m.kind, m.argument, m.pattern_id, m.resolution));
    }
    out.push_str(&format!(
        "You have {turns} repair turn{}: fix what you can (cite reads you made, inspect what you select, drop what \
         you cannot support) and call `submit_kit` again. A missing input you have no granted handle for stays missing: \
         do not invent one. Whatever is still wrong is dropped or reported.",
        if turns == 1 { "" } else { "s" }
    ));
    out
}
