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

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::PathBuf;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use fabdex_model::records::RootKind;
use rayon::prelude::*;

use crate::cache::Caches;
use crate::config::Config;
use crate::patterns::TsFile;
use crate::published::PublishedSet;
use crate::walk::walk_root;
use extract::{Outcome, ReadFile, cache_counts, published_candidates, read_and_extract};
use fabdex_snapshot::snapshot::IndexLayout;
use plan::snapshot_id;
use publish::{gc, publish, publish_current};
use report::{lap, progress_bar};
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
    let max_bytes = config.index.max_file_bytes;
    let roots: Vec<(String, PathBuf)> = config
        .roots
        .iter()
        .map(|r| Ok((r.name.clone(), r.path.canonicalize().with_context(|| format!("root `{}`", r.name))?)))
        .collect::<Result<_>>()?;

    // Walk.
    let mut candidates = Vec::new();
    let mut skipped = Vec::new();
    let mut seen: Vec<HashSet<String>> = Vec::new();
    let mut published: Vec<(usize, PublishedSet)> = Vec::new();
    let mut raw_files: Vec<String> = Vec::new();
    for (i, root) in config.roots.iter().enumerate() {
        if root.kind == Some(RootKind::Published) {
            let set = crate::published::read_root(root)?;
            let (sources, raw) = published_candidates(i, &set);
            candidates.extend(sources);
            raw_files.extend(raw);
            published.push((i, set));
            seen.push(HashSet::new());
            continue;
        }
        let walked = walk_root(i, root)?;
        candidates.extend(walked.candidates);
        skipped.extend(walked.skipped);
        seen.push(walked.seen.into_iter().collect());
    }

    phases.insert("walk".into(), lap(&mut clock));

    // Read, classify and extract in parallel.
    let Caches { md: md_cache, ts: ts_cache, contracts: contracts_cache } = Caches::under(&layout.cache());
    let bar = progress_bar(opts.progress, candidates.len() as u64);
    let outcomes: Vec<Outcome> = candidates
        .into_par_iter()
        .map(|c| {
            let out = read_and_extract(c, config, max_bytes, (&md_cache, &ts_cache));
            if let Some(bar) = &bar {
                bar.inc(1);
            }
            out
        })
        .collect();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut files: Vec<ReadFile> = Vec::new();
    let mut ts_files: Vec<TsFile> = Vec::new();
    for o in outcomes {
        match o {
            Outcome::Read(f) => files.push(*f),
            Outcome::ReadTs(f) => ts_files.push(*f),
            Outcome::Skip(s) => skipped.push(s),
        }
    }

    // Each cache keeps the entries of the sources read now.
    md_cache.save(files.iter().map(|f| &f.digest));
    ts_cache.save(ts_files.iter().map(|f| &f.digest));
    drop((md_cache, ts_cache));
    phases.insert("read_extract".into(), lap(&mut clock));

    // The platform's API declarations, when configured: contracts depend on them.
    let commonfabric_types = match &config.index.commonfabric_types {
        Some(path) => Some(
            fs::read_to_string(path)
                .with_context(|| format!("[index] commonfabric_types: cannot read `{}`", path.display()))?,
        ),
        None => None,
    };

    // The embedding model is loaded before anything is written: a bad one fails the build here.
    let encoder = match &config.index.embeddings {
        Some(dir) => Some(crate::embeddings::load_model(dir, config.index.precision().0)?),
        None => None,
    };

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
        let mut report: IndexReport = fabdex_snapshot::snapshot::read_json(&layout.snapshot(&id).join("report.json"))?;
        report.unchanged = true;
        (report.extracted, report.reused_from_cache) = cache_counts(&files, &ts_files);
        report.index_dir = layout.root.display().to_string();
        publish_current(&layout, &id)?;
        phases.insert("publish".into(), lap(&mut clock));
        report.phases_ms = phases;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        gc(&layout, &id, opts.keep_snapshots);
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
