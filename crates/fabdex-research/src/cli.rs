//! `fabdex research`: the command's logic (the binary only parses flags).
//! Resolves the endpoint (flags over the `[research]` table of the config,
//! the key from the environment), or starts the scripted model for
//! `--scripted FILE`, and runs one research call (the binary's `print.rs` shows
//! its outcome); and `fabdex tools`, the one listing in each shell's shape.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use fabdex_ledger::cli::Scope;
use fabdex_ledger::{Policy, RunStore};
use fabdex_query::{Engine, QueryError};

use crate::tool::Configured;
use crate::toolset::BudgetsInput;
use crate::{Client, Grants, Outcome, Request, Service, Settings};

/// `fabdex research`'s arguments (flattened into the binary's CLI).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ResearchArgs {
    /// The task, in a person's words.
    pub task: String,
    /// The granted handles (a handle inventory: `{"handles": [{token, description, schema}]}`).
    #[arg(long, value_name = "FILE")]
    pub grants: Option<PathBuf>,
    /// A pattern the host attaches (id, unique prefix or alias); repeatable.
    #[arg(long = "pattern-ref", value_name = "ID")]
    pub pattern_refs: Vec<String>,
    /// Carry the kit of an earlier research run forward.
    #[arg(long, value_name = "RUN")]
    pub prior: Option<String>,
    #[command(flatten)]
    pub model: ModelChoice,
    #[command(flatten)]
    pub budgets: BudgetsInput,
}

const NO_ENDPOINT: &str = "no model endpoint: give --base-url URL (an OpenAI-compatible `/v1`), set `base_url` in the \
     [research] table of fabdex.toml, or use --scripted FILE for the scripted model";

/// Which model a command uses: flags over the config's `[research]` table.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ModelChoice {
    /// An OpenAI-compatible base URL ending in its API version, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Model name (default: the config's, else gpt-4o-mini).
    #[arg(long)]
    pub model: Option<String>,
    /// The environment variable that holds the API key (default OPENAI_API_KEY).
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Play a recorded script on a loopback scripted model instead of calling an endpoint.
    #[arg(long, value_name = "FILE", conflicts_with = "base_url")]
    pub scripted: Option<PathBuf>,
    /// Config whose [research] table gives the endpoint defaults (default ./fabdex.toml).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The model's context window in tokens (default: the config's
    /// `context_tokens`, else what the server states, else what its first
    /// refusal says). Every request is fitted inside it.
    #[arg(long, value_name = "N")]
    pub context_tokens: Option<u32>,
}

impl ModelChoice {
    /// The endpoint, if one is named; for `scripted`, the running scripted
    /// model too, which must be kept alive while the endpoint is used.
    pub fn resolve(&self) -> Result<(Option<Configured>, ScriptedModel)> {
        if let Some(script) = &self.scripted {
            let (configured, server) = self.start_scripted(script)?;
            return Ok((Some(configured), server));
        }
        let settings = settings(self.config.as_deref())?;
        if self.base_url.is_none() && settings.base_url.is_none() {
            return Ok((None, ScriptedModel::default()));
        }
        let endpoint = settings
            .endpoint(self.base_url.as_deref(), self.model.as_deref(), self.api_key_env.as_deref())
            .map_err(|e| QueryError::InvalidArgument(format!("{e:#}")))?;
        let mut endpoint = endpoint;
        if let Some(tokens) = self.context_tokens {
            endpoint.context_tokens = Some(tokens);
        }
        let label = endpoint.model.clone();
        Ok((Some(Configured { endpoint, label }), ScriptedModel::default()))
    }

    #[cfg(feature = "scripted")]
    fn start_scripted(&self, script: &Path) -> Result<(Configured, ScriptedModel)> {
        let server = fabdex_scripted::ScriptedServer::start(fabdex_scripted::Script::load(script)?)?;
        let mut endpoint = crate::Endpoint::new(&server.base_url, self.model.as_deref().unwrap_or("scripted"));
        endpoint.attempts = 1;
        let label = format!("scripted: {} (no model endpoint; recorded turns)", script.display());
        Ok((Configured { endpoint, label }, ScriptedModel { _server: Some(server) }))
    }

    #[cfg(not(feature = "scripted"))]
    fn start_scripted(&self, script: &Path) -> Result<(Configured, ScriptedModel)> {
        Err(QueryError::InvalidArgument(format!(
            "--scripted `{}`: this build has no scripted model (build fabdex with its default feature `scripted`)",
            script.display()
        ))
        .into())
    }
}

/// The scripted model a [`ModelChoice`] started, if any: it answers while
/// this lives and stops when it is dropped.
#[derive(Default)]
pub struct ScriptedModel {
    #[cfg(feature = "scripted")]
    _server: Option<fabdex_scripted::ScriptedServer>,
}

/// The `[research]` table of a config file.
pub fn settings(config: Option<&Path>) -> Result<Settings> {
    let default = PathBuf::from("fabdex.toml");
    let path = match config {
        Some(p) => p.to_path_buf(),
        None if default.exists() => default,
        None => return Ok(Settings::default()),
    };
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read config `{}`", path.display()))?;
    let table: toml::Table =
        toml::from_str(&text).with_context(|| format!("config `{}` is not valid TOML", path.display()))?;
    let research = match table.get("research") {
        None => None,
        Some(toml::Value::Table(t)) => Some(t),
        Some(_) => anyhow::bail!("config `{}`: `research` must be a table", path.display()),
    };
    Settings::from_table(research, &path)
}

impl ResearchArgs {
    /// Run `fabdex research` in the scope's index, runs folder and policy.
    pub fn run(&self, scope: &Scope) -> Result<Outcome> {
        invoke(scope.engine()?, scope.store(), scope.policy()?, self)
    }
}

/// `fabdex tools`: the one tool listing in a shell's shape.
#[derive(Debug, Clone, clap::Args)]
pub struct ToolsArgs {
    /// `json` (the registry), `openai` (function calling), `mcp` (tools/list), `markdown` (docs/tools.md).
    #[arg(long, default_value = "json")]
    pub format: String,
}

/// The listing as the registry's descriptors, in a shell's JSON shape, or
/// as the Markdown of docs/tools.md.
#[derive(Debug)]
pub enum Listing {
    Registry(&'static [fabdex_tools::Descriptor]),
    Json(serde_json::Value),
    Markdown(String),
}

impl ToolsArgs {
    pub fn run(&self) -> Result<Listing> {
        let tools = crate::tool::listing();
        Ok(match self.format.as_str() {
            "json" => Listing::Registry(tools),
            "openai" => Listing::Json(fabdex_tools::openai(tools)),
            "mcp" => Listing::Json(fabdex_tools::mcp(tools)),
            "markdown" => Listing::Markdown(fabdex_tools::markdown(tools)),
            other => {
                return Err(QueryError::InvalidArgument(format!(
                    "--format `{other}`: expected json, openai, mcp or markdown"
                ))
                .into());
            }
        })
    }
}

/// Run `fabdex research`.
pub fn invoke(engine: &Engine, store: RunStore, policy: Option<Policy>, args: &ResearchArgs) -> Result<Outcome> {
    let grants = match &args.grants {
        Some(path) => Grants::load(path).map_err(|e| QueryError::InvalidArgument(format!("{e:#}")))?,
        None => Grants::none(),
    };
    let mut request = Request::new(args.task.clone());
    request.grants = grants;
    request.pattern_refs = args.pattern_refs.clone();
    request.prior = args.prior.clone();
    request.budgets = args.budgets.budgets();
    // Kept alive for the call: the scripted model stops when dropped.
    let (configured, _scripted) = args.model.resolve()?;
    let Some(Configured { endpoint, label }) = configured else {
        return Err(QueryError::InvalidArgument(NO_ENDPOINT.into()).into());
    };
    let svc = Service { engine, store, policy, client: Client::new(endpoint)?, model_label: label };
    crate::research(&svc, &request)
}
