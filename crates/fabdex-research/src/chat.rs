//! An OpenAI Chat Completions client with tool calls (`POST
//! {base}/chat/completions`), as OpenAI, vLLM, llama.cpp's server and
//! Ollama's `/v1` speak it. What differs between them is tolerated here:
//! `arguments` as a JSON string (OpenAI) or an object (some local servers),
//! a missing tool-call `id` or `type`, a missing `usage`.
//!
//! 429, 5xx, timeouts and connection failures are retried with doubling
//! backoff (a `Retry-After` in seconds is honoured up to the cap); every
//! other failure is final. The API key is sent as a bearer token and never
//! appears in a `Debug` print, an error or a file.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where the model is and how to reach it.
#[derive(Clone)]
pub struct Endpoint {
    /// Base URL up to and including the API version, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub model: String,
    /// Read from the environment by the caller; never stored.
    pub api_key: Option<String>,
    /// Per HTTP attempt.
    pub timeout: Duration,
    /// Attempts per turn for retryable failures.
    pub attempts: u32,
    /// First backoff; doubled after each failed attempt.
    pub backoff: Duration,
    /// The model's context window in tokens, when the configuration names
    /// it (`[research] context_tokens`, `--context-tokens`); otherwise the
    /// server is asked ([`Client::context_window`]) or a refusal tells.
    pub context_tokens: Option<u32>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .field("context_tokens", &self.context_tokens)
            .finish()
    }
}

impl Endpoint {
    pub fn new(base_url: &str, model: &str) -> Endpoint {
        Endpoint {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key: None,
            timeout: Duration::from_secs(120),
            attempts: 3,
            backoff: Duration::from_millis(500),
            context_tokens: None,
        }
    }
}

/// One chat message, in the protocol's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    /// Never sent as `null`: llama-cpp-python's server refuses a `null`
    /// content, and its chat templates fail on an assistant turn without
    /// one, so [`Message::assistant`] sends a turn of tool calls only with
    /// `""` (which OpenAI and vLLM take too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn system(text: impl Into<String>) -> Message {
        Message { role: "system".into(), content: Some(text.into()), tool_calls: vec![], tool_call_id: None }
    }
    pub fn user(text: impl Into<String>) -> Message {
        Message { role: "user".into(), content: Some(text.into()), tool_calls: vec![], tool_call_id: None }
    }
    /// The model's answer as the next request carries it back.
    pub fn assistant(reply: Message) -> Message {
        Message { role: "assistant".into(), content: Some(reply.content.unwrap_or_default()), ..reply }
    }
    pub fn tool(id: &str, text: impl Into<String>) -> Message {
        Message { role: "tool".into(), content: Some(text.into()), tool_calls: vec![], tool_call_id: Some(id.into()) }
    }
    /// Chars of text this message carries (content and tool-call arguments).
    pub fn chars(&self) -> u64 {
        let content = self.content.as_deref().map_or(0, |c| c.chars().count());
        let calls: usize = self.tool_calls.iter().map(|c| c.function.name.len() + c.function.arguments.len()).sum();
        (content + calls) as u64
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    #[serde(default)]
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
}

fn function_type() -> String {
    "function".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// The arguments as JSON text (an object some servers send is re-encoded).
    #[serde(deserialize_with = "arguments_text", default)]
    pub arguments: String,
}

fn arguments_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// The request body.
#[derive(Debug, Clone, Serialize)]
pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub messages: &'a [Message],
    #[serde(skip_serializing_if = "<[Value]>::is_empty")]
    pub tools: &'a [Value],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<&'a str>,
    pub temperature: f32,
    /// The answer's reserve when the window is known, so that prompt and
    /// answer fit it together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
struct ChatResponse {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Debug, Clone, Deserialize)]
struct Choice {
    message: Message,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// A model's answer to one turn.
#[derive(Debug, Clone)]
pub struct Reply {
    pub message: Message,
    pub finish: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub attempts: u32,
    pub wall: Duration,
}

/// Why a turn got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatError {
    /// `unreachable`, `timeout`, `http-<status>`, `malformed`, or
    /// `context-exceeded` (the server refused the request as longer than
    /// its context window).
    pub kind: String,
    pub message: String,
    pub attempts: u32,
    pub wall: Duration,
    /// For `context-exceeded`: the window and the refused prompt's tokens,
    /// as far as the server's words name them.
    pub context: Option<(Option<u32>, Option<u64>)>,
}

impl std::fmt::Display for ChatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (after {} attempt{})", self.message, self.attempts, if self.attempts == 1 { "" } else { "s" })
    }
}

struct Failure {
    kind: String,
    message: String,
    retry: bool,
    retry_after: Option<Duration>,
    context: Option<(Option<u32>, Option<u64>)>,
}

impl Failure {
    fn new(kind: &str, message: String, retry: bool) -> Failure {
        Failure { kind: kind.into(), message, retry, retry_after: None, context: None }
    }
}

/// The longest wait a `Retry-After` may ask for.
const RETRY_AFTER_CAP: Duration = Duration::from_secs(30);

/// A client of one endpoint.
pub struct Client {
    endpoint: Endpoint,
    http: reqwest::blocking::Client,
}

impl Client {
    pub fn new(endpoint: Endpoint) -> anyhow::Result<Client> {
        let base = &endpoint.base_url;
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            anyhow::bail!("model base URL `{base}` must start with http:// or https://");
        }
        // One crypto provider for rustls, installed once per process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::blocking::Client::builder()
            .timeout(endpoint.timeout)
            .connect_timeout(endpoint.timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("fabdex/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Client { endpoint, http })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// One turn: retried while the failure is retryable and attempts remain.
    pub fn complete(&self, messages: &[Message], tools: &[Value]) -> Result<Reply, ChatError> {
        self.complete_within(messages, tools, None, self.endpoint.timeout)
    }

    /// One turn that ends within `limit` (each attempt's timeout is the
    /// endpoint's, or what is left of `limit` if less), with at most
    /// `max_tokens` of answer when given.
    pub fn complete_within(
        &self,
        messages: &[Message],
        tools: &[Value],
        max_tokens: Option<u32>,
        limit: Duration,
    ) -> Result<Reply, ChatError> {
        let started = Instant::now();
        let body = ChatRequest {
            model: &self.endpoint.model,
            messages,
            tools,
            tool_choice: (!tools.is_empty()).then_some("auto"),
            temperature: 0.0,
            max_tokens,
        };
        let mut backoff = self.endpoint.backoff;
        let attempts = self.endpoint.attempts.max(1);
        for attempt in 1..=attempts {
            let left = limit.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Err(ChatError {
                    kind: "timeout".into(),
                    message: format!("no answer within the {} ms left of the time budget", limit.as_millis()),
                    attempts: attempt - 1,
                    wall: started.elapsed(),
                    context: None,
                });
            }
            match self.attempt(&body, self.endpoint.timeout.min(left)) {
                Ok((response, finish)) => {
                    let usage = response.usage.unwrap_or_default();
                    let mut message = response.choices.into_iter().next().expect("checked in attempt").message;
                    calls_written_as_text(&mut message);
                    for (i, call) in message.tool_calls.iter_mut().enumerate() {
                        if call.id.is_empty() {
                            call.id = format!("call_{attempt}_{i}");
                        }
                    }
                    return Ok(Reply {
                        message,
                        finish,
                        tokens_in: usage.prompt_tokens,
                        tokens_out: usage.completion_tokens,
                        attempts: attempt,
                        wall: started.elapsed(),
                    });
                }
                Err(f) if f.retry && attempt < attempts => {
                    let wait = f.retry_after.map_or(backoff, |d| d.min(RETRY_AFTER_CAP));
                    std::thread::sleep(wait.min(limit.saturating_sub(started.elapsed())));
                    backoff *= 2;
                }
                Err(f) => {
                    return Err(ChatError {
                        kind: f.kind,
                        message: f.message,
                        attempts: attempt,
                        wall: started.elapsed(),
                        context: f.context,
                    });
                }
            }
        }
        unreachable!("the last attempt returns")
    }

    /// The model's context window as the server states it, if it does:
    /// llama.cpp's server at `/props` (`default_generation_settings.n_ctx`,
    /// the window it runs with), vLLM's `max_model_len` and the
    /// `context_length` or `context_window` others put on `/v1/models`.
    /// llama-cpp-python's and Ollama's `/v1` say nothing; then `None`.
    pub fn context_window(&self) -> Option<crate::window::Window> {
        let get = |url: &str| -> Option<Value> {
            let mut request = self.http.get(url).timeout(Duration::from_secs(3));
            if let Some(key) = &self.endpoint.api_key {
                request = request.bearer_auth(key);
            }
            let response = request.send().ok()?;
            if !response.status().is_success() {
                return None;
            }
            response.json().ok()
        };
        let base = &self.endpoint.base_url;
        let root = base.strip_suffix("/v1").unwrap_or(base);
        let window = |tokens: Option<u64>, source: &str| {
            let tokens = u32::try_from(tokens?).ok().filter(|t| *t > 0)?;
            Some(crate::window::Window { tokens, source: source.into() })
        };
        if let Some(w) = get(&format!("{root}/props"))
            .and_then(|props| window(props["default_generation_settings"]["n_ctx"].as_u64(), "server /props"))
        {
            return Some(w);
        }
        let models = get(&format!("{base}/models"))?;
        let entries = models["data"].as_array()?;
        let entry =
            entries.iter().find(|m| m["id"].as_str() == Some(self.endpoint.model.as_str())).or(entries.first())?;
        ["max_model_len", "context_length", "context_window"]
            .iter()
            .find_map(|key| window(entry[*key].as_u64(), "server /v1/models"))
    }

    fn attempt(&self, body: &ChatRequest<'_>, timeout: Duration) -> Result<(ChatResponse, String), Failure> {
        let url = format!("{}/chat/completions", self.endpoint.base_url);
        let mut request = self.http.post(&url).timeout(timeout).json(body);
        if let Some(key) = &self.endpoint.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().map_err(|e| {
            let (kind, message) = if e.is_timeout() {
                ("timeout", format!("{url}: no answer within {} ms", timeout.as_millis()))
            } else {
                ("unreachable", format!("{url}: cannot connect: {}", root_cause(&e)))
            };
            Failure::new(kind, message, true)
        })?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response.text().map_err(|e| {
            let kind = if e.is_timeout() { "timeout" } else { "unreachable" };
            Failure::new(kind, format!("{url}: the answer was cut off: {}", root_cause(&e)), true)
        })?;
        if status != 200 {
            let excerpt: String = text.chars().take(300).collect();
            // A context refusal is final for this request but not for the
            // turn: the loop learns the window from it and sends less.
            let context = (status == 400 || status == 413).then(|| crate::window::refusal_numbers(&text)).flatten();
            let kind = if context.is_some() { "context-exceeded".to_string() } else { format!("http-{status}") };
            return Err(Failure {
                kind,
                message: format!("{url}: HTTP {status}: {excerpt}"),
                retry: status == 429 || (500..=599).contains(&status),
                retry_after,
                context,
            });
        }
        let response: ChatResponse = serde_json::from_str(&text).map_err(|e| {
            Failure::new("malformed", format!("{url}: the answer is not a chat completion: {e}"), false)
        })?;
        let Some(choice) = response.choices.first() else {
            return Err(Failure::new("malformed", format!("{url}: the answer has no choices"), false));
        };
        let finish = choice.finish_reason.clone().unwrap_or_else(|| "stop".into());
        Ok((response, finish))
    }
}

fn root_cause(e: &dyn std::error::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// Tool calls a model wrote in its answer's text as `<tool_call>{"name":
/// …, "arguments": …}</tool_call>` (the form Qwen and Hermes models are
/// trained on, which a server serving the model's own chat template passes
/// through as text) become the message's calls, and leave its text. Only
/// when every such block is a well-formed call and the message has no
/// calls of its own; anything else stays prose, for the format repair.
pub(crate) fn calls_written_as_text(message: &mut Message) {
    const OPEN: &str = "<tool_call>";
    const CLOSE: &str = "</tool_call>";
    let Some(text) = message.content.as_deref() else { return };
    if !message.tool_calls.is_empty() || !text.contains(OPEN) {
        return;
    }
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut tail = text;
    while let Some(start) = tail.find(OPEN) {
        rest.push_str(&tail[..start]);
        let after = &tail[start + OPEN.len()..];
        let (body, next) = match after.find(CLOSE) {
            Some(end) => (&after[..end], &after[end + CLOSE.len()..]),
            None => (after, ""),
        };
        let Ok(Value::Object(call)) = serde_json::from_str::<Value>(body.trim()) else { return };
        let (Some(Value::String(name)), arguments) = (call.get("name"), call.get("arguments")) else { return };
        let arguments = match arguments {
            Some(Value::String(text)) => text.clone(),
            Some(v @ Value::Object(_)) => v.to_string(),
            None => "{}".to_string(),
            Some(_) => return,
        };
        calls.push(ToolCall {
            id: String::new(),
            kind: function_type(),
            function: FunctionCall { name: name.clone(), arguments },
        });
        tail = next;
    }
    rest.push_str(tail);
    let rest = rest.trim();
    message.content = (!rest.is_empty()).then(|| rest.to_string());
    message.tool_calls = calls;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_arguments_are_text_whether_sent_as_a_string_or_an_object() {
        let openai: ToolCall = serde_json::from_value(serde_json::json!(
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"address\":\"doc:a\"}"}}
        ))
        .unwrap();
        let local: ToolCall = serde_json::from_value(serde_json::json!(
            {"function": {"name": "read", "arguments": {"address": "doc:a"}}}
        ))
        .unwrap();
        assert_eq!(openai.function.arguments, local.function.arguments);
        assert_eq!(local.kind, "function");
        assert_eq!(local.id, "");
    }

    #[test]
    fn tool_calls_written_in_the_text_become_calls_and_anything_else_stays_prose() {
        let text = |t: &str| Message {
            role: "assistant".into(),
            content: Some(t.into()),
            tool_calls: vec![],
            tool_call_id: None,
        };
        let mut m = text(
            "Let me look.\n<tool_call>\n{\"name\": \"search_patterns\", \"arguments\": {\"text\": \"inbox\"}}\n</tool_call>\n<tool_call>{\"name\": \"search_docs\", \"arguments\": \"{\\\"query\\\": \\\"mail\\\"}\"}",
        );
        calls_written_as_text(&mut m);
        assert_eq!(m.tool_calls.len(), 2);
        assert_eq!(m.tool_calls[0].function.name, "search_patterns");
        assert_eq!(
            serde_json::from_str::<Value>(&m.tool_calls[0].function.arguments).unwrap(),
            serde_json::json!({"text": "inbox"})
        );
        assert_eq!(m.tool_calls[1].function.name, "search_docs");
        assert_eq!(m.tool_calls[1].function.arguments, "{\"query\": \"mail\"}");
        assert_eq!(m.content.as_deref(), Some("Let me look."));
        // A block that is not a call leaves the whole answer as prose.
        for prose in ["<tool_call>not json</tool_call>", "<tool_call>{\"arguments\": {}}</tool_call>", "no calls here"]
        {
            let mut m = text(prose);
            calls_written_as_text(&mut m);
            assert!(m.tool_calls.is_empty(), "{prose}");
            assert_eq!(m.content.as_deref(), Some(prose));
        }
    }

    #[test]
    fn a_turn_of_tool_calls_only_is_sent_back_with_empty_content_never_null() {
        let call = ToolCall {
            id: "c1".into(),
            kind: "function".into(),
            function: FunctionCall { name: "read".into(), arguments: "{}".into() },
        };
        let reply = Message { role: "assistant".into(), content: None, tool_calls: vec![call], tool_call_id: None };
        let sent = serde_json::to_value(Message::assistant(reply.clone())).unwrap();
        assert_eq!(sent["content"], "", "{sent}");
        assert_eq!(sent["tool_calls"][0]["id"], "c1");
        assert!(serde_json::to_value(&reply).unwrap().get("content").is_none(), "never null");
        let back: Message = serde_json::from_value(serde_json::json!({"role": "assistant", "content": null})).unwrap();
        assert_eq!(back.content, None);
    }

    #[test]
    fn the_key_never_shows_in_a_debug_print() {
        let mut e = Endpoint::new("http://127.0.0.1:1/v1/", "m");
        e.api_key = Some("sk-secret-value".into());
        let shown = format!("{e:?}");
        assert!(!shown.contains("sk-secret-value") && shown.contains("<set>"), "{shown}");
        assert_eq!(e.base_url, "http://127.0.0.1:1/v1");
    }
}
