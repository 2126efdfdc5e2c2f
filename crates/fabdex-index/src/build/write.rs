//! Write the staged snapshot: blobs, the docs and patterns tables, links
//! resolved, the search index and semantic models (whole or carried), counts
//! and the manifest.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use fabdex_model::digest::digest_bytes;
use fabdex_model::records::{DocFileRow, DocsTable, LinkRow, LinkTarget, RootKind, SectionRow, is_historical};
use rayon::prelude::*;

use super::embed::{EmbeddingsStep, write_embeddings};
use super::extract::{ReadFile, cache_counts};
use super::files::{Staged, create_dir, write_file, write_tables};
use super::plan::{manifest_files, manifest_roots};
use super::report::{FileDiagnostics, IndexReport, UnresolvedLink, lap};
use crate::cache::Cache;
use crate::config::Config;
use crate::incremental::{Carry, IncrementalReport};
use crate::links::Resolver;
use crate::patterns::TsFile;
use crate::published::PublishedSet;
use crate::semantic::Carried;
use crate::walk::Skipped;
use fabdex_model::ts::IdentityStatus;
use fabdex_snapshot::blobs::BlobStore;
use fabdex_snapshot::search_schema::{self, UnitText};
use fabdex_snapshot::snapshot::{Counts, FORMAT_VERSION, IndexLayout, Manifest, SEARCH_VERSION, SemanticFit, units_of};

#[allow(clippy::too_many_arguments)]
pub(crate) fn write_snapshot(
    id: &str,
    full: bool,
    contracts_cache: &Cache,
    ts_files: &[TsFile],
    published: &[(usize, PublishedSet)],
    commonfabric_types: Option<&str>,
    encoder: Option<&fabdex_embed::SentenceEncoder>,
    progress: bool,
    raw_files: &[String],
    staging: &Path,
    layout: &IndexLayout,
    config: &Config,
    files: &[ReadFile],
    docs: &DocsTable,
    counts: &mut Counts,
    skipped: &[Skipped],
    unresolved: Vec<UnresolvedLink>,
    started: Instant,
    phases: &mut BTreeMap<String, u64>,
) -> Result<(Manifest, IndexReport)> {
    let mut clock = Instant::now();
    create_dir(staging.join("tables"))?;
    create_dir(staging.join("search"))?;

    write_blobs(staging, files, ts_files, raw_files)?;
    phases.insert("blobs".into(), lap(&mut clock));

    // Tables.
    let docs_bytes = fabdex_snapshot::docs_table::encode(docs).map_err(anyhow::Error::msg)?;
    write_file(staging.join(fabdex_snapshot::docs_table::PATH), &docs_bytes)?;
    let mut tables = BTreeMap::new();
    tables.insert(fabdex_snapshot::docs_table::PATH.to_string(), digest_bytes(&docs_bytes));
    phases.insert("tables_write".into(), lap(&mut clock));

    // Search index and semantic models: carried from the published snapshot
    // where they can be; the pattern programs are assembled meanwhile.
    let units = units_of(docs);
    let carry = crate::incremental::plan(layout, config, docs, &units, full);
    phases.insert("carry".into(), lap(&mut clock));
    let texts: Vec<&str> = files.iter().map(|f| f.text.as_str()).collect();
    let programs =
        || programs_table(config, staging, contracts_cache, ts_files, files, published, commonfabric_types, docs);
    let (written, assembled) =
        search_and_semantic(staging, id, config, &texts, docs, &units, &carry, phases, programs)?;
    let ProgramsTable { patterns, duplicates, profile_report, digest, phases: programs_phases } = assembled?;
    phases.extend(programs_phases);
    let skipped: Vec<Skipped> = skipped.iter().cloned().chain(duplicates).collect();
    let skipped = &skipped[..];
    tables.insert(fabdex_snapshot::patterns_table::PATH.to_string(), digest);
    count_programs(counts, &patterns);
    write_semantic(staging, &written, &mut tables, counts)?;
    let models = &written.models;
    phases.insert("semantic_write".into(), lap(&mut clock));

    // Pattern search's term table, with each program's vector in the units model's space.
    let bytes = crate::pattern_terms::encode(&patterns.programs, &models.units);
    write_file(staging.join(crate::pattern_terms::PATH), &bytes)?;
    tables.insert(crate::pattern_terms::PATH.to_string(), digest_bytes(&bytes));
    phases.insert("pattern_terms".into(), lap(&mut clock));

    // Sentence embeddings, when a model was given.
    let mut embeddings_report = None;
    if let Some(encoder) = encoder {
        let staged = Staged { dir: staging, layout, progress };
        let step = EmbeddingsStep::new(files, docs, &units, &patterns.programs, carry.as_ref().ok(), config);
        let chosen = config.index.precision().1;
        embeddings_report = Some(write_embeddings(encoder, chosen, &staged, &step, &mut tables, counts)?);
        phases.insert("embeddings".into(), lap(&mut clock));
    }

    count_docs(counts, files, docs, units.len(), skipped.len());
    let manifest = manifest_of(id, config, files, counts, tables, &written);
    let (extracted, reused_from_cache) = cache_counts(files, ts_files);
    let report = IndexReport {
        snapshot_id: id.to_string(),
        index_dir: layout.root.display().to_string(),
        unchanged: false,
        roots: manifest.roots.clone(),
        counts: counts.clone(),
        extracted,
        reused_from_cache,
        skipped: skipped.to_vec(),
        diagnostics: file_diagnostics(docs),
        unresolved_links: unresolved,
        elapsed_ms: started.elapsed().as_millis() as u64,
        phases_ms: phases.clone(),
        embeddings: embeddings_report,
        profiles: profile_report,
        incremental: written.report.clone(),
    };
    write_file(staging.join("report.json"), serde_json::to_vec_pretty(&report)?)?;
    // The manifest is written last: a staging directory without one is incomplete.
    write_file(staging.join("manifest.json"), serde_json::to_vec_pretty(&manifest)?)?;
    Ok((manifest, report))
}

/// Blobs: one pack of every distinct text, written whole (the texts are all in memory).
fn write_blobs(staging: &Path, files: &[ReadFile], ts_files: &[TsFile], raw_files: &[String]) -> Result<()> {
    let texts: Vec<&String> =
        files.iter().map(|f| &f.text).chain(ts_files.iter().map(|f| &f.text)).chain(raw_files).collect();
    let hashed: Vec<(blake3::Hash, &[u8])> =
        texts.par_iter().map(|text| (blake3::hash(text.as_bytes()), text.as_bytes())).collect();
    BlobStore::write(&staging.join(fabdex_snapshot::blobs::PACK), hashed)?;
    Ok(())
}

/// The search index's deletions (an incremental build's) and the semantic
/// models' tables, with their counts.
fn write_semantic(
    staging: &Path,
    written: &SearchAndSemantic,
    tables: &mut BTreeMap<String, String>,
    counts: &mut Counts,
) -> Result<()> {
    let models = &written.models;
    if let Some(deletions) = &written.deletions {
        let bytes = serde_json::to_vec(deletions)?;
        write_file(staging.join(search_schema::DELETIONS_TABLE), &bytes)?;
        tables.insert(search_schema::DELETIONS_TABLE.to_string(), digest_bytes(&bytes));
    }
    let units_model = || models.units.to_bytes();
    let files_model = || models.files.to_bytes();
    let passages = || models.passages.to_bytes();
    write_tables(
        staging,
        tables,
        &[
            (crate::semantic::UNITS_TABLE, &units_model),
            (crate::semantic::FILES_TABLE, &files_model),
            (crate::semantic::PASSAGES_TABLE, &passages),
        ],
    )?;
    counts.semantic_passages = models.passages.len() as u64;
    counts.semantic_dimensions = models.units.dim() as u64;
    counts.semantic_vocabulary = models.units.vocabulary() as u64;
    Ok(())
}

/// The manifest of the staged snapshot: versions, roots, files, counts and
/// the digest of every table and search file.
fn manifest_of(
    id: &str,
    config: &Config,
    files: &[ReadFile],
    counts: &Counts,
    tables: BTreeMap<String, String>,
    written: &SearchAndSemantic,
) -> Manifest {
    Manifest {
        format_version: FORMAT_VERSION,
        extractor_version: fabdex_md::EXTRACTOR_VERSION,
        search_version: SEARCH_VERSION,
        snapshot_id: id.to_string(),
        created_unix: SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        fabdex_version: env!("CARGO_PKG_VERSION").to_string(),
        roots: manifest_roots(config),
        files: manifest_files(config, files),
        counts: counts.clone(),
        tables,
        search_files: written.search_files.clone(),
        semantic_fit: written.fit.clone(),
    }
}

/// The docs table's files and sections (links come next), and every
/// section's row by address.
pub(crate) fn docs_table_of(config: &Config, files: &[ReadFile]) -> (DocsTable, HashMap<String, u32>) {
    let mut docs = DocsTable::default();
    let mut by_address: HashMap<String, u32> = HashMap::new();
    for f in files {
        let root_cfg = &config.roots[f.candidate.root];
        let first_section = docs.sections.len() as u32;
        let file_index = docs.files.len() as u32;
        for s in &f.extraction.sections {
            let address = format!("doc:{}/{}#{}", root_cfg.name, f.candidate.path, s.anchor);
            by_address.insert(address.clone(), docs.sections.len() as u32);
            docs.sections.push(SectionRow {
                address,
                file: file_index,
                parent_row: s.parent.map(|p| first_section + p),
                section: s.clone(),
            });
        }
        docs.files.push(DocFileRow {
            root: root_cfg.name.clone(),
            path: f.candidate.path.clone(),
            origin: root_cfg.origin_label(),
            kind: root_cfg.kind.unwrap_or(RootKind::Docs),
            digest: f.digest.clone(),
            bytes: f.text.len() as u64,
            chars: f.text.chars().count() as u64,
            lines: f.text.lines().count() as u32,
            title: f.extraction.title.clone(),
            metadata: f.extraction.metadata.clone(),
            leading_comment: f.extraction.leading_comment.clone(),
            historical: is_historical(&f.extraction.metadata),
            diagnostics: f.extraction.diagnostics.clone(),
            first_section,
            section_count: f.extraction.sections.len() as u32,
        });
    }
    (docs, by_address)
}

/// Resolve every link of the docs table against the indexed files and
/// sections (`seen`: every path under each root), adding the link rows;
/// returns the table, the links that did not resolve and the link counts.
pub(crate) fn resolve_links(
    roots: &[(String, PathBuf)],
    seen: Vec<HashSet<String>>,
    files: &[ReadFile],
    mut docs: DocsTable,
    mut by_address: HashMap<String, u32>,
) -> (DocsTable, Vec<UnresolvedLink>, Counts) {
    let folders: Vec<HashSet<String>> = seen
        .iter()
        .map(|paths| {
            let mut dirs = HashSet::new();
            for p in paths {
                let mut dir = Path::new(p).parent();
                while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
                    if !dirs.insert(d.to_string_lossy().into_owned()) {
                        break;
                    }
                    dir = d.parent();
                }
            }
            dirs
        })
        .collect();
    let indexed: HashMap<(usize, String), u32> =
        files.iter().enumerate().map(|(i, f)| ((f.candidate.root, f.candidate.path.clone()), i as u32)).collect();
    // HTML anchors lead to their section, unless a heading already owns the name.
    for (i, row) in docs.sections.iter().enumerate() {
        let file = &docs.files[row.file as usize];
        for id in &row.section.html_anchors {
            by_address.entry(format!("doc:{}/{}#{id}", file.root, file.path)).or_insert(i as u32);
        }
    }
    let section_addresses: Vec<String> = docs.sections.iter().map(|s| s.address.clone()).collect();
    let resolver = Resolver {
        roots: roots.to_vec(),
        seen,
        folders,
        files: indexed,
        sections: &by_address,
        section_addresses: &section_addresses,
    };
    let mut unresolved = Vec::new();
    let mut counts = Counts::default();
    for (fi, f) in files.iter().enumerate() {
        let first = docs.files[fi].first_section;
        for link in &f.extraction.links {
            let (target, to_section) = resolver.resolve(f.candidate.root, &f.candidate.path, link);
            let from = first + link.section;
            match &target {
                LinkTarget::Section { .. } => counts.links_to_sections += 1,
                LinkTarget::File { .. } | LinkTarget::Folder { .. } => counts.links_to_files += 1,
                LinkTarget::External { .. } => counts.links_external += 1,
                LinkTarget::Unresolved { reason } => {
                    counts.links_unresolved += 1;
                    unresolved.push(UnresolvedLink {
                        from: docs.sections[from as usize].address.clone(),
                        line: link.line,
                        dest: link.dest.clone(),
                        reason: reason.clone(),
                    });
                }
            }
            docs.links.push(LinkRow {
                from,
                kind: link.kind,
                dest: link.dest.clone(),
                text: link.text.clone(),
                line: link.line,
                lines: link.lines,
                target,
                to_section,
            });
        }
    }
    (docs, unresolved, counts)
}

/// The counts of the docs table.
pub(crate) fn count_docs(counts: &mut Counts, files: &[ReadFile], docs: &DocsTable, units: usize, skipped: usize) {
    counts.files = files.len() as u64;
    counts.bytes = files.iter().map(|f| f.text.len() as u64).sum();
    counts.sections = docs.sections.len() as u64;
    counts.parts = docs.sections.iter().map(|s| s.section.parts.len() as u64).sum();
    counts.units = units as u64;
    counts.links = docs.links.len() as u64;
    counts.skipped = skipped as u64;
    counts.diagnostics = docs.files.iter().map(|f| f.diagnostics.len() as u64).sum();
}

/// The counts of the patterns table.
pub(crate) fn count_programs(counts: &mut Counts, patterns: &fabdex_model::ts::PatternsTable) {
    counts.source_files = patterns.files.len() as u64;
    counts.programs = patterns.programs.len() as u64;
    let published_rows = patterns.programs.iter().filter(|p| p.published.is_some());
    counts.published_records = published_rows.clone().count() as u64;
    counts.records_without_source = published_rows.clone().filter(|p| !p.has_source).count() as u64;
    counts.identity_mismatch =
        patterns.programs.iter().filter(|p| p.identity.status == IdentityStatus::Mismatch).count() as u64;
    counts.identity_unverifiable =
        patterns.programs.iter().filter(|p| p.identity.status == IdentityStatus::Unverifiable).count() as u64;
    counts.schema_disagreements = patterns.programs.iter().filter(|p| p.agreement.disagrees()).count() as u64;
    counts.source_parse_failures = patterns.files.iter().filter(|f| f.extraction.parse_failed).count() as u64;
}

/// The report's diagnostics: each Markdown file's that has any.
pub(crate) fn file_diagnostics(docs: &DocsTable) -> Vec<FileDiagnostics> {
    docs.files
        .iter()
        .filter(|f| !f.diagnostics.is_empty())
        .map(|f| FileDiagnostics { address: f.address(), diagnostics: f.diagnostics.clone() })
        .collect()
}

/// What [`search_and_semantic`] made.
pub(crate) struct SearchAndSemantic {
    pub(crate) models: crate::semantic::SemanticModels,
    pub(crate) search_files: BTreeMap<String, String>,
    pub(crate) deletions: Option<search_schema::SearchDeletions>,
    pub(crate) fit: SemanticFit,
    pub(crate) report: IncrementalReport,
}

/// The patterns table of a build, written, and what the build reports of it.
pub(crate) struct ProgramsTable {
    pub(crate) patterns: fabdex_model::ts::PatternsTable,
    /// Programs left out for an earlier one's pattern id.
    pub(crate) duplicates: Vec<Skipped>,
    pub(crate) profile_report: crate::profiles::ProfileReport,
    /// The written table's digest.
    pub(crate) digest: String,
    pub(crate) phases: BTreeMap<String, u64>,
}

/// Assemble the pattern programs (closures, ids and contracts), describe
/// them (the Markdown about each, its own text, its tier) and write the
/// patterns table into `staging`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn programs_table(
    config: &Config,
    staging: &Path,
    contracts_cache: &Cache,
    ts_files: &[TsFile],
    files: &[ReadFile],
    published: &[(usize, PublishedSet)],
    commonfabric_types: Option<&str>,
    docs: &DocsTable,
) -> Result<ProgramsTable> {
    let mut clock = Instant::now();
    let mut phases = BTreeMap::new();
    let (mut patterns, duplicates, contract_keys) =
        crate::patterns::assemble(config, ts_files, published, commonfabric_types, Some(contracts_cache));
    contracts_cache.save(contract_keys);
    phases.insert("patterns_assemble".into(), lap(&mut clock));
    let md_texts: Vec<&str> = files.iter().map(|f| f.text.as_str()).collect();
    crate::profiles::attach_docs(docs, &md_texts, &mut patterns);
    let sources: HashMap<(&str, &str), &str> = ts_files
        .iter()
        .map(|f| ((config.roots[f.candidate.root].name.as_str(), f.candidate.path.as_str()), f.text.as_str()))
        .collect();
    crate::profiles::attach_own_text(&sources, &mut patterns);
    let profile_report = crate::profiles::report(&patterns);
    phases.insert("patterns_profiles".into(), lap(&mut clock));
    let bytes = fabdex_snapshot::patterns_table::encode(&patterns);
    write_file(staging.join(fabdex_snapshot::patterns_table::PATH), &bytes)?;
    phases.insert("patterns".into(), lap(&mut clock));
    Ok(ProgramsTable { patterns, duplicates, profile_report, digest: digest_bytes(&bytes), phases })
}

/// Write the search index into `staging/search` and make the semantic
/// models: whole when `carry` says why they must be, else the published
/// snapshot's index updated and its models folded into (or refitted, past
/// the configured drift). A carry that fails (a blob of an edited file
/// damaged, the updated index inconsistent) falls back to a whole build,
/// which the report says. `texts[f]` is docs file `f`'s text.
///
/// `meanwhile` runs on this thread while a whole search index is written
/// on another, before the semantic fit (which waits for it: the fit and
/// `meanwhile` both run over the pool); in an incremental build it runs
/// first.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search_and_semantic<R>(
    staging: &Path,
    id: &str,
    config: &Config,
    texts: &[&str],
    docs: &DocsTable,
    units: &[fabdex_snapshot::Unit],
    carry: &std::result::Result<Carry, String>,
    phases: &mut BTreeMap<String, u64>,
    meanwhile: impl FnOnce() -> R,
) -> Result<(SearchAndSemantic, R)> {
    let search_dir = staging.join("search");
    let (mut meanwhile, mut done) = (Some(meanwhile), None);
    let because = match carry {
        Err(because) => because.clone(),
        Ok(carry) => {
            let result = (meanwhile.take().expect("run once"))();
            match carried_search_and_semantic(&search_dir, id, config, texts, docs, units, carry, phases) {
                Ok(written) => return Ok((written, result)),
                Err(e) => {
                    done = Some(result);
                    fs::remove_dir_all(&search_dir)?;
                    create_dir(&search_dir)?;
                    format!("the published snapshot could not be carried: {e:#}")
                }
            }
        }
    };
    let unit_texts: Vec<UnitText> = units
        .par_iter()
        .map(|u| UnitText::new(texts[docs.sections[u.section as usize].file as usize], docs, u))
        .collect();
    let unit_file: Vec<u32> = units.iter().map(|u| docs.sections[u.section as usize].file).collect();
    // The semantic fit's analysis first (over the pool), so that the search
    // index can take the texts; then the index is written on its own thread
    // (tantivy indexes on one more) while the models are fitted over the
    // pool: each alone leaves a core idle for much of its time.
    let clock = Instant::now();
    let analysed = crate::semantic::analyse(&unit_texts);
    let analysis_ms = clock.elapsed().as_millis() as u64;
    let (written, (models, semantic_ms), done) = std::thread::scope(|scope| {
        let search = scope.spawn(|| {
            let clock = Instant::now();
            let written = crate::search_write::write(&search_dir, docs, units, unit_texts);
            (written, clock.elapsed().as_millis() as u64)
        });
        let done = done.unwrap_or_else(|| (meanwhile.take().expect("run once"))());
        let clock = Instant::now();
        let models = crate::semantic::fit_analysed(&analysed, &unit_file, docs.files.len());
        let fitted = (models, analysis_ms + clock.elapsed().as_millis() as u64);
        (search.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), fitted, done)
    });
    let (written, search_ms) = written;
    written.with_context(|| format!("cannot write the search index in `{}`", search_dir.display()))?;
    let search_files = crate::search_write::digests(&search_dir, None)?;
    phases.insert("search_index".into(), search_ms);
    phases.insert("semantic".into(), semantic_ms);
    let report = IncrementalReport::whole(because, config.index.semantic_drift);
    let fit = SemanticFit { fitted_in: id.to_string(), fitted_units: units.len() as u64, folded_units: 0 };
    Ok((SearchAndSemantic { models, search_files, deletions: None, fit, report }, done))
}

/// [`search_and_semantic`] carried from the published snapshot.
#[allow(clippy::too_many_arguments)]
pub(crate) fn carried_search_and_semantic(
    search_dir: &Path,
    id: &str,
    config: &Config,
    texts: &[&str],
    docs: &DocsTable,
    units: &[fabdex_snapshot::Unit],
    carry: &Carry,
    phases: &mut BTreeMap<String, u64>,
) -> Result<SearchAndSemantic> {
    let mut clock = Instant::now();
    let limit = config.index.semantic_drift;
    let unit_file: Vec<u32> = units.iter().map(|u| docs.sections[u.section as usize].file).collect();
    let text_of =
        |u: &fabdex_snapshot::Unit| UnitText::new(texts[docs.sections[u.section as usize].file as usize], docs, u);
    let new_texts: Vec<Option<UnitText>> =
        units.par_iter().zip(&carry.units).map(|(u, carried)| carried.is_none().then(|| text_of(u))).collect();
    let update = crate::search_write::update(search_dir, &carry.previous, &carry.gone, docs, units, &new_texts)
        .with_context(|| format!("cannot update the search index in `{}`", search_dir.display()))?;
    let search_files = crate::search_write::digests(search_dir, Some(&carry.previous))?;
    phases.insert("search_index".into(), lap(&mut clock));
    let mut report = carry.report.clone();
    let before = &carry.previous.manifest.semantic_fit;
    let folded = SemanticFit { folded_units: before.folded_units + report.units_added, ..before.clone() };
    let previous = carry.previous.semantic()?;
    report.semantic_drift_limit = limit;
    let (models, fit) = if folded.drift() > limit || (previous.units.dim() == 0 && report.units_added > 0) {
        let all: Vec<UnitText> = units.par_iter().map(text_of).collect();
        report.semantic = format!(
            "refitted: {} units folded in since the fit in {} would be a drift of {:.3}, past the limit {limit}",
            folded.folded_units,
            if before.fitted_in.is_empty() { "an unknown snapshot" } else { &before.fitted_in },
            folded.drift()
        );
        let fitted = SemanticFit { fitted_in: id.to_string(), fitted_units: units.len() as u64, folded_units: 0 };
        (crate::semantic::fit(&all, &unit_file, docs.files.len()), fitted)
    } else {
        let carried = Carried { units: &carry.units, files: &carry.files, unit_file: &unit_file };
        report.semantic = format!("folded {} units into the fit of {}", report.units_added, folded.fitted_in);
        (crate::semantic::fold(previous, &carried, &new_texts), folded)
    };
    report.semantic_drift = fit.drift();
    phases.insert("semantic".into(), lap(&mut clock));
    let deletions = (update.deletions.docs() > 0).then_some(update.deletions);
    Ok(SearchAndSemantic { models, search_files, deletions, fit, report })
}
