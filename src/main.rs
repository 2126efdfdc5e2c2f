//! `fabdex`: the command-line shell over the indexer (`fabdex-index`) and the
//! query surface (`fabdex-query`). It parses arguments, calls one function,
//! and prints the result as text or, with `--json`, as JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use fabdex_index::IndexReport;
use fabdex_model::Limits;
use fabdex_query::{Engine, FieldSpec, PatternQuery, QueryError, SearchDocs};
use serde::Serialize;

#[derive(Parser)]
#[command(name = "fabdex", version, about = "Index Common Fabric docs and answer bounded, addressable queries")]
struct Cli {
    /// Index directory (default: $FABDEX_INDEX, else `.fabdex`). `fabdex index` writes to
    /// --out, else this, else the config's `index.out`, else `.fabdex`.
    #[arg(long, global = true, env = "FABDEX_INDEX")]
    index: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// Record every call in this research run's ledger (see `fabdex run new`).
    #[arg(long, global = true, env = "FABDEX_RUN")]
    run: Option<String>,
    /// Release policy (TOML): which origins' text may go to which consumer.
    #[arg(long, global = true, env = "FABDEX_POLICY")]
    policy: Option<PathBuf>,
    /// Who receives the text, as the policy names consumers.
    #[arg(long, global = true, env = "FABDEX_CONSUMER", default_value = "research")]
    consumer: String,
    /// Folder of research runs (default: `<index>/runs`).
    #[arg(long, global = true, env = "FABDEX_RUNS")]
    runs: Option<PathBuf>,
    /// A local sentence-embedding model folder (sentence-transformers layout;
    /// never downloaded). `fabdex index` encodes every docs section with it;
    /// queries on such an index load it from here instead of the folder the
    /// index recorded.
    #[arg(long, global = true, env = "FABDEX_EMBEDDINGS", value_name = "DIR")]
    embeddings: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

/// The run, policy and consumer every query call goes through.
struct Scope {
    index: PathBuf,
    run: Option<String>,
    policy: Option<PathBuf>,
    consumer: String,
    runs: PathBuf,
    embeddings: Option<PathBuf>,
}

impl Scope {
    /// A command's RUN argument, else the global --run / FABDEX_RUN.
    fn run_or(&self, given: Option<String>) -> Result<String> {
        given
            .or_else(|| self.run.clone())
            .ok_or_else(|| QueryError::InvalidArgument("which run? give RUN, --run RUN or FABDEX_RUN".into()).into())
    }

    /// The engine of the index's published snapshot.
    /// The published snapshot's engine, for the rest of this process: it is
    /// never dropped, since freeing its tables at exit took a tenth of a
    /// short command's time, and the process is about to end anyway.
    fn engine(&self) -> Result<&'static Engine> {
        let mut engine = Engine::open_index(&self.index)?;
        if let Some(dir) = &self.embeddings {
            engine.set_embedding_model(dir);
        }
        Ok(Box::leak(Box::new(engine)))
    }

    fn store(&self) -> fabdex_ledger::RunStore {
        fabdex_ledger::RunStore::new(self.runs.clone())
    }

    fn session<'a>(&self, engine: &'a Engine) -> Result<fabdex_ledger::Session<'a>> {
        let mut session = fabdex_ledger::Session::new(engine);
        session.consumer = self.consumer.clone();
        if let Some(run) = &self.run {
            session.ledger = Some(self.store().ledger(run)?);
        }
        if let Some(p) = &self.policy {
            session.policy = Some(fabdex_ledger::Policy::load(p)?);
        }
        Ok(session)
    }
}

#[derive(Subcommand)]
enum Command {
    /// Research a task: a model runs a bounded, read-only tool loop over the
    /// index and answers with an admitted implementation kit (see docs/research.md).
    Research(fabdex_research::cli::ResearchArgs),
    /// Index roots (or the roots of a config) into a new snapshot.
    Index(fabdex_index::cli::IndexArgs),
    /// Check every table, search file and blob of the published snapshot
    /// against its manifest (queries check only what they use, on first use).
    Verify,
    /// The local model registry: sentence-embedding model folders that
    /// `fabdex index` uses by default (see docs/ranking.md).
    Models {
        #[command(subcommand)]
        what: ModelsWhat,
    },
    /// Serve the tools over MCP (stdio) or HTTP (tools, health, and the index service's endpoints).
    Serve {
        /// Serve HTTP on ADDR (default 127.0.0.1:8080, loopback; port 0 picks a free port).
        #[arg(
            long,
            value_name = "ADDR",
            num_args = 0..=1,
            default_missing_value = "127.0.0.1:8080",
            conflicts_with = "mcp",
            required_unless_present = "mcp"
        )]
        http: Option<String>,
        /// Speak MCP on stdin/stdout.
        #[arg(long)]
        mcp: bool,
        /// The `research` tool's model: an OpenAI-compatible base URL (default: the config's [research]).
        #[arg(long, value_name = "URL")]
        research_base_url: Option<String>,
        /// The `research` tool's model name.
        #[arg(long, value_name = "NAME")]
        research_model: Option<String>,
        /// The environment variable holding the `research` tool's API key (default OPENAI_API_KEY).
        #[arg(long, value_name = "VAR")]
        research_api_key_env: Option<String>,
        /// The `research` tool plays this script on a loopback scripted model.
        #[arg(long, value_name = "FILE", conflicts_with = "research_base_url")]
        research_scripted: Option<PathBuf>,
        /// Largest request body accepted, in bytes.
        #[arg(long, default_value_t = 1024 * 1024)]
        max_body_bytes: usize,
        /// Longest a request may run, in seconds.
        #[arg(long, default_value_t = 30)]
        timeout: u64,
        /// Requests served at once.
        #[arg(long, default_value_t = 64)]
        max_concurrency: usize,
    },
    /// Search the index.
    Search {
        #[command(subcommand)]
        what: SearchWhat,
    },
    /// Read the text at an address (`doc:` or `pattern:`), one bounded window at a time.
    #[command(visible_alias = "read")]
    Open {
        address: String,
        /// Char offset to start at (overrides an `@offset` in the address).
        #[arg(long)]
        offset: Option<u64>,
        /// Most chars to return (default 8000, at most 32000).
        #[arg(long)]
        max_chars: Option<u64>,
        /// Source reads: most chars of one line before it is cut (default 1000).
        #[arg(long)]
        max_line_chars: Option<u64>,
    },
    /// The files of a pattern program, with sizes, digests and read addresses.
    Files {
        /// Pattern id, unique id prefix (6+ chars) or alias.
        id: String,
    },
    /// What a pattern depends on (declared and `cf:pattern:` imports), as a tree.
    Deps {
        id: String,
        /// Levels to expand (default 3, at most 10).
        #[arg(long)]
        depth: Option<usize>,
    },
    /// List the sections of a file, or of every file under a path prefix.
    Outline { path_or_prefix: String },
    /// Parent, children, siblings, outgoing links and backlinks of a section.
    Related { address: String },
    /// A pattern program: id, aliases, files, exports, imports, both schemas, dependencies, diagnostics.
    Inspect {
        /// Pattern id (or a unique prefix of at least 6 chars) or alias (`<root>/<entry path>`).
        id: String,
    },
    /// Export indexed data as JSON lines.
    Export {
        #[command(subcommand)]
        what: ExportWhat,
    },
    /// A pattern's argument and result as TypeScript-like types, for authors.
    Contract { id: String },
    /// Print the tool descriptors (name, description, input and output schema, bounds).
    Tools {
        /// `json` (the registry), `openai` (function calling), `mcp` (tools/list), `markdown` (docs/tools.md).
        #[arg(long, default_value = "json")]
        format: String,
    },
    /// The implementation kit: its JSON Schema, and admission of a proposed kit.
    Kit {
        #[command(subcommand)]
        what: KitWhat,
    },
    /// Research runs.
    Run {
        #[command(subcommand)]
        what: RunWhat,
    },
    /// What a research run read: records, citations, verification, exposure.
    Ledger {
        #[command(subcommand)]
        what: LedgerWhat,
    },
    /// Write the provenance sidecar of an authored pattern: the run, what it
    /// consulted (with digests), the pattern's own `cf:pattern:` imports, and
    /// the run's exposure set.
    Provenance {
        /// The run (default: --run / FABDEX_RUN).
        #[arg(value_name = "RUN")]
        run_id: Option<String>,
        /// The authored pattern (TS/TSX).
        #[arg(long)]
        pattern: PathBuf,
        /// Where to write the sidecar (default: `<pattern>.provenance.json`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Measure retrieval quality against judged questions.
    Eval {
        #[command(subcommand)]
        what: EvalWhat,
    },
}

#[derive(Subcommand)]
enum ModelsWhat {
    /// Register a sentence-transformers model folder: checked, copied under
    /// the registry ($FABDEX_MODELS, else ~/.local/share/fabdex/models) and
    /// made the default.
    Add { dir: PathBuf },
    /// The registered models, the default first.
    List,
    /// Unregister a model (by name or digest prefix) and delete its copy.
    Remove { model: String },
}

#[derive(Subcommand)]
enum KitWhat {
    /// Print the kit's JSON Schema.
    Schema,
    /// Admit a proposed kit against a run's ledger, the index and the granted
    /// handles; print the admitted kit and the problems. Exits 1 unless complete.
    Admit {
        /// The proposed kit (JSON).
        kit: PathBuf,
        /// Handle inventory: granted tokens with descriptions and schemas (JSON).
        #[arg(long)]
        handles: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum RunWhat {
    /// Make a new research run and print its id.
    New,
    /// Print the JSON Schema of a run artifact: spec, evidence, eval or meta.
    Schema { name: String },
    /// Validate one artifact of a deep-research run folder.
    Validate {
        /// spec, evidence, draft, eval, feedback or meta.
        kind: String,
        path: PathBuf,
        /// The run's spec.json (evidence, draft, eval).
        #[arg(long)]
        spec: Option<PathBuf>,
        /// Round 2+ evidence: the canonical prior evidence it must keep.
        #[arg(long)]
        prior: Option<PathBuf>,
        /// The context directory of canonical evidence (draft, eval).
        #[arg(long)]
        evidence_dir: Option<PathBuf>,
        /// The draft an eval judges (eval).
        #[arg(long)]
        draft: Option<PathBuf>,
        /// The eval a feedback file pairs with (feedback).
        #[arg(long)]
        eval: Option<PathBuf>,
        /// Evidence: fabdex-address sources must be citations of this fabdex run.
        #[arg(long = "ledger", value_name = "RUN")]
        ledger_run: Option<String>,
    },
    /// Validate a whole run folder: meta.json against itself and every artifact.
    ValidateRun { root: PathBuf },
    /// The next action for a run folder, from the files on disk (changes nothing
    /// unless --apply, which performs the state-only transitions and re-validates).
    Plan {
        root: PathBuf,
        #[arg(long)]
        apply: bool,
    },
}

#[derive(Subcommand)]
enum LedgerWhat {
    /// Every record of a run (and any line that is not one).
    Show {
        /// The run (default: --run / FABDEX_RUN).
        #[arg(value_name = "RUN")]
        run_id: Option<String>,
    },
    /// Reopen one cited text from the snapshot and check its digest.
    Cite {
        citation: String,
        /// Look in this run only (default: every run).
        #[arg(long = "in")]
        in_run: Option<String>,
    },
    /// Check every read of a run against the snapshot: identical, changed since, or gone.
    Verify {
        #[arg(value_name = "RUN")]
        run_id: Option<String>,
    },
    /// The docs and patterns a run read, apart from any pattern's dependencies.
    Consulted {
        #[arg(value_name = "RUN")]
        run_id: Option<String>,
    },
    /// The origins a run has read, with counts.
    Exposure {
        #[arg(value_name = "RUN")]
        run_id: Option<String>,
    },
}

#[derive(Subcommand)]
enum ExportWhat {
    /// One JSON line per pattern program (the fields of `inspect`).
    Patterns,
    /// One JSON line per program in the index service's `Pattern` shape, with
    /// its program (a feed another fabdex can index as a `published` root).
    Records,
}

#[derive(Subcommand)]
enum EvalWhat {
    /// Docs search: recall@5, recall@10, MRR@10, nDCG@10, and each question's best rank.
    Docs {
        /// JSON file: [{"q": "...", "expect": [{"root"?, "path", "anchor"}]}].
        #[arg(long)]
        qrels: PathBuf,
        /// The k of recall@k (besides 5 and 10).
        #[arg(long, default_value_t = 10)]
        k: usize,
        /// Search historical documents too (demoted), as `search docs --include-history`.
        #[arg(long)]
        include_history: bool,
        /// Retrieval to measure: `hybrid` or `bm25` (as `search docs --mode`).
        #[arg(long, value_parser = ["hybrid", "bm25"], default_value = "hybrid")]
        mode: String,
    },
    /// Pattern search: success@1, success@5 and MRR of task → expected pattern.
    Patterns {
        /// JSON file: [{"task": "...", "expect": ["<alias, entry or patternId>", ...]}].
        #[arg(long)]
        tasks: PathBuf,
    },
}

#[derive(Subcommand)]
enum SearchWhat {
    /// Search pattern programs by text, tags and contract, with a fit verdict per hit.
    Patterns {
        /// Words to match against names, descriptions, tags and contract fields.
        text: Option<String>,
        /// Only patterns with this hashtag (repeatable; `#` optional).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// An argument the pattern should take: NAME or NAME:TYPE (repeatable).
        #[arg(long)]
        accepts: Vec<String>,
        /// A result field the pattern should return: NAME or NAME:TYPE (repeatable).
        #[arg(long)]
        returns: Vec<String>,
        /// Only `part` or `app` records.
        #[arg(long)]
        kind: Option<String>,
        /// Only records at least this good: penalized, unproven, proven.
        #[arg(long)]
        min_quality: Option<String>,
        /// Only patterns that depend on this pattern id or alias.
        #[arg(long)]
        depends_on: Option<String>,
        /// Only programs of this tier (exemplar, demo, fixture, legacy, … or `none`); a tier asked for is not ranked down.
        #[arg(long)]
        tier: Option<String>,
        /// A handle you can pass in: TOKEN:TYPE (repeatable); fit says which required inputs it binds.
        #[arg(long)]
        have: Vec<String>,
        /// Hits to return (default 10, at most 50).
        #[arg(long)]
        limit: Option<usize>,
        /// Rank without the index's sentence embeddings of programs (loads no model).
        #[arg(long)]
        no_embeddings: bool,
    },
    /// Search documentation and skills.
    Docs {
        query: String,
        /// Hits to return (default 10, at most 50).
        #[arg(long)]
        limit: Option<usize>,
        /// Only files whose path starts with this (`docs/common`, `labs/docs`).
        #[arg(long)]
        path_prefix: Option<String>,
        /// Include historical documents (ranked below live ones).
        #[arg(long)]
        include_history: bool,
        /// Retrieval: `hybrid` (BM25 fused with the corpus-learned semantic model) or `bm25`.
        #[arg(long, value_parser = ["hybrid", "bm25"], default_value = "hybrid")]
        mode: String,
    },
}

fn retrieval_mode(name: &str) -> fabdex_query::RetrievalMode {
    match name {
        "bm25" => fabdex_query::RetrievalMode::Bm25,
        _ => fabdex_query::RetrievalMode::Hybrid,
    }
}

/// `--embedding-precision`: the precisions `fabdex_embed` names, listed in
/// `--help` and in the error for any other value.
fn main() -> ExitCode {
    // Die quietly on a closed pipe (`fabdex … | head`), as Unix tools do.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let (kind, code) = match err.downcast_ref::<QueryError>() {
                Some(q @ QueryError::InvalidArgument(_)) => (q.kind(), 2),
                Some(q @ QueryError::NotFound(_)) => (q.kind(), 3),
                Some(q @ QueryError::NoSnapshot(_)) => (q.kind(), 4),
                Some(q @ QueryError::Corrupt(_)) => (q.kind(), 5),
                Some(q @ QueryError::Denied(_)) => (q.kind(), 6),
                None => ("error", 1),
            };
            let message = format!("{err:#}");
            if json && err.downcast_ref::<Reported>().is_none() {
                println!("{}", serde_json::json!({"error": {"kind": kind, "message": message}}));
            }
            eprintln!("fabdex: {message}");
            ExitCode::from(code)
        }
    }
}

/// A failure whose details were already printed (as text or JSON): only the
/// exit status and a one-line stderr message remain.
#[derive(Debug)]
struct Reported(String);

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Reported {}

/// The serde (JSON) name of a unit enum value, for text output.
fn label<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn print_json<T: Serialize>(value: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

fn index_dir(cli_index: Option<PathBuf>) -> PathBuf {
    cli_index.unwrap_or_else(|| PathBuf::from(".fabdex"))
}

fn run(cli: Cli) -> Result<()> {
    let index = index_dir(cli.index.clone());
    let scope = Scope {
        runs: cli.runs.clone().unwrap_or_else(|| fabdex_ledger::store::default_runs_dir(&index)),
        index,
        run: cli.run.clone(),
        policy: cli.policy.clone(),
        consumer: cli.consumer.clone(),
        embeddings: cli.embeddings.clone(),
    };
    match cli.command {
        Command::Models { what } => run_models(what, cli.json),
        Command::Verify => {
            let (id, verified) = fabdex_index::verify_published(&scope.index).map_err(QueryError::from_open)?;
            if cli.json {
                print_json(&serde_json::json!({"snapshot": id, "verified": verified}))
            } else {
                println!(
                    "snapshot {id}: intact ({} tables, {} search files, {} blobs checked against the manifest)",
                    verified.tables, verified.search_files, verified.blobs
                );
                Ok(())
            }
        }
        Command::Index(args) => {
            let report = fabdex_index::cli::index(&args, cli.index, scope.embeddings.as_deref(), cli.json)?;
            if cli.json { print_json(&report) } else { print_report(&report, args.verbose) }
        }
        Command::Serve {
            http,
            mcp,
            max_body_bytes,
            timeout,
            max_concurrency,
            research_base_url,
            research_model,
            research_api_key_env,
            research_scripted,
        } => {
            let (research, _scripted) = fabdex_research::cli::ModelChoice {
                base_url: research_base_url,
                model: research_model,
                api_key_env: research_api_key_env,
                scripted: research_scripted,
                config: None,
                context_tokens: None,
            }
            .resolve()?;
            let opts = fabdex_serve::ServeOptions {
                run: scope.run.clone(),
                runs: Some(scope.runs.clone()),
                policy: scope.policy.as_deref().map(fabdex_ledger::Policy::load).transpose()?,
                consumer: scope.consumer.clone(),
                token: std::env::var("FABDEX_SERVE_TOKEN").ok().filter(|t| !t.is_empty()),
                max_body_bytes,
                timeout: std::time::Duration::from_secs(timeout.max(1)),
                max_concurrency,
                embeddings: scope.embeddings.clone(),
                research,
            };
            if let Some(run) = &scope.run {
                scope.store().ledger(run)?;
            }
            match (http, mcp) {
                (_, true) => fabdex_serve::serve_mcp(&scope.index, opts),
                (Some(http), false) => fabdex_serve::serve_http(&http, &scope.index, opts, |addr| {
                    use std::io::Write;
                    println!("listening on http://{addr}");
                    let _ = std::io::stdout().flush();
                }),
                (None, false) => anyhow::bail!("give --http ADDR or --mcp"),
            }
        }
        Command::Tools { format } => {
            match format.as_str() {
                "json" => print_json(&fabdex_research::tool::listing())?,
                "openai" => print_json(&fabdex_tools::openai(fabdex_research::tool::listing()))?,
                "mcp" => print_json(&fabdex_tools::mcp(fabdex_research::tool::listing()))?,
                "markdown" => print!("{}", fabdex_tools::markdown(fabdex_research::tool::listing())),
                other => {
                    return Err(QueryError::InvalidArgument(format!(
                        "--format `{other}`: expected json, openai, mcp or markdown"
                    ))
                    .into());
                }
            }
            Ok(())
        }
        Command::Search { what: SearchWhat::Docs { query, limit, path_prefix, include_history, mode } } => {
            let engine = scope.engine()?;
            let request = SearchDocs { query, limit, path_prefix, include_history, mode: Some(retrieval_mode(&mode)) };
            let result = scope.session(engine)?.search_docs(&request)?;
            if cli.json {
                return print_json(&result);
            }
            println!(
                "{} of {} matching sections for {:?} (terms: {}; ranked by {})",
                result.hits.len(),
                result.matched,
                result.query,
                result.terms.join(" "),
                result.mode
            );
            if !result.fused_clauses.is_empty() {
                println!("(each clause ranked too, and fused by reciprocal rank: {:?})", result.fused_clauses);
            }
            for (i, hit) in result.hits.iter().enumerate() {
                println!(
                    "\n{:>2}. {}  [{:.2}{}]",
                    i + 1,
                    hit.address,
                    hit.score,
                    if hit.historical { ", historical" } else { "" }
                );
                println!("    {}", hit.heading_path.join(" › "));
                println!("    {}", hit.snippet);
                let fields: Vec<String> = hit.why.fields.iter().map(|(f, t)| format!("{f}: {}", t.join(" "))).collect();
                println!("    why: {}", fields.join("; "));
            }
            Ok(())
        }
        Command::Open { address, offset, max_chars, max_line_chars } => {
            let engine = scope.engine()?;
            let env = scope.session(engine)?.read(&address, offset, max_chars, max_line_chars)?;
            if cli.json {
                return print_json(&env);
            }
            print!("{}", env.text);
            if !env.text.ends_with('\n') {
                println!();
            }
            eprintln!(
                "── {} · chars {}–{} of {} · {} · origin {}{}{}",
                env.address,
                env.offset,
                env.end,
                env.total,
                env.digest,
                env.origin,
                match (env.lines, env.clipped_lines.is_empty()) {
                    (Some([a, b]), true) => format!(" · lines {a}–{b}"),
                    (Some([a, b]), false) => format!(" · lines {a}–{b}, {} cut", env.clipped_lines.len()),
                    _ => String::new(),
                },
                match &env.next {
                    Some(next) => format!("\n── truncated; continue with: fabdex open '{next}'"),
                    None => String::new(),
                }
            );
            Ok(())
        }
        Command::Outline { path_or_prefix } => {
            let engine = scope.engine()?;
            let outline = scope.session(engine)?.outline(&path_or_prefix)?;
            if cli.json {
                return print_json(&outline);
            }
            for row in &outline.sections {
                let indent = "  ".repeat(row.level.saturating_sub(1) as usize);
                let heading = if row.level == 0 { "(preamble)" } else { &row.heading };
                let parts = if row.parts > 0 { format!(", {} parts", row.parts) } else { String::new() };
                println!("{indent}{heading}  — {} (line {}, {} chars{parts})", row.address, row.line, row.chars);
            }
            if outline.truncated {
                println!(
                    "… {} more sections omitted (limit {}); narrow the prefix",
                    outline.omitted,
                    Limits::OUTLINE_MAX_ROWS
                );
            }
            Ok(())
        }
        Command::Inspect { id } => {
            let engine = scope.engine()?;
            let inspection = scope.session(engine)?.inspect(&id)?;
            if cli.json {
                return print_json(&inspection);
            }
            println!("{}  {}", inspection.entry, inspection.pattern_id);
            println!("  {}", inspection.import_hint);
            let meta: Vec<String> = [
                inspection.kind.map(|k| format!("kind {}", k.as_str())),
                inspection.quality.map(|q| format!("quality {}", q.as_str())),
                inspection.owner_did.as_ref().map(|o| format!("owner {o}")),
                inspection.created_at.as_ref().map(|c| format!("created {c}")),
            ]
            .into_iter()
            .flatten()
            .collect();
            println!(
                "  origin {} · identity {}{}",
                inspection.origin,
                inspection.identity.status.as_str(),
                if meta.is_empty() { String::new() } else { format!(" · {}", meta.join(" · ")) }
            );
            for reason in &inspection.identity.reasons {
                println!("    {reason}");
            }
            if !inspection.has_source {
                println!("  no source: the record was published without its program");
            }
            if inspection.declared_schemas.is_some() {
                println!(
                    "  declared schemas vs extracted: argument {}, result {}",
                    label(&inspection.agreement.argument),
                    label(&inspection.agreement.result)
                );
            }
            for d in &inspection.dependencies {
                println!("  depends on {d}");
            }
            for d in &inspection.dependents {
                println!("  used by {d}");
            }
            if let Some(d) = &inspection.description {
                println!("  {}", d.replace('\n', " "));
            }
            for f in &inspection.files {
                println!("  file {} ({} bytes, {})", f.name, f.bytes, f.digest);
            }
            for e in &inspection.exports {
                println!("  export {} {:?} (lines {}-{})", e.name, e.kind, e.line_start, e.line_end);
            }
            for d in &inspection.diagnostics {
                println!(
                    "  diagnostic {}:{}:{}: {}",
                    d.file, d.diagnostic.line, d.diagnostic.column, d.diagnostic.message
                );
            }
            println!("{}", engine.contract_text(&id)?);
            Ok(())
        }
        Command::Search {
            what:
                SearchWhat::Patterns {
                    text,
                    tags,
                    accepts,
                    returns,
                    kind,
                    min_quality,
                    depends_on,
                    tier,
                    have,
                    limit,
                    no_embeddings,
                },
        } => {
            let parse_specs = |specs: &[String], what: &str| {
                specs.iter().map(|s| FieldSpec::parse(s, what)).collect::<Result<Vec<_>, _>>()
            };
            let kind = kind
                .map(|k| {
                    serde_json::from_value(serde_json::Value::String(k.clone()))
                        .map_err(|_| QueryError::InvalidArgument(format!("--kind `{k}`: expected `part` or `app`")))
                })
                .transpose()?;
            let min_quality = min_quality
                .map(|q| {
                    serde_json::from_value(serde_json::Value::String(q.clone())).map_err(|_| {
                        QueryError::InvalidArgument(format!(
                            "--min-quality `{q}`: expected `penalized`, `unproven` or `proven`"
                        ))
                    })
                })
                .transpose()?;
            let query = PatternQuery {
                text: text.unwrap_or_default(),
                tags,
                accepts: parse_specs(&accepts, "--accepts")?,
                returns: parse_specs(&returns, "--returns")?,
                kind,
                min_quality,
                depends_on,
                have: parse_specs(&have, "--have")?,
                limit,
                tier,
                embeddings: no_embeddings.then_some(false),
            };
            let engine = scope.engine()?;
            let result = scope.session(engine)?.search_patterns(&query)?;
            if cli.json {
                return print_json(&result);
            }
            print_pattern_hits(&result);
            Ok(())
        }
        Command::Files { id } => {
            let engine = scope.engine()?;
            let listing = scope.session(engine)?.files(&id)?;
            if cli.json {
                return print_json(&listing);
            }
            println!("{}  {} (identity {})", listing.entry, listing.pattern_id, listing.identity);
            if !listing.has_source {
                println!("  no source: the record was published without its program");
            }
            for f in &listing.files {
                let lines = f.lines.map_or(String::new(), |l| format!(", {l} lines"));
                let flags = match (f.main, f.parse_failed) {
                    (true, false) => " [main]",
                    (true, true) => " [main, does not parse]",
                    (false, true) => " [does not parse]",
                    _ => "",
                };
                println!("  {}  ({} bytes{lines}, {}){flags}", f.address, f.bytes, f.digest);
            }
            Ok(())
        }
        Command::Deps { id, depth } => {
            let engine = scope.engine()?;
            let tree = scope.session(engine)?.deps(&id, depth)?;
            if cli.json {
                return print_json(&tree);
            }
            print_dep(&tree.root, 0);
            if tree.omitted > 0 {
                println!("… {} more dependencies omitted (limit {})", tree.omitted, Limits::DEPS_MAX_NODES);
            }
            Ok(())
        }
        Command::Export { what: ExportWhat::Records } => {
            let engine = scope.engine()?;
            for p in engine.snapshot().patterns.programs.iter() {
                println!("{}", serde_json::to_string(&engine.published_record(&p.pattern_id, true)?)?);
            }
            Ok(())
        }
        Command::Export { what: ExportWhat::Patterns } => {
            let engine = scope.engine()?;
            for p in engine.export_patterns() {
                println!("{}", serde_json::to_string(&p)?);
            }
            Ok(())
        }
        Command::Contract { id } => {
            let engine = scope.engine()?;
            let p = scope.session(engine)?.inspect(&id)?;
            if cli.json {
                return print_json(&serde_json::json!({
                    "patternId": p.pattern_id, "argumentSchema": p.argument_schema,
                    "resultSchema": p.result_schema, "inferred": p.inferred, "notes": p.notes,
                }));
            }
            print!("{}", engine.contract_text(&p.pattern_id)?);
            Ok(())
        }
        Command::Run { what: RunWhat::New } => {
            let snapshot = Engine::open_index(&scope.index).ok().map(|e| e.snapshot_id().to_string());
            let info = scope.store().new_run(snapshot.as_deref())?;
            if cli.json {
                return print_json(&info);
            }
            println!("{}", info.run);
            Ok(())
        }
        Command::Ledger { what } => ledger_command(&scope, what, cli.json),
        Command::Run { what: RunWhat::Schema { name } } => match fabdex_runstate::schema(&name) {
            Some(s) => print_json(&s),
            None => Err(QueryError::InvalidArgument(format!("no schema `{name}` (spec, evidence, eval, meta)")).into()),
        },
        Command::Run { what: RunWhat::Validate { kind, path, spec, prior, evidence_dir, draft, eval, ledger_run } } => {
            run_validate(&scope, &kind, &path, spec, prior, evidence_dir, draft, eval, ledger_run, cli.json)
        }
        Command::Run { what: RunWhat::ValidateRun { root } } => {
            let violations = fabdex_runstate::meta::validate_run(&root);
            report_violations(&root.display().to_string(), &violations, cli.json)
        }
        Command::Run { what: RunWhat::Plan { root, apply } } => {
            let plan = fabdex_runstate::plan::plan(&root);
            if apply {
                let after = fabdex_runstate::plan::apply(&root, &plan, &fabdex_ledger::store::now_rfc3339())?;
                if cli.json {
                    print_json(&serde_json::json!({"applied": plan.actions, "violations": after}))?;
                } else {
                    for a in &plan.actions {
                        println!("{}", serde_json::to_string(a)?);
                    }
                }
                if !after.is_empty() {
                    if cli.json {
                        return Err(
                            Reported(format!("{}: {} violations after applying", root.display(), after.len())).into()
                        );
                    }
                    return report_violations(&root.display().to_string(), &after, false);
                }
                return Ok(());
            }
            if cli.json {
                return print_json(&plan);
            }
            for a in &plan.actions {
                println!("{}", serde_json::to_string(a)?);
            }
            Ok(())
        }
        Command::Research(args) => {
            let engine = scope.engine()?;
            let policy = scope.policy.as_deref().map(fabdex_ledger::Policy::load).transpose()?;
            let outcome = fabdex_research::cli::invoke(engine, scope.store(), policy, &args)?;
            if cli.json {
                print_json(&outcome)?
            } else {
                print!("{}", fabdex_research::cli::render(&outcome))
            }
            if outcome.status == fabdex_kit::KitStatus::Complete {
                Ok(())
            } else {
                Err(Reported(format!(
                    "research run {} ended with an incomplete kit ({})",
                    outcome.run, outcome.stopped
                ))
                .into())
            }
        }
        Command::Kit { what: KitWhat::Schema } => print_json(&fabdex_kit::schema()),
        Command::Kit { what: KitWhat::Admit { kit, handles } } => {
            // The run whose reads the kit may cite: the global --run / FABDEX_RUN.
            let run = scope.run_or(None)?;
            let text = std::fs::read_to_string(&kit).with_context(|| format!("cannot read kit `{}`", kit.display()))?;
            let proposed: fabdex_kit::Kit = serde_json::from_str(&text)
                .map_err(|e| QueryError::InvalidArgument(format!("kit `{}` is not a valid kit: {e}", kit.display())))?;
            let handles: Vec<fabdex_kit::Handle> = match handles {
                None => vec![],
                Some(path) => {
                    let text = std::fs::read_to_string(&path)
                        .with_context(|| format!("cannot read handles `{}`", path.display()))?;
                    let inventory: fabdex_kit::Inventory = serde_json::from_str(&text).map_err(|e| {
                        QueryError::InvalidArgument(format!("handles `{}` are not valid: {e}", path.display()))
                    })?;
                    inventory.handles().to_vec()
                }
            };
            let engine = scope.engine()?;
            let contents = scope.store().ledger(&run)?.read()?;
            let admission = fabdex_kit::admit(engine, &contents, &handles, &proposed);
            if cli.json {
                print_json(&admission)?;
            } else {
                println!("kit {}: {}", kit.display(), label(&admission.status));
                for p in &admission.problems {
                    println!("  [{}] {}: {}", p.rule, p.pointer, p.message);
                }
                for m in &admission.kit.missing {
                    println!("  missing input `{}` ({}) of {}: {}", m.argument, m.ty, m.pattern_id, m.resolution);
                }
                println!(
                    "  {} sources from the ledger, {} patterns admitted, exposure {}",
                    admission.kit.sources.len(),
                    admission.kit.patterns.len(),
                    admission.kit.exposure.join(", ")
                );
            }
            if admission.status == fabdex_kit::KitStatus::Complete {
                Ok(())
            } else {
                let n = admission.problems.len();
                Err(Reported(format!(
                    "kit `{}` is incomplete: {n} problem{}",
                    kit.display(),
                    if n == 1 { "" } else { "s" }
                ))
                .into())
            }
        }
        Command::Provenance { run_id, pattern, out } => {
            let run = scope.run_or(run_id)?;
            let contents = scope.store().ledger(&run)?.read()?;
            let text = std::fs::read_to_string(&pattern)
                .with_context(|| format!("cannot read pattern `{}`", pattern.display()))?;
            let sidecar = fabdex_ledger::audit::provenance(&contents, &pattern.display().to_string(), &text);
            let out = out.unwrap_or_else(|| PathBuf::from(format!("{}.provenance.json", pattern.display())));
            std::fs::write(&out, serde_json::to_vec_pretty(&sidecar)?)
                .with_context(|| format!("cannot write `{}`", out.display()))?;
            if cli.json {
                return print_json(&sidecar);
            }
            println!(
                "wrote {}: {} docs and {} patterns consulted, {} imports, exposure {}",
                out.display(),
                sidecar.consulted.docs.len(),
                sidecar.consulted.patterns.len(),
                sidecar.imports.len(),
                sidecar.exposure.join(", ")
            );
            Ok(())
        }
        Command::Eval { what: EvalWhat::Patterns { tasks } } => {
            let engine = scope.engine()?;
            eval_patterns(engine, &tasks, cli.json)
        }
        Command::Eval { what: EvalWhat::Docs { qrels, k, include_history, mode } } => {
            let engine = scope.engine()?;
            eval_docs(engine, &qrels, k, include_history, retrieval_mode(&mode), cli.json)
        }
        Command::Related { address } => {
            let engine = scope.engine()?;
            let related = scope.session(engine)?.related(&address)?;
            if cli.json {
                return print_json(&related);
            }
            println!("{}", related.address);
            if let Some(p) = &related.parent {
                println!("  parent:   {} ({})", p.address, p.heading);
            }
            for c in &related.children {
                println!("  child:    {} ({})", c.address, c.heading);
            }
            for s in &related.siblings {
                println!("  sibling:  {} ({})", s.address, s.heading);
            }
            for l in &related.outgoing {
                println!("  links to: {} → {}", l.dest, serde_json::to_string(&l.target)?);
            }
            for l in &related.backlinks {
                println!("  linked from: {} (line {})", l.from, l.line);
            }
            for (list, n) in &related.omitted {
                println!("  … {n} more {list} omitted (limit {})", Limits::RELATED_MAX_ITEMS);
            }
            Ok(())
        }
    }
}

fn ledger_command(scope: &Scope, what: LedgerWhat, json: bool) -> Result<()> {
    use fabdex_ledger::audit;
    let store = scope.store();
    match what {
        LedgerWhat::Show { run_id } => {
            let run = scope.run_or(run_id)?;
            let contents = store.ledger(&run)?.read()?;
            if json {
                return print_json(&contents);
            }
            for r in &contents.records {
                let items: Vec<String> = r
                    .call
                    .items
                    .iter()
                    .map(|i| {
                        let state = if i.released { "" } else { " (withheld)" };
                        format!("{} {}{state}", i.address, label(&i.kind))
                    })
                    .collect();
                if let Some(turn) = &r.call.turn {
                    println!("{:>4} {} {}", r.seq, r.time, turn.summary());
                    if let Some(e) = &r.call.error {
                        println!("       error: {e}");
                    }
                    continue;
                }
                println!("{:>4} {} {} {}", r.seq, r.time, r.call.tool, serde_json::to_string(&r.call.arguments)?);
                for i in items {
                    println!("       {i}");
                }
                if let Some(e) = &r.call.error {
                    println!("       error: {e}");
                }
            }
            for p in &contents.problems {
                println!("line {}: {}", p.line, p.problem);
            }
            Ok(())
        }
        LedgerWhat::Cite { citation, in_run } => {
            let engine = scope.engine()?;
            let (record, mut check) = audit::cite(engine, &store, &citation, in_run.as_deref())?;
            let ok = check.status == audit::Status::Identical;
            let origin = record
                .call
                .items
                .iter()
                .find(|i| i.citation.as_deref() == Some(citation.as_str()))
                .map(|i| i.origin.clone());
            if let (Some(policy), Some(origin)) = (&scope.policy, origin) {
                let policy = fabdex_ledger::Policy::load(policy)?;
                if let fabdex_ledger::Decision::Deny(reason) = policy.decide(&origin, &scope.consumer) {
                    check.text = None;
                    check.detail = Some(format!("text withheld: {reason}"));
                }
            }
            if json {
                print_json(&serde_json::json!({"record": record, "check": check}))?;
            } else {
                println!("{} (run {}, record {}): {}", check.address, record.run, record.seq, label(&check.status));
                if let Some(d) = &check.detail {
                    println!("  {d}");
                }
                if let Some(t) = &check.text {
                    println!("{t}");
                }
            }
            if ok {
                Ok(())
            } else {
                Err(Reported(format!(
                    "citation `{citation}` is {} in snapshot {}",
                    label(&check.status),
                    engine.snapshot_id()
                ))
                .into())
            }
        }
        LedgerWhat::Verify { run_id } => {
            let run = scope.run_or(run_id)?;
            let engine = scope.engine()?;
            let contents = store.ledger(&run)?.read()?;
            let v = audit::verify(engine, &contents)?;
            if json {
                print_json(&v)?;
            } else {
                for c in v.checks.iter().filter(|c| c.status != audit::Status::Identical) {
                    println!("{}  #{} {}  {}", label(&c.status), c.seq, c.address, c.detail.as_deref().unwrap_or(""));
                }
                for p in &v.problems {
                    println!("ledger line {} (not a read; reported, not failed): {}", p.line, p.problem);
                }
                println!(
                    "run {} against snapshot {}: {} identical, {} changed since, {} gone, {} not checked (withheld or metadata)",
                    v.run, v.snapshot, v.identical, v.changed_since, v.gone, v.not_checked
                );
            }
            if v.ok() {
                Ok(())
            } else {
                Err(Reported(format!(
                    "run `{run}` does not verify: {} changed since, {} gone",
                    v.changed_since, v.gone
                ))
                .into())
            }
        }
        LedgerWhat::Consulted { run_id } => {
            let run = scope.run_or(run_id)?;
            let set = audit::consulted(&store.ledger(&run)?.read()?);
            if json {
                return print_json(&set);
            }
            for (label, list) in [("docs", &set.docs), ("patterns", &set.patterns)] {
                println!("{label}: {}", list.len());
                for c in list {
                    println!("  {} ({}, {})", c.address, c.origin, c.citation.as_deref().unwrap_or("-"));
                }
            }
            Ok(())
        }
        LedgerWhat::Exposure { run_id } => {
            let run = scope.run_or(run_id)?;
            let e = audit::exposure(&store.ledger(&run)?.read()?);
            if json {
                return print_json(&e);
            }
            for (origin, n) in &e.released {
                println!("{origin}: {n} released");
            }
            for (origin, n) in &e.withheld {
                println!("{origin}: {n} withheld");
            }
            Ok(())
        }
    }
}

fn report_violations(what: &str, violations: &[fabdex_runstate::Violation], json: bool) -> Result<()> {
    if json {
        print_json(&serde_json::json!({"valid": violations.is_empty(), "violations": violations}))?;
    } else if violations.is_empty() {
        println!("{what}: valid");
    } else {
        for v in violations {
            println!("{v}");
        }
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(Reported(format!("{what}: {} violations", violations.len())).into())
    }
}

#[allow(clippy::too_many_arguments)]
fn run_validate(
    scope: &Scope,
    kind: &str,
    path: &std::path::Path,
    spec: Option<PathBuf>,
    prior: Option<PathBuf>,
    evidence_dir: Option<PathBuf>,
    draft: Option<PathBuf>,
    eval: Option<PathBuf>,
    ledger_run: Option<String>,
    json: bool,
) -> Result<()> {
    use fabdex_runstate::artifacts as a;
    let read =
        |p: &std::path::Path| std::fs::read_to_string(p).with_context(|| format!("cannot read `{}`", p.display()));
    let text = read(path)?;
    let name = path.display().to_string();
    let spec = match &spec {
        Some(p) => {
            let (spec, violations) = a::check_spec(&p.display().to_string(), &read(p)?);
            if spec.is_none() {
                // A spec that does not parse cannot vouch for anything checked against it.
                return report_violations(&p.display().to_string(), &violations, json);
            }
            spec
        }
        None => None,
    };
    let violations = match kind {
        "spec" => a::check_spec(&name, &text).1,
        "meta" => fabdex_runstate::meta::check_meta(&name, &text).1,
        "evidence" => {
            let prior = match &prior {
                Some(p) => serde_json::from_str::<a::Evidence>(&read(p)?).map(Some).map_err(|e| {
                    QueryError::InvalidArgument(format!("--prior `{}` is not valid evidence: {e}", p.display()))
                })?,
                None => None,
            };
            let citations = match &ledger_run {
                Some(run) => {
                    let contents = scope.store().ledger(run)?.read()?;
                    Some(
                        contents
                            .records
                            .iter()
                            .flat_map(|r| &r.call.items)
                            .filter_map(|i| i.citation.clone().map(|c| (c, i.address.clone())))
                            .collect::<std::collections::BTreeMap<_, _>>(),
                    )
                }
                None => None,
            };
            let ctx = a::EvidenceContext { spec: spec.as_ref(), prior: prior.as_ref(), citations: citations.as_ref() };
            a::check_evidence(&name, &text, &ctx).1
        }
        "draft" => {
            let dir = evidence_dir.ok_or_else(|| QueryError::InvalidArgument("draft needs --evidence-dir".into()))?;
            a::check_draft(&name, &text, &a::load_evidence_dir(&dir))
        }
        "eval" => {
            let mut v = a::check_eval(&name, &text, spec.as_ref()).1;
            if let Some(d) = &draft
                && !d.exists()
            {
                v.push(a::Violation {
                    file: name.clone(),
                    pointer: String::new(),
                    rule: "missing".into(),
                    message: format!("the draft `{}` it judges is missing", d.display()),
                });
            }
            v
        }
        "feedback" => {
            let e = match &eval {
                Some(p) => a::check_eval(&p.display().to_string(), &read(p)?, spec.as_ref()).0,
                None => None,
            };
            a::check_feedback(&name, &text, e.as_ref())
        }
        other => {
            return Err(QueryError::InvalidArgument(format!(
                "`{other}`: expected spec, evidence, draft, eval, feedback or meta"
            ))
            .into());
        }
    };
    report_violations(&name, &violations, json)
}

fn eval_patterns(engine: &Engine, tasks: &std::path::Path, json: bool) -> Result<()> {
    let bytes = std::fs::read(tasks).map_err(|e| anyhow::anyhow!("cannot read tasks `{}`: {e}", tasks.display()))?;
    let tasks: Vec<fabdex_query::PatternTask> = serde_json::from_slice(&bytes)
        .map_err(|e| anyhow::anyhow!("tasks `{}` are not valid: {e}", tasks.display()))?;
    let report = engine.eval_patterns(&tasks)?;
    if json {
        return print_json(&report);
    }
    for t in &report.per_task {
        let rank = t.best_rank.map_or("-".to_string(), |r| r.to_string());
        println!("{rank:>5}  {}", t.task);
    }
    println!(
        "\n{} tasks: success@1 {:.2}  success@5 {:.2}  MRR {:.3} (over the top {})",
        report.tasks, report.success_at_1, report.success_at_5, report.mrr, report.depth
    );
    Ok(())
}

fn eval_docs(
    engine: &Engine,
    qrels: &std::path::Path,
    k: usize,
    include_history: bool,
    mode: fabdex_query::RetrievalMode,
    json: bool,
) -> Result<()> {
    let bytes = std::fs::read(qrels).map_err(|e| anyhow::anyhow!("cannot read qrels `{}`: {e}", qrels.display()))?;
    let qrels: Vec<fabdex_query::Qrel> = serde_json::from_slice(&bytes)
        .map_err(|e| anyhow::anyhow!("qrels `{}` are not valid: {e}", qrels.display()))?;
    let report = engine.eval_docs(&qrels, k, include_history, mode)?;
    if json {
        return print_json(&report);
    }
    for q in &report.per_question {
        let rank = q.best_rank.map_or("-".to_string(), |r| r.to_string());
        println!("{rank:>5}  {}", q.q);
    }
    let at_k = if matches!(report.k, 5 | 10) {
        String::new()
    } else {
        format!("  recall@{} {:.2}", report.k, report.recall_at_k)
    };
    println!(
        "\n{} questions, mode {}: recall@5 {:.2}  recall@10 {:.2}{at_k}  MRR@10 {:.3}  nDCG@10 {:.3}",
        report.questions, report.mode, report.recall_at_5, report.recall_at_10, report.mrr_at_10, report.ndcg_at_10
    );
    Ok(())
}

fn print_pattern_hits(result: &fabdex_query::PatternSearch) {
    println!(
        "{} of {} matching patterns (terms: {}; ranked by {})",
        result.hits.len(),
        result.matched,
        result.terms.join(" "),
        result.mode
    );
    for hit in &result.hits {
        let meta: Vec<&str> = [hit.kind.map(|k| k.as_str()), hit.quality.map(|q| q.as_str()), hit.tier.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        println!(
            "\n{:>2}. {}  [{:.2}] fit: {} · identity {} · {}{}",
            hit.rank,
            hit.entry,
            hit.score,
            hit.fit.verdict,
            hit.identity,
            hit.origin,
            if meta.is_empty() { String::new() } else { format!(" · {}", meta.join(", ")) }
        );
        println!("    {}", hit.import_hint);
        if let Some(d) = &hit.description {
            let d = d.replace('\n', " ");
            let short: String = d.chars().take(200).collect();
            println!("    {short}{}", if d.chars().count() > 200 { "…" } else { "" });
        }
        println!("    why: {}", hit.why.join("; "));
        for m in &hit.fit.returns {
            println!("    returns {}: {}", m.field, m.ty);
        }
        for n in &hit.fit.not_returned {
            println!("    does not return {n}");
        }
        for n in &hit.fit.not_accepted {
            println!("    does not accept {n}");
        }
        for i in &hit.fit.satisfied {
            println!("    input {}: {} ← {}", i.input, i.ty, i.by.as_deref().unwrap_or(""));
        }
        for i in &hit.fit.missing {
            println!(
                "    needs input {}: {}{}",
                i.input,
                i.ty,
                i.description.as_ref().map_or(String::new(), |d| format!(" — {d}"))
            );
        }
    }
    if result.omitted > 0 {
        println!(
            "\n… {} more matching patterns omitted (raise --limit, at most {})",
            result.omitted,
            Limits::SEARCH_MAX_LIMIT
        );
    }
}

fn print_dep(node: &fabdex_query::DepNode, depth: usize) {
    let label = node.entry.as_deref().unwrap_or("(not in this snapshot)");
    let flags = match (node.cycle, node.cut) {
        (true, _) => " (cycle: shown above)",
        (_, true) => " (not expanded: depth or node limit)",
        _ => "",
    };
    println!("{}{}  {}  identity {}{flags}", "  ".repeat(depth), node.pattern_id, label, node.identity);
    for child in &node.dependencies {
        print_dep(child, depth + 1);
    }
}

fn run_models(what: ModelsWhat, json: bool) -> Result<()> {
    let registry = fabdex_embed::registry::Registry::locate();
    let models = match what {
        ModelsWhat::Add { dir } => vec![registry.add(&dir)?],
        ModelsWhat::List => registry.list()?,
        ModelsWhat::Remove { model } => vec![registry.remove(&model)?],
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&models)?);
        return Ok(());
    }
    if models.is_empty() {
        println!("no models registered in {}", registry.dir().display());
    }
    for m in models {
        println!("{}  {}  dim {}  {}", m.name, m.digest, m.dim, m.dir.display());
    }
    Ok(())
}

fn print_report(r: &IndexReport, verbose: bool) -> Result<()> {
    let c = &r.counts;
    println!(
        "snapshot {} {} in {} ms: {} files ({:.1} MB; {} extracted, {} reused from cache), {} sections ({} split parts), {} skipped",
        r.snapshot_id,
        if r.unchanged { "(unchanged)" } else { "published" },
        r.elapsed_ms,
        c.files,
        c.bytes as f64 / 1e6,
        r.extracted,
        r.reused_from_cache,
        c.sections,
        c.parts,
        c.skipped
    );
    if c.source_files > 0 {
        println!(
            "pattern sources: {} TS/TSX files, {} programs, {} that swc could not parse (outlined and flagged)",
            c.source_files, c.programs, c.source_parse_failures
        );
        println!("{}", r.profiles.summary());
    }
    if c.published_records > 0 {
        println!(
            "published records: {} ({} without source), identity: {} mismatch, {} unverifiable; {} with declared schemas that disagree with the source",
            c.published_records,
            c.records_without_source,
            c.identity_mismatch,
            c.identity_unverifiable,
            c.schema_disagreements
        );
    }
    if let Some(e) = &r.embeddings {
        println!(
            "embeddings: {} units in {} passages and {} programs by {} ({}; {}{}{}; {} encoded in {:.1} s, {} from cache, {} carried; {} read only to {} passages)",
            c.embedded_units,
            e.passages,
            e.programs,
            e.model.name,
            e.model_dir,
            e.precision.as_str(),
            e.int8_kernel.as_deref().map(|k| format!(" on {k}")).unwrap_or_default(),
            e.precision_chosen.map(|c| format!(", {}", c.describe())).unwrap_or_default(),
            e.encoded,
            e.encode_ms as f64 / 1e3,
            e.reused,
            e.carried,
            e.truncated,
            e.max_passages
        );
    }
    if !r.unchanged {
        println!("{}", r.incremental.summary());
    }
    println!(
        "links: {} ({} to sections, {} to files or folders, {} external, {} unresolved)",
        c.links, c.links_to_sections, c.links_to_files, c.links_external, c.links_unresolved
    );
    let mut by_reason: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for s in &r.skipped {
        by_reason.entry(s.reason.as_str()).or_default().push(s.path.as_str());
    }
    let shown = |n: usize, cap: usize| if verbose { n } else { n.min(cap) };
    for (reason, paths) in &by_reason {
        println!(
            "skipped {} ({reason}): {}{}",
            paths.len(),
            paths.iter().take(shown(paths.len(), 5)).copied().collect::<Vec<_>>().join(", "),
            if paths.len() > shown(paths.len(), 5) { ", …" } else { "" }
        );
    }
    for d in r.diagnostics.iter().take(shown(r.diagnostics.len(), 20)) {
        for diag in &d.diagnostics {
            println!("diagnostic {}:{}:{}: {}", d.address, diag.line, diag.column, diag.message);
        }
    }
    if verbose {
        for u in &r.unresolved_links {
            println!("unresolved link in {} line {}: `{}` ({})", u.from, u.line, u.dest, u.reason);
        }
    } else if !r.unresolved_links.is_empty() {
        let files: std::collections::BTreeSet<&str> =
            r.unresolved_links.iter().map(|u| u.from.split('#').next().unwrap_or(&u.from)).collect();
        println!(
            "unresolved links: {} in {} files; `fabdex index --verbose` lists them",
            r.unresolved_links.len(),
            files.len()
        );
    }
    if !verbose && (r.skipped.len() > 5 || r.diagnostics.len() > 20) {
        println!(
            "full report: {}/snapshots/{}/report.json (or run with --json or --verbose)",
            r.index_dir, r.snapshot_id
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Every subcommand's arguments are well formed (clap checks names, conflicts and globals).
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
