//! What a build is: the manifest's roots and files, and the snapshot id
//! digested from format versions, roots and every file's digest.

use std::collections::HashSet;

use super::extract::ReadFile;
use crate::config::Config;
use crate::patterns::TsFile;
use crate::published::PublishedSet;
use crate::walk::Skipped;
use fabdex_snapshot::snapshot::{FORMAT_VERSION, ManifestFile, ManifestRoot, SEARCH_VERSION};

/// The manifest's roots, as configured.
pub(crate) fn manifest_roots(config: &Config) -> Vec<ManifestRoot> {
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
pub(crate) fn manifest_files(config: &Config, files: &[ReadFile]) -> Vec<ManifestFile> {
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

/// The snapshot id: a digest of the format versions, the roots and every
/// indexed file's path and digest. Same sources, same id.
/// Also covers every file seen and every skip: they change link resolution
/// and the report even when no indexed file changed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn snapshot_id(
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

/// How docs units are read, as `[index.embedding_passages]` says.
pub(crate) fn units_reading(settings: &crate::config::PassageSettings) -> crate::embeddings::Reading {
    crate::embeddings::Reading {
        max_passages: settings.windows,
        heading_alone: settings.heading,
        referrers: settings.referrers,
        ..crate::embeddings::UNITS
    }
}
