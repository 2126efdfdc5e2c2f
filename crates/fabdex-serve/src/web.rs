//! The contract browser's routes (`/`, `/search`, `/pattern/{id}`,
//! `/file/{id}/{*path}`, `/doc/{*path}`, `/run`, `/assets/{name}`,
//! `/login`). Each page calls the registry's tools through its [`Host`],
//! which the server implements with `AppState::call_tool`, the path
//! `POST /v1/tools/{name}` takes, so the release policy, the run ledger,
//! the concurrency bound and the timeout are the API's; `fabdex-web` turns
//! the answers into HTML. This file imports nothing of the server's: the
//! server hands it a `Host`.
//!
//! With a token, a page accepts it as the API does (`Authorization:
//! Bearer`), or from the `fabdex_token` cookie that `POST /login` (the form
//! a page without it shows) or a one-off `?token=` link sets. The cookie is
//! `HttpOnly` and `SameSite=Strict`; `?token=` redirects to the same page
//! without it, so the token does not stay in the address bar or history.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as AxumPath, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use fabdex_web::search::SearchForm;
use fabdex_web::section::{SectionAnswers, SectionRequest};
use fabdex_web::source::FileRequest;
use fabdex_web::{Answer, Chrome, Failure};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

const COOKIE: &str = "fabdex_token";

/// What the pages need of the server: its one tool path, its token rules
/// and its bounds.
pub(crate) trait Host: Send + Sync + 'static {
    /// A tool call, as `POST /v1/tools/{name}` makes it: its JSON, or its
    /// error kind and message.
    fn call(&self, name: &str, input: Value) -> Answer;
    /// The run the server records calls in.
    fn run_id(&self) -> Option<&str>;
    /// The server's token, if it needs one.
    fn token(&self) -> Option<&str>;
    /// Whether the request may call the API (its bearer token, or no token needed).
    fn authorized(&self, headers: &HeaderMap) -> bool;
    /// Whether `given` is the server's token (in constant time).
    fn is_token(&self, given: &str) -> bool;
    /// The HTTP status of a tool error kind.
    fn status(&self, kind: &str) -> StatusCode;
    fn slots(&self) -> &Semaphore;
    fn timeout(&self) -> Duration;
}

/// The routes of the pages and their assets.
pub(crate) fn routes<S: Host>() -> Router<Arc<S>> {
    Router::new()
        .route("/", get(search::<S>))
        .route("/search", get(search::<S>))
        .route("/pattern/{*id}", get(pattern::<S>))
        .route("/file/{id}/{*path}", get(file::<S>))
        .route("/doc/{*path}", get(doc::<S>))
        .route("/run", get(run_page::<S>))
        .route("/assets/{name}", get(asset))
        .route("/login", get(login_form).post(login::<S>))
}

/// The page chrome; with a server run, its exposure for the footer.
fn chrome<'a, S: Host>(host: &'a S, query: &'a str) -> Chrome<'a> {
    let run_id = host.run_id();
    let exposure = run_id.map(|_| host.call("ledger_exposure", json!({})));
    Chrome { query, run_id, exposure }
}

/// The status of a page whose main answer is `answer`.
fn status_of<S: Host>(host: &S, answer: &Answer) -> StatusCode {
    match answer {
        Ok(_) => StatusCode::OK,
        Err(f) => host.status(&f.kind),
    }
}

fn query_pairs(query: &Option<String>) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()).into_owned().collect()
}

fn html_response(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
             form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ),
    );
    response
}

/// The token from the `fabdex_token` cookie, if any.
fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(|c| {
        let (name, value) = c.trim().split_once('=')?;
        (name == COOKIE).then(|| percent_encoding::percent_decode_str(value).decode_utf8_lossy().into_owned())
    })
}

fn set_cookie(token: &str) -> HeaderValue {
    let value = percent_encoding::utf8_percent_encode(token, percent_encoding::NON_ALPHANUMERIC);
    HeaderValue::from_str(&format!("{COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict"))
        .unwrap_or(HeaderValue::from_static(""))
}

fn redirect(to: &str, cookie: Option<HeaderValue>) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let location = HeaderValue::from_str(to).unwrap_or(HeaderValue::from_static("/"));
    response.headers_mut().insert(header::LOCATION, location);
    if let Some(c) = cookie {
        response.headers_mut().insert(header::SET_COOKIE, c);
    }
    response
}

/// `None` when the request may see pages; otherwise the response to give
/// instead (the sign-in page, or a redirect that stores a `?token=`).
fn gate<S: Host>(host: &S, headers: &HeaderMap, uri: &Uri) -> Option<Response> {
    host.token()?;
    if host.authorized(headers) || cookie_token(headers).is_some_and(|given| host.is_token(&given)) {
        return None;
    }
    let pairs: Vec<(String, String)> =
        form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()).into_owned().collect();
    let given = pairs.iter().find(|(k, _)| k == "token").map(|(_, v)| v.clone());
    let rest: Vec<(String, String)> = pairs.into_iter().filter(|(k, _)| k != "token").collect();
    let mut here = uri.path().to_string();
    if !rest.is_empty() {
        here.push('?');
        here.push_str(&form_urlencoded::Serializer::new(String::new()).extend_pairs(rest).finish());
    }
    match given {
        Some(given) if host.is_token(&given) => Some(redirect(&here, Some(set_cookie(&given)))),
        given => Some(html_response(StatusCode::UNAUTHORIZED, fabdex_web::login_page(&here, given.is_some()))),
    }
}

/// Auth, a concurrency slot, then `build` on a blocking thread under the
/// server's timeout: the same guards as a tool call.
async fn render<S: Host, F>(state: Arc<S>, headers: &HeaderMap, uri: &Uri, build: F) -> Response
where
    F: FnOnce(&S) -> (StatusCode, String) + Send + 'static,
{
    if let Some(response) = gate(state.as_ref(), headers, uri) {
        return response;
    }
    let Ok(_slot) = state.slots().acquire().await else {
        return html_response(StatusCode::SERVICE_UNAVAILABLE, "server is shutting down".into());
    };
    let timeout = state.timeout();
    let shared = state.clone();
    let task = tokio::task::spawn_blocking(move || build(&shared));
    let failed = |status: StatusCode, message: String| {
        html_response(status, fabdex_web::error_page(&Chrome::default(), "Not served", &message))
    };
    match tokio::time::timeout(timeout, task).await {
        Err(_) => {
            failed(StatusCode::SERVICE_UNAVAILABLE, format!("the page took longer than {} ms", timeout.as_millis()))
        }
        Ok(Err(join)) => failed(StatusCode::INTERNAL_SERVER_ERROR, format!("the page failed: {join}")),
        Ok(Ok((status, body))) => html_response(status, body),
    }
}

async fn search<S: Host>(State(state): State<Arc<S>>, headers: HeaderMap, uri: Uri, RawQuery(q): RawQuery) -> Response {
    let form = SearchForm::from_pairs(query_pairs(&q));
    render(state, &headers, &uri, move |s| {
        // The two searches run side by side: the page waits for the slower, not for both.
        let (patterns, docs) = std::thread::scope(|scope| {
            let docs = form.wants_docs().then(|| scope.spawn(|| s.call("search_docs", form.docs_input())));
            let patterns = form.wants_patterns().then(|| s.call("search_patterns", form.patterns_input()));
            let failed = |_| Err(Failure::new("internal", "the docs search failed"));
            (patterns, docs.map(|h| h.join().unwrap_or_else(failed)))
        });
        let status = patterns.iter().chain(docs.iter()).map(|a| status_of(s, a)).find(|st| !st.is_success());
        let html = fabdex_web::search::page_html(&chrome(s, &form.q), &form, docs.as_ref(), patterns.as_ref());
        (status.unwrap_or(StatusCode::OK), html)
    })
    .await
}

async fn pattern<S: Host>(
    State(state): State<Arc<S>>,
    headers: HeaderMap,
    uri: Uri,
    AxumPath(id): AxumPath<String>,
) -> Response {
    render(state, &headers, &uri, move |s| {
        let inspect = s.call("inspect_pattern", json!({"id": id}));
        // The other tools take the resolved id, so an alias or prefix reads the same record.
        let resolved = inspect.as_ref().ok().and_then(|v| v["patternId"].as_str()).unwrap_or(&id).to_string();
        let by_id = json!({"id": resolved});
        let answers = fabdex_web::pattern::PatternAnswers {
            contract: s.call("pattern_contract", by_id.clone()),
            files: s.call("list_pattern_files", by_id.clone()),
            deps: s.call("pattern_deps", by_id),
            id,
            inspect,
        };
        (status_of(s, &answers.inspect), fabdex_web::pattern::page_html(&chrome(s, ""), &answers))
    })
    .await
}

async fn file<S: Host>(
    State(state): State<Arc<S>>,
    headers: HeaderMap,
    uri: Uri,
    AxumPath((id, path)): AxumPath<(String, String)>,
    RawQuery(q): RawQuery,
) -> Response {
    let req = FileRequest { id, path, ..FileRequest::default() }.with_query(query_pairs(&q));
    render(state, &headers, &uri, move |s| {
        let files = s.call("list_pattern_files", json!({"id": req.id}));
        let read = s.call("read_source", req.read_input());
        (status_of(s, &read), fabdex_web::source::page_html(&chrome(s, ""), &req, &files, &read))
    })
    .await
}

async fn doc<S: Host>(
    State(state): State<Arc<S>>,
    headers: HeaderMap,
    uri: Uri,
    AxumPath(path): AxumPath<String>,
    RawQuery(q): RawQuery,
) -> Response {
    let mut req = SectionRequest { file: path, ..SectionRequest::default() };
    for (k, v) in query_pairs(&q) {
        match k.as_str() {
            "section" => req.anchor = Some(v),
            "offset" => req.offset = v.parse().ok(),
            _ => {}
        }
    }
    render(state, &headers, &uri, move |s| {
        let answers = SectionAnswers {
            read: s.call("read", req.read_input()),
            outline: s.call("outline", req.outline_input()),
            related: req.related_input().map(|input| s.call("related", input)),
        };
        (status_of(s, &answers.read), fabdex_web::section::page_html(&chrome(s, ""), &req, &answers))
    })
    .await
}

async fn run_page<S: Host>(State(state): State<Arc<S>>, headers: HeaderMap, uri: Uri) -> Response {
    render(state, &headers, &uri, move |s| {
        let show = match s.run_id() {
            Some(_) => s.call("ledger_show", json!({})),
            None => Ok(Value::Null),
        };
        (status_of(s, &show), fabdex_web::provenance::page_html(&chrome(s, ""), &show))
    })
    .await
}

async fn asset(AxumPath(name): AxumPath<String>) -> Response {
    match fabdex_web::asset(&name) {
        Some((content_type, body)) => {
            let headers = [(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")];
            (headers, body).into_response()
        }
        None => html_response(
            StatusCode::NOT_FOUND,
            fabdex_web::error_page(&Chrome::default(), "Not found", "no such asset"),
        ),
    }
}

async fn login_form(RawQuery(q): RawQuery) -> Response {
    let next = query_pairs(&q).into_iter().find(|(k, _)| k == "next").map_or("/".to_string(), |(_, v)| v);
    html_response(StatusCode::OK, fabdex_web::login_page(&safe_next(&next), false))
}

/// Only a path on this site: never `//host` or a scheme.
fn safe_next(next: &str) -> String {
    if next.starts_with('/') && !next.starts_with("//") && !next.contains('\\') { next.to_string() } else { "/".into() }
}

async fn login<S: Host>(State(state): State<Arc<S>>, body: Bytes) -> Response {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let field = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap_or_default();
    let next = safe_next(&field("next"));
    let given = field("token");
    match state.token() {
        None => redirect(&next, None),
        Some(_) if state.is_token(&given) => redirect(&next, Some(set_cookie(&given))),
        Some(_) => html_response(StatusCode::UNAUTHORIZED, fabdex_web::login_page(&next, true)),
    }
}
