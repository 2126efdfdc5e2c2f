//! What every served call goes through, over HTTP and MCP alike: the
//! server's options, the tools it answers, and the shared state that opens
//! the published snapshot and calls a tool on it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use fabdex_query::{Engine, QueryError};
use fabdex_tools::ToolError;
use tokio::sync::Semaphore;

/// Bounds, auth, and the run and policy every call goes through.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Record every call in this run unless the call names its own.
    pub run: Option<String>,
    /// Where runs live (needed for `run`).
    pub runs: Option<PathBuf>,
    /// The release policy applied to every call.
    pub policy: Option<fabdex_ledger::Policy>,
    /// Who receives the text, as the policy names consumers.
    pub consumer: String,
    /// Require `Authorization: Bearer <token>` on every endpoint but `/health`.
    pub token: Option<String>,
    /// Largest request body accepted (413 above it).
    pub max_body_bytes: usize,
    /// Longest a request may run (503 after it).
    pub timeout: Duration,
    /// Requests served at once; the others wait for a slot.
    pub max_concurrency: usize,
    /// The embedding model folder, instead of the one the index recorded.
    pub embeddings: Option<PathBuf>,
    /// The model endpoint the `research` tool uses; without one it says so.
    pub research: Option<fabdex_research::tool::Configured>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            run: None,
            runs: None,
            policy: None,
            consumer: "research".into(),
            token: None,
            max_body_bytes: 1024 * 1024,
            timeout: Duration::from_secs(30),
            max_concurrency: 64,
            embeddings: None,
            research: None,
        }
    }
}

/// Every tool this server answers: the one listing's.
pub fn descriptors() -> Vec<fabdex_tools::Descriptor> {
    fabdex_research::tool::listing().to_vec()
}

fn open_engine(index_dir: &Path, opts: &ServeOptions) -> Result<Engine, QueryError> {
    let mut engine = Engine::open_index(index_dir)?;
    if let Some(dir) = &opts.embeddings {
        engine.set_embedding_model(dir);
    }
    Ok(engine)
}

pub(crate) struct AppState {
    pub(crate) index_dir: PathBuf,
    pub(crate) engine: RwLock<Arc<Engine>>,
    pub(crate) opts: ServeOptions,
    pub(crate) slots: Semaphore,
}

impl AppState {
    /// The engine of the published snapshot, reopened when `CURRENT` moved.
    pub(crate) fn engine(&self) -> Result<Arc<Engine>, QueryError> {
        let current = self.engine.read().unwrap_or_else(|p| p.into_inner()).clone();
        let published = std::fs::read_to_string(self.index_dir.join("CURRENT")).unwrap_or_default();
        let published = published.trim();
        if published.is_empty() || published == current.snapshot_id() {
            return Ok(current);
        }
        let fresh = Arc::new(open_engine(&self.index_dir, &self.opts)?);
        *self.engine.write().unwrap_or_else(|p| p.into_inner()) = fresh.clone();
        Ok(fresh)
    }
}

impl AppState {
    pub(crate) fn open(index_dir: &Path, opts: ServeOptions) -> anyhow::Result<AppState> {
        let engine = open_engine(index_dir, &opts)?;
        Ok(AppState {
            index_dir: index_dir.to_path_buf(),
            engine: RwLock::new(Arc::new(engine)),
            slots: Semaphore::new(opts.max_concurrency.max(1)),
            opts,
        })
    }

    /// Call a tool on the current snapshot, under the call's run (or the server's).
    pub(crate) fn call_tool(&self, name: &str, input: serde_json::Value) -> Result<serde_json::Value, ToolError> {
        let engine = self.engine().map_err(|e| ToolError::new(e.kind(), e.to_string()))?;
        let host = fabdex_research::tool::Host {
            engine: &engine,
            runs: self.opts.runs.clone().map(fabdex_ledger::RunStore::new),
            policy: self.opts.policy.clone(),
            consumer: self.opts.consumer.clone(),
            run: self.opts.run.clone(),
            research: self.opts.research.as_ref(),
        };
        fabdex_research::tool::call_listed(host, name, input)
    }
}

/// How long a call may run: the server's timeout, or longer where the
/// tool's descriptor says it takes longer (research, its time budget).
pub(crate) fn timeout_for(opts: &ServeOptions, tool: &str) -> Duration {
    let listed = fabdex_research::tool::listing().iter().find(|d| d.name == tool);
    match listed.and_then(|d| d.longest_secs) {
        Some(secs) => opts.timeout.max(Duration::from_secs(secs)),
        None => opts.timeout,
    }
}
