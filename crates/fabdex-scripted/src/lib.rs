//! # fabdex-scripted
//!
//! A scripted model: a real HTTP server on loopback that speaks the OpenAI
//! Chat Completions protocol with tool calls and answers from a script of
//! recorded turns. Each request takes the script's next step; a step may
//! choose its reply by what the latest tool result contains, and a reply's
//! arguments may quote values from earlier tool results
//! (`{{TOOL:POINTER}}`), so a script follows what the tools really return.
//! A step may also fail on purpose: an HTTP status, a delay, a body that is
//! not JSON. Every request received is kept, so a test can assert exactly
//! what was sent: the tool schemas, the messages, the budgets in the prompt.
//!
//! It is the research loop's test double and the main job's stand-in when
//! no endpoint is configured; it never pretends to be a model otherwise.

mod template;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A script: the turns to play, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    #[serde(default)]
    pub name: String,
    pub steps: Vec<Step>,
}

/// One request's answer: a reply, or the first branch whose condition holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<Reply>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choose: Vec<Branch>,
    /// Answer every later request with this step too (a model that never stops).
    #[serde(default)]
    pub repeat: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Branch {
    /// Taken when the last message's text contains this (absent: always).
    #[serde(default)]
    pub if_contains: Option<String>,
    pub reply: Reply,
}

/// What to answer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ScriptedCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Answer with this HTTP status and an error body instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Wait this long before answering (to provoke a client timeout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// Answer with this body as it is (e.g. not JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    pub name: String,
    /// A JSON value with `{{TOOL:POINTER}}` templates, or (`arguments_text`) raw text.
    #[serde(default)]
    pub arguments: Value,
    /// Send this text as the arguments, as it is (e.g. malformed JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_text: Option<String>,
}

impl Script {
    pub fn load(path: &Path) -> Result<Script> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read script `{}`", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("script `{}` is not a valid script", path.display()))
    }
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub body: Value,
    pub authorization: Option<String>,
}

struct Shared {
    script: Script,
    next: usize,
    received: Vec<Received>,
}

/// A running scripted model; stops when dropped.
pub struct ScriptedServer {
    /// The base URL to give a client: `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    shared: Arc<Mutex<Shared>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ScriptedServer {
    /// Start on a free loopback port.
    pub fn start(script: Script) -> Result<ScriptedServer> {
        let shared = Arc::new(Mutex::new(Shared { script, next: 0, received: Vec::new() }));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").context("cannot bind a loopback port")?;
        listener.set_nonblocking(true)?;
        let addr: SocketAddr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = shared.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build();
            let Ok(runtime) = runtime else { return };
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
                let app =
                    axum::Router::new().route("/v1/chat/completions", axum::routing::post(complete)).with_state(state);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        Ok(ScriptedServer { base_url: format!("http://{addr}/v1"), shared, stop: Some(stop), thread: Some(thread) })
    }

    /// Every request received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        self.shared.lock().map(|s| s.received.clone()).unwrap_or_default()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn complete(State(shared): State<Arc<Mutex<Shared>>>, headers: HeaderMap, body: String) -> Response {
    let authorization = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_string);
    let (reply, turn, model) = {
        let Ok(mut s) = shared.lock() else { return fail(500, "scripted model: state poisoned") };
        let body: Value = serde_json::from_str(&body).unwrap_or(Value::String(body.clone()));
        s.received.push(Received { body: body.clone(), authorization });
        let turn = s.next;
        let model = body.get("model").and_then(Value::as_str).unwrap_or("scripted").to_string();
        let Some(step) = s.script.steps.get(turn).or_else(|| s.script.steps.last().filter(|l| l.repeat)).cloned()
        else {
            return fail(500, &format!("scripted model: the script `{}` has no step {}", s.script.name, turn + 1));
        };
        if !step.repeat || turn < s.script.steps.len() {
            s.next += 1;
        }
        (choose(&step, &body), turn, model)
    };
    let Some(reply) = reply else { return fail(500, "scripted model: no branch of the step matches") };
    if let Some(ms) = reply.delay_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    if let Some(status) = reply.status {
        return fail(status, &format!("scripted failure {status}"));
    }
    if let Some(raw) = &reply.raw {
        return (StatusCode::OK, [("content-type", "application/json")], raw.clone()).into_response();
    }
    let received = shared.lock().ok().and_then(|s| s.received.last().map(|r| r.body.clone())).unwrap_or_default();
    match answer(&reply, &received, turn, &model) {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => fail(500, &format!("scripted model: {e}")),
    }
}

fn choose(step: &Step, body: &Value) -> Option<Reply> {
    if let Some(r) = &step.reply {
        return Some(r.clone());
    }
    let last = last_text(body);
    step.choose
        .iter()
        .find(|b| b.if_contains.as_ref().is_none_or(|c| last.contains(c.as_str())))
        .map(|b| b.reply.clone())
}

/// The text of the request's last message (a tool result, or the task).
fn last_text(body: &Value) -> String {
    body.get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .and_then(|m| m.get("content"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn answer(reply: &Reply, body: &Value, turn: usize, model: &str) -> Result<Value, String> {
    let results = template::ToolResults::of(body);
    let mut calls = Vec::new();
    for (i, c) in reply.tool_calls.iter().enumerate() {
        let arguments = match &c.arguments_text {
            Some(text) => text.clone(),
            None => results.fill(&c.arguments)?.to_string(),
        };
        calls.push(json!({"id": format!("call_{turn}_{i}"), "type": "function",
                          "function": {"name": c.name, "arguments": arguments}}));
    }
    let content = match &reply.content {
        Some(text) => Some(results.fill(&Value::String(text.clone()))?),
        None => None,
    };
    let prompt_chars: usize = body.to_string().len();
    let completion_chars =
        content.as_ref().map_or(0, |c| c.to_string().len()) + calls.iter().map(|c| c.to_string().len()).sum::<usize>();
    let mut message = json!({"role": "assistant", "content": content.unwrap_or(Value::Null)});
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    Ok(json!({
        "id": format!("scripted-{}", turn + 1),
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        // A stand-in count: about four chars a token.
        "usage": {"prompt_tokens": prompt_chars / 4, "completion_tokens": completion_chars / 4,
                  "total_tokens": (prompt_chars + completion_chars) / 4},
    }))
}

fn fail(status: u16, message: &str) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (code, axum::Json(json!({"error": {"message": message, "type": "scripted"}}))).into_response()
}
