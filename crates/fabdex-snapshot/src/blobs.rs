//! The content-addressed blob store of a snapshot: one pack file,
//! `blobs.pack`, holding the bytes of every readable file once, found by the
//! blake3 digest of those bytes. Every read checks the digest, so a damaged
//! pack (its bytes or its index) is a [`CorruptSnapshot`] error naming the
//! pack, never wrong text.
//!
//! One file, not a file per blob (`blobs/<64 hex>` until format 10): creating
//! a file costs a build an inode allocation, and on an ext4 volume with many
//! recently deleted inodes that ran to a third of a millisecond per file, so
//! the 1,339 blobs of labs took up to 0.8 s of a 5 s cold build. A build
//! holds every text in memory, so it writes the whole pack in one pass; a
//! pack is never changed once written.
//!
//! Layout (little-endian): the magic (16 bytes); the number of blobs (u64);
//! per blob, sorted by digest, its blake3 hash (32 bytes), offset from the
//! file's start (u64) and length (u64); then the bytes. A reader finds a
//! blob by binary search over the index with `pread`, so a `read` costs a
//! few small reads, whatever the pack's size.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};

use crate::integrity::CorruptSnapshot;
use fabdex_model::digest::{digest_bytes, digest_hex};

/// The pack's file name in a snapshot folder.
pub const PACK: &str = "blobs.pack";

const MAGIC: &[u8; 16] = b"fabdex-blobs 1\n\0";
/// Magic and count.
const HEADER: u64 = 24;
/// Hash, offset and length.
const ENTRY: u64 = 48;

/// A snapshot's pack of blobs.
#[derive(Debug, Clone)]
pub struct BlobStore {
    path: PathBuf,
}

/// Where one blob's bytes are in its pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobPlace {
    pub offset: u64,
    pub len: u64,
}

impl BlobStore {
    /// The pack at `path` (nothing is read until a blob is).
    pub fn new(path: impl Into<PathBuf>) -> BlobStore {
        BlobStore { path: path.into() }
    }

    /// The pack file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write a pack holding `blobs` (each with the blake3 hash of its bytes)
    /// at `path`; a blob given twice is stored once. Returns how many it holds.
    pub fn write<'a>(path: &Path, blobs: impl IntoIterator<Item = (blake3::Hash, &'a [u8])>) -> Result<usize> {
        let mut blobs: Vec<(blake3::Hash, &[u8])> = blobs.into_iter().collect();
        blobs.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        blobs.dedup_by(|a, b| a.0 == b.0);
        let write = || -> std::io::Result<()> {
            let mut out = BufWriter::with_capacity(1 << 20, fs::File::create(path)?);
            out.write_all(MAGIC)?;
            out.write_all(&(blobs.len() as u64).to_le_bytes())?;
            let mut offset = HEADER + ENTRY * blobs.len() as u64;
            for (hash, bytes) in &blobs {
                out.write_all(hash.as_bytes())?;
                out.write_all(&offset.to_le_bytes())?;
                out.write_all(&(bytes.len() as u64).to_le_bytes())?;
                offset += bytes.len() as u64;
            }
            for (_, bytes) in &blobs {
                out.write_all(bytes)?;
            }
            out.flush()
        };
        write().with_context(|| format!("cannot write the blob pack `{}`", path.display()))?;
        Ok(blobs.len())
    }

    /// The bytes stored under `digest`, checked against it.
    pub fn get(&self, digest: &str) -> Result<Vec<u8>> {
        let hash = hash_of(digest)?;
        let pack = self.open()?;
        let place = pack.find(&hash)?.ok_or_else(|| self.corrupt(format!("it holds no blob {digest}")))?;
        let bytes = pack.read(place.offset, place.len)?;
        if digest_bytes(&bytes) != digest {
            return Err(self.corrupt(format!("blob {digest} does not match its digest")).into());
        }
        Ok(bytes)
    }

    /// The text stored under `digest`.
    pub fn get_text(&self, digest: &str) -> Result<String> {
        String::from_utf8(self.get(digest)?).map_err(|_| anyhow!("blob {digest} is not UTF-8"))
    }

    /// Where the blob stored under `digest` is in the pack (none: it holds no such blob).
    pub fn place(&self, digest: &str) -> Result<Option<BlobPlace>> {
        self.open()?.find(&hash_of(digest)?)
    }

    /// The digests of every blob in the pack, in the pack's order.
    pub fn digests(&self) -> Result<Vec<String>> {
        let pack = self.open()?;
        let index = pack.read(HEADER, pack.count * ENTRY)?;
        let digest = |e: &[u8]| blake3::Hash::from_bytes(e[..32].try_into().expect("32 bytes")).to_hex();
        Ok(index.chunks_exact(ENTRY as usize).map(|e| format!("blake3:{}", digest(e))).collect())
    }

    fn open(&self) -> Result<OpenPack<'_>> {
        let file = fs::File::open(&self.path).map_err(|e| self.corrupt(format!("it cannot be read ({e})")))?;
        let len = file.metadata().map_err(|e| self.corrupt(format!("it cannot be read ({e})")))?.len();
        let mut pack = OpenPack { store: self, file, len, count: 0 };
        let header = pack.read(0, HEADER)?;
        if &header[..16] != MAGIC {
            return Err(self.corrupt("it does not start with the blob pack's magic line".into()).into());
        }
        pack.count = u64::from_le_bytes(header[16..24].try_into().expect("8 bytes"));
        if pack.count.checked_mul(ENTRY).and_then(|n| n.checked_add(HEADER)).is_none_or(|end| end > len) {
            return Err(self.corrupt(format!("its index of {} blobs runs past its end", pack.count)).into());
        }
        Ok(pack)
    }

    fn corrupt(&self, what: String) -> CorruptSnapshot {
        CorruptSnapshot(format!(
            "snapshot is corrupted: blob pack `{}`: {what}; re-run `fabdex index`",
            self.path.display()
        ))
    }
}

/// A pack opened for reading, its header checked.
struct OpenPack<'a> {
    store: &'a BlobStore,
    file: fs::File,
    len: u64,
    count: u64,
}

impl OpenPack<'_> {
    /// `len` bytes at `offset`, which must lie inside the file.
    fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        if offset.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(self
                .store
                .corrupt(format!("{len} bytes at {offset} run past its end ({} bytes)", self.len))
                .into());
        }
        let mut bytes = vec![0u8; usize::try_from(len).context("a blob larger than memory")?];
        read_exact_at(&self.file, &mut bytes, offset)
            .map_err(|e| self.store.corrupt(format!("{len} bytes at {offset} cannot be read ({e})")))?;
        Ok(bytes)
    }

    /// The place of the blob with this hash, by binary search over the index.
    fn find(&self, hash: &[u8; 32]) -> Result<Option<BlobPlace>> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let entry = self.read(HEADER + mid * ENTRY, ENTRY)?;
            match entry[..32].cmp(hash) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let word = |i: usize| u64::from_le_bytes(entry[i..i + 8].try_into().expect("8 bytes"));
                    return Ok(Some(BlobPlace { offset: word(32), len: word(40) }));
                }
            }
        }
        Ok(None)
    }
}

#[cfg(unix)]
fn read_exact_at(file: &fs::File, bytes: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, bytes, offset)
}

#[cfg(not(unix))]
fn read_exact_at(mut file: &fs::File, bytes: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek};
    file.seek(std::io::SeekFrom::Start(offset))?;
    file.read_exact(bytes)
}

/// The 32 bytes of a `blake3:<hex>` digest.
fn hash_of(digest: &str) -> Result<[u8; 32]> {
    let parsed = digest_hex(digest).and_then(|hex| blake3::Hash::from_hex(hex).ok());
    parsed.map(|h| *h.as_bytes()).ok_or_else(|| anyhow!("`{digest}` is not a blake3 digest"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack(dir: &Path, texts: &[&str]) -> (BlobStore, Vec<String>) {
        let path = dir.join(PACK);
        let blobs = texts.iter().map(|t| (blake3::hash(t.as_bytes()), t.as_bytes()));
        BlobStore::write(&path, blobs).unwrap();
        (BlobStore::new(path), texts.iter().map(|t| digest_bytes(t.as_bytes())).collect())
    }

    #[test]
    fn every_blob_is_found_by_its_digest_and_no_other_is() {
        let dir = tempfile::tempdir().unwrap();
        let texts: Vec<String> = (0..300).map(|i| format!("text number {i}\n").repeat(i % 7 + 1)).collect();
        let mut refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        refs.push(refs[3]); // given twice: stored once
        refs.push("");
        let (store, digests) = pack(dir.path(), &refs);
        for (text, digest) in refs.iter().zip(&digests) {
            assert_eq!(store.get_text(digest).unwrap(), *text);
        }
        let mut listed = store.digests().unwrap();
        assert_eq!(listed.len(), 301, "300 distinct texts and the empty one");
        listed.sort();
        let mut expected = digests.clone();
        expected.sort();
        expected.dedup();
        assert_eq!(listed, expected);
        let absent = digest_bytes(b"never stored");
        let err = store.get(&absent).unwrap_err().to_string();
        assert!(err.contains("corrupted") && err.contains("holds no blob") && err.contains(PACK), "{err}");
        assert!(store.place(&absent).unwrap().is_none());
        assert!(store.get("sha1:00").unwrap_err().to_string().contains("not a blake3 digest"));
    }

    #[test]
    fn damage_to_a_blob_its_index_or_the_header_is_corrupt_naming_the_pack() {
        let dir = tempfile::tempdir().unwrap();
        let (store, digests) = pack(dir.path(), &["alpha", "beta", "gamma"]);
        let original = fs::read(store.path()).unwrap();
        let is_corrupt = |store: &BlobStore, digest: &str| {
            let err = store.get(digest).unwrap_err();
            assert!(err.is::<CorruptSnapshot>(), "{err:#}");
            assert!(err.to_string().contains("blobs.pack"), "{err:#}");
        };
        // A flipped byte in a blob's text.
        let place = store.place(&digests[1]).unwrap().unwrap();
        let mut bytes = original.clone();
        bytes[place.offset as usize] ^= 0x20;
        fs::write(store.path(), &bytes).unwrap();
        is_corrupt(&store, &digests[1]);
        assert_eq!(store.get_text(&digests[0]).unwrap(), "alpha", "the other blobs still read");
        // A length in the index that runs past the end.
        let mut bytes = original.clone();
        let at = (HEADER + ENTRY) as usize - 8;
        bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        fs::write(store.path(), &bytes).unwrap();
        let first = store.digests().unwrap()[0].clone();
        is_corrupt(&store, &first);
        // A cut file, a wrong magic, a missing pack.
        fs::write(store.path(), &original[..30]).unwrap();
        is_corrupt(&store, &digests[0]);
        let mut bytes = original.clone();
        bytes[0] = b'X';
        fs::write(store.path(), &bytes).unwrap();
        is_corrupt(&store, &digests[0]);
        fs::remove_file(store.path()).unwrap();
        is_corrupt(&store, &digests[0]);
    }
}
