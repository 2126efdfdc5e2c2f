//! # fabdex-remote
//!
//! A client of the pattern index service (`POST {base}/listPatterns`,
//! `/searchPatterns`, `/getPattern`) that pulls every record with its source
//! into memory, checks each answer, and writes them as a JSON-lines feed that
//! a `published` root indexes. The pull is all or nothing: any failure is an
//! error before a feed is written, so a partial pull never reaches a snapshot.
//!
//! Failures are classified for the caller: 401/403 (token), 404, 5xx and 429
//! (retried with backoff), timeouts and connection errors (retried), and
//! bodies that are not the JSON expected (an HTML error page, say), each
//! naming the URL and what came back.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use fabdex_model::registry::{GetRequest, ListRequest, ListResponse, PatternSummary, PublishedPattern, SearchRequest};
use rayon::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// How to reach the service.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Bearer token, sent as `Authorization: Bearer …`.
    pub token: Option<String>,
    /// Per-request timeout (connect and whole request).
    pub timeout: Duration,
    /// Attempts per request for retryable failures (timeouts, connection errors, 429, 5xx).
    pub attempts: u32,
    /// First backoff; doubled after each failed attempt.
    pub backoff: Duration,
    /// Records per `listPatterns` page.
    pub page_size: usize,
    /// `getPattern` calls in flight at once.
    pub parallel: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            token: None,
            timeout: Duration::from_secs(30),
            attempts: 3,
            backoff: Duration::from_millis(250),
            page_size: 200,
            parallel: 4,
        }
    }
}

/// A client of one index service.
pub struct Client {
    base: String,
    http: reqwest::blocking::Client,
    opts: ClientOptions,
}

/// Why one attempt failed, and whether another may succeed.
struct Failure {
    message: String,
    retry: bool,
}

impl Client {
    pub fn new(base_url: &str, opts: ClientOptions) -> Result<Client> {
        let base = base_url.trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            bail!("index service URL `{base_url}` must start with http:// or https://");
        }
        // One crypto provider for rustls, installed once per process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::blocking::Client::builder()
            .timeout(opts.timeout)
            .connect_timeout(opts.timeout)
            .user_agent(concat!("fabdex/", env!("CARGO_PKG_VERSION")))
            .build()
            .context("cannot build the HTTP client")?;
        Ok(Client { base, http, opts })
    }

    fn attempt<Req: Serialize, Resp: DeserializeOwned>(&self, url: &str, body: &Req) -> Result<Resp, Failure> {
        let mut request = self.http.post(url).json(body);
        if let Some(token) = &self.opts.token {
            request = request.bearer_auth(token);
        }
        let response = request.send().map_err(|e| Failure {
            message: if e.is_timeout() {
                format!("no answer within {} ms (timeout)", self.opts.timeout.as_millis())
            } else {
                format!("cannot connect: {e}")
            },
            retry: true,
        })?;
        let status = response.status();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let text = response.text().map_err(|e| Failure {
            message: if e.is_timeout() {
                format!("the body did not arrive within {} ms (timeout)", self.opts.timeout.as_millis())
            } else {
                format!("cannot read the body: {e}")
            },
            retry: true,
        })?;
        let excerpt = || {
            let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let short: String = flat.chars().take(120).collect();
            if flat.chars().count() > 120 { format!("{short}…") } else { short }
        };
        match status.as_u16() {
            200..=299 => {}
            401 | 403 => {
                return Err(Failure {
                    message: format!(
                        "HTTP {status}: the service refused the credentials (set FABDEX_INDEX_TOKEN to a valid bearer token)"
                    ),
                    retry: false,
                });
            }
            404 => return Err(Failure { message: format!("HTTP 404 not found: {}", excerpt()), retry: false }),
            429 | 500..=599 => return Err(Failure { message: format!("HTTP {status}: {}", excerpt()), retry: true }),
            _ => return Err(Failure { message: format!("HTTP {status}: {}", excerpt()), retry: false }),
        }
        serde_json::from_str(&text).map_err(|e| Failure {
            message: format!(
                "answered HTTP {status} with a body that is not the JSON expected ({e}; content-type `{content_type}`): {}",
                excerpt()
            ),
            retry: false,
        })
    }

    /// POST `body` to `{base}/{endpoint}`, retrying retryable failures with backoff.
    fn call<Req: Serialize, Resp: DeserializeOwned>(&self, endpoint: &str, body: &Req) -> Result<Resp> {
        let url = format!("{}/{endpoint}", self.base);
        let mut backoff = self.opts.backoff;
        let attempts = self.opts.attempts.max(1);
        for attempt in 1..=attempts {
            match self.attempt(&url, body) {
                Ok(v) => return Ok(v),
                Err(f) if f.retry && attempt < attempts => {
                    std::thread::sleep(backoff);
                    backoff *= 2;
                }
                Err(f) => {
                    let tries = if f.retry { format!(" (after {attempt} attempts)") } else { String::new() };
                    bail!("{url}: {}{tries}", f.message);
                }
            }
        }
        unreachable!("the loop returns on the last attempt")
    }

    /// Every record summary, following `nextCursor`.
    pub fn list_all(&self) -> Result<Vec<PatternSummary>> {
        let mut out = Vec::new();
        let mut cursor = None;
        loop {
            let page: ListPage =
                self.call("listPatterns", &ListRequest { cursor: cursor.clone(), limit: Some(self.opts.page_size) })?;
            let page = page.into_response();
            out.extend(page.patterns);
            match page.next_cursor {
                Some(next) if Some(&next) != cursor.as_ref() => cursor = Some(next),
                Some(next) => bail!("{}/listPatterns: the service repeated cursor `{next}`", self.base),
                None => return Ok(out),
            }
        }
    }

    pub fn search(&self, req: &SearchRequest) -> Result<Vec<PatternSummary>> {
        let hits: SearchPage = self.call("searchPatterns", req)?;
        Ok(hits.into_hits())
    }

    /// One record with its source; the answer must be the record asked for.
    pub fn get(&self, pattern_id: &str) -> Result<PublishedPattern> {
        let record: PublishedPattern = self
            .call("getPattern", &GetRequest { pattern_id: pattern_id.to_string(), include_source: true })
            .with_context(|| format!("getPattern `{pattern_id}`"))?;
        if record.pattern_id != pattern_id {
            bail!(
                "{}/getPattern: asked for `{pattern_id}`, the service answered with `{}`",
                self.base,
                record.pattern_id
            );
        }
        Ok(record)
    }

    /// Every record with its source, in list order.
    pub fn pull(&self) -> Result<Vec<PublishedPattern>> {
        let summaries = self.list_all()?;
        let mut seen = std::collections::HashSet::new();
        for s in &summaries {
            if !seen.insert(s.pattern_id.as_str()) {
                bail!("{}/listPatterns: pattern `{}` is listed twice", self.base, s.pattern_id);
            }
        }
        let pool = rayon::ThreadPoolBuilder::new().num_threads(self.opts.parallel.max(1)).build()?;
        pool.install(|| summaries.par_iter().map(|s| self.get(&s.pattern_id)).collect())
    }
}

/// `listPatterns` answers as `{patterns, nextCursor?}` or as a bare array.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum ListPage {
    Page(ListResponse),
    Bare(Vec<PatternSummary>),
}

impl ListPage {
    fn into_response(self) -> ListResponse {
        match self {
            ListPage::Page(p) => p,
            ListPage::Bare(patterns) => ListResponse { patterns, next_cursor: None },
        }
    }
}

/// `searchPatterns` answers as a bare array or `{results}`/`{patterns}`.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum SearchPage {
    Bare(Vec<PatternSummary>),
    Results { results: Vec<PatternSummary> },
    Patterns { patterns: Vec<PatternSummary> },
}

impl SearchPage {
    fn into_hits(self) -> Vec<PatternSummary> {
        match self {
            SearchPage::Bare(h) | SearchPage::Results { results: h } | SearchPage::Patterns { patterns: h } => h,
        }
    }
}

/// Write records as JSON lines: to a temporary file beside `path`, synced,
/// then renamed into place.
pub fn write_feed(path: &Path, records: &[PublishedPattern]) -> Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let result = (|| -> Result<()> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        for r in records {
            serde_json::to_writer(&mut file, r)?;
            file.write_all(b"\n")?;
        }
        file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write the pulled records to `{}`", path.display()))
}
