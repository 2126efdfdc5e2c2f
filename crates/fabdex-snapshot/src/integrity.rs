//! Checking a snapshot's files against the digests its manifest records,
//! and remembering, across processes, which files were checked.
//!
//! Hashing every table a command reads was half of a `search docs` process
//! (labs: 42 MB of tables and search files, about 9 ms of a 23 ms call).
//! A snapshot's files are never written again once published, so a file
//! that one process hashed and found whole is still whole while nothing has
//! written to it since. Whether anything has is what the inode's change
//! time (`ctime`) tells: the kernel sets it on every write, truncation,
//! rename over the name, link or attribute change, and no caller can set
//! it back. So, as git's index does for the files it has hashed, a
//! successful check is remembered as a [`Stamp`] of the file (device,
//! inode, size, modification and change times) with the digest it matched,
//! in `<index>/cache/verified-v1/<snapshot>.json`; a later process trusts
//! the file without hashing it only when every part of the stamp still
//! matches and the digest is the one its manifest records. Anything else,
//! such as a file written since, replaced, or a stamp missing, unreadable or
//! of another digest, is hashed again.
//!
//! Two limits keep the stamp honest:
//!
//! * **No stamp for a file changed within the last second** ([`RACY_WITHIN`]):
//!   the kernel keeps change times in coarse ticks, so a write in the same
//!   tick as the previous one can leave `ctime` unchanged. A file last
//!   changed a second before the check began cannot be written again with
//!   that same `ctime`. (This is git's "racy clean" rule.)
//! * **No stamp unless the file is the same after the hash as before it**:
//!   the file is looked at before it is opened and again after hashing, and
//!   a difference, such as a write during the hash, records nothing.
//!
//! What a stamp cannot see is damage below the file system (a failing disk
//! changing bytes without a write); `fabdex verify` hashes every file
//! regardless of stamps ([`VerifiedFiles::hash_always`]).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use anyhow::Result;
use fabdex_model::digest::digest_bytes;
use serde::{Deserialize, Serialize};

use crate::table_bytes::TableBytes;

/// A snapshot failed an integrity check (digest mismatch, missing file). Query
/// layers tell it apart from "no snapshot" by downcasting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CorruptSnapshot(pub String);

/// The folder of stamps under an index's `cache/`.
pub const STAMPS_DIR: &str = "verified-v1";

/// A file changed more recently than this before a check is not stamped.
pub const RACY_WITHIN: Duration = Duration::from_secs(1);

/// `bytes`, the contents of `path`, against the digest the manifest records.
pub fn check_digest(path: &Path, bytes: &[u8], expected: Option<&String>) -> Result<()> {
    check_digest_of(path, &digest_bytes(bytes), expected)
}

pub fn check_digest_of(path: &Path, actual: &str, expected: Option<&String>) -> Result<()> {
    match expected {
        Some(e) if *e == actual => Ok(()),
        Some(e) => Err(CorruptSnapshot(format!(
            "snapshot is corrupted: `{}` has digest {actual} but the manifest records {e}; re-run `fabdex index`",
            path.display()
        ))
        .into()),
        None => {
            Err(CorruptSnapshot(format!("snapshot is corrupted: `{}` is not listed in the manifest", path.display()))
                .into())
        }
    }
}

/// What a file looked like when its digest matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    digest: String,
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

/// A file's identity and times, as a stamp records them (without the digest).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Look {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Look {
    #[cfg(unix)]
    fn of(path: &Path) -> Option<Look> {
        use std::os::unix::fs::MetadataExt;
        let m = fs::metadata(path).ok()?;
        let ns = |s: i64, n: i64| s as i128 * 1_000_000_000 + n as i128;
        Some(Look {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        })
    }

    /// Elsewhere there is no change time to trust: every check hashes.
    #[cfg(not(unix))]
    fn of(_path: &Path) -> Option<Look> {
        None
    }

    fn matches(&self, stamp: &Stamp) -> bool {
        (self.dev, self.ino, self.size, self.mtime_ns, self.ctime_ns)
            == (stamp.dev, stamp.ino, stamp.size, stamp.mtime_ns, stamp.ctime_ns)
    }

    /// Whether the file last changed at least [`RACY_WITHIN`] before `now`.
    fn settled(&self, now: SystemTime) -> bool {
        let Ok(now) = now.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        self.ctime_ns + (RACY_WITHIN.as_nanos() as i128) <= now.as_nanos() as i128
    }

    fn stamp(self, digest: &str) -> Stamp {
        let Look { dev, ino, size, mtime_ns, ctime_ns } = self;
        Stamp { digest: digest.to_string(), dev, ino, size, mtime_ns, ctime_ns }
    }
}

/// The digest checks of one snapshot: which of its files this process, or
/// an earlier one, found whole, and whether to trust the earlier ones.
#[derive(Debug)]
pub struct VerifiedFiles {
    /// Where the stamps are kept; none when the snapshot is not in an index's layout.
    store: Option<PathBuf>,
    /// Whether earlier processes' stamps spare a hash (`false` for `fabdex verify`).
    trust_stamps: bool,
    stamps: Mutex<Stamps>,
    /// How many files were hashed, and how many trusted by their stamp (for tests and reports).
    counts: Mutex<CheckCounts>,
}

#[derive(Debug, Default)]
struct Stamps {
    known: BTreeMap<String, Stamp>,
    fresh: BTreeMap<String, Stamp>,
}

/// How a process's digest checks went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckCounts {
    pub hashed: usize,
    pub trusted: usize,
}

impl VerifiedFiles {
    /// The checks of the snapshot in `snapshot_dir`, trusting the stamps its
    /// index keeps when the folder sits in an index (`<index>/snapshots/<id>`).
    pub fn for_snapshot(snapshot_dir: &Path) -> VerifiedFiles {
        let store = stamps_file(snapshot_dir);
        let known = store
            .as_deref()
            .and_then(|p| fs::read(p).ok())
            .and_then(|b| serde_json::from_slice::<BTreeMap<String, Stamp>>(&b).ok())
            .unwrap_or_default();
        VerifiedFiles {
            store,
            trust_stamps: true,
            stamps: Mutex::new(Stamps { known, fresh: BTreeMap::new() }),
            counts: Default::default(),
        }
    }

    /// Checks that hash every file, whatever was stamped (what `fabdex
    /// verify` runs); what they find whole is stamped for later processes.
    pub fn hash_always(snapshot_dir: &Path) -> VerifiedFiles {
        VerifiedFiles {
            store: stamps_file(snapshot_dir),
            trust_stamps: false,
            stamps: Default::default(),
            counts: Default::default(),
        }
    }

    pub fn counts(&self) -> CheckCounts {
        *self.counts.lock().expect("not poisoned")
    }

    /// The file `path`, listed as `name` in the manifest with digest
    /// `expected`: read (mapped when large) and checked, or trusted by its stamp.
    pub fn read(&self, name: &str, path: &Path, expected: Option<&String>) -> Result<TableBytes> {
        Ok(self.open_checked(name, path, expected, true)?.expect("read when asked for"))
    }

    /// The file `path` checked like [`VerifiedFiles::read`], for a caller
    /// that reads it its own way (tantivy): a trusted file is not read at all.
    pub fn check(&self, name: &str, path: &Path, expected: Option<&String>) -> Result<()> {
        self.open_checked(name, path, expected, false).map(drop)
    }

    fn open_checked(
        &self,
        name: &str,
        path: &Path,
        expected: Option<&String>,
        want_bytes: bool,
    ) -> Result<Option<TableBytes>> {
        let now = SystemTime::now();
        let before = Look::of(path);
        let trusted = match (&before, expected) {
            (Some(look), Some(expected)) => self.trusted(name, look, expected),
            _ => false,
        };
        if trusted && !want_bytes {
            self.counts.lock().expect("not poisoned").trusted += 1;
            return Ok(None);
        }
        let bytes = TableBytes::open(path).map_err(|e| {
            CorruptSnapshot(format!(
                "snapshot is corrupted: cannot read `{}` ({e}); re-run `fabdex index`",
                path.display()
            ))
        })?;
        if trusted {
            self.counts.lock().expect("not poisoned").trusted += 1;
            return Ok(Some(bytes));
        }
        check_digest(path, &bytes, expected)?;
        self.counts.lock().expect("not poisoned").hashed += 1;
        if let (Some(look), Some(expected)) = (before, expected)
            && look.settled(now)
            && Look::of(path).as_ref() == Some(&look)
        {
            self.stamps.lock().expect("not poisoned").fresh.insert(name.to_string(), look.stamp(expected));
        }
        Ok(Some(bytes))
    }

    fn trusted(&self, name: &str, look: &Look, expected: &str) -> bool {
        if !self.trust_stamps {
            return false;
        }
        let stamps = self.stamps.lock().expect("not poisoned");
        let stamp = stamps.fresh.get(name).or_else(|| stamps.known.get(name));
        stamp.is_some_and(|s| s.digest == expected && look.matches(s))
    }

    /// Keep the stamps of this process's checks for later processes. A
    /// stamp that cannot be written (a read-only index, a full disk) costs
    /// a later process a hash, nothing else, so the error is dropped.
    pub fn keep(&self) {
        let Some(store) = &self.store else {
            return;
        };
        let fresh = {
            let mut stamps = self.stamps.lock().expect("not poisoned");
            let fresh = std::mem::take(&mut stamps.fresh);
            stamps.known.extend(fresh.clone());
            fresh
        };
        if fresh.is_empty() {
            return;
        }
        // Merged with what other processes kept since this one read the file.
        let mut on_disk: BTreeMap<String, Stamp> =
            fs::read(store).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
        on_disk.extend(fresh);
        let Ok(json) = serde_json::to_vec(&on_disk) else {
            return;
        };
        let Some(folder) = store.parent() else {
            return;
        };
        let tmp = store.with_extension(format!("tmp{}", std::process::id()));
        if fs::create_dir_all(folder).is_ok() && fs::write(&tmp, json).is_ok() && fs::rename(&tmp, store).is_ok() {
            return;
        }
        let _ = fs::remove_file(&tmp);
    }
}

/// `<index>/cache/verified-v1/<id>.json` for `<index>/snapshots/<id>`.
fn stamps_file(snapshot_dir: &Path) -> Option<PathBuf> {
    let id = snapshot_dir.file_name()?.to_str()?;
    let snapshots = snapshot_dir.parent()?;
    if snapshots.file_name()? != "snapshots" {
        return None;
    }
    let index = snapshots.parent()?;
    Some(index.join("cache").join(STAMPS_DIR).join(format!("{id}.json")))
}

/// Drop the stamps of snapshots other than `live` (after garbage collection).
pub fn prune_stamps(cache: &Path, live: &[String]) {
    for entry in fs::read_dir(cache.join(STAMPS_DIR)).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let id = name.split('.').next().unwrap_or_default();
        if !live.iter().any(|l| l == id) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A snapshot folder in an index layout, with one table older than the racy window.
    fn snapshot_with_table(root: &Path, bytes: &[u8]) -> (PathBuf, PathBuf, String) {
        let dir = root.join("snapshots").join("00ff");
        fs::create_dir_all(&dir).unwrap();
        let table = dir.join("t.bin");
        fs::write(&table, bytes).unwrap();
        (dir, table, digest_bytes(bytes))
    }

    fn settle() {
        std::thread::sleep(RACY_WITHIN + Duration::from_millis(100));
    }

    #[test]
    fn a_settled_file_checked_once_is_trusted_until_it_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, table, digest) = snapshot_with_table(tmp.path(), b"whole table");
        settle();
        let first = VerifiedFiles::for_snapshot(&dir);
        first.read("t.bin", &table, Some(&digest)).unwrap();
        first.keep();
        assert_eq!(first.counts(), CheckCounts { hashed: 1, trusted: 0 });
        assert!(tmp.path().join("cache/verified-v1/00ff.json").is_file());

        let second = VerifiedFiles::for_snapshot(&dir);
        second.read("t.bin", &table, Some(&digest)).unwrap();
        assert_eq!(second.counts(), CheckCounts { hashed: 0, trusted: 1 });

        // Damage of the same size: the change time moves, so the stamp no longer holds.
        fs::write(&table, b"whole tablf").unwrap();
        let third = VerifiedFiles::for_snapshot(&dir);
        let err = third.read("t.bin", &table, Some(&digest)).map(drop).unwrap_err();
        assert!(err.is::<CorruptSnapshot>(), "{err:#}");
        assert!(format!("{err}").contains("t.bin"), "{err}");
    }

    #[test]
    fn a_stamp_of_another_digest_or_a_fresh_file_spares_no_hash() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, table, digest) = snapshot_with_table(tmp.path(), b"contents");
        // Changed within the racy window: hashed, and not stamped.
        let racy = VerifiedFiles::for_snapshot(&dir);
        racy.read("t.bin", &table, Some(&digest)).unwrap();
        racy.keep();
        assert!(!tmp.path().join("cache/verified-v1/00ff.json").exists());

        settle();
        let first = VerifiedFiles::for_snapshot(&dir);
        first.read("t.bin", &table, Some(&digest)).unwrap();
        first.keep();
        // A manifest that records another digest for the name is checked, and fails.
        let other = digest_bytes(b"other");
        let second = VerifiedFiles::for_snapshot(&dir);
        assert!(second.read("t.bin", &table, Some(&other)).is_err());
        assert_eq!(second.counts(), CheckCounts { hashed: 0, trusted: 0 });
    }

    #[test]
    fn verify_hashes_whatever_is_stamped() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, table, digest) = snapshot_with_table(tmp.path(), b"contents");
        settle();
        let first = VerifiedFiles::for_snapshot(&dir);
        first.read("t.bin", &table, Some(&digest)).unwrap();
        first.keep();
        let verify = VerifiedFiles::hash_always(&dir);
        verify.read("t.bin", &table, Some(&digest)).unwrap();
        assert_eq!(verify.counts(), CheckCounts { hashed: 1, trusted: 0 });
    }

    #[test]
    fn stamps_live_only_in_an_index_layout_and_are_pruned_with_their_snapshot() {
        assert_eq!(stamps_file(Path::new("/x/loose")), None);
        assert_eq!(stamps_file(Path::new("/i/snapshots/ab12")), Some(PathBuf::from("/i/cache/verified-v1/ab12.json")));
        let tmp = tempfile::tempdir().unwrap();
        let folder = tmp.path().join(STAMPS_DIR);
        fs::create_dir_all(&folder).unwrap();
        fs::write(folder.join("aa.json"), "{}").unwrap();
        fs::write(folder.join("bb.json"), "{}").unwrap();
        prune_stamps(tmp.path(), &["bb".to_string()]);
        assert!(!folder.join("aa.json").exists());
        assert!(folder.join("bb.json").exists());
    }
}
