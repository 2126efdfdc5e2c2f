//! `fabdex kit …`: the kit's JSON Schema, and admission of a proposed kit
//! against the run of the global `--run`, the index and the granted handles.
//! Returns what admission found for the binary's printing module to show.

use std::path::PathBuf;

use anyhow::{Context, Result};
use fabdex_ledger::cli::Scope;
use fabdex_query::QueryError;
use serde::Serialize;

use crate::{Admission, Handle, Inventory, Kit};

#[derive(Debug, Clone, clap::Subcommand)]
pub enum KitCommand {
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

/// What a `fabdex kit …` command gives.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum KitAnswer {
    Schema(serde_json::Value),
    Admitted(Box<Admitted>),
}

/// A proposed kit's admission, and the file it came from.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Admitted {
    pub admission: Admission,
    #[serde(skip)]
    pub kit: PathBuf,
}

fn parsed<T: serde::de::DeserializeOwned>(path: &std::path::Path, what: &str, invalid: &str) -> Result<T> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {what} `{}`", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| QueryError::InvalidArgument(format!("{what} `{}` {invalid}: {e}", path.display())).into())
}

impl KitCommand {
    pub fn run(&self, scope: &Scope) -> Result<KitAnswer> {
        let (kit, handles) = match self {
            KitCommand::Schema => return Ok(KitAnswer::Schema(crate::schema())),
            KitCommand::Admit { kit, handles } => (kit, handles),
        };
        // The run whose reads the kit may cite: the global --run / FABDEX_RUN.
        let run = scope.run_or(None)?;
        let proposed: Kit = parsed(kit, "kit", "is not a valid kit")?;
        let handles: Vec<Handle> = match handles {
            None => vec![],
            Some(path) => parsed::<Inventory>(path, "handles", "are not valid")?.handles().to_vec(),
        };
        let engine = scope.engine()?;
        let contents = scope.store().ledger(&run)?.read()?;
        let admission = crate::admit(engine, &contents, &handles, &proposed);
        Ok(KitAnswer::Admitted(Box::new(Admitted { admission, kit: kit.clone() })))
    }
}
