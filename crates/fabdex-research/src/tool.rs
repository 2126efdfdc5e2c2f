//! `research` as a tool, and the one tool listing: the same call the CLI
//! makes, served over MCP and HTTP by `fabdex-serve`. It is not in
//! `fabdex-tools`' registry because it uses that registry, so the complete
//! list of tools is made in this crate, once: [`listing`] (in `toolset.rs`)
//! is the registry's tools and `research`, and [`call_listed`] calls any of
//! them. `fabdex tools`, MCP,
//! HTTP and the research model's tool list (which leaves out `research`:
//! research cannot call research) all read it; no shell names a tool.

use fabdex_ledger::{Policy, RunStore};
use fabdex_query::Engine;
use fabdex_tools::ToolError;
use serde_json::Value;

pub use crate::toolset::{BudgetsInput, NAME, ResearchInput, descriptor, listing};
use crate::{Client, Endpoint, Grants, Request, Service};

/// What a shell calls a listed tool with.
pub struct Host<'a> {
    pub engine: &'a Engine,
    pub runs: Option<RunStore>,
    pub policy: Option<Policy>,
    /// Who receives the text, as the policy names consumers.
    pub consumer: String,
    /// The run a call is recorded in unless it names its own (`research`
    /// makes a run of its own).
    pub run: Option<String>,
    /// The model endpoint `research` uses; without one it says so.
    pub research: Option<&'a Configured>,
}

/// Call any tool of [`listing`] by name: `research` runs a research call;
/// every other tool runs through the registry in a session under the
/// call's run (or the host's).
pub fn call_listed(host: Host<'_>, name: &str, mut input: Value) -> Result<Value, ToolError> {
    let run = fabdex_tools::take_run(&mut input)?.or(host.run);
    if name == NAME {
        return call(host.engine, host.runs, host.policy, host.research, input);
    }
    let mut session = fabdex_ledger::Session::new(host.engine);
    session.consumer = host.consumer;
    session.policy = host.policy;
    if let Some(run) = run {
        let store =
            host.runs.as_ref().ok_or_else(|| ToolError::new("invalid-argument", "this server has no runs folder"))?;
        session.ledger = Some(store.ledger(&run).map_err(|e| ToolError::new("invalid-argument", format!("{e:#}")))?);
    }
    let ctx = fabdex_tools::Context { session, runs: host.runs, grants: None };
    fabdex_tools::call(&ctx, name, input)
}

/// A research endpoint a server was started with.
#[derive(Debug, Clone)]
pub struct Configured {
    pub endpoint: Endpoint,
    pub label: String,
}

/// Run one `research` tool call.
pub fn call(
    engine: &Engine,
    store: Option<RunStore>,
    policy: Option<Policy>,
    configured: Option<&Configured>,
    input: Value,
) -> Result<Value, ToolError> {
    let input: ResearchInput = serde_json::from_value(input)
        .map_err(|e| ToolError::new("invalid-argument", format!("research: invalid input: {e}")))?;
    let Some(configured) = configured else {
        return Err(ToolError::new(
            "invalid-argument",
            "research: this server has no model endpoint (start it with --research-base-url URL, or set [research] base_url in fabdex.toml)",
        ));
    };
    let store = store.ok_or_else(|| ToolError::new("invalid-argument", "research: this server has no runs folder"))?;
    let mut request = Request::new(input.task);
    request.grants = Grants::new(input.grants)
        .map_err(|e| ToolError::new("invalid-argument", format!("research: grants: {e:#}")))?;
    request.pattern_refs = input.pattern_refs;
    request.prior = input.prior;
    request.budgets = input.budgets.unwrap_or_default().budgets();
    let client =
        Client::new(configured.endpoint.clone()).map_err(|e| ToolError::new("invalid-argument", format!("{e:#}")))?;
    let svc = Service { engine, store, policy, client, model_label: configured.label.clone() };
    let outcome = crate::research(&svc, &request).map_err(|e| match e.downcast_ref::<fabdex_query::QueryError>() {
        Some(q) => ToolError::new(q.kind(), q.to_string()),
        None => ToolError::new("internal", format!("{e:#}")),
    })?;
    serde_json::to_value(outcome).map_err(|e| ToolError::new("internal", format!("cannot encode the outcome: {e}")))
}
