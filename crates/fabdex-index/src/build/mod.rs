//! One build: walk → read and classify → extract (cached by digest) →
//! assemble tables → resolve links → write blobs, tables and the search index
//! into a staging directory → publish atomically.

mod embed;
mod extract;
mod files;
mod plan;
mod publish;
mod report;
mod write;

pub use publish::verify_all;
pub use report::{BuildOptions, EmbeddingsReport, FileDiagnostics, IndexReport, UnresolvedLink};

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use crate::cache::Caches;
use crate::config::Config;
use extract::{Walked, cache_counts, extract_all, walk};
use fabdex_snapshot::snapshot::IndexLayout;
use plan::snapshot_id;
use publish::{gc, publish, publish_current};
use report::lap;
use write::{docs_table_of, resolve_links, write_snapshot};

/// Build a snapshot of `config`'s roots and publish it in `opts.index_dir`.
pub fn build(config: &Config, opts: &BuildOptions) -> Result<IndexReport> {
    let started = Instant::now();
    let mut clock = Instant::now();
    let mut phases: BTreeMap<String, u64> = BTreeMap::new();
    config.validate()?;
    let layout = IndexLayout::new(&opts.index_dir);
    for dir in [layout.snapshots(), layout.staging(), layout.cache()] {
        fs::create_dir_all(&dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    let roots: Vec<(String, PathBuf)> = config
        .roots
        .iter()
        .map(|r| Ok((r.name.clone(), r.path.canonicalize().with_context(|| format!("root `{}`", r.name))?)))
        .collect::<Result<_>>()?;

    let Walked { candidates, mut skipped, seen, published, raw_files } = walk(config)?;
    phases.insert("walk".into(), lap(&mut clock));

    let Caches { md: md_cache, ts: ts_cache, contracts: contracts_cache } = Caches::under(&layout.cache());
    let (files, ts_files, unread) = extract_all(candidates, config, (&md_cache, &ts_cache), opts.progress);
    skipped.extend(unread);
    // Each cache keeps the entries of the sources read now.
    md_cache.save(files.iter().map(|f| &f.digest));
    ts_cache.save(ts_files.iter().map(|f| &f.digest));
    drop((md_cache, ts_cache));
    phases.insert("read_extract".into(), lap(&mut clock));

    let (commonfabric_types, encoder) = build_inputs(config)?;

    // Same sources as an intact published snapshot: re-publish it as it is.
    let id = snapshot_id(
        config,
        &files,
        &ts_files,
        &seen,
        &skipped,
        &published,
        commonfabric_types.as_deref(),
        encoder.as_ref().map(|e| (e.identity(), e.precision())),
    );
    if !opts.full && layout.snapshot(&id).exists() && verify_all(&layout.snapshot(&id)).is_ok() {
        let mut report = republish(&layout, &id, cache_counts(&files, &ts_files), opts.keep_snapshots)?;
        phases.insert("publish".into(), lap(&mut clock));
        report.phases_ms = phases;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    }

    let (docs, by_address) = docs_table_of(config, &files);
    let (docs, unresolved, mut counts) = resolve_links(&roots, seen, &files, docs, by_address);

    phases.insert("tables_links".into(), lap(&mut clock));

    // Write the snapshot into staging.
    let staging = layout.staging().join(format!(
        "build-{}-{}",
        std::process::id(),
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
    ));
    let result = write_snapshot(
        &id,
        opts.full,
        &contracts_cache,
        &ts_files,
        &published,
        commonfabric_types.as_deref(),
        encoder.as_ref(),
        opts.progress,
        &raw_files,
        &staging,
        &layout,
        config,
        &files,
        &docs,
        &mut counts,
        &skipped,
        unresolved,
        started,
        &mut phases,
    );
    let (manifest, mut report) = match result {
        Ok(ok) => ok,
        Err(e) => {
            let _ = fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    lap(&mut clock);
    report.unchanged = publish(&layout, &staging, &manifest.snapshot_id, opts.full)?;
    phases.insert("publish".into(), lap(&mut clock));
    gc(&layout, &manifest.snapshot_id, opts.keep_snapshots);
    phases.insert("gc".into(), lap(&mut clock));
    report.phases_ms = phases;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// What the build reads besides the sources: the platform's API
/// declarations (contracts depend on them) and the embedding model, loaded
/// before anything is written, so that a bad one fails the build here.
fn build_inputs(config: &Config) -> Result<(Option<String>, Option<fabdex_embed::SentenceEncoder>)> {
    let commonfabric_types = match &config.index.commonfabric_types {
        Some(path) => Some(
            fs::read_to_string(path)
                .with_context(|| format!("[index] commonfabric_types: cannot read `{}`", path.display()))?,
        ),
        None => None,
    };

    let encoder = match &config.index.embeddings {
        Some(dir) => Some(crate::embeddings::load_model(dir, config.index.precision().0)?),
        None => None,
    };

    Ok((commonfabric_types, encoder))
}

/// Same sources as an intact published snapshot: publish it again as it is,
/// with its report (marked unchanged, with this build's cache counts).
fn republish(layout: &IndexLayout, id: &str, counts: (u64, u64), keep: usize) -> Result<IndexReport> {
    let mut report: IndexReport = fabdex_snapshot::snapshot::read_json(&layout.snapshot(id).join("report.json"))?;
    report.unchanged = true;
    (report.extracted, report.reused_from_cache) = counts;
    report.index_dir = layout.root.display().to_string();
    publish_current(layout, id)?;
    gc(layout, id, keep);
    Ok(report)
}
