//! The CLI's side of runs: the global flags every query call goes through
//! (`Scope`: index, run, policy, consumer, runs folder, embedding model),
//! and `fabdex ledger …` and `fabdex provenance`, each returning what it
//! found for the binary's printing module to show.

use std::path::PathBuf;

use anyhow::{Context, Result};
use fabdex_query::{Engine, QueryError};
use serde::Serialize;

use crate::audit;
use crate::{Contents, Policy, Record, RunStore, Session};

/// The run, policy and consumer every query call goes through: the global
/// flags of the `fabdex` binary (flattened into it; `display_order` keeps
/// them, with the binary's `--json` second, where `--help` has always
/// listed them).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Scope {
    /// Index directory (default: $FABDEX_INDEX, else `.fabdex`). `fabdex index` writes to
    /// --out, else this, else the config's `index.out`, else `.fabdex`.
    #[arg(long, global = true, env = "FABDEX_INDEX", display_order = 0)]
    pub index: Option<PathBuf>,
    /// Record every call in this research run's ledger (see `fabdex run new`).
    #[arg(long, global = true, env = "FABDEX_RUN", display_order = 2)]
    pub run: Option<String>,
    /// Release policy (TOML): which origins' text may go to which consumer.
    #[arg(long, global = true, env = "FABDEX_POLICY", display_order = 3)]
    pub policy: Option<PathBuf>,
    /// Who receives the text, as the policy names consumers.
    #[arg(long, global = true, env = "FABDEX_CONSUMER", default_value = "research", display_order = 4)]
    pub consumer: String,
    /// Folder of research runs (default: `<index>/runs`).
    #[arg(long, global = true, env = "FABDEX_RUNS", display_order = 5)]
    pub runs: Option<PathBuf>,
    /// A local sentence-embedding model folder (sentence-transformers layout;
    /// never downloaded). `fabdex index` encodes every docs section with it;
    /// queries on such an index load it from here instead of the folder the
    /// index recorded.
    #[arg(long, global = true, env = "FABDEX_EMBEDDINGS", value_name = "DIR", display_order = 6)]
    pub embeddings: Option<PathBuf>,
}

impl Scope {
    /// The index directory queries read: --index / FABDEX_INDEX, else `.fabdex`.
    pub fn index_dir(&self) -> PathBuf {
        self.index.clone().unwrap_or_else(|| PathBuf::from(".fabdex"))
    }

    /// A command's RUN argument, else the global --run / FABDEX_RUN.
    pub fn run_or(&self, given: Option<String>) -> Result<String> {
        given
            .or_else(|| self.run.clone())
            .ok_or_else(|| QueryError::InvalidArgument("which run? give RUN, --run RUN or FABDEX_RUN".into()).into())
    }

    /// The published snapshot's engine, for the rest of this process: it is
    /// never dropped, since freeing its tables at exit took a tenth of a
    /// short command's time, and the process is about to end anyway.
    pub fn engine(&self) -> Result<&'static Engine> {
        let mut engine = Engine::open_index(&self.index_dir())?;
        if let Some(dir) = &self.embeddings {
            engine.set_embedding_model(dir);
        }
        Ok(Box::leak(Box::new(engine)))
    }

    /// The id of the published snapshot, if the index has one.
    pub fn snapshot_id(&self) -> Option<String> {
        Engine::open_index(&self.index_dir()).ok().map(|e| e.snapshot_id().to_string())
    }

    /// The runs folder: --runs / FABDEX_RUNS, else `<index>/runs`.
    pub fn store(&self) -> RunStore {
        RunStore::new(self.runs.clone().unwrap_or_else(|| crate::store::default_runs_dir(&self.index_dir())))
    }

    /// The release policy of --policy / FABDEX_POLICY, loaded.
    pub fn policy(&self) -> Result<Option<Policy>> {
        self.policy.as_deref().map(Policy::load).transpose()
    }

    /// A session over `engine` with this scope's consumer, run and policy.
    pub fn session<'a>(&self, engine: &'a Engine) -> Result<Session<'a>> {
        let mut session = Session::new(engine);
        session.consumer = self.consumer.clone();
        if let Some(run) = &self.run {
            session.ledger = Some(self.store().ledger(run)?);
        }
        session.policy = self.policy()?;
        Ok(session)
    }
}

/// `fabdex ledger …`: what a research run read.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum LedgerCommand {
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

/// What a `fabdex ledger …` command found.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum LedgerAnswer {
    Show(Contents),
    Cite(Box<Cited>),
    Verify(Verified),
    Consulted(audit::ConsultedSet),
    Exposure(audit::Exposure),
}

/// One citation reopened: the record that made it and the check of its text.
#[derive(Debug, Serialize)]
pub struct Cited {
    pub record: Record,
    pub check: audit::Check,
    /// The snapshot it was checked against.
    #[serde(skip)]
    pub snapshot: String,
    #[serde(skip)]
    pub citation: String,
}

/// A run's reads checked against the snapshot.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Verified {
    pub verification: audit::Verification,
    #[serde(skip)]
    pub run: String,
}

impl LedgerCommand {
    pub fn run(&self, scope: &Scope) -> Result<LedgerAnswer> {
        let store = scope.store();
        let contents = |run: &Option<String>| -> Result<Contents> {
            let run = scope.run_or(run.clone())?;
            store.ledger(&run)?.read()
        };
        Ok(match self {
            LedgerCommand::Show { run_id } => LedgerAnswer::Show(contents(run_id)?),
            LedgerCommand::Cite { citation, in_run } => {
                LedgerAnswer::Cite(Box::new(cite(scope, citation, in_run.as_deref())?))
            }
            LedgerCommand::Verify { run_id } => {
                let engine = scope.engine()?;
                let run = scope.run_or(run_id.clone())?;
                let verification = audit::verify(engine, &store.ledger(&run)?.read()?)?;
                LedgerAnswer::Verify(Verified { verification, run })
            }
            LedgerCommand::Consulted { run_id } => LedgerAnswer::Consulted(audit::consulted(&contents(run_id)?)),
            LedgerCommand::Exposure { run_id } => LedgerAnswer::Exposure(audit::exposure(&contents(run_id)?)),
        })
    }
}

/// Reopen a citation, withholding its text where the policy denies its
/// origin to this scope's consumer.
fn cite(scope: &Scope, citation: &str, in_run: Option<&str>) -> Result<Cited> {
    let engine = scope.engine()?;
    let (record, mut check) = audit::cite(engine, &scope.store(), citation, in_run)?;
    let origin = record.call.items.iter().find(|i| i.citation.as_deref() == Some(citation)).map(|i| i.origin.clone());
    if let Some(origin) = origin
        && let Some(policy) = scope.policy()?
        && let crate::Decision::Deny(reason) = policy.decide(&origin, &scope.consumer)
    {
        check.text = None;
        check.detail = Some(format!("text withheld: {reason}"));
    }
    Ok(Cited { record, check, snapshot: engine.snapshot_id().to_string(), citation: citation.to_string() })
}

/// `fabdex provenance`: the sidecar of an authored pattern.
#[derive(Debug, Clone, clap::Args)]
pub struct ProvenanceArgs {
    /// The run (default: --run / FABDEX_RUN).
    #[arg(value_name = "RUN")]
    pub run_id: Option<String>,
    /// The authored pattern (TS/TSX).
    #[arg(long)]
    pub pattern: PathBuf,
    /// Where to write the sidecar (default: `<pattern>.provenance.json`).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// A provenance sidecar, and where it was written.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Written {
    pub sidecar: audit::Provenance,
    #[serde(skip)]
    pub out: PathBuf,
}

impl ProvenanceArgs {
    /// Write the sidecar: the run, what it consulted (with digests), the
    /// pattern's own `cf:pattern:` imports and the run's exposure set.
    pub fn run(&self, scope: &Scope) -> Result<Written> {
        let run = scope.run_or(self.run_id.clone())?;
        let contents = scope.store().ledger(&run)?.read()?;
        let pattern = &self.pattern;
        let text =
            std::fs::read_to_string(pattern).with_context(|| format!("cannot read pattern `{}`", pattern.display()))?;
        let sidecar = audit::provenance(&contents, &pattern.display().to_string(), &text);
        let out = self.out.clone().unwrap_or_else(|| PathBuf::from(format!("{}.provenance.json", pattern.display())));
        std::fs::write(&out, serde_json::to_vec_pretty(&sidecar)?)
            .with_context(|| format!("cannot write `{}`", out.display()))?;
        Ok(Written { sidecar, out })
    }
}
