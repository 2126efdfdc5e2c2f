//! One build: walk → read and classify → extract (cached by digest) →
//! assemble tables → resolve links → write blobs, tables and the search index
//! into a staging directory → publish atomically.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use fabdex_model::digest::digest_bytes;
use fabdex_model::records::{
    Diagnostic, DocFileRow, DocsTable, LinkRow, LinkTarget, MdExtraction, RootKind, SectionRow, is_historical,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::blobs::BlobStore;
use crate::cache::{Cache, Caches, cached};
use crate::config::Config;
use crate::incremental::{Carry, IncrementalReport};
use crate::links::Resolver;
use crate::patterns::TsFile;
use crate::published::{PublishedSet, is_source_name};
use crate::search_schema::{self, UnitText};
use crate::semantic::Carried;
use crate::snapshot::{
    Counts, FORMAT_VERSION, IndexLayout, Manifest, ManifestFile, ManifestRoot, SEARCH_VERSION, SemanticFit, Snapshot,
    units_of,
};
use crate::walk::{Candidate, FileType, Skipped, walk_root};
use fabdex_model::ts::IdentityStatus;

#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub index_dir: PathBuf,
    /// Show a progress bar (only drawn on a terminal).
    pub progress: bool,
    /// Older snapshots kept besides the published one.
    pub keep_snapshots: usize,
    /// Build whole: no search document or semantic vector is carried from
    /// the published snapshot, and the models are refitted.
    pub full: bool,
}

impl BuildOptions {
    pub fn new(index_dir: impl Into<PathBuf>) -> Self {
        BuildOptions { index_dir: index_dir.into(), progress: false, keep_snapshots: 2, full: false }
    }
}

/// Diagnostics of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileDiagnostics {
    pub address: String,
    pub diagnostics: Vec<Diagnostic>,
}

/// A link that did not resolve, with where it is and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnresolvedLink {
    pub from: String,
    pub line: u32,
    pub dest: String,
    pub reason: String,
}

/// What a build read, skipped and could not resolve. Written to the
/// snapshot's `report.json` and printed by `fabdex index`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexReport {
    pub snapshot_id: String,
    pub index_dir: String,
    /// True when an identical snapshot already existed and was re-published.
    pub unchanged: bool,
    pub roots: Vec<ManifestRoot>,
    pub counts: Counts,
    /// Files extracted in this build, and files whose extraction came from the cache.
    pub extracted: u64,
    pub reused_from_cache: u64,
    pub skipped: Vec<Skipped>,
    pub diagnostics: Vec<FileDiagnostics>,
    pub unresolved_links: Vec<UnresolvedLink>,
    pub elapsed_ms: u64,
    /// Milliseconds per build phase.
    #[serde(default)]
    pub phases_ms: BTreeMap<String, u64>,
    /// The sentence-embedding model and what it encoded, when the build used one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<EmbeddingsReport>,
    /// Descriptions, keywords and tiers attached to programs, per source.
    #[serde(default)]
    pub profiles: crate::profiles::ProfileReport,
    /// What the build carried from the published snapshot, or why it was whole.
    #[serde(default)]
    pub incremental: IncrementalReport,
}

/// What the embedding phase of a build did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingsReport {
    pub model: fabdex_embed::ModelIdentity,
    pub model_dir: String,
    /// How the encoder computed (`f32` or `int8`).
    #[serde(default)]
    pub precision: fabdex_embed::Precision,
    /// Whether the precision was set (`--embedding-precision`, `[index]
    /// embedding_precision`) or chosen as the faster on this CPU; absent in
    /// reports of builds from before the choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_chosen: Option<crate::config::PrecisionChoice>,
    /// The loop int8 ran on: "AVX-512 VNNI", "AVX2" or "the portable loop"
    /// (the same vectors, at different speeds); absent for `f32`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int8_kernel: Option<String>,
    /// Wall time of encoding, and passages encoded per second.
    #[serde(default)]
    pub encode_ms: u64,
    /// Tokens per passage, and passages per unit at most.
    pub max_tokens: usize,
    pub max_passages: usize,
    /// Vectors in the table: every unit's passages.
    pub passages: u64,
    /// Programs given vectors of their own (`tables/program-embeddings.bin`).
    #[serde(default)]
    pub programs: u64,
    /// Passages (of units and programs) encoded in this build, and passages whose vector came from the cache.
    pub encoded: u64,
    pub reused: u64,
    /// Passages of unchanged units whose vectors an incremental build carried from the published snapshot.
    #[serde(default)]
    pub carried: u64,
    /// Units longer than their passages read, read only that far.
    pub truncated: u64,
}

/// (files extracted in this build, files whose extraction came from the cache).
fn cache_counts(files: &[ReadFile], ts_files: &[TsFile]) -> (u64, u64) {
    let cached = files.iter().map(|f| f.from_cache).chain(ts_files.iter().map(|f| f.from_cache));
    cached.fold((0, 0), |(fresh, hit), c| if c { (fresh, hit + 1) } else { (fresh + 1, hit) })
}

/// Milliseconds since `clock`, which restarts.
fn lap(clock: &mut Instant) -> u64 {
    let ms = clock.elapsed().as_millis() as u64;
    *clock = Instant::now();
    ms
}

struct ReadFile {
    candidate: Candidate,
    text: String,
    digest: String,
    extraction: MdExtraction,
    from_cache: bool,
}

enum Outcome {
    Read(Box<ReadFile>),
    ReadTs(Box<TsFile>),
    Skip(Skipped),
}

fn skip(root: &str, path: &str, reason: String) -> Outcome {
    Outcome::Skip(Skipped { root: root.to_string(), path: path.to_string(), reason })
}

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
        let mut report: IndexReport = crate::snapshot::read_json(&layout.snapshot(&id).join("report.json"))?;
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

fn progress_bar(wanted: bool, len: u64) -> Option<indicatif::ProgressBar> {
    if !wanted || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} indexing {pos}/{len} files {wide_bar} {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(bar)
}

/// The source files of every published program, as candidates with their
/// text in memory, and the texts of its other files (kept as blobs only).
/// Files whose names cannot be addresses are left out here and reported on
/// the record by `patterns::assemble`.
fn published_candidates(root: usize, set: &PublishedSet) -> (Vec<Candidate>, Vec<String>) {
    let mut sources = Vec::new();
    let mut raw = Vec::new();
    for r in &set.records {
        let Some(program) = &r.record.program else { continue };
        for f in &program.files {
            if fabdex_model::address::validate_relative_path(f.name.trim_start_matches('/')).is_err() {
                continue;
            }
            if !is_source_name(&f.name) {
                raw.push(f.contents.clone());
                continue;
            }
            sources.push(Candidate {
                root,
                path: fabdex_model::ts::published_file_path(&r.record.pattern_id, &f.name),
                abs: set.path.join(&r.file),
                bytes: f.contents.len() as u64,
                file_type: FileType::TypeScript,
                inline: Some(f.contents.clone()),
            });
        }
    }
    (sources, raw)
}

/// Read a file's text, or the reason it is skipped.
fn read_text(c: &Candidate, root: &str, max_bytes: u64) -> Result<String, Outcome> {
    let too_big = |n: u64| {
        skip(root, &c.path, format!("file is {n} bytes, over the {max_bytes}-byte limit (index.max_file_bytes)"))
    };
    if c.bytes > max_bytes {
        return Err(too_big(c.bytes));
    }
    if let Some(text) = &c.inline {
        return Ok(text.clone());
    }
    let bytes = fs::read(&c.abs).map_err(|e| skip(root, &c.path, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big(bytes.len() as u64));
    }
    if let Some(at) = bytes.iter().take(8192).position(|b| *b == 0) {
        return Err(skip(root, &c.path, format!("binary file (NUL byte at offset {at})")));
    }
    String::from_utf8(bytes).map_err(|e| {
        skip(root, &c.path, format!("not valid UTF-8 (invalid byte at offset {})", e.utf8_error().valid_up_to()))
    })
}

/// `fs::write`, with the path in its error (a full disk must say where).
fn write_file(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> Result<()> {
    let path = path.as_ref();
    fs::write(path, bytes).with_context(|| format!("cannot write `{}`", path.display()))
}

/// A table's name and what encodes it.
type TableEncoder<'a> = (&'static str, &'a (dyn Fn() -> Vec<u8> + Sync));

/// Encode, write and digest tables over the pool, each digest recorded in `tables`.
fn write_tables(staging: &Path, tables: &mut BTreeMap<String, String>, encoders: &[TableEncoder<'_>]) -> Result<()> {
    let digests: Vec<(String, String)> = encoders
        .par_iter()
        .map(|(name, encode)| {
            let bytes = encode();
            write_file(staging.join(name), &bytes)?;
            Ok((name.to_string(), digest_bytes(&bytes)))
        })
        .collect::<Result<_>>()?;
    tables.extend(digests);
    Ok(())
}

fn create_dir(path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    fs::create_dir_all(path).with_context(|| format!("cannot create the folder `{}`", path.display()))
}

fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> Result<()> {
    let (from, to) = (from.as_ref(), to.as_ref());
    fs::rename(from, to).with_context(|| format!("cannot move `{}` to `{}`", from.display(), to.display()))
}

/// `caches`: the Markdown and the TS/TSX extraction caches.
fn read_and_extract(c: Candidate, config: &Config, max_bytes: u64, caches: (&Cache, &Cache)) -> Outcome {
    let root = &config.roots[c.root];
    let is_ts = match (c.file_type, root.kind) {
        (FileType::Markdown, _) => false,
        (FileType::TypeScript, None | Some(RootKind::Patterns | RootKind::Published)) => true,
        (FileType::TypeScript, Some(kind)) => {
            return skip(
                &root.name,
                &c.path,
                format!(
                    "TypeScript source in a `{}` root (index pattern sources from a `patterns` root)",
                    kind.as_str()
                ),
            );
        }
        _ => return skip(&root.name, &c.path, "unsupported file type (fabdex indexes Markdown and TS/TSX)".into()),
    };
    let text = match read_text(&c, &root.name, max_bytes) {
        Ok(t) => t,
        Err(outcome) => return outcome,
    };
    let digest = digest_bytes(text.as_bytes());
    if is_ts {
        let ((ts, outline), from_cache) = cached(caches.1, &digest, || {
            (fabdex_ts::extract(&c.path, &text), fabdex_ts::outline::outline(&c.path, &text))
        });
        return Outcome::ReadTs(Box::new(TsFile { candidate: c, text, digest, ts, outline, from_cache }));
    }
    let (extraction, from_cache) = cached(caches.0, &digest, || fabdex_md::extract(&text));
    Outcome::Read(Box::new(ReadFile { candidate: c, text, digest, extraction, from_cache }))
}

#[allow(clippy::too_many_arguments)]
fn write_snapshot(
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

    // Blobs: one pack of every distinct text, written whole (the texts are all in memory).
    let texts: Vec<&String> =
        files.iter().map(|f| &f.text).chain(ts_files.iter().map(|f| &f.text)).chain(raw_files).collect();
    let hashed: Vec<(blake3::Hash, &[u8])> =
        texts.par_iter().map(|text| (blake3::hash(text.as_bytes()), text.as_bytes())).collect();
    BlobStore::write(&staging.join(crate::blobs::PACK), hashed)?;

    phases.insert("blobs".into(), lap(&mut clock));

    // Tables.
    let docs_bytes = crate::docs_table::encode(docs).map_err(anyhow::Error::msg)?;
    write_file(staging.join(crate::docs_table::PATH), &docs_bytes)?;
    let mut tables = BTreeMap::new();
    tables.insert(crate::docs_table::PATH.to_string(), digest_bytes(&docs_bytes));
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
    tables.insert(crate::patterns_table::PATH.to_string(), digest);
    count_programs(counts, &patterns);
    let models = written.models;
    let search_files = written.search_files;
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
        &mut tables,
        &[
            (crate::semantic::UNITS_TABLE, &units_model),
            (crate::semantic::FILES_TABLE, &files_model),
            (crate::semantic::PASSAGES_TABLE, &passages),
        ],
    )?;
    counts.semantic_passages = models.passages.len() as u64;
    counts.semantic_dimensions = models.units.dim() as u64;
    counts.semantic_vocabulary = models.units.vocabulary() as u64;
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

    // Manifest.
    let manifest_roots = manifest_roots(config);
    let manifest_files = manifest_files(config, files);
    let snapshot_id = id.to_string();

    count_docs(counts, files, docs, units.len(), skipped.len());

    let manifest = Manifest {
        format_version: FORMAT_VERSION,
        extractor_version: fabdex_md::EXTRACTOR_VERSION,
        search_version: SEARCH_VERSION,
        snapshot_id: snapshot_id.clone(),
        created_unix: SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        fabdex_version: env!("CARGO_PKG_VERSION").to_string(),
        roots: manifest_roots.clone(),
        files: manifest_files,
        counts: counts.clone(),
        tables,
        search_files,
        semantic_fit: written.fit,
    };
    let (extracted, reused_from_cache) = cache_counts(files, ts_files);
    let report = IndexReport {
        snapshot_id,
        index_dir: layout.root.display().to_string(),
        unchanged: false,
        roots: manifest_roots,
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
        incremental: written.report,
    };
    write_file(staging.join("report.json"), serde_json::to_vec_pretty(&report)?)?;
    // The manifest is written last: a staging directory without one is incomplete.
    write_file(staging.join("manifest.json"), serde_json::to_vec_pretty(&manifest)?)?;
    Ok((manifest, report))
}

/// The docs table's files and sections (links come next), and every
/// section's row by address.
fn docs_table_of(config: &Config, files: &[ReadFile]) -> (DocsTable, HashMap<String, u32>) {
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
fn resolve_links(
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

/// The manifest's roots, as configured.
fn manifest_roots(config: &Config) -> Vec<ManifestRoot> {
    config
        .roots
        .iter()
        .map(|r| ManifestRoot {
            name: r.name.clone(),
            path: r.path.display().to_string(),
            kind: r.kind,
            origin: r.origin_label(),
        })
        .collect()
}

/// The manifest's files: every indexed Markdown file.
fn manifest_files(config: &Config, files: &[ReadFile]) -> Vec<ManifestFile> {
    files
        .iter()
        .map(|f| ManifestFile {
            root: config.roots[f.candidate.root].name.clone(),
            path: f.candidate.path.clone(),
            digest: f.digest.clone(),
            bytes: f.text.len() as u64,
        })
        .collect()
}

/// The counts of the docs table.
fn count_docs(counts: &mut Counts, files: &[ReadFile], docs: &DocsTable, units: usize, skipped: usize) {
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
fn count_programs(counts: &mut Counts, patterns: &fabdex_model::ts::PatternsTable) {
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
fn file_diagnostics(docs: &DocsTable) -> Vec<FileDiagnostics> {
    docs.files
        .iter()
        .filter(|f| !f.diagnostics.is_empty())
        .map(|f| FileDiagnostics { address: f.address(), diagnostics: f.diagnostics.clone() })
        .collect()
}

/// The snapshot id: a digest of the format versions, the roots and every
/// indexed file's path and digest. Same sources, same id.
/// Also covers every file seen and every skip: they change link resolution
/// and the report even when no indexed file changed.
#[allow(clippy::too_many_arguments)]
fn snapshot_id(
    config: &Config,
    files: &[ReadFile],
    ts_files: &[TsFile],
    seen: &[HashSet<String>],
    skipped: &[Skipped],
    published: &[(usize, PublishedSet)],
    commonfabric_types: Option<&str>,
    embedding_model: Option<(&fabdex_embed::ModelIdentity, fabdex_embed::Precision)>,
) -> String {
    let mut h = blake3::Hasher::new();
    if let Some((model, precision)) = embedding_model {
        use crate::embeddings::{HEADING_TOKENS, MAX_PASSAGES, MAX_TOKENS, PROGRAM_TEXT_VERSION, TEXT_VERSION};
        h.update(
            format!(
                "embeddings {} {MAX_TOKENS} passages {MAX_PASSAGES} heading {HEADING_TOKENS} text {TEXT_VERSION} programs {PROGRAM_TEXT_VERSION} encoder {}{}{}\n",
                model.digest,
                fabdex_embed::ENCODER_VERSION,
                units_reading(&config.index.embedding_passages).id_suffix(),
                // f32 indexes keep the ids they had before precisions existed.
                match precision {
                    fabdex_embed::Precision::F32 => String::new(),
                    p => format!(" precision {}", p.as_str()),
                }
            )
            .as_bytes(),
        );
    }
    if let Some(types) = commonfabric_types {
        h.update(format!("commonfabric types {}\n", blake3::hash(types.as_bytes()).to_hex()).as_bytes());
    }
    h.update(
        format!("format {FORMAT_VERSION} md {} search {SEARCH_VERSION}\n", fabdex_md::EXTRACTOR_VERSION).as_bytes(),
    );
    for r in &config.roots {
        h.update(format!("root {} {:?} {}\n", r.name, r.kind, r.origin_label()).as_bytes());
    }
    for f in files {
        h.update(
            format!("file {}/{} {}\n", config.roots[f.candidate.root].name, f.candidate.path, f.digest).as_bytes(),
        );
    }
    h.update(format!("ts {}\n", fabdex_ts::EXTRACTOR_VERSION).as_bytes());
    for f in ts_files {
        h.update(
            format!("source {}/{} {}\n", config.roots[f.candidate.root].name, f.candidate.path, f.digest).as_bytes(),
        );
    }
    for (root, paths) in config.roots.iter().zip(seen) {
        let mut paths: Vec<&String> = paths.iter().collect();
        paths.sort();
        for p in paths {
            h.update(format!("seen {}/{p}\n", root.name).as_bytes());
        }
    }
    for s in skipped {
        h.update(format!("skipped {}/{} {}\n", s.root, s.path, s.reason).as_bytes());
    }
    for (root, set) in published {
        for (file, digest) in &set.files {
            h.update(format!("published {}/{file} {digest}\n", config.roots[*root].name).as_bytes());
        }
    }
    h.finalize().to_hex()[..16].to_string()
}

/// Where a build stages its snapshot, and whether it draws progress.
struct Staged<'a> {
    dir: &'a Path,
    layout: &'a IndexLayout,
    progress: bool,
}

/// What the sentence embeddings are computed from.
struct EmbeddingsStep<'a> {
    files: &'a [ReadFile],
    docs: &'a DocsTable,
    units: &'a [crate::Unit],
    programs: &'a [fabdex_model::ts::ProgramRow],
    carry: Option<&'a Carry>,
    /// How docs units are read (`[index.embedding_passages]`).
    reading: crate::embeddings::Reading,
}

impl<'a> EmbeddingsStep<'a> {
    fn new(
        files: &'a [ReadFile],
        docs: &'a DocsTable,
        units: &'a [crate::Unit],
        programs: &'a [fabdex_model::ts::ProgramRow],
        carry: Option<&'a Carry>,
        config: &Config,
    ) -> Self {
        let reading = units_reading(&config.index.embedding_passages);
        EmbeddingsStep { files, docs, units, programs, carry, reading }
    }
}

/// How docs units are read, as `[index.embedding_passages]` says.
fn units_reading(settings: &crate::config::PassageSettings) -> crate::embeddings::Reading {
    crate::embeddings::Reading {
        max_passages: settings.windows,
        heading_alone: settings.heading,
        referrers: settings.referrers,
        ..crate::embeddings::UNITS
    }
}

/// Encode every unit (the unchanged ones' vectors carried from the
/// published snapshot when it can be) and every program with `encoder`,
/// write `tables/embeddings.bin` and `tables/program-embeddings.bin`, and
/// say what was done.
fn write_embeddings(
    encoder: &fabdex_embed::SentenceEncoder,
    chosen: crate::config::PrecisionChoice,
    staged: &Staged<'_>,
    step: &EmbeddingsStep<'_>,
    tables: &mut BTreeMap<String, String>,
    counts: &mut Counts,
) -> Result<EmbeddingsReport> {
    let clock = Instant::now();
    let (files, docs, units) = (step.files, step.docs, step.units);
    let bar = progress_bar(staged.progress, units.len() as u64);
    // `docs.files[i]` was assembled from `files[i]`.
    let referrers = crate::referrers::link_items(docs, |f| files[f as usize].text.as_str(), units);
    let sources: Vec<_> = units
        .iter()
        .zip(referrers)
        .map(|(u, referrers)| crate::embeddings::UnitSource {
            referrers,
            ..crate::embeddings::unit_source(&files[docs.sections[u.section as usize].file as usize].text, docs, u)
        })
        .collect();
    // A previous table that cannot be carried (a gone file's blob damaged) is not: every unit is then looked up.
    let carried = carried_vectors(step, &sources, encoder).ok().flatten();
    let cache = staged.layout.cache();
    let (table, stats) =
        crate::embeddings::compute(encoder, &sources, step.reading, carried.as_ref(), &cache, &|done, total| {
            if let Some(bar) = &bar {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            }
        })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let bytes = table.to_bytes();
    write_file(staged.dir.join(crate::embeddings::TABLE), &bytes)?;
    tables.insert(crate::embeddings::TABLE.to_string(), digest_bytes(&bytes));
    // Programs are few (labs: 357); they share the model and its cache.
    let program_sources: Vec<_> = step.programs.iter().map(crate::embeddings::program_source).collect();
    let mut program_stats = crate::embeddings::EncodeStats::default();
    if !program_sources.is_empty() {
        let (programs, s) = crate::embeddings::compute(
            encoder,
            &program_sources,
            crate::embeddings::PROGRAMS,
            None,
            &cache,
            &|_, _| {},
        )?;
        let bytes = programs.to_bytes();
        write_file(staged.dir.join(crate::embeddings::PROGRAMS_TABLE), &bytes)?;
        tables.insert(crate::embeddings::PROGRAMS_TABLE.to_string(), digest_bytes(&bytes));
        counts.embedded_programs = programs.len() as u64;
        program_stats = s;
    }
    counts.embedded_units = table.len() as u64;
    counts.embeddings_truncated = table.header.truncated as u64;
    Ok(EmbeddingsReport {
        model: table.header.model.clone(),
        model_dir: table.header.model_dir.clone(),
        precision: table.header.precision,
        precision_chosen: Some(chosen),
        int8_kernel: (table.header.precision == fabdex_embed::Precision::Int8)
            .then(|| fabdex_embed::int8_kernel().as_str().to_string()),
        encode_ms: clock.elapsed().as_millis() as u64,
        max_tokens: table.header.max_tokens,
        max_passages: table.header.max_passages,
        passages: table.header.passages as u64,
        encoded: (stats.encoded + program_stats.encoded) as u64,
        reused: (stats.reused + program_stats.reused) as u64,
        carried: stats.carried as u64,
        programs: counts.embedded_programs,
        truncated: table.header.truncated as u64,
    })
}

/// The published snapshot's sentence embeddings, when an incremental build
/// can carry its unchanged units' vectors: the same model, precision,
/// encoder version, text version and bounds. Counts how many of its truncated units are
/// gone (their previous sources tokenized again: a few units).
fn carried_vectors<'a>(
    step: &EmbeddingsStep<'a>,
    sources: &[crate::embeddings::UnitSource],
    encoder: &fabdex_embed::SentenceEncoder,
) -> Result<Option<crate::embeddings::CarriedVectors<'a>>> {
    let Some(carry) = step.carry else { return Ok(None) };
    let Ok(Some(previous)) = carry.previous.embeddings() else { return Ok(None) };
    if !crate::embeddings::CarriedVectors::fits(previous, encoder, step.reading)
        || previous.len() != carry.previous.units().len()
    {
        return Ok(None);
    }
    let mut gone_truncated = 0;
    for &file in &carry.gone {
        let text = carry.previous.file_text(file)?;
        for unit in carry.previous.file_units(file) {
            let source = crate::embeddings::unit_source(&text, &carry.previous.docs, unit);
            gone_truncated += usize::from(crate::embeddings::truncated(encoder, &source, step.reading)?);
        }
    }
    // An unchanged unit that a changed file links to (now or before) may
    // have other referring items: it is read again, its passages looked up
    // in the cache, and its previous truncation no longer counted.
    let mut landed = crate::referrers::landed_from(step.docs, |f| carry.files[f as usize].is_none());
    let gone: HashSet<u32> = carry.gone.iter().copied().collect();
    landed.extend(crate::referrers::landed_from_published(&carry.previous.docs, |f| gone.contains(&f))?);
    let mut units = carry.units.clone();
    for (u, unit) in step.units.iter().enumerate() {
        if units[u].is_some() && landed.contains(&step.docs.sections[unit.section as usize].address) {
            units[u] = None;
            gone_truncated += usize::from(crate::embeddings::truncated(encoder, &sources[u], step.reading)?);
        }
    }
    Ok(Some(crate::embeddings::CarriedVectors { previous, units, gone_truncated }))
}

/// What [`search_and_semantic`] made.
struct SearchAndSemantic {
    models: crate::semantic::SemanticModels,
    search_files: BTreeMap<String, String>,
    deletions: Option<search_schema::SearchDeletions>,
    fit: SemanticFit,
    report: IncrementalReport,
}

/// The patterns table of a build, written, and what the build reports of it.
struct ProgramsTable {
    patterns: fabdex_model::ts::PatternsTable,
    /// Programs left out for an earlier one's pattern id.
    duplicates: Vec<Skipped>,
    profile_report: crate::profiles::ProfileReport,
    /// The written table's digest.
    digest: String,
    phases: BTreeMap<String, u64>,
}

/// Assemble the pattern programs (closures, ids and contracts), describe
/// them (the Markdown about each, its own text, its tier) and write the
/// patterns table into `staging`.
#[allow(clippy::too_many_arguments)]
fn programs_table(
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
    let bytes = crate::patterns_table::encode(&patterns);
    write_file(staging.join(crate::patterns_table::PATH), &bytes)?;
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
fn search_and_semantic<R>(
    staging: &Path,
    id: &str,
    config: &Config,
    texts: &[&str],
    docs: &DocsTable,
    units: &[crate::Unit],
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
fn carried_search_and_semantic(
    search_dir: &Path,
    id: &str,
    config: &Config,
    texts: &[&str],
    docs: &DocsTable,
    units: &[crate::Unit],
    carry: &Carry,
    phases: &mut BTreeMap<String, u64>,
) -> Result<SearchAndSemantic> {
    let mut clock = Instant::now();
    let limit = config.index.semantic_drift;
    let unit_file: Vec<u32> = units.iter().map(|u| docs.sections[u.section as usize].file).collect();
    let text_of = |u: &crate::Unit| UnitText::new(texts[docs.sections[u.section as usize].file as usize], docs, u);
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

/// Move the staged snapshot into place and point `CURRENT` at it. Returns true
/// when an identical, intact snapshot was already there.
fn publish(layout: &IndexLayout, staging: &Path, id: &str, replace: bool) -> Result<bool> {
    let target = layout.snapshot(id);
    let mut unchanged = false;
    if target.exists() {
        if !replace && verify_all(&target).is_ok() {
            fs::remove_dir_all(staging)?;
            unchanged = true;
        } else if exchange(staging, &target) {
            // `--full` over the snapshot `CURRENT` names: swapped in one step,
            // so no reader ever finds the folder missing; the old one is now
            // in staging.
            let _ = fs::remove_dir_all(staging);
        } else {
            let trash = layout.staging().join(format!("replaced-{id}-{}", std::process::id()));
            rename(&target, &trash)?;
            rename(staging, &target)?;
            let _ = fs::remove_dir_all(&trash);
        }
    } else {
        fs::rename(staging, &target).with_context(|| format!("cannot publish snapshot into `{}`", target.display()))?;
    }
    publish_current(layout, id)?;
    Ok(unchanged)
}

/// Swap two folders atomically (Linux `renameat2` with `RENAME_EXCHANGE`);
/// false where that is not available, and nothing changed.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (Ok(a), Ok(b)) =
        (std::ffi::CString::new(a.as_os_str().as_bytes()), std::ffi::CString::new(b.as_os_str().as_bytes()))
    else {
        return false;
    };
    // SAFETY: two NUL-terminated paths relative to the working directory; no memory is shared.
    unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> bool {
    false
}

/// Point `CURRENT` at a snapshot, atomically.
fn publish_current(layout: &IndexLayout, id: &str) -> Result<()> {
    let tmp = layout.root.join(format!("CURRENT.tmp{}", std::process::id()));
    write_file(&tmp, format!("{id}\n"))?;
    fs::File::open(&tmp)?.sync_all()?;
    rename(&tmp, layout.current()).context("cannot replace CURRENT")?;
    Ok(())
}

/// Open a snapshot and check every blob against its digest.
pub fn verify_all(dir: &Path) -> Result<()> {
    Snapshot::open_dir(dir)?.verify().map(|_| ())
}

/// Remove old snapshots (keeping the current one and the `keep` newest
/// others; each is moved into staging before it is deleted), staging folders of builds that died more than an hour ago, and
/// extraction caches of other extractor versions.
fn gc(layout: &IndexLayout, current: &str, keep: usize) {
    let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
    for entry in fs::read_dir(layout.staging()).into_iter().flatten().flatten() {
        if entry.metadata().and_then(|m| m.modified()).is_ok_and(|t| t < hour_ago) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
    let live = Caches::live_names(&layout.cache());
    for entry in fs::read_dir(layout.cache()).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let versioned = ["md-v", "ts-v", "contracts-v"].iter().any(|p| name.starts_with(p));
        if versioned && !live.contains(&name) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
    let Ok(entries) = fs::read_dir(layout.snapshots()) else {
        return;
    };
    let mut others: Vec<(SystemTime, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() != current)
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    others.sort_by_key(|o| std::cmp::Reverse(o.0));
    let kept = others.iter().take(keep).filter_map(|(_, p)| Some(p.file_name()?.to_string_lossy().into_owned()));
    let live: Vec<String> = kept.chain([current.to_string()]).collect();
    crate::integrity::prune_stamps(&layout.cache(), &live);
    for (_, path) in others.into_iter().skip(keep) {
        // Out of `snapshots/` in one rename first: a build killed while it
        // deletes leaves the half-deleted folder in staging (collected like
        // any staging debris), never a snapshot without its manifest.
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let trash = layout.staging().join(format!("removed-{name}-{}", std::process::id()));
        if fs::rename(&path, &trash).is_ok() {
            let _ = fs::remove_dir_all(&trash);
        }
    }
}
