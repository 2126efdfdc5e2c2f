//! The CLI's read commands: each tool of the registry as a subcommand
//! (`search`, `open`, `outline`, `related`, `inspect`, `files`, `deps`,
//! `contract`) and `export`. Each runs through the scope's `Session`, as the
//! tools do, and returns the tool's answer for the binary's printing module.

use std::path::PathBuf;

use anyhow::Result;
use fabdex_ledger::cli::Scope;
use fabdex_model::ReadEnvelope;
use fabdex_query::{
    DepTree, FieldSpec, FileListing, Inspection, Outline, PatternQuery, PatternSearch, QueryError, Related,
    RetrievalMode, SearchDocs, SearchResult,
};
use serde::Serialize;

/// `--mode`: `hybrid` or `bm25` (clap checks the name).
pub fn retrieval_mode(name: &str) -> RetrievalMode {
    match name {
        "bm25" => RetrievalMode::Bm25,
        _ => RetrievalMode::Hybrid,
    }
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum SearchCommand {
    /// Search pattern programs by text, tags and contract, with a fit verdict per hit.
    Patterns(SearchPatternsArgs),
    /// Search documentation and skills.
    Docs(SearchDocsArgs),
}

/// What a search found.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Found {
    Patterns(PatternSearch),
    Docs(SearchResult),
}

impl SearchCommand {
    pub fn run(&self, scope: &Scope) -> Result<Found> {
        let engine = scope.engine()?;
        let session = scope.session(engine)?;
        Ok(match self {
            SearchCommand::Patterns(args) => Found::Patterns(session.search_patterns(&args.query()?)?),
            SearchCommand::Docs(args) => Found::Docs(session.search_docs(&args.request())?),
        })
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct SearchDocsArgs {
    pub query: String,
    /// Hits to return (default 10, at most 50).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Only files whose path starts with this (`docs/common`, `labs/docs`).
    #[arg(long)]
    pub path_prefix: Option<String>,
    /// Include historical documents (ranked below live ones).
    #[arg(long)]
    pub include_history: bool,
    /// Retrieval: `hybrid` (BM25 fused with the corpus-learned semantic model) or `bm25`.
    #[arg(long, value_parser = ["hybrid", "bm25"], default_value = "hybrid")]
    pub mode: String,
}

impl SearchDocsArgs {
    pub fn request(&self) -> SearchDocs {
        SearchDocs {
            query: self.query.clone(),
            limit: self.limit,
            path_prefix: self.path_prefix.clone(),
            include_history: self.include_history,
            mode: Some(retrieval_mode(&self.mode)),
        }
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct SearchPatternsArgs {
    /// Words to match against names, descriptions, tags and contract fields.
    pub text: Option<String>,
    /// Only patterns with this hashtag (repeatable; `#` optional).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// An argument the pattern should take: NAME or NAME:TYPE (repeatable).
    #[arg(long)]
    pub accepts: Vec<String>,
    /// A result field the pattern should return: NAME or NAME:TYPE (repeatable).
    #[arg(long)]
    pub returns: Vec<String>,
    /// Only `part` or `app` records.
    #[arg(long)]
    pub kind: Option<String>,
    /// Only records at least this good: penalized, unproven, proven.
    #[arg(long)]
    pub min_quality: Option<String>,
    /// Only patterns that depend on this pattern id or alias.
    #[arg(long)]
    pub depends_on: Option<String>,
    /// Only programs of this tier (exemplar, demo, fixture, legacy, … or `none`); a tier asked for is not ranked down.
    #[arg(long)]
    pub tier: Option<String>,
    /// A handle you can pass in: TOKEN:TYPE (repeatable); fit says which required inputs it binds.
    #[arg(long)]
    pub have: Vec<String>,
    /// Hits to return (default 10, at most 50).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Rank without the index's sentence embeddings of programs (loads no model).
    #[arg(long)]
    pub no_embeddings: bool,
}

/// A flag's value as the serde name of an enum, or the error naming the flag.
fn named<T: serde::de::DeserializeOwned>(flag: &str, value: &Option<String>, expected: &str) -> Result<Option<T>> {
    let Some(v) = value else { return Ok(None) };
    let parsed = serde_json::from_value(serde_json::Value::String(v.clone()))
        .map_err(|_| QueryError::InvalidArgument(format!("{flag} `{v}`: expected {expected}")))?;
    Ok(Some(parsed))
}

impl SearchPatternsArgs {
    /// The pattern query, every flag checked (the error names the flag).
    pub fn query(&self) -> Result<PatternQuery> {
        let specs = |specs: &[String], what: &str| {
            specs.iter().map(|s| FieldSpec::parse(s, what)).collect::<Result<Vec<_>, _>>()
        };
        let kind = named("--kind", &self.kind, "`part` or `app`")?;
        let min_quality = named("--min-quality", &self.min_quality, "`penalized`, `unproven` or `proven`")?;
        Ok(PatternQuery {
            text: self.text.clone().unwrap_or_default(),
            tags: self.tags.clone(),
            accepts: specs(&self.accepts, "--accepts")?,
            returns: specs(&self.returns, "--returns")?,
            kind,
            min_quality,
            depends_on: self.depends_on.clone(),
            have: specs(&self.have, "--have")?,
            limit: self.limit,
            tier: self.tier.clone(),
            embeddings: self.no_embeddings.then_some(false),
        })
    }
}

/// `fabdex open`: one bounded window of the text at an address.
#[derive(Debug, Clone, clap::Args)]
pub struct OpenArgs {
    pub address: String,
    /// Char offset to start at (overrides an `@offset` in the address).
    #[arg(long)]
    pub offset: Option<u64>,
    /// Most chars to return (default 8000, at most 32000).
    #[arg(long)]
    pub max_chars: Option<u64>,
    /// Source reads: most chars of one line before it is cut (default 1000).
    #[arg(long)]
    pub max_line_chars: Option<u64>,
}

impl OpenArgs {
    pub fn run(&self, scope: &Scope) -> Result<ReadEnvelope> {
        let engine = scope.engine()?;
        scope.session(engine)?.read(&self.address, self.offset, self.max_chars, self.max_line_chars)
    }
}

/// `fabdex deps`: what a pattern depends on, as a tree.
#[derive(Debug, Clone, clap::Args)]
pub struct DepsArgs {
    pub id: String,
    /// Levels to expand (default 3, at most 10).
    #[arg(long)]
    pub depth: Option<usize>,
}

impl DepsArgs {
    pub fn run(&self, scope: &Scope) -> Result<DepTree> {
        let engine = scope.engine()?;
        scope.session(engine)?.deps(&self.id, self.depth)
    }
}

/// The sections of a file, or of every file under a prefix.
pub fn outline(scope: &Scope, path_or_prefix: &str) -> Result<Outline> {
    let engine = scope.engine()?;
    scope.session(engine)?.outline(path_or_prefix)
}

/// Parent, children, siblings, outgoing links and backlinks of a section.
pub fn related(scope: &Scope, address: &str) -> Result<Related> {
    let engine = scope.engine()?;
    scope.session(engine)?.related(address)
}

/// The files of a pattern program.
pub fn files(scope: &Scope, id: &str) -> Result<FileListing> {
    let engine = scope.engine()?;
    scope.session(engine)?.files(id)
}

/// A pattern program inspected; its contract as an author reads it is
/// rendered only for text output ([`Inspected::contract_text`]).
#[derive(Serialize)]
#[serde(transparent)]
pub struct Inspected {
    pub inspection: Inspection,
    #[serde(skip)]
    engine: &'static fabdex_query::Engine,
}

impl Inspected {
    /// The argument and result as TypeScript-like types.
    pub fn contract_text(&self) -> Result<String> {
        Ok(self.engine.contract_text(&self.inspection.pattern_id)?)
    }
}

pub fn inspect(scope: &Scope, id: &str) -> Result<Inspected> {
    let engine = scope.engine()?;
    let inspection = scope.session(engine)?.inspect(id)?;
    Ok(Inspected { inspection, engine })
}

/// A pattern's argument and result: the schemas (JSON); the TypeScript-like
/// text an author reads is rendered only for text output.
#[derive(Serialize)]
#[serde(transparent)]
pub struct Contract {
    pub schemas: serde_json::Value,
    #[serde(skip)]
    inspected: Inspected,
}

impl Contract {
    pub fn text(&self) -> Result<String> {
        self.inspected.contract_text()
    }
}

pub fn contract(scope: &Scope, id: &str) -> Result<Contract> {
    let inspected = inspect(scope, id)?;
    let p = &inspected.inspection;
    let schemas = serde_json::json!({
        "patternId": p.pattern_id, "argumentSchema": p.argument_schema,
        "resultSchema": p.result_schema, "inferred": p.inferred, "notes": p.notes,
    });
    Ok(Contract { schemas, inspected })
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum ExportCommand {
    /// One JSON line per pattern program (the fields of `inspect`).
    Patterns,
    /// One JSON line per program in the index service's `Pattern` shape, with
    /// its program (a feed another fabdex can index as a `published` root).
    Records,
}

impl ExportCommand {
    /// Hand each exported value to `line` as one line of JSON, as it is made
    /// (a whole feed is never held in memory).
    pub fn run(&self, scope: &Scope, line: &mut dyn FnMut(&str)) -> Result<()> {
        let engine = scope.engine()?;
        match self {
            ExportCommand::Patterns => {
                for p in engine.export_patterns() {
                    line(&serde_json::to_string(&p)?);
                }
            }
            ExportCommand::Records => {
                for p in engine.snapshot().patterns.programs.iter() {
                    line(&serde_json::to_string(&engine.published_record(&p.pattern_id, true)?)?);
                }
            }
        }
        Ok(())
    }
}

/// `fabdex eval …`: retrieval quality against judged questions.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum EvalCommand {
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

/// An evaluation's report.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Evaluated {
    Docs(fabdex_query::EvalReport),
    Patterns(fabdex_query::PatternEvalReport),
}

/// A judged-questions file, parsed (the error names the file).
fn judged<T: serde::de::DeserializeOwned>(path: &std::path::Path, what: &str) -> Result<T> {
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {what} `{}`: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| anyhow::anyhow!("{what} `{}` are not valid: {e}", path.display()))
}

impl EvalCommand {
    pub fn run(&self, scope: &Scope) -> Result<Evaluated> {
        let engine = scope.engine()?;
        Ok(match self {
            EvalCommand::Docs { qrels, k, include_history, mode } => {
                let qrels: Vec<fabdex_query::Qrel> = judged(qrels, "qrels")?;
                Evaluated::Docs(engine.eval_docs(&qrels, *k, *include_history, retrieval_mode(mode))?)
            }
            EvalCommand::Patterns { tasks } => {
                let tasks: Vec<fabdex_query::PatternTask> = judged(tasks, "tasks")?;
                Evaluated::Patterns(engine.eval_patterns(&tasks)?)
            }
        })
    }
}

/// `fabdex verify`: the published snapshot checked whole against its manifest.
#[derive(Debug, Serialize)]
pub struct Intact {
    pub snapshot: String,
    pub verified: fabdex_snapshot::Verified,
}

pub fn verify(scope: &Scope) -> Result<Intact> {
    let (snapshot, verified) = fabdex_snapshot::verify_published(&scope.index_dir()).map_err(QueryError::from_open)?;
    Ok(Intact { snapshot, verified })
}
