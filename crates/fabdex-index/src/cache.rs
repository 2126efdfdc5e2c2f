//! The build's caches under `<index>/cache/`: per-file extractions keyed by
//! content digest (one folder per extractor and version), and programs'
//! contracts keyed by the digests of the sources they are computed from. A
//! published build keeps only the entries it used ([`LiveCache`]).

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The cache folders, one per extractor and version.
pub(crate) struct CacheDirs {
    pub(crate) md: PathBuf,
    pub(crate) ts: PathBuf,
    pub(crate) contracts: PathBuf,
}

impl CacheDirs {
    /// The folders of the current versions under `cache`.
    pub(crate) fn under(cache: &Path) -> CacheDirs {
        CacheDirs {
            md: cache.join(format!("md-v{}", fabdex_md::EXTRACTOR_VERSION)),
            ts: cache.join(format!("ts-v{}", fabdex_ts::EXTRACTOR_VERSION)),
            contracts: cache.join(format!("contracts-v{}", fabdex_ts::EXTRACTOR_VERSION)),
        }
    }

    /// The folder names of the current versions: every other `*-v<N>` folder is stale.
    pub(crate) fn live_names(&self) -> Vec<String> {
        [&self.md, &self.ts, &self.contracts]
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect()
    }
}

/// The cache entry's file name for a key (a `blake3:<hex>` digest or bare hex).
pub(crate) fn entry_name(key: &str) -> String {
    format!("{}.json", fabdex_model::digest::digest_hex(key).unwrap_or(key))
}

/// A cached value by key, or a fresh one (then cached); and whether it was cached.
pub(crate) fn cached<T: Serialize + serde::de::DeserializeOwned>(
    dir: &Path,
    key: &str,
    extract: impl FnOnce() -> T,
) -> (T, bool) {
    let cache_file = dir.join(entry_name(key));
    if let Some(hit) = fs::read(&cache_file).ok().and_then(|b| serde_json::from_slice(&b).ok()) {
        return (hit, true);
    }
    let fresh = extract();
    if let Ok(json) = serde_json::to_vec(&fresh) {
        let tmp = cache_file.with_extension(format!("tmp{}", std::process::id()));
        if fs::write(&tmp, json).is_ok() {
            let _ = fs::rename(&tmp, &cache_file);
        } else {
            // A full disk leaves a partial file: it must not take the room.
            let _ = fs::remove_file(&tmp);
        }
    }
    (fresh, false)
}

/// The cache entries a published build used. Every other entry of the live
/// versions is removed after publishing, so the cache holds one extraction
/// per current source (and one contract per current program), not every
/// version of every file ever indexed (nor the extraction of a file whose
/// build failed for want of room).
#[derive(Default)]
pub(crate) struct LiveCache {
    dirs: Vec<(PathBuf, HashSet<String>)>,
}

impl LiveCache {
    /// The entries of `keys` in `dir` are live.
    pub(crate) fn add(&mut self, dir: &Path, keys: impl IntoIterator<Item = impl AsRef<str>>) {
        self.dirs.push((dir.to_path_buf(), keys.into_iter().map(|k| entry_name(k.as_ref())).collect()));
    }

    /// Remove every entry of the folders named that is not live.
    pub(crate) fn prune(&self) {
        for (dir, live) in &self.dirs {
            for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
                if !live.contains(entry.file_name().to_string_lossy().as_ref()) {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
    }
}
