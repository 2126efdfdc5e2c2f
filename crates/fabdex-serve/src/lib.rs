//! # fabdex-serve
//!
//! `fabdex serve --http ADDR`: an HTTP server over the published snapshot of
//! an index directory. It answers the pattern index service's endpoints
//! (`POST /listPatterns`, `/searchPatterns`, `/getPattern`) from the snapshot,
//! so one fabdex can mirror another with `fabdex index --from-index URL`, and
//! `GET /health` with the snapshot id.
//!
//! Every handler is a thin call into [`fabdex_query::Engine`]; the query runs
//! on a blocking thread under a per-request timeout and a concurrency bound.
//! A snapshot published while serving is picked up by the next request (the
//! `CURRENT` file is checked per request); a request in flight keeps the
//! engine it started with, because it holds its own `Arc`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use fabdex_model::registry::{GetRequest, ListRequest, SearchRequest};
use fabdex_query::{Engine, QueryError};
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::Semaphore;

/// Bounds and auth of a server.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Require `Authorization: Bearer <token>` on every endpoint but `/health`.
    pub token: Option<String>,
    /// Largest request body accepted (413 above it).
    pub max_body_bytes: usize,
    /// Longest a request may run (503 after it).
    pub timeout: Duration,
    /// Requests served at once; the others wait for a slot.
    pub max_concurrency: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions { token: None, max_body_bytes: 1024 * 1024, timeout: Duration::from_secs(30), max_concurrency: 64 }
    }
}

struct AppState {
    index_dir: PathBuf,
    engine: RwLock<Arc<Engine>>,
    opts: ServeOptions,
    slots: Semaphore,
}

impl AppState {
    /// The engine of the published snapshot, reopened when `CURRENT` moved.
    fn engine(&self) -> Result<Arc<Engine>, QueryError> {
        let current = self.engine.read().unwrap_or_else(|p| p.into_inner()).clone();
        let published = std::fs::read_to_string(self.index_dir.join("CURRENT")).unwrap_or_default();
        let published = published.trim();
        if published.is_empty() || published == current.snapshot_id() {
            return Ok(current);
        }
        let fresh = Arc::new(Engine::open_index(&self.index_dir)?);
        *self.engine.write().unwrap_or_else(|p| p.into_inner()) = fresh.clone();
        Ok(fresh)
    }
}

fn error_response(status: StatusCode, kind: &str, message: &str) -> Response {
    (status, axum::Json(json!({"error": {"kind": kind, "message": message}}))).into_response()
}

fn query_error(err: &QueryError) -> Response {
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

/// Auth, a concurrency slot, then `call` on a blocking thread under the timeout.
async fn run<F>(state: Arc<AppState>, headers: &HeaderMap, call: F) -> Response
where
    F: FnOnce(&Engine) -> Result<serde_json::Value, QueryError> + Send + 'static,
{
    if let Some(token) = &state.opts.token {
        let given =
            headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
        if given != Some(token.as_str()) {
            return error_response(StatusCode::UNAUTHORIZED, "unauthorized", "missing or wrong bearer token");
        }
    }
    let Ok(_slot) = state.slots.acquire().await else {
        return error_response(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "server is shutting down");
    };
    let timeout = state.opts.timeout;
    let shared = state.clone();
    let task = tokio::task::spawn_blocking(move || {
        let engine = shared.engine()?;
        call(&engine)
    });
    match tokio::time::timeout(timeout, task).await {
        Err(_) => error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            &format!("request took longer than {} ms", timeout.as_millis()),
        ),
        Ok(Err(join)) => {
            error_response(StatusCode::INTERNAL_SERVER_ERROR, "internal", &format!("request failed: {join}"))
        }
        Ok(Ok(Err(e))) => query_error(&e),
        Ok(Ok(Ok(value))) => axum::Json(value).into_response(),
    }
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
        "no such endpoint (POST /listPatterns, /searchPatterns, /getPattern; GET /health)",
    )
}

/// The router over an index directory's published snapshot.
pub fn router(index_dir: &Path, opts: ServeOptions) -> anyhow::Result<Router> {
    let engine = Engine::open_index(index_dir)?;
    let state = Arc::new(AppState {
        index_dir: index_dir.to_path_buf(),
        engine: RwLock::new(Arc::new(engine)),
        slots: Semaphore::new(opts.max_concurrency.max(1)),
        opts: opts.clone(),
    });
    Ok(Router::new()
        .route("/listPatterns", post(list_patterns))
        .route("/searchPatterns", post(search_patterns))
        .route("/getPattern", post(get_pattern))
        .route("/health", get(health))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(opts.max_body_bytes))
        .with_state(state))
}

/// Serve until Ctrl-C. `ready` gets the bound address (useful with port 0).
pub fn serve_http(
    addr: &str,
    index_dir: &Path,
    opts: ServeOptions,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let app = router(index_dir, opts)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let listener =
            tokio::net::TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("cannot listen on `{addr}`: {e}"))?;
        ready(listener.local_addr()?);
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok(())
    })
}
