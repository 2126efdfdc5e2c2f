//! Incremental builds: what a new snapshot can carry from the published one.
//!
//! A docs file whose root, path and digest are unchanged has the same
//! sections, units and unit texts (a unit's text depends on its own file
//! alone: `search_schema::UnitText`), so its units keep their search
//! documents and semantic vectors. The units of edited and removed files
//! are deleted from the search index and those of edited and added files
//! added (`search_write::update`); the semantic models fold the new units
//! into their fitted space (`semantic::fold`) until the drift passes the
//! configured limit, and are then refitted. Every table is still written
//! whole: they are cheap; the search index and the semantic fit are not.
//!
//! An incremental build's tables, blobs and lexical ranking equal a whole
//! rebuild's (`tests/incremental.rs` checks it after edits, additions and
//! deletions); its semantic models equal a rebuild's once refitted.

use std::collections::HashMap;

use fabdex_model::records::DocsTable;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::search_write::{DELETED_LIMIT, SEGMENT_LIMIT};
use fabdex_snapshot::Unit;
use fabdex_snapshot::docs_table::unit_key;
use fabdex_snapshot::snapshot::{IndexLayout, Snapshot};

/// What the published snapshot gives a new build.
pub struct Carry {
    pub previous: Snapshot,
    /// Per docs file of the new build: the previous snapshot's same file.
    pub files: Vec<Option<u32>>,
    /// Per unit of the new build: the previous snapshot's same unit.
    pub units: Vec<Option<u32>>,
    /// Previous files edited or removed: their units leave the search index.
    pub gone: Vec<u32>,
    pub report: IncrementalReport,
}

/// How a build used the published snapshot; in `fabdex index`'s report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IncrementalReport {
    /// The snapshot built on (empty: none; the build was whole).
    pub from_snapshot: String,
    /// Why the build was whole, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_because: Option<String>,
    pub files_edited: u64,
    pub files_added: u64,
    pub files_removed: u64,
    /// Search units deleted from and added to the search index.
    pub units_deleted: u64,
    pub units_added: u64,
    /// `fitted`, `folded` or `refitted`, and why.
    pub semantic: String,
    /// Units folded into the semantic space since its fit, per unit fitted, after this build; and the limit.
    pub semantic_drift: f64,
    pub semantic_drift_limit: f64,
}

impl IncrementalReport {
    /// One line for `fabdex index`'s text report.
    pub fn summary(&self) -> String {
        match &self.whole_because {
            Some(because) => format!("built whole ({because}); semantic models {}", self.semantic),
            None => format!(
                "built on {}: {} files edited, {} added, {} removed; search units {} deleted, {} added; semantic models {} (drift {:.3}, limit {})",
                self.from_snapshot,
                self.files_edited,
                self.files_added,
                self.files_removed,
                self.units_deleted,
                self.units_added,
                self.semantic,
                self.semantic_drift,
                self.semantic_drift_limit
            ),
        }
    }

    /// The report of a whole build, and why it was one.
    pub fn whole(because: impl Into<String>, drift_limit: f64) -> IncrementalReport {
        IncrementalReport {
            whole_because: Some(because.into()),
            semantic: "fitted".into(),
            semantic_drift_limit: drift_limit,
            ..IncrementalReport::default()
        }
    }
}

/// What the published snapshot in `layout` gives a build of `docs`, or why
/// the build must be whole (`full` asked for it; no snapshot; one that does
/// not open; other roots; too many deletions for the search index).
pub fn plan(
    layout: &IndexLayout,
    config: &Config,
    docs: &DocsTable,
    units: &[Unit],
    full: bool,
) -> Result<Carry, String> {
    if full {
        return Err("asked for (--full)".into());
    }
    let (id, previous) = previous_snapshot(layout, config)?;
    let mut report = IncrementalReport { from_snapshot: id, ..IncrementalReport::default() };
    let (mut files, mut kept) = file_matches(&previous, docs, &mut report);
    let unit_rows = unit_matches(&previous, docs, units, &mut files, &mut kept);
    let gone: Vec<u32> = (0..previous.docs.files.len() as u32).filter(|&p| !kept[p as usize]).collect();
    let gone_units: u64 = gone.iter().map(|&p| previous.file_units(p).len() as u64).sum();
    let deleted = gone_units + previous.search_deletions().map_err(|e| format!("{e:#}"))?.map_or(0, |d| d.docs());
    if deleted as f64 > DELETED_LIMIT * units.len() as f64 {
        return Err(format!(
            "{deleted} deleted search documents would pass {}% of the {} live ones",
            DELETED_LIMIT * 100.0,
            units.len()
        ));
    }
    report.units_deleted = gone_units;
    report.units_added = unit_rows.iter().filter(|u| u.is_none()).count() as u64;
    Ok(Carry { previous, files, units: unit_rows, gone, report })
}

/// The published snapshot, if an update may start from it: same roots,
/// same Markdown extractor, intact search index and semantic models, and
/// room for another search segment.
fn previous_snapshot(layout: &IndexLayout, config: &Config) -> Result<(String, Snapshot), String> {
    let id = layout.current_id().ok_or("no snapshot was published")?;
    let previous = Snapshot::open_dir(&layout.snapshot(&id))
        .map_err(|e| format!("the published snapshot does not open: {e:#}"))?;
    let same_roots = previous.manifest.roots.len() == config.roots.len()
        && previous
            .manifest
            .roots
            .iter()
            .zip(&config.roots)
            .all(|(p, r)| p.name == r.name && p.kind == r.kind && p.origin == r.origin_label());
    if !same_roots {
        return Err("the roots changed".into());
    }
    if previous.manifest.extractor_version != fabdex_md::EXTRACTOR_VERSION {
        return Err(format!(
            "the published snapshot's Markdown was extracted by extractor version {}, this fabdex's is {}",
            previous.manifest.extractor_version,
            fabdex_md::EXTRACTOR_VERSION
        ));
    }
    // What is carried is checked against the previous manifest first: a
    // damaged file is never linked into a new snapshot under its recorded digest.
    let segments = match previous.search().and_then(|index| Ok(index.searchable_segment_metas()?.len())) {
        Ok(segments) => segments,
        Err(e) => return Err(format!("the published snapshot is damaged: {e:#}")),
    };
    if let Err(e) = previous.semantic() {
        return Err(format!("the published snapshot is damaged: {e:#}"));
    }
    if segments >= SEGMENT_LIMIT {
        return Err(format!("the search index has {segments} segments, the most an update adds to"));
    }
    Ok((id, previous))
}

/// Each new file's row in the previous snapshot when its digest is the same
/// (else none), which previous files are kept, and the edited, added and
/// removed counts.
fn file_matches(
    previous: &Snapshot,
    docs: &DocsTable,
    report: &mut IncrementalReport,
) -> (Vec<Option<u32>>, Vec<bool>) {
    let before: HashMap<(&str, &str), (u32, &str)> = previous
        .docs
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| ((f.root.as_str(), f.path.as_str()), (i as u32, f.digest.as_str())))
        .collect();
    let mut files = Vec::with_capacity(docs.files.len());
    let mut kept = vec![false; previous.docs.files.len()];
    for f in &docs.files {
        match before.get(&(f.root.as_str(), f.path.as_str())) {
            Some((p, digest)) if *digest == f.digest => {
                kept[*p as usize] = true;
                files.push(Some(*p));
            }
            Some(_) => {
                report.files_edited += 1;
                files.push(None);
            }
            None => {
                report.files_added += 1;
                files.push(None);
            }
        }
    }
    report.files_removed = previous.docs.files.len() as u64 + report.files_added - docs.files.len() as u64;
    (files, kept)
}

/// Each unit's row in the previous snapshot, found by key in a carried file.
/// A carried file's units are all found by key, and it has as many as
/// before; were it not so, the file is treated as edited rather than
/// trusted in part (a unit left over would stay in the search index).
fn unit_matches(
    previous: &Snapshot,
    docs: &DocsTable,
    units: &[Unit],
    files: &mut [Option<u32>],
    kept: &mut [bool],
) -> Vec<Option<u32>> {
    let mut unit_rows: Vec<Option<u32>> = units
        .iter()
        .map(|u| {
            files[docs.sections[u.section as usize].file as usize].and(previous.docs.unit_of_key(unit_key(&u.address)))
        })
        .collect();
    let mut unit_counts = vec![0usize; docs.files.len()];
    for unit in units {
        unit_counts[docs.sections[unit.section as usize].file as usize] += 1;
    }
    for (u, unit) in units.iter().enumerate() {
        let file = docs.sections[unit.section as usize].file as usize;
        if let (Some(p), None) = (files[file], unit_rows[u]) {
            kept[p as usize] = false;
            files[file] = None;
        }
    }
    for (file, carried) in files.iter_mut().enumerate() {
        if let Some(p) = *carried
            && previous.file_units(p).len() != unit_counts[file]
        {
            kept[p as usize] = false;
            *carried = None;
        }
    }
    for (u, unit) in units.iter().enumerate() {
        if files[docs.sections[unit.section as usize].file as usize].is_none() {
            unit_rows[u] = None;
        }
    }
    unit_rows
}
