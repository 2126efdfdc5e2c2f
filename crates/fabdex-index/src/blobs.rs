//! The content-addressed blob store: `blobs/<64 hex>`, named by the blake3
//! digest of the bytes. Reads check the digest, so a corrupted blob is an
//! error, never wrong text. One flat folder: a folder per digest prefix
//! (`<2 hex>/<62 hex>`, until format 9) cost every build 256 `mkdir`s and
//! its garbage collection 256 `rmdir`s, a tenth of a one-file re-index.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};

use crate::integrity::CorruptSnapshot;
use fabdex_model::digest::{digest_bytes, digest_hex};

pub struct BlobStore {
    dir: PathBuf,
}

impl BlobStore {
    pub fn new(dir: impl Into<PathBuf>) -> BlobStore {
        BlobStore { dir: dir.into() }
    }

    pub fn path_of(&self, digest: &str) -> Result<PathBuf> {
        let hex = digest_hex(digest).ok_or_else(|| anyhow!("`{digest}` is not a blake3 digest"))?;
        Ok(self.dir.join(hex))
    }

    /// Store bytes under their digest, linking from `reuse` (a previous
    /// snapshot's store) when it already holds them.
    pub fn put(&self, bytes: &[u8], reuse: Option<&BlobStore>) -> Result<String> {
        let digest = blake3::hash(bytes);
        self.put_digested(bytes, &digest, reuse)?;
        Ok(format!("blake3:{}", digest.to_hex()))
    }

    /// [`BlobStore::put`] of bytes whose digest is known. Two puts of the same
    /// bytes must not run at once: both could find the blob missing.
    pub fn put_digested(&self, bytes: &[u8], digest: &blake3::Hash, reuse: Option<&BlobStore>) -> Result<()> {
        let digest = format!("blake3:{}", digest.to_hex());
        let path = self.path_of(&digest)?;
        if path.exists() {
            return Ok(());
        }
        fs::create_dir_all(&self.dir).with_context(|| format!("cannot create the folder `{}`", self.dir.display()))?;
        if let Some(prev) = reuse {
            let old = prev.path_of(&digest)?;
            // Link only a blob that still holds exactly these bytes: a
            // corrupted predecessor must not leak into the new snapshot.
            if fs::read(&old).is_ok_and(|b| b == bytes) && fs::hard_link(&old, &path).is_ok() {
                return Ok(());
            }
        }
        fs::write(&path, bytes).with_context(|| format!("cannot write blob `{}`", path.display()))?;
        Ok(())
    }

    /// The bytes stored under `digest`, checked against it.
    pub fn get(&self, digest: &str) -> Result<Vec<u8>> {
        let path = self.path_of(digest)?;
        let bytes = fs::read(&path).map_err(|e| {
            CorruptSnapshot(format!("snapshot is corrupted: blob `{}` cannot be read ({e})", path.display()))
        })?;
        if digest_bytes(&bytes) != digest {
            return Err(CorruptSnapshot(format!(
                "snapshot is corrupted: blob `{}` does not match its digest {digest}; re-run `fabdex index`",
                path.display()
            ))
            .into());
        }
        Ok(bytes)
    }

    /// The text stored under `digest`.
    pub fn get_text(&self, digest: &str) -> Result<String> {
        String::from_utf8(self.get(digest)?).map_err(|_| anyhow!("blob {digest} is not UTF-8"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_detects_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::new(dir.path().join("a"));
        let d = store.put(b"hello", None).unwrap();
        assert_eq!(store.get_text(&d).unwrap(), "hello");
        let other = BlobStore::new(dir.path().join("b"));
        assert_eq!(other.put(b"hello", Some(&store)).unwrap(), d);
        fs::write(store.path_of(&d).unwrap().with_file_name("x"), b"").unwrap();
        fs::remove_file(store.path_of(&d).unwrap()).unwrap();
        fs::write(store.path_of(&d).unwrap(), b"jello").unwrap();
        let err = store.get(&d).unwrap_err().to_string();
        assert!(err.contains("corrupted"), "{err}");
        assert_eq!(other.get_text(&d).unwrap(), "hello", "a hard link survives the old file's replacement");
    }
}
