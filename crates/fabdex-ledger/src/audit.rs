//! What a run read, checked against the snapshot: exposure, consulted
//! sources, citations reopened, and verification of every read.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use fabdex_model::Limits;
use fabdex_query::{Engine, QueryError};
use serde::{Deserialize, Serialize};

use crate::record::{Item, ItemKind, Record};
use crate::session::record_digest;
use crate::store::{Contents, RunStore};

/// Origins a run has read, with counts. It only grows: every released or
/// withheld item of every record counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Exposure {
    pub run: String,
    /// Origin → items released from it.
    pub released: BTreeMap<String, u64>,
    /// Origin → items the policy withheld (no text entered the run).
    pub withheld: BTreeMap<String, u64>,
    /// Origins whose text (bodies, snippets, records, or the headings and
    /// names of metadata calls) entered the run's context: the exposure set.
    pub origins: Vec<String>,
}

pub fn exposure(contents: &Contents) -> Exposure {
    let mut released = BTreeMap::new();
    let mut withheld = BTreeMap::new();
    for item in contents.records.iter().flat_map(|r| &r.call.items) {
        let map = if item.released { &mut released } else { &mut withheld };
        *map.entry(item.origin.clone()).or_insert(0) += 1;
    }
    Exposure { run: contents.run.clone(), origins: released.keys().cloned().collect(), released, withheld }
}

/// One source a run read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Consulted {
    pub address: String,
    pub origin: String,
    pub kind: ItemKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citation: Option<String>,
    /// Sequence number of the record.
    pub seq: u64,
}

/// Docs and patterns a run consulted (released text only), apart from any
/// pattern's dependencies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConsultedSet {
    pub run: String,
    pub docs: Vec<Consulted>,
    pub patterns: Vec<Consulted>,
}

pub fn consulted(contents: &Contents) -> ConsultedSet {
    let mut set = ConsultedSet { run: contents.run.clone(), docs: vec![], patterns: vec![] };
    for r in &contents.records {
        for i in r.call.items.iter().filter(|i| i.released && i.kind != ItemKind::Metadata) {
            let c = Consulted {
                address: i.address.clone(),
                origin: i.origin.clone(),
                kind: i.kind,
                digest: i.digest.clone(),
                citation: i.citation.clone(),
                seq: r.seq,
            };
            let list = if i.address.starts_with("pattern:") { &mut set.patterns } else { &mut set.docs };
            if !list.iter().any(|x| x.citation == c.citation && x.address == c.address) {
                list.push(c);
            }
        }
    }
    set
}

/// What a read looks like now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Identical,
    ChangedSince,
    Gone,
    /// Withheld or metadata-only: no text to compare.
    NotChecked,
}

/// One item checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Check {
    pub seq: u64,
    pub address: String,
    pub kind: ItemKind,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citation: Option<String>,
    /// Why it is changed or gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The text as it reads now (`cite` only, when identical or changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

fn gone_or_error(err: QueryError) -> Result<(Status, Option<String>, Option<String>)> {
    match err {
        QueryError::NotFound(m) => Ok((Status::Gone, Some(m), None)),
        QueryError::InvalidArgument(m) => Ok((Status::Gone, Some(m), None)),
        other => Err(other.into()),
    }
}

/// Compare one item with the snapshot; `with_text` also returns the text as it reads now.
pub fn check_item(engine: &Engine, item: &Item, with_text: bool) -> Result<(Status, Option<String>, Option<String>)> {
    if !item.released {
        return Ok((Status::NotChecked, Some("withheld by the policy: no text was released".into()), None));
    }
    let changed = |now: &str| Some(format!("digest was {}, is {now}", item.digest.as_deref().unwrap_or("-")));
    match item.kind {
        ItemKind::Metadata => Ok((Status::NotChecked, None, None)),
        ItemKind::Read => {
            let (offset, end) = (item.offset.unwrap_or(0), item.end.unwrap_or(0));
            let max = end.saturating_sub(offset).clamp(1, Limits::READ_MAX_CHARS);
            let result = engine.read_with(&item.address, None, Some(max), item.max_line_chars);
            match result {
                Ok(env) if Some(&env.digest) == item.digest.as_ref() && env.end == end => {
                    Ok((Status::Identical, None, with_text.then_some(env.text)))
                }
                Ok(env) => Ok((Status::ChangedSince, changed(&env.digest), with_text.then_some(env.text))),
                Err(e) => gone_or_error(e),
            }
        }
        ItemKind::Snippet => match engine.addressed_digest(&item.address) {
            Ok((_, _, digest)) if Some(&digest) == item.source_digest.as_ref() => Ok((Status::Identical, None, None)),
            Ok((_, _, digest)) => Ok((
                Status::ChangedSince,
                Some(format!(
                    "section digest was {}, is {digest}",
                    item.source_digest.as_deref().unwrap_or("(not recorded)")
                )),
                None,
            )),
            Err(e) => gone_or_error(e),
        },
        ItemKind::PatternHit => match engine.inspect(&item.address) {
            Ok(i) => {
                let description = i.description.unwrap_or_default();
                let digest = fabdex_model::digest_text(&description);
                let status =
                    if Some(&digest) == item.digest.as_ref() { Status::Identical } else { Status::ChangedSince };
                let detail = (status == Status::ChangedSince).then(|| changed(&digest)).flatten();
                Ok((status, detail, with_text.then_some(description)))
            }
            Err(e) => gone_or_error(e),
        },
        ItemKind::Record => match engine.inspect(&item.address) {
            Ok(i) => {
                let digest = record_digest(&i);
                let status =
                    if Some(&digest) == item.digest.as_ref() { Status::Identical } else { Status::ChangedSince };
                let detail = (status == Status::ChangedSince).then(|| changed(&digest)).flatten();
                Ok((status, detail, with_text.then(|| serde_json::to_string_pretty(&i).unwrap_or_default())))
            }
            Err(e) => gone_or_error(e),
        },
    }
}

/// `ledger verify`: every released text item of a run against the snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verification {
    pub run: String,
    pub snapshot: String,
    pub identical: usize,
    pub changed_since: usize,
    pub gone: usize,
    pub not_checked: usize,
    pub checks: Vec<Check>,
    /// Ledger lines that are not records (a torn last line, say).
    pub problems: Vec<crate::store::LineProblem>,
}

impl Verification {
    /// True when every checked read is identical. Ledger lines that are not
    /// records (a torn line after a crash) are reported in `problems` but do
    /// not fail verification: they are not reads.
    pub fn ok(&self) -> bool {
        self.changed_since == 0 && self.gone == 0
    }
}

pub fn verify(engine: &Engine, contents: &Contents) -> Result<Verification> {
    let mut v = Verification {
        run: contents.run.clone(),
        snapshot: engine.snapshot_id().to_string(),
        identical: 0,
        changed_since: 0,
        gone: 0,
        not_checked: 0,
        checks: vec![],
        problems: contents.problems.clone(),
    };
    for r in &contents.records {
        for item in &r.call.items {
            let (status, detail, _) = check_item(engine, item, false)?;
            match status {
                Status::Identical => v.identical += 1,
                Status::ChangedSince => v.changed_since += 1,
                Status::Gone => v.gone += 1,
                Status::NotChecked => {
                    v.not_checked += 1;
                    continue;
                }
            }
            v.checks.push(Check {
                seq: r.seq,
                address: item.address.clone(),
                kind: item.kind,
                status,
                citation: item.citation.clone(),
                detail,
                text: None,
            });
        }
    }
    Ok(v)
}

/// `ledger cite`: find a citation (in one run, or every run) and reopen it.
pub fn cite(engine: &Engine, store: &RunStore, citation: &str, run: Option<&str>) -> Result<(Record, Check)> {
    let runs = match run {
        Some(r) => vec![r.to_string()],
        None => store.runs(),
    };
    for run in runs {
        let contents = store.ledger(&run)?.read()?;
        for r in contents.records {
            if let Some(item) = r.call.items.iter().find(|i| i.citation.as_deref() == Some(citation)) {
                let (status, detail, text) = check_item(engine, item, true)?;
                let check = Check {
                    seq: r.seq,
                    address: item.address.clone(),
                    kind: item.kind,
                    status,
                    citation: item.citation.clone(),
                    detail,
                    text,
                };
                return Ok((r, check));
            }
        }
    }
    bail!(QueryError::NotFound(format!(
        "no citation `{citation}` in {}",
        run.map_or("any run".to_string(), |r| format!("run `{r}`"))
    )))
}

/// The provenance sidecar of an authored pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Provenance {
    pub run: String,
    /// The pattern file, and the digest of its text.
    pub pattern: String,
    pub pattern_digest: String,
    /// What the run read (docs and patterns), with digests and citations.
    pub consulted: ConsultedSet,
    /// The pattern's own `cf:pattern:` imports: what it is built from, not what was read.
    pub imports: Vec<String>,
    /// Origins whose text entered the run: the sidecar inherits them.
    pub exposure: Vec<String>,
}

pub fn provenance(contents: &Contents, pattern_path: &str, pattern_text: &str) -> Provenance {
    let extraction = fabdex_ts::extract(pattern_path, pattern_text);
    let mut imports: Vec<String> = extraction
        .imports
        .iter()
        .filter_map(|i| i.cf.as_ref().and_then(|c| c.pattern_id()).map(str::to_string))
        .collect();
    imports.sort();
    imports.dedup();
    Provenance {
        run: contents.run.clone(),
        pattern: pattern_path.to_string(),
        pattern_digest: fabdex_model::digest_text(pattern_text),
        consulted: consulted(contents),
        imports,
        exposure: exposure(contents).origins,
    }
}
