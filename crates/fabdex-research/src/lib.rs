//! # fabdex-research
//!
//! The research service: a host passes a task, the granted handles and
//! attached pattern references; a model behind an OpenAI-compatible Chat
//! Completions endpoint runs a read-only tool loop over the registry's query
//! tools within fixed budgets; the answer is an implementation kit admitted
//! by the host's rules (`fabdex-kit`), every claim citing a read the run
//! made. Each call is a new research run: every tool call and every model
//! turn is a ledger record, and the outcome (admitted kit, admission report,
//! usage) is written under the run.
//!
//! Reading order: [`research`] (the entry), `run.rs` (the loop), `chat.rs`
//! (the protocol), `budget.rs`, `prior.rs` (`--prior`), `prompt.rs` (what
//! the model is told).

pub mod budget;
pub mod chat;
pub mod cli;
pub mod grants;
pub mod prior;
mod prompt;
mod run;
pub mod tool;
pub mod toolset;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use fabdex_kit::{Kit, KitStatus, Problem};
use fabdex_ledger::{Policy, RunStore};
use fabdex_query::{Engine, QueryError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use budget::{Budgets, Spent};
pub use chat::{Client, Endpoint};
pub use grants::Grants;
pub use prior::PriorUse;

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
    fn validate(&self) -> Result<()> {
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

/// Run one research call in a new run; the outcome is also written under it.
///
/// Errors only for a request that cannot start (an empty task, a budget out
/// of range, an unknown `--prior`); everything that goes wrong once it runs
/// (endpoint down, budgets spent, an invalid kit) is an `incomplete` outcome.
pub fn research(svc: &Service<'_>, request: &Request) -> Result<Outcome> {
    request.validate()?;
    let mut request = request.clone();
    let carried = match &request.prior {
        None => None,
        Some(prior) => match prior::load(svc, prior, &request.grants.digest)? {
            Ok(c) => Some(c),
            Err(note) => {
                request.prior_note = Some(note);
                None
            }
        },
    };
    let info = svc.store.new_run(Some(svc.engine.snapshot_id()))?;
    let outcome = run::Loop::new(svc, &request, info.run.clone())?.run(carried)?;
    write_outcome(&svc.store, &outcome)?;
    Ok(outcome)
}

/// Where a run's outcome is.
pub fn outcome_path(store: &RunStore, run: &str) -> PathBuf {
    store.dir.join(run).join(OUTCOME_FILE)
}

fn write_outcome(store: &RunStore, outcome: &Outcome) -> Result<()> {
    let dir = store.dir.join(&outcome.run);
    for (name, bytes) in
        [(OUTCOME_FILE, serde_json::to_vec_pretty(outcome)?), (KIT_FILE, serde_json::to_vec_pretty(&outcome.kit)?)]
    {
        // Written beside and renamed: a reader sees the old file or the new one.
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, bytes).with_context(|| format!("cannot write `{}`", tmp.display()))?;
        std::fs::rename(&tmp, dir.join(name)).with_context(|| format!("cannot publish `{name}` of {}", outcome.run))?;
    }
    Ok(())
}
