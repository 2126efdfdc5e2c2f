//! # fabdex-serve
//!
//! The two servers over the published snapshot of an index directory, both
//! thin shells over the tool registry (`fabdex-tools`):
//!
//! - `fabdex serve --http ADDR`: `GET /v1/tools`, `POST /v1/tools/{name}`,
//!   `GET /health` with the snapshot id, and the pattern index service's
//!   endpoints (`POST /listPatterns`, `/searchPatterns`, `/getPattern`), so one
//!   fabdex can mirror another with `fabdex index --from-index URL`;
//! - the contract browser at `/` (`web.rs`): HTML pages rendered by
//!   `fabdex-web` from the same tool calls, under the same auth, policy and
//!   run ledger;
//! - `fabdex serve --mcp`: MCP over stdio (`tools/list`, `tools/call`), with
//!   errors as MCP tool errors carrying the CLI's messages (`mcp.rs`).
//!
//! Every handler is a thin call into [`fabdex_query::Engine`]; the query runs
//! on a blocking thread under a per-request timeout and a concurrency bound.
//! A snapshot published while serving is picked up by the next request (the
//! `CURRENT` file is checked per request); a request in flight keeps the
//! engine it started with, because it holds its own `Arc`.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path as AxumPath, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use fabdex_model::registry::{GetRequest, ListRequest, SearchRequest};
use fabdex_query::{Engine, QueryError};
use fabdex_tools::ToolError;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::Semaphore;

pub mod cli;
mod listen;
mod mcp;
mod state;
mod web;

pub use mcp::serve_mcp;
use state::{AppState, timeout_for};
pub use state::{ServeOptions, descriptors};

/// The pages' view of the server: its tool path, token and bounds.
impl web::Host for AppState {
    fn call(&self, name: &str, input: serde_json::Value) -> fabdex_web::Answer {
        self.call_tool(name, input).map_err(|e| fabdex_web::Failure::new(&e.kind, e.message))
    }

    fn run_id(&self) -> Option<&str> {
        self.opts.run.as_deref()
    }

    fn token(&self) -> Option<&str> {
        self.opts.token.as_deref()
    }

    fn authorized(&self, headers: &HeaderMap) -> bool {
        authorized(self, headers)
    }

    fn is_token(&self, given: &str) -> bool {
        self.opts.token.as_deref().is_some_and(|token| tokens_match(given, token))
    }

    fn status(&self, kind: &str) -> StatusCode {
        tool_status(kind)
    }

    fn slots(&self) -> &Semaphore {
        &self.slots
    }

    fn timeout(&self) -> Duration {
        self.opts.timeout
    }
}

/// HTTP status of a tool error kind.
fn tool_status(kind: &str) -> StatusCode {
    match kind {
        "invalid-argument" => StatusCode::BAD_REQUEST,
        "unknown-tool" | "not-found" => StatusCode::NOT_FOUND,
        "denied" => StatusCode::FORBIDDEN,
        "no-snapshot" | "timeout" => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn error_response(status: StatusCode, kind: &str, message: &str) -> Response {
    (status, axum::Json(json!({"error": {"kind": kind, "message": message}}))).into_response()
}

pub(crate) fn query_error(err: &QueryError) -> Response {
    let status = match err {
        QueryError::InvalidArgument(_) => StatusCode::BAD_REQUEST,
        QueryError::NotFound(_) => StatusCode::NOT_FOUND,
        QueryError::NoSnapshot(_) => StatusCode::SERVICE_UNAVAILABLE,
        QueryError::Corrupt(_) => StatusCode::INTERNAL_SERVER_ERROR,
        QueryError::Denied(_) => StatusCode::FORBIDDEN,
    };
    error_response(status, err.kind(), &err.to_string())
}

/// A request body as `T`; an empty body is `T::default()`.
fn parse_body<T: DeserializeOwned + Default>(body: &Bytes, endpoint: &str) -> Result<T, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| format!("{endpoint}: request body is not valid: {e}"))
}

fn bad_request(message: &str) -> Response {
    error_response(StatusCode::BAD_REQUEST, "invalid-argument", message)
}

fn authorized(state: &AppState, headers: &HeaderMap) -> bool {
    match &state.opts.token {
        None => true,
        Some(token) => {
            let given = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "));
            given.is_some_and(|given| tokens_match(given, token))
        }
    }
}

/// Whether a given bearer token is the server's, in time that does not
/// depend on where they differ or on their lengths: the two are compared as
/// blake3 digests, whose equality is constant-time.
fn tokens_match(given: &str, token: &str) -> bool {
    blake3::hash(given.as_bytes()) == blake3::hash(token.as_bytes())
}

/// Refuse to listen beyond this machine without a token: every address
/// `addr` resolves to must be a loopback address unless a token is set.
fn check_exposure(addr: &str, opts: &ServeOptions) -> anyhow::Result<()> {
    use std::net::ToSocketAddrs;
    if opts.token.is_some() {
        return Ok(());
    }
    let resolved: Vec<SocketAddr> =
        addr.to_socket_addrs().map_err(|e| anyhow::anyhow!("cannot listen on `{addr}`: {e}"))?.collect();
    if let Some(open) = resolved.iter().find(|a| !a.ip().is_loopback()) {
        anyhow::bail!(
            "refusing to listen on `{addr}` ({}) without a token: anyone who can reach it could read the index. Set $FABDEX_SERVE_TOKEN (clients then send `Authorization: Bearer <token>`), or listen on a loopback address such as 127.0.0.1",
            open.ip()
        );
    }
    Ok(())
}

/// Auth, a concurrency slot, then `call` on a blocking thread under the timeout.
async fn guarded<F>(state: Arc<AppState>, headers: &HeaderMap, call: F) -> Response
where
    F: FnOnce(&AppState) -> Result<serde_json::Value, ToolError> + Send + 'static,
{
    if !authorized(&state, headers) {
        return error_response(StatusCode::UNAUTHORIZED, "unauthorized", "missing or wrong bearer token");
    }
    let Ok(_slot) = state.slots.acquire().await else {
        return error_response(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "server is shutting down");
    };
    let timeout = state.opts.timeout;
    let shared = state.clone();
    let task = tokio::task::spawn_blocking(move || call(&shared));
    guarded_answer(task, timeout).await
}

async fn guarded_answer(
    task: tokio::task::JoinHandle<Result<serde_json::Value, ToolError>>,
    timeout: Duration,
) -> Response {
    match tokio::time::timeout(timeout, task).await {
        Err(_) => error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            &format!("request took longer than {} ms", timeout.as_millis()),
        ),
        Ok(Err(join)) => {
            error_response(StatusCode::INTERNAL_SERVER_ERROR, "internal", &format!("request failed: {join}"))
        }
        Ok(Ok(Err(e))) => error_response(tool_status(&e.kind), &e.kind, &e.message),
        Ok(Ok(Ok(value))) => axum::Json(value).into_response(),
    }
}

/// An index-service endpoint: a query on the current engine.
async fn run<F>(state: Arc<AppState>, headers: &HeaderMap, call: F) -> Response
where
    F: FnOnce(&Engine) -> Result<serde_json::Value, QueryError> + Send + 'static,
{
    guarded(state, headers, move |s| {
        let engine = s.engine().map_err(|e| ToolError::new(e.kind(), e.to_string()))?;
        call(&engine).map_err(|e| ToolError::new(e.kind(), e.to_string()))
    })
    .await
}

async fn list_tools(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if !authorized(&state, &headers) {
        return error_response(StatusCode::UNAUTHORIZED, "unauthorized", "missing or wrong bearer token");
    }
    axum::Json(json!({"tools": descriptors()})).into_response()
}

async fn call_tool(
    State(state): State<Arc<AppState>>,
    AxumPath(name): AxumPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let input: serde_json::Value = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => return bad_request(&format!("{name}: request body is not valid JSON: {e}")),
        }
    };
    if !authorized(&state, &headers) {
        return error_response(StatusCode::UNAUTHORIZED, "unauthorized", "missing or wrong bearer token");
    }
    let Ok(_slot) = state.slots.acquire().await else {
        return error_response(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "server is shutting down");
    };
    let timeout = timeout_for(&state.opts, &name);
    let shared = state.clone();
    guarded_answer(tokio::task::spawn_blocking(move || shared.call_tool(&name, input)), timeout).await
}

fn to_value<T: serde::Serialize>(v: T) -> Result<serde_json::Value, QueryError> {
    serde_json::to_value(v).map_err(|e| QueryError::Corrupt(format!("cannot encode the answer: {e}")))
}

async fn list_patterns(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    let req: ListRequest = match parse_body(&body, "listPatterns") {
        Ok(r) => r,
        Err(message) => return bad_request(&message),
    };
    run(state, &headers, move |e| to_value(e.list_records(&req)?)).await
}

async fn search_patterns(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    let req: SearchRequest = match parse_body(&body, "searchPatterns") {
        Ok(r) => r,
        Err(message) => return bad_request(&message),
    };
    run(state, &headers, move |e| to_value(e.service_search(&req)?)).await
}

async fn get_pattern(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    let req: GetRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return bad_request(&format!(
                "getPattern: request body is not valid: {e} (expected {{\"patternId\", \"includeSource\"?}})"
            ));
        }
    };
    run(state, &headers, move |e| to_value(e.published_record(&req.pattern_id, req.include_source)?)).await
}

async fn health(State(state): State<Arc<AppState>>) -> Response {
    match state.engine() {
        Ok(e) => axum::Json(json!({"status": "ok", "snapshot": e.snapshot_id()})).into_response(),
        Err(e) => query_error(&e),
    }
}

async fn not_found() -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        "not-found",
        "no such endpoint (GET /v1/tools, POST /v1/tools/{name}, GET /health, POST /listPatterns, /searchPatterns, /getPattern; pages: GET /, /search, /pattern/{id}, /file/{id}/{path}, /doc/{path}, /run)",
    )
}

/// Errors axum answers itself (413 body too large, 405 wrong method, …) in
/// the same JSON envelope as every other error; pages (`text/html`) keep theirs.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let content_type = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let own_body = content_type.starts_with("application/json") || content_type.starts_with("text/html");
    if !status.is_client_error() && !status.is_server_error() || own_body {
        return response;
    }
    let kind = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "too-large",
        StatusCode::METHOD_NOT_ALLOWED => "method-not-allowed",
        s if s.is_client_error() => "invalid-argument",
        _ => "internal",
    };
    let body = axum::body::to_bytes(response.into_body(), 64 * 1024).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&body).trim().to_string();
    let message = if text.is_empty() { status.canonical_reason().unwrap_or("error").to_string() } else { text };
    error_response(status, kind, &message)
}

/// The router over an index directory's published snapshot.
pub fn router(index_dir: &Path, opts: ServeOptions) -> anyhow::Result<Router> {
    let max_body = opts.max_body_bytes;
    let state = Arc::new(AppState::open(index_dir, opts)?);
    Ok(Router::new()
        .route("/v1/tools", get(list_tools))
        .route("/v1/tools/{name}", post(call_tool))
        .route("/listPatterns", post(list_patterns))
        .route("/searchPatterns", post(search_patterns))
        .route("/getPattern", post(get_pattern))
        .route("/health", get(health))
        .merge(web::routes::<AppState>())
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(axum::middleware::map_response(json_errors))
        .with_state(state))
}

/// Serve until Ctrl-C, with the bounds of [`listen`]. `ready` gets the
/// bound address (useful with port 0).
pub fn serve_http(
    addr: &str,
    index_dir: &Path,
    opts: ServeOptions,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    check_exposure(addr, &opts)?;
    let max_body = opts.max_body_bytes;
    let app = router(index_dir, opts)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(listen::serve(addr, app, max_body, ready))
}

#[cfg(test)]
mod exposure_tests {
    use super::*;

    #[test]
    fn tokens_match_only_when_equal() {
        assert!(tokens_match("s3cret", "s3cret"));
        assert!(!tokens_match("s3cret", "s3cre"));
        assert!(!tokens_match("", "s3cret"));
        assert!(!tokens_match("S3cret", "s3cret"));
    }

    #[test]
    fn a_non_loopback_address_needs_a_token() {
        let open = ServeOptions::default();
        let err = check_exposure("0.0.0.0:0", &open).unwrap_err().to_string();
        assert!(err.contains("refusing to listen on `0.0.0.0:0`") && err.contains("FABDEX_SERVE_TOKEN"), "{err}");
        assert!(check_exposure("[::]:0", &open).is_err());
        assert!(check_exposure("127.0.0.1:0", &open).is_ok());
        assert!(check_exposure("[::1]:0", &open).is_ok());
        let guarded = ServeOptions { token: Some("t".into()), ..ServeOptions::default() };
        assert!(check_exposure("0.0.0.0:0", &guarded).is_ok());
    }
}
