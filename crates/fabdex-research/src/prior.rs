//! `--prior RUN`: carry an earlier research call's kit forward. The earlier
//! run's cited texts and inspected pattern records are checked against the
//! current snapshot; those that read the same are recorded in the new run
//! (one `carry_prior` record naming the earlier run), so the new kit may
//! cite them without a second opening pass. A changed grant inventory is
//! never carried: it asks for fresh research, and the outcome says so.

use std::collections::BTreeSet;

use anyhow::{Context, Result};
use fabdex_kit::Kit;
use fabdex_ledger::audit::{Status, check_item};
use fabdex_ledger::{Item, ItemKind, Session};
use serde_json::json;

use crate::service::{OUTCOME_FILE, Outcome, PriorUse, Service};

/// An earlier kit and what of its run still holds.
pub struct Carried {
    pub kit: Kit,
    pub items: Vec<Item>,
    /// Pattern ids the earlier run inspected whose records still read the same.
    pub inspected: Vec<String>,
    pub summary: PriorUse,
}

impl Carried {
    /// One record in the new run: the carried items, under the earlier run's name.
    pub fn record(&self, session: &Session<'_>) -> Result<()> {
        session.record_call("carry_prior", json!({"prior": self.summary.run}), self.items.clone(), None)
    }
}

/// Load `--prior`; `Ok(Err(use))` when it is not carried, with the reason.
pub fn load(svc: &Service<'_>, run: &str, grants_digest: &str) -> Result<Result<Carried, PriorUse>> {
    let path = svc.store.dir.join(run).join(OUTCOME_FILE);
    let text = std::fs::read_to_string(&path).map_err(|_| {
        fabdex_query::QueryError::NotFound(format!(
            "--prior `{run}`: no research outcome at `{}` (give the run id a research call printed)",
            path.display()
        ))
    })?;
    let earlier: Outcome = serde_json::from_str(&text)
        .with_context(|| format!("--prior `{run}`: `{}` is not a research outcome", path.display()))?;
    let not_carried =
        |note: String| PriorUse { run: run.to_string(), carried: false, items_carried: 0, items_dropped: 0, note };
    if earlier.grants.digest != grants_digest {
        return Ok(Err(not_carried(format!(
            "the grant inventory changed since `{run}` (digest {} → {grants_digest}): fresh research, nothing carried",
            earlier.grants.digest
        ))));
    }
    let contents = svc.store.ledger(run)?.read()?;
    let cited: BTreeSet<&str> = earlier.kit.sources.iter().map(|s| s.id.as_str()).collect();
    let selected: BTreeSet<String> = earlier.kit.patterns.iter().map(|p| format!("pattern:{}", p.pattern_id)).collect();
    let mut seen = BTreeSet::new();
    let (mut items, mut dropped) = (Vec::new(), 0);
    for item in contents.records.iter().flat_map(|r| &r.call.items).filter(|i| i.released) {
        let wanted = item.citation.as_deref().is_some_and(|c| cited.contains(c))
            || (item.kind == ItemKind::Record && selected.contains(&item.address));
        if !wanted || !seen.insert((item.address.clone(), item.citation.clone())) {
            continue;
        }
        match check_item(svc.engine, item, false)? {
            (Status::Identical, _, _) => items.push(item.clone()),
            _ => dropped += 1,
        }
    }
    let inspected = items
        .iter()
        .filter(|i| i.kind == ItemKind::Record)
        .filter_map(|i| i.address.strip_prefix("pattern:").map(str::to_string))
        .collect();
    let summary = PriorUse {
        run: run.to_string(),
        carried: true,
        items_carried: items.len(),
        items_dropped: dropped,
        note: if dropped == 0 {
            format!("the kit of `{run}` was carried forward; its {} cited items read the same", items.len())
        } else {
            format!(
                "the kit of `{run}` was carried forward; {dropped} of its cited items changed or are gone and were left behind"
            )
        },
    };
    Ok(Ok(Carried { kit: earlier.kit, items, inspected, summary }))
}
