//! What a research call is: its request and its limits, the service it
//! runs on, the endpoint settings, and the outcome it writes.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use fabdex_kit::{Kit, KitStatus, Problem};
use fabdex_ledger::{Policy, RunStore};
use fabdex_query::{Engine, QueryError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::budget::{Budgets, Spent};
use crate::chat::{Client, Endpoint};
use crate::grants::Grants;

/// The outcome's file name under the run's folder.
pub const OUTCOME_FILE: &str = "research.json";
/// The admitted kit alone, beside the outcome.
pub const KIT_FILE: &str = "kit.json";
/// Most chars of a task.
pub const TASK_MAX_CHARS: usize = fabdex_kit::kit::Bounds::TASK;
/// Most attached pattern references.
pub const PATTERN_REFS_MAX: usize = 16;

/// The `[research]` table of `fabdex.toml`: the endpoint's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// e.g. `http://127.0.0.1:8080/v1` (llama.cpp), `http://127.0.0.1:11434/v1` (Ollama).
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// The environment variable holding the API key (default `OPENAI_API_KEY`).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Per HTTP attempt (default 120).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// The model's context window in tokens, for a server that does not
    /// state it (llama-cpp-python, Ollama): every request is fitted inside.
    #[serde(default)]
    pub context_tokens: Option<u32>,
}

impl Settings {
    /// The `[research]` table of a config file; absent table or file: defaults.
    pub fn from_table(table: Option<&toml::Table>, config: &Path) -> Result<Settings> {
        match table {
            None => Ok(Settings::default()),
            Some(t) => toml::Value::Table(t.clone())
                .try_into()
                .with_context(|| format!("config `{}`: the [research] table is not valid", config.display())),
        }
    }

    /// The endpoint: flags over the config; the key from the named variable.
    pub fn endpoint(&self, base_url: Option<&str>, model: Option<&str>, key_env: Option<&str>) -> Result<Endpoint> {
        let Some(base) = base_url.or(self.base_url.as_deref()) else {
            bail!(
                "no model endpoint: give --base-url URL (an OpenAI-compatible `/v1`), set `base_url` in the \
                 [research] table of fabdex.toml, or use --scripted FILE for the scripted model"
            );
        };
        let model = model.or(self.model.as_deref()).unwrap_or("gpt-4o-mini");
        let mut endpoint = Endpoint::new(base, model);
        let var = key_env.or(self.api_key_env.as_deref()).unwrap_or("OPENAI_API_KEY");
        endpoint.api_key = std::env::var(var).ok().filter(|k| !k.is_empty());
        if let Some(s) = self.timeout_secs {
            endpoint.timeout = Duration::from_secs(s.max(1));
        }
        endpoint.context_tokens = self.context_tokens;
        Ok(endpoint)
    }
}

/// What the host asks.
#[derive(Debug, Clone)]
pub struct Request {
    pub task: String,
    pub grants: Grants,
    pub pattern_refs: Vec<String>,
    pub prior: Option<String>,
    pub budgets: Budgets,
    /// Set by [`research`] when `--prior` was given but not carried.
    pub(crate) prior_note: Option<PriorUse>,
}

impl Request {
    pub fn new(task: impl Into<String>) -> Request {
        Request {
            task: task.into(),
            grants: Grants::none(),
            pattern_refs: vec![],
            prior: None,
            budgets: Budgets::DEFAULT,
            prior_note: None,
        }
    }

    /// A request that cannot start is an `invalid-argument` error naming what is wrong.
    pub(crate) fn validate(&self) -> Result<()> {
        let invalid = |m: String| -> anyhow::Error { QueryError::InvalidArgument(m).into() };
        let chars = self.task.chars().count();
        if self.task.trim().is_empty() {
            return Err(invalid("the task is empty: say what the author wants, in a person's words".into()));
        }
        if chars > TASK_MAX_CHARS {
            return Err(invalid(format!("the task is {chars} chars; at most {TASK_MAX_CHARS}")));
        }
        if self.pattern_refs.len() > PATTERN_REFS_MAX {
            return Err(invalid(format!("{} attached patterns; at most {PATTERN_REFS_MAX}", self.pattern_refs.len())));
        }
        if let Some(prior) = &self.prior {
            fabdex_ledger::store::validate_run_id(prior).map_err(|e| invalid(format!("--prior: {e}")))?;
        }
        self.budgets.validate().map_err(|e| invalid(e.to_string()))
    }
}

/// What the research runs on.
pub struct Service<'a> {
    pub engine: &'a Engine,
    pub store: RunStore,
    pub policy: Option<Policy>,
    pub client: Client,
    /// How the outcome names the model (`scripted: FILE` for the scripted one).
    pub model_label: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelInfo {
    pub base_url: String,
    pub model: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrantsInfo {
    pub count: usize,
    pub digest: String,
}

/// A research call's result, as written to `<runs>/<run>/research.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    pub run: String,
    /// The kit's status: `complete` only when admission found nothing wrong and nothing missing.
    pub status: KitStatus,
    /// `kit-submitted`, `turn-budget`, `time-budget`, `model-error` or `no-valid-kit`.
    pub stopped: String,
    /// The admitted kit (or, when no kit could be admitted, the host's incomplete kit saying why).
    pub kit: Kit,
    /// The final admission's problems.
    pub problems: Vec<Problem>,
    /// The problems of the first admission, which the repair turn was given (empty: no repair).
    pub repair_problems: Vec<Problem>,
    pub model: ModelInfo,
    pub budgets: Budgets,
    pub spent: Spent,
    pub grants: GrantsInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior: Option<PriorUse>,
    /// What the loop did that is worth knowing (caps, refusals, repairs).
    pub notes: Vec<String>,
}

/// What became of `--prior`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PriorUse {
    pub run: String,
    /// Whether the earlier kit was carried forward.
    pub carried: bool,
    /// Cited texts and pattern records carried (they read the same now).
    pub items_carried: usize,
    /// Those left behind: changed since, or gone from the snapshot.
    pub items_dropped: usize,
    pub note: String,
}
