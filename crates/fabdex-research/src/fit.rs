//! Fitting every model request inside the endpoint's context window.
//!
//! A real server refuses a request longer than its context
//! (`context_length_exceeded`), and most local models run with 4k–8k
//! tokens, while the tool schemas and the opening results alone can pass
//! that. So each turn is planned before it is sent: the window (from the
//! configuration, the server, or a refusal that names it), a reserve for
//! the answer, and an estimate of the request's tokens from its chars at a
//! rate measured on the server's own `usage` (a cautious guess until the
//! first answer). What does not fit is cut, in this order: the tool
//! descriptions trimmed, then the rarely needed tools left out, then
//! earlier tool results replaced by a stub that keeps their citations, then
//! the tools' schemas cut to their top level, then the newest results and
//! the opening pass cut to what is left (valid JSON,
//! with a `_cut` note saying how much was shown), the way a read envelope
//! says `truncated`. Every cut is reported in the turn's ledger record.
//!
//! The estimate only plans; tokens reported anywhere are the server's.

use fabdex_ledger::ContextFit;
use serde_json::{Value, json};

use crate::chat::Message;
pub use crate::window::{Window, refusal_numbers};

/// The chars-per-token rate assumed before the server has reported any
/// usage: low, so that the first request errs on the short side (JSON
/// schemas in a chat template run near 2 chars a token on small models'
/// tokenizers).
pub const GUESSED_CHARS_PER_TOKEN: f64 = 2.0;
/// Headroom on the estimate: the rate of one request is not the next one's.
const MARGIN: f64 = 0.9;
/// Tools the model cannot do without; the rest go first when tools must shrink.
pub const ESSENTIAL_TOOLS: &[&str] =
    &["search_docs", "read", "search_patterns", "inspect_pattern", "read_source", "list_handles", "submit_kit"];

/// Chars per token of the requests sent to this endpoint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub chars_per_token: f64,
    /// From the server's count (usage or a refusal), not the guess.
    pub measured: bool,
}

impl Default for Rate {
    fn default() -> Self {
        Rate { chars_per_token: GUESSED_CHARS_PER_TOKEN, measured: false }
    }
}

impl Rate {
    pub fn tokens(&self, chars: u64) -> u64 {
        (chars as f64 / self.chars_per_token).ceil() as u64
    }

    /// Learn from a request of `chars` that the server counted as `tokens`.
    pub fn learn(&mut self, chars: u64, tokens: u64) {
        if tokens > 0 && chars > 0 {
            self.chars_per_token = chars as f64 / tokens as f64;
            self.measured = true;
        }
    }
}

/// How much of the tool list is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ToolDetail {
    Full,
    /// First sentences of descriptions; no descriptions inside the schemas.
    Trimmed,
    /// Trimmed, and only [`ESSENTIAL_TOOLS`].
    Essential,
    /// Essential, each schema cut to its top-level fields and their types
    /// (the kit's nested shape is left to `fabdex kit schema`, and
    /// admission names whatever is wrong).
    Minimal,
}

impl ToolDetail {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolDetail::Full => "full",
            ToolDetail::Trimmed => "trimmed",
            ToolDetail::Essential => "essential",
            ToolDetail::Minimal => "minimal",
        }
    }
}

/// The tool list at a level of detail.
pub fn tools_at(tools: &[Value], detail: ToolDetail) -> Vec<Value> {
    tools
        .iter()
        .filter(|t| {
            detail < ToolDetail::Essential
                || t["function"]["name"].as_str().is_some_and(|n| ESSENTIAL_TOOLS.contains(&n))
        })
        .map(|t| {
            let mut t = t.clone();
            if detail != ToolDetail::Full {
                if let Some(d) = t["function"]["description"].as_str() {
                    t["function"]["description"] = json!(first_sentence(d));
                }
                strip_schema_prose(&mut t["function"]["parameters"]);
            }
            if detail == ToolDetail::Minimal {
                t["function"]["parameters"] = top_level(&t["function"]["parameters"]);
            }
            t
        })
        .collect()
}

fn first_sentence(text: &str) -> String {
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    text[..end].chars().take(200).collect()
}

/// A schema's top-level fields with their types only, and what is required.
fn top_level(schema: &Value) -> Value {
    let properties: serde_json::Map<String, Value> = schema["properties"]
        .as_object()
        .map(|p| {
            p.iter()
                .map(|(name, field)| {
                    let ty = field.get("type").cloned().unwrap_or(json!("object"));
                    (name.clone(), json!({"type": ty}))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = json!({"type": "object", "properties": properties});
    if let Some(required) = schema.get("required") {
        out["required"] = required.clone();
    }
    out
}

/// Descriptions, titles and examples out of a JSON Schema: the shape stays.
fn strip_schema_prose(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for key in ["description", "title", "examples", "$comment"] {
                // Inside `properties` a key is a field name, not a keyword:
                // only keyword positions hold prose, and a field named
                // `title` is itself an object, never a string.
                if map.get(key).is_some_and(|v| v.is_string() || (key == "examples" && v.is_array())) {
                    map.remove(key);
                }
            }
            map.values_mut().for_each(strip_schema_prose);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_schema_prose),
        _ => {}
    }
}

/// Chars of a value as JSON.
pub fn json_chars(value: &Value) -> usize {
    value.to_string().chars().count()
}

/// Chars a request carries: its messages and its tools, as sent.
pub fn request_chars(messages: &[Message], tools: &[Value]) -> u64 {
    let m: usize = messages.iter().map(|m| serde_json::to_string(m).map_or(0, |s| s.chars().count())).sum();
    (m + tools.iter().map(json_chars).sum::<usize>()) as u64
}

/// `value` cut to at most `max_chars` as JSON, still valid JSON: the
/// longest text halved or the longest list shortened, again until it fits,
/// with `_cut` saying what was shown. `None` when nothing needed cutting.
pub fn fit_json(value: &Value, max_chars: usize) -> Option<Value> {
    let total = json_chars(value);
    if total <= max_chars {
        return None;
    }
    let mut v = value.clone();
    // Each step at least halves one part; 64 steps are far more than any result needs.
    for _ in 0..64 {
        if json_chars(&v) + 120 <= max_chars || !shrink_largest(&mut v) {
            break;
        }
    }
    let note = json!({"shown_chars": json_chars(&v), "total_chars": total,
        "why": "cut to fit the model's context window; read by address with a smaller max_chars for the rest"});
    Some(match v {
        Value::Object(mut map) if json_chars(&Value::Object(map.clone())) + 120 <= max_chars => {
            map.insert("_cut".into(), note);
            Value::Object(map)
        }
        _ => json!({"_cut": note}),
    })
}

/// Halve the largest string or list in `v`; false when nothing is left to cut.
fn shrink_largest(v: &mut Value) -> bool {
    fn largest<'a>(v: &'a mut Value, best: &mut Option<(usize, &'a mut Value)>) {
        let size = json_chars(v);
        let cuttable = match &*v {
            Value::String(s) => s.chars().count() > 40,
            Value::Array(a) => !a.is_empty(),
            _ => false,
        };
        let bigger = best.as_ref().is_none_or(|(s, _)| size > *s);
        if cuttable && bigger {
            *best = Some((size, v));
            return;
        }
        match v {
            Value::Object(map) => map.values_mut().for_each(|c| largest(c, best)),
            Value::Array(items) => items.iter_mut().for_each(|c| largest(c, best)),
            _ => {}
        }
    }
    let mut best = None;
    largest(v, &mut best);
    match best {
        Some((_, Value::String(s))) => {
            let keep = s.chars().count() / 2;
            *s = s.chars().take(keep).collect::<String>() + "…";
            true
        }
        Some((_, Value::Array(a))) => {
            a.truncate(a.len() / 2);
            true
        }
        _ => false,
    }
}

/// A tool result taken out of the conversation: its citations stay, so
/// what the model read earlier can still be cited.
pub fn stub(result_text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(result_text).ok()?;
    value.get("result")?;
    let chars = result_text.chars().count();
    Some(
        json!({"_cut": {"removed_chars": chars,
            "why": "an earlier result, removed to fit the model's context window; its citations stay valid"},
            "citations": value.get("citations").cloned().unwrap_or(json!([]))})
        .to_string(),
    )
}

/// What a turn's plan did, for its ledger record.
pub fn report(window: &Window, rate: &Rate, tools: ToolDetail, estimated: u64) -> ContextFit {
    ContextFit {
        window: window.tokens,
        window_source: window.source.clone(),
        answer_reserve: window.answer_reserve(),
        estimated_tokens_in: estimated,
        chars_per_token: (rate.chars_per_token * 100.0).round() / 100.0,
        rate_measured: rate.measured,
        tools: tools.as_str().into(),
        results_removed: 0,
        results_cut: 0,
        chars_cut: 0,
        retried_smaller: false,
    }
}

/// The prompt tokens a request may have: the window less the answer's
/// reserve, with headroom on the estimate.
pub fn prompt_budget(window: &Window) -> u64 {
    (f64::from(window.tokens - window.answer_reserve()) * MARGIN) as u64
}

/// A tool result's text cut to about `max_chars`: its `result` cut by
/// [`fit_json`] and its `citations` kept whole. `None` when it fits, or is
/// not a result (an error is short and stays).
pub fn cut_result(text: &str, max_chars: usize) -> Option<String> {
    if text.chars().count() <= max_chars {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let result = value.get("result")?;
    let citations = value.get("citations").cloned().unwrap_or(json!([]));
    let room = max_chars.saturating_sub(json_chars(&citations) + 32).max(200);
    let cut = fit_json(result, room)?;
    Some(json!({"result": cut, "citations": citations}).to_string())
}

/// One call of the host's opening pass: tool, arguments, result text.
pub type OpeningCall = (String, Value, String);

/// What [`plan`] needs to re-render the task message with its opening
/// results cut.
pub struct Opening<'a> {
    /// The task message's index in the conversation.
    pub at: usize,
    pub calls: &'a [OpeningCall],
    pub render: &'a dyn Fn(&[OpeningCall]) -> String,
}

/// A request fitted to the window.
pub struct Fitted {
    pub messages: Vec<Message>,
    pub tools: Vec<Value>,
    pub fit: ContextFit,
    /// Chars of the request as planned, to learn the rate from the server's count.
    pub chars: u64,
}

/// Plan one request inside `window` at `rate`: the whole conversation and
/// every tool when they fit, else cut step by step (tools trimmed, then
/// only the essential ones, the opening results to 2,000 chars each,
/// earlier tool results replaced by stubs oldest first, the opening to
/// 500, the tools' schemas to their top level, the newest results to
/// 2,000, 1,000 and 500, the opening to 200),
/// stopping at the first step that fits. A request that still does not fit
/// is sent as small as it got: the server's refusal then says so.
pub fn plan(
    history: &[Message],
    all_tools: &[Value],
    opening: Option<&Opening<'_>>,
    window: &Window,
    rate: &Rate,
) -> Fitted {
    let budget = (prompt_budget(window) as f64 * rate.chars_per_token) as u64;
    let mut f = Fitted {
        messages: history.to_vec(),
        tools: all_tools.to_vec(),
        fit: report(window, rate, ToolDetail::Full, 0),
        chars: 0,
    };
    let fits = |f: &mut Fitted| {
        f.chars = request_chars(&f.messages, &f.tools);
        f.fit.estimated_tokens_in = rate.tokens(f.chars);
        f.chars <= budget
    };
    if fits(&mut f) {
        return f;
    }
    for detail in [ToolDetail::Trimmed, ToolDetail::Essential] {
        f.tools = tools_at(all_tools, detail);
        f.fit.tools = detail.as_str().into();
        if fits(&mut f) {
            return f;
        }
    }
    let last_turn = history.iter().rposition(|m| m.role == "assistant").unwrap_or(history.len());
    let cut_opening = |f: &mut Fitted, per_result: usize| {
        let Some(o) = opening else { return };
        let mut cut = 0;
        let calls: Vec<OpeningCall> = o
            .calls
            .iter()
            .map(|(tool, args, text)| match cut_result(text, per_result) {
                Some(short) => {
                    cut += 1;
                    (tool.clone(), args.clone(), short)
                }
                None => (tool.clone(), args.clone(), text.clone()),
            })
            .collect();
        let before = f.messages[o.at].chars();
        f.messages[o.at] = Message::user((o.render)(&calls));
        f.fit.results_cut = f.fit.results_cut.max(cut);
        f.fit.chars_cut += before.saturating_sub(f.messages[o.at].chars());
    };
    cut_opening(&mut f, 2_000);
    if fits(&mut f) {
        return f;
    }
    for i in 0..last_turn {
        if f.messages[i].role != "tool" {
            continue;
        }
        let Some(short) = f.messages[i].content.as_deref().and_then(stub) else { continue };
        f.fit.chars_cut += f.messages[i].chars().saturating_sub(short.chars().count() as u64);
        f.messages[i].content = Some(short);
        f.fit.results_removed += 1;
        if fits(&mut f) {
            return f;
        }
    }
    cut_opening(&mut f, 500);
    if fits(&mut f) {
        return f;
    }
    f.tools = tools_at(all_tools, ToolDetail::Minimal);
    f.fit.tools = ToolDetail::Minimal.as_str().into();
    if fits(&mut f) {
        return f;
    }
    for per_result in [2_000, 1_000, 500] {
        for m in f.messages[last_turn..].iter_mut().filter(|m| m.role == "tool") {
            if let Some(short) = m.content.as_deref().and_then(|t| cut_result(t, per_result)) {
                f.fit.chars_cut += m.chars().saturating_sub(short.chars().count() as u64);
                f.fit.results_cut += 1;
                m.content = Some(short);
            }
        }
        if fits(&mut f) {
            return f;
        }
    }
    cut_opening(&mut f, 200);
    fits(&mut f);
    f
}

/// One line for the outcome's notes when a plan cut anything.
pub fn note(turn: u32, fit: &ContextFit) -> Option<String> {
    let mut cuts = vec![];
    if fit.tools != ToolDetail::Full.as_str() {
        cuts.push(format!("tools {}", fit.tools));
    }
    if fit.results_removed > 0 {
        cuts.push(format!("{} earlier results removed (citations kept)", fit.results_removed));
    }
    if fit.results_cut > 0 {
        cuts.push(format!("{} results cut", fit.results_cut));
    }
    if fit.retried_smaller {
        cuts.push("sent again smaller after the server refused it as too long".into());
    }
    (!cuts.is_empty()).then(|| {
        format!(
            "turn {turn}: fitted to the {}-token window ({}): {}; about {} tokens sent",
            fit.window,
            fit.window_source,
            cuts.join(", "),
            fit.estimated_tokens_in
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_window_and_the_prompt_in_each_servers_words() {
        let llama_py = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 14568 tokens (14568 in the messages, None in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert_eq!(refusal_numbers(llama_py), Some((Some(8192), Some(14568))));
        let openai =
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.";
        assert_eq!(refusal_numbers(openai), Some((Some(128000), Some(130512))));
        let llama_cpp = r#"{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":4096}}"#;
        assert_eq!(refusal_numbers(llama_cpp), Some((Some(4096), Some(9000))));
        assert_eq!(refusal_numbers(r#"{"error":{"message":"model not found"}}"#), None);
    }

    #[test]
    fn a_cut_result_stays_json_says_what_it_showed_and_fits() {
        let hits: Vec<Value> =
            (0..20).map(|i| json!({"address": format!("doc:a.md#s{i}"), "text": "word ".repeat(200)})).collect();
        let value = json!({"result": {"hits": hits}, "citations": [{"citation": "cit-1"}]});
        let total = json_chars(&value);
        let cut = fit_json(&value, 3_000).unwrap();
        let shown = json_chars(&cut);
        assert!(shown <= 3_000, "{shown}");
        assert_eq!(cut["_cut"]["total_chars"], json!(total));
        let mut without_note = cut.clone();
        without_note.as_object_mut().unwrap().remove("_cut");
        assert_eq!(cut["_cut"]["shown_chars"], json!(json_chars(&without_note)));
        assert!(cut["result"]["hits"].as_array().unwrap().len() < 20);
        assert_eq!(cut["citations"][0]["citation"], "cit-1");
        assert!(fit_json(&value, total).is_none(), "what fits is not touched");
    }

    #[test]
    fn trimmed_tools_keep_their_shape_and_essential_tools_keep_the_kit() {
        let tools = crate::toolset::model_tools();
        let full: usize = tools.iter().map(json_chars).sum();
        let trimmed = tools_at(&tools, ToolDetail::Trimmed);
        let essential = tools_at(&tools, ToolDetail::Essential);
        let size = |t: &[Value]| t.iter().map(json_chars).sum::<usize>();
        assert!(size(&trimmed) < full && size(&essential) < size(&trimmed), "{full} {}", size(&trimmed));
        let minimal = tools_at(&tools, ToolDetail::Minimal);
        assert!(size(&minimal) < size(&essential) / 2, "{}", size(&minimal));
        let kit = minimal.iter().find(|t| t["function"]["name"] == "submit_kit").unwrap();
        let full_kit = tools.iter().find(|t| t["function"]["name"] == "submit_kit").unwrap();
        assert_eq!(kit["function"]["parameters"]["required"], full_kit["function"]["parameters"]["required"]);
        assert_eq!(kit["function"]["parameters"]["properties"]["steps"], json!({"type": "array"}));
        assert_eq!(trimmed.len(), tools.len());
        let names: Vec<&str> = essential.iter().filter_map(|t| t["function"]["name"].as_str()).collect();
        assert_eq!(names.len(), ESSENTIAL_TOOLS.len());
        assert!(names.contains(&"submit_kit"));
        let read = trimmed.iter().find(|t| t["function"]["name"] == "read").unwrap();
        assert!(read["function"]["parameters"]["properties"]["address"].get("description").is_none());
        assert_eq!(read["function"]["parameters"]["required"], tools[1]["function"]["parameters"]["required"]);
    }

    #[test]
    fn a_removed_result_keeps_its_citations() {
        let text = json!({"result": {"text": "x".repeat(500)}, "citations": [{"citation": "cit-9"}]}).to_string();
        let s: Value = serde_json::from_str(&stub(&text).unwrap()).unwrap();
        assert_eq!(s["citations"][0]["citation"], "cit-9");
        assert_eq!(s["_cut"]["removed_chars"], json!(text.chars().count()));
        assert!(stub(r#"{"error": {"kind": "refused"}}"#).is_none(), "errors are short and stay");
    }

    /// A conversation far over a 4k window: the plan brings it under the
    /// budget, keeps every message (a tool result still answers its call),
    /// keeps the citations of what it cut, and says what it did.
    #[test]
    fn a_plan_fits_a_long_conversation_and_keeps_its_citations() {
        let result = |i: usize| {
            json!({"result": {"text": "word ".repeat(2_000)}, "citations": [{"citation": format!("cit-{i}")}]})
                .to_string()
        };
        let opening: Vec<OpeningCall> = vec![("search_docs".into(), json!({"query": "q"}), result(0))];
        let render = |calls: &[OpeningCall]| format!("Task: t\n{}", calls[0].2);
        let mut history = vec![Message::system("rules"), Message::user(render(&opening))];
        for turn in 1..=3 {
            let call = crate::chat::ToolCall {
                id: format!("c{turn}"),
                kind: "function".into(),
                function: crate::chat::FunctionCall { name: "read".into(), arguments: "{}".into() },
            };
            history.push(Message {
                role: "assistant".into(),
                content: Some(String::new()),
                tool_calls: vec![call],
                tool_call_id: None,
            });
            history.push(Message::tool(&format!("c{turn}"), result(turn)));
        }
        let tools = crate::toolset::model_tools();
        let window = Window { tokens: 4_096, source: "config".into() };
        let rate = Rate { chars_per_token: 3.0, measured: true };
        let o = Opening { at: 1, calls: &opening, render: &render };
        let f = plan(&history, &tools, Some(&o), &window, &rate);
        assert!(f.chars as f64 <= prompt_budget(&window) as f64 * 3.0, "{} chars", f.chars);
        assert_eq!(f.messages.len(), history.len());
        assert_eq!(f.messages[7].tool_call_id.as_deref(), Some("c3"));
        for i in 0..=3 {
            let cited = format!("cit-{i}");
            assert!(f.messages.iter().any(|m| m.content.as_deref().is_some_and(|c| c.contains(&cited))), "{cited}");
        }
        assert!(f.fit.results_removed >= 1 && f.fit.chars_cut > 0, "{:?}", f.fit);
        assert_eq!(f.fit.estimated_tokens_in, rate.tokens(f.chars));
        assert!(note(2, &f.fit).unwrap().starts_with("turn 2: fitted to the 4096-token window (config)"));
        // What fits is sent whole.
        let roomy = Window { tokens: 1_000_000, source: "config".into() };
        let whole = plan(&history, &tools, Some(&o), &roomy, &rate);
        assert_eq!(whole.messages, history);
        assert_eq!(whole.fit.tools, "full");
        assert!(note(1, &whole.fit).is_none());
    }

    #[test]
    fn the_rate_learns_from_the_servers_count() {
        let mut r = Rate::default();
        assert!(!r.measured);
        assert_eq!(r.tokens(1000), 500);
        r.learn(30_000, 10_000);
        assert!(r.measured && (r.chars_per_token - 3.0).abs() < 1e-9);
        let w = Window { tokens: 8192, source: "flag".into() };
        assert_eq!(w.answer_reserve(), 1024);
        assert_eq!(prompt_budget(&w), 6451);
        assert_eq!(Window { tokens: 32_768, source: "flag".into() }.answer_reserve(), 2048);
    }
}
