//! The build's caches under `<index>/cache/`: per-file extractions keyed by
//! content digest (one cache per extractor and version), and programs'
//! contracts keyed by the digests of the sources they are computed from. A
//! build keeps only the entries it used ([`Cache::save`]).
//!
//! Each cache is one pack file, `<cache>/<kind>-v<N>/entries.pack`: read
//! whole when a build starts, and written whole (to a temporary file, then
//! renamed over the old one) once the build knows what it used. One file,
//! not a file per entry (until format 10): creating a file costs an inode
//! allocation, which on an ext4 volume with many recently deleted inodes ran
//! to a third of a millisecond, and a cold build of labs created 2,000
//! entries.
//!
//! Layout: the magic (16 bytes); the blake3 hash of everything after the
//! first 48 bytes (32 bytes); the number of entries (u64); then per entry
//! the key's length (u32), the key, the value's length (u64) and the value
//! (JSON). A pack that does not check out is not used: its entries are
//! computed again, never read wrong.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

/// The pack's file name in a cache's folder.
pub(crate) const PACK: &str = "entries.pack";

const MAGIC: &[u8; 16] = b"fabdex-cache 1\n\0";
const HEADER: usize = 48;

/// The caches, one per extractor and version.
pub(crate) struct Caches {
    pub(crate) md: Cache,
    pub(crate) ts: Cache,
    pub(crate) contracts: Cache,
}

impl Caches {
    /// The caches of the current versions under `cache`, their packs read.
    pub(crate) fn under(cache: &Path) -> Caches {
        let (md, ts, contracts) = Caches::folders(cache);
        Caches { md: Cache::open(md), ts: Cache::open(ts), contracts: Cache::open(contracts) }
    }

    fn folders(cache: &Path) -> (PathBuf, PathBuf, PathBuf) {
        (
            cache.join(format!("md-v{}", fabdex_md::EXTRACTOR_VERSION)),
            cache.join(format!("ts-v{}", fabdex_ts::EXTRACTOR_VERSION)),
            cache.join(format!("contracts-v{}", fabdex_ts::EXTRACTOR_VERSION)),
        )
    }

    /// The folder names of the current versions: every other `*-v<N>` folder is stale.
    pub(crate) fn live_names(cache: &Path) -> Vec<String> {
        let (md, ts, contracts) = Caches::folders(cache);
        [md, ts, contracts].iter().filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned())).collect()
    }
}

/// Entries in each cache of `cache` (`md-v4` → 670, …), for reports and tests.
pub fn entry_counts(cache: &Path) -> Vec<(String, usize)> {
    let (md, ts, contracts) = Caches::folders(cache);
    [md, ts, contracts]
        .into_iter()
        .map(|dir| {
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            (name, Cache::open(dir).stored.len())
        })
        .collect()
}

/// One cache: the entries its pack held when the build started, and those
/// the build computed since.
pub(crate) struct Cache {
    dir: PathBuf,
    /// The pack as read (empty when there is none, or it does not check out).
    bytes: Vec<u8>,
    /// Key → where its value is in `bytes`.
    stored: HashMap<String, Range<usize>>,
    fresh: Mutex<HashMap<String, Vec<u8>>>,
}

impl Cache {
    /// The cache in `dir`, its pack read (a missing or damaged pack is an empty cache).
    pub(crate) fn open(dir: PathBuf) -> Cache {
        let bytes = fs::read(dir.join(PACK)).unwrap_or_default();
        let stored = index(&bytes).unwrap_or_default();
        let bytes = if stored.is_empty() { Vec::new() } else { bytes };
        Cache { dir, bytes, stored, fresh: Mutex::default() }
    }

    fn get(&self, key: &str) -> Option<&[u8]> {
        self.stored.get(key).map(|r| &self.bytes[r.clone()])
    }

    fn put(&self, key: &str, value: Vec<u8>) {
        self.fresh.lock().expect("a cache lock").insert(key.to_string(), value);
    }

    /// Keep only the entries of `live` keys: write them as the new pack
    /// (nothing is written when that is the pack there already). A pack
    /// that cannot be written leaves the old one, and costs a later build
    /// only the extractions it would have saved.
    pub(crate) fn save<K: AsRef<str>>(&self, live: impl IntoIterator<Item = K>) {
        let fresh = self.fresh.lock().expect("a cache lock");
        let mut keep: Vec<(String, &[u8])> = Vec::new();
        let mut seen = HashSet::new();
        for key in live {
            let key = key.as_ref();
            if !seen.insert(key.to_string()) {
                continue;
            }
            if let Some(value) = fresh.get(key).map(Vec::as_slice).or_else(|| self.get(key)) {
                keep.push((key.to_string(), value));
            }
        }
        let unchanged = fresh.is_empty() && keep.len() == self.stored.len();
        if unchanged {
            return;
        }
        keep.sort_by(|a, b| a.0.cmp(&b.0));
        let _ = fs::create_dir_all(&self.dir);
        let path = self.dir.join(PACK);
        let tmp = self.dir.join(format!("{PACK}.tmp{}", std::process::id()));
        if fs::write(&tmp, encode(&keep)).and_then(|_| fs::rename(&tmp, &path)).is_err() {
            // A full disk leaves a partial file: it must not take the room.
            let _ = fs::remove_file(&tmp);
        }
    }
}

/// The pack of `entries`.
fn encode(entries: &[(String, &[u8])]) -> Vec<u8> {
    let size: usize = entries.iter().map(|(k, v)| 12 + k.len() + v.len()).sum();
    let mut out = Vec::with_capacity(HEADER + 8 + size);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[0; 32]);
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for (key, value) in entries {
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&(value.len() as u64).to_le_bytes());
        out.extend_from_slice(value);
    }
    let hash = blake3::hash(&out[HEADER..]);
    out[16..HEADER].copy_from_slice(hash.as_bytes());
    out
}

/// Each key's value range in a pack, or None when the pack does not check out.
fn index(bytes: &[u8]) -> Option<HashMap<String, Range<usize>>> {
    if bytes.len() < HEADER + 8
        || &bytes[..16] != MAGIC
        || blake3::hash(&bytes[HEADER..]).as_bytes() != &bytes[16..HEADER]
    {
        return None;
    }
    let mut at = HEADER;
    let mut take = |n: usize| -> Option<Range<usize>> {
        let range = at..at.checked_add(n).filter(|&end| end <= bytes.len())?;
        at = range.end;
        Some(range)
    };
    let word = |r: Range<usize>| -> u64 {
        let mut b = [0u8; 8];
        b[..r.len()].copy_from_slice(&bytes[r]);
        u64::from_le_bytes(b)
    };
    let count = word(take(8)?);
    let mut stored = HashMap::new();
    for _ in 0..count {
        let key_len = usize::try_from(word(take(4)?)).ok()?;
        let key = std::str::from_utf8(&bytes[take(key_len)?]).ok()?.to_string();
        let value_len = usize::try_from(word(take(8)?)).ok()?;
        stored.insert(key, take(value_len)?);
    }
    Some(stored)
}

/// A cached value by key, or a fresh one (then kept for [`Cache::save`]);
/// and whether it was cached.
pub(crate) fn cached<T: Serialize + serde::de::DeserializeOwned>(
    cache: &Cache,
    key: &str,
    extract: impl FnOnce() -> T,
) -> (T, bool) {
    if let Some(hit) = cache.get(key).and_then(|b| serde_json::from_slice(b).ok()) {
        return (hit, true);
    }
    let fresh = extract();
    if let Ok(json) = serde_json::to_vec(&fresh) {
        cache.put(key, json);
    }
    (fresh, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_cache_keeps_its_live_entries_and_refuses_damage() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("md-v1");
        let cache = Cache::open(folder.clone());
        let computed = |n: u32| cached(&cache, &format!("key{n}"), || vec![n; 3]);
        assert_eq!(computed(1), (vec![1, 1, 1], false));
        assert_eq!(computed(2), (vec![2, 2, 2], false));
        cache.save(["key1", "key2"]);

        let cache = Cache::open(folder.clone());
        assert_eq!(cached(&cache, "key1", || vec![9]), (vec![1, 1, 1], true));
        assert_eq!(cached(&cache, "key3", || vec![3]), (vec![3], false));
        cache.save(["key1", "key3"]); // key2 is not live
        let cache = Cache::open(folder.clone());
        let keys: HashSet<&str> = cache.stored.keys().map(String::as_str).collect();
        assert_eq!(keys, HashSet::from(["key1", "key3"]));
        assert_eq!(cached(&cache, "key3", || vec![0]), (vec![3], true));

        // A flipped byte anywhere: the pack is not used, nothing is read wrong.
        let path = folder.join(PACK);
        let good = fs::read(&path).unwrap();
        // The last one turns key1's value into other valid JSON: only the hash can tell.
        let value = good.windows(7).position(|w| w == b"[1,1,1]").unwrap();
        for at in [3, 20, good.len() - 2, value + 1] {
            let mut bad = good.clone();
            bad[at] ^= 1;
            fs::write(&path, &bad).unwrap();
            let cache = Cache::open(folder.clone());
            assert_eq!(cached(&cache, "key1", || vec![7]), (vec![7], false), "byte {at}");
        }
        // A cut pack, likewise.
        fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert!(Cache::open(folder.clone()).stored.is_empty());
    }

    #[test]
    fn a_save_that_changes_nothing_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("ts-v1");
        let cache = Cache::open(folder.clone());
        cached(&cache, "a", || 1u8);
        cache.save(["a"]);
        let written = fs::metadata(folder.join(PACK)).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let cache = Cache::open(folder.clone());
        assert!(cached(&cache, "a", || 2u8).1);
        cache.save(["a", "a"]);
        assert_eq!(fs::metadata(folder.join(PACK)).unwrap().modified().unwrap(), written);
    }
}
