//! `fabdex serve`'s arguments and its start: the research tool's model
//! resolved, the scope's run, runs folder, policy and consumer applied, then
//! MCP on stdio or HTTP on an address (announced on stdout once bound).

use std::path::PathBuf;

use anyhow::Result;
use fabdex_ledger::cli::Scope;

use crate::ServeOptions;

/// Serve the tools over MCP (stdio) or HTTP.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Serve HTTP on ADDR (default 127.0.0.1:8080, loopback; port 0 picks a free port).
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:8080",
        conflicts_with = "mcp",
        required_unless_present = "mcp"
    )]
    pub http: Option<String>,
    /// Speak MCP on stdin/stdout.
    #[arg(long)]
    pub mcp: bool,
    /// The `research` tool's model: an OpenAI-compatible base URL (default: the config's [research]).
    #[arg(long, value_name = "URL")]
    pub research_base_url: Option<String>,
    /// The `research` tool's model name.
    #[arg(long, value_name = "NAME")]
    pub research_model: Option<String>,
    /// The environment variable holding the `research` tool's API key (default OPENAI_API_KEY).
    #[arg(long, value_name = "VAR")]
    pub research_api_key_env: Option<String>,
    /// The `research` tool plays this script on a loopback scripted model.
    #[arg(long, value_name = "FILE", conflicts_with = "research_base_url")]
    pub research_scripted: Option<PathBuf>,
    /// Largest request body accepted, in bytes.
    #[arg(long, default_value_t = 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Longest a request may run, in seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// Requests served at once.
    #[arg(long, default_value_t = 64)]
    pub max_concurrency: usize,
}

impl ServeArgs {
    /// Serve until stopped.
    pub fn run(&self, scope: &Scope) -> Result<()> {
        let (research, _scripted) = fabdex_research::cli::ModelChoice {
            base_url: self.research_base_url.clone(),
            model: self.research_model.clone(),
            api_key_env: self.research_api_key_env.clone(),
            scripted: self.research_scripted.clone(),
            config: None,
            context_tokens: None,
        }
        .resolve()?;
        let store = scope.store();
        let opts = ServeOptions {
            run: scope.run.clone(),
            runs: Some(store.dir.clone()),
            policy: scope.policy()?,
            consumer: scope.consumer.clone(),
            token: std::env::var("FABDEX_SERVE_TOKEN").ok().filter(|t| !t.is_empty()),
            max_body_bytes: self.max_body_bytes,
            timeout: std::time::Duration::from_secs(self.timeout.max(1)),
            max_concurrency: self.max_concurrency,
            embeddings: scope.embeddings.clone(),
            research,
        };
        if let Some(run) = &scope.run {
            store.ledger(run)?;
        }
        let index = scope.index_dir();
        match (&self.http, self.mcp) {
            (_, true) => crate::serve_mcp(&index, opts),
            (Some(http), false) => crate::serve_http(http, &index, opts, |addr| {
                use std::io::Write;
                println!("listening on http://{addr}");
                let _ = std::io::stdout().flush();
            }),
            (None, false) => anyhow::bail!("give --http ADDR or --mcp"),
        }
    }
}
