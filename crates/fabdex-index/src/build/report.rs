//! What a build is asked to do and what it reports: options, the index
//! report (counts, skipped files, diagnostics, unresolved links, embeddings).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use fabdex_model::records::Diagnostic;
use serde::{Deserialize, Serialize};

use crate::incremental::IncrementalReport;
use crate::walk::Skipped;
use fabdex_snapshot::snapshot::{Counts, ManifestRoot};

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

/// Milliseconds since `clock`, which restarts.
pub(crate) fn lap(clock: &mut Instant) -> u64 {
    let ms = clock.elapsed().as_millis() as u64;
    *clock = Instant::now();
    ms
}

pub(crate) fn progress_bar(wanted: bool, len: u64) -> Option<indicatif::ProgressBar> {
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
