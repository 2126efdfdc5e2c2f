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
pub mod fit;
pub mod grants;
pub mod prior;
mod prompt;
mod run;
mod service;
pub mod tool;
pub mod toolset;
pub mod window;

use std::path::PathBuf;

use anyhow::{Context, Result};
use fabdex_ledger::RunStore;

pub use budget::{Budgets, Spent};
pub use chat::{Client, Endpoint};
pub use grants::Grants;
pub use service::{
    GrantsInfo, KIT_FILE, ModelInfo, OUTCOME_FILE, Outcome, PATTERN_REFS_MAX, PriorUse, Request, Service, Settings,
    TASK_MAX_CHARS,
};

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
