//! `research` as a tool, and the one tool listing: the same call the CLI
//! makes, served over MCP and HTTP by `fabdex-serve`. It is not in
//! `fabdex-tools`' registry because it uses that registry, so the complete
//! list of tools is made here, once: [`listing`] is the registry's tools and
//! `research`, and [`call_listed`] calls any of them. `fabdex tools`, MCP,
//! HTTP and the research model's tool list (which leaves out `research`:
//! research cannot call research) all read it; no shell names a tool.

use fabdex_kit::Handle;
use fabdex_ledger::{Policy, RunStore};
use fabdex_query::Engine;
use fabdex_tools::{Descriptor, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::{Budgets, Client, Endpoint, Grants, Outcome, Request, Service};

pub const NAME: &str = "research";

/// `research` input.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResearchInput {
    /// The task, in a person's words (at most 2,000 chars).
    pub task: String,
    /// The granted handles: each a token with its description and the JSON Schema of what it holds.
    #[serde(default)]
    pub grants: Vec<Handle>,
    /// Patterns the host attaches (ids, unique prefixes or aliases; at most 16).
    #[serde(default)]
    pub pattern_refs: Vec<String>,
    /// An earlier research run whose kit to carry forward.
    #[serde(default)]
    pub prior: Option<String>,
    /// Budgets; each absent one takes its default.
    #[serde(default)]
    pub budgets: Option<BudgetsInput>,
}

/// Budgets of a `research` call (defaults 8 turns, 24 tool calls, 32,000
/// chars per read, 96,000 in all, 300 s; maxima 32, 128, 32,000, 400,000, 1,800).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetsInput {
    pub turns: Option<u32>,
    pub tool_calls: Option<u32>,
    pub read_chars: Option<u64>,
    pub total_chars: Option<u64>,
    pub seconds: Option<u64>,
}

impl BudgetsInput {
    pub fn budgets(&self) -> Budgets {
        let d = Budgets::DEFAULT;
        Budgets {
            turns: self.turns.unwrap_or(d.turns),
            tool_calls: self.tool_calls.unwrap_or(d.tool_calls),
            read_chars: self.read_chars.unwrap_or(d.read_chars),
            total_chars: self.total_chars.unwrap_or(d.total_chars),
            seconds: self.seconds.unwrap_or(d.seconds),
        }
    }
}

/// The tool's descriptor, in the registry's shape.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: NAME.into(),
        description: "Research a task: a model runs a bounded, read-only loop over the docs, skills and pattern index (the read-only tools of this registry, never research itself) and answers with an implementation kit admitted by the host's rules. Every call is a new research run whose id is in the result; every model turn and tool call is in its ledger.".into(),
        input_schema: serde_json::to_value(schemars::schema_for!(ResearchInput)).unwrap_or(Value::Null),
        output_schema: serde_json::to_value(schemars::schema_for!(Outcome)).unwrap_or(Value::Null),
        bounds: "budgets: default 8 model turns, 24 tool calls, 32000 chars per read, 96000 chars in all, 300 s; at most 32, 128, 32000, 400000, 1800 s. The call lasts at most its time budget.".into(),
        longest_secs: Some(Budgets::MAX.seconds + 30),
    }
}

/// Every tool, described once: the registry's query and handle tools, then
/// `research`.
pub fn listing() -> &'static [Descriptor] {
    static LISTING: std::sync::OnceLock<Vec<Descriptor>> = std::sync::OnceLock::new();
    LISTING.get_or_init(|| {
        let mut all = fabdex_tools::descriptors();
        all.push(descriptor());
        all
    })
}

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
