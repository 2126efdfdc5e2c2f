//! The staging folder's files: where a build stages its snapshot, and the
//! writes, folders and renames it makes there (each error names the path).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use fabdex_model::digest::digest_bytes;
use fabdex_snapshot::snapshot::IndexLayout;
use rayon::prelude::*;

/// `fs::write`, with the path in its error (a full disk must say where).
pub(crate) fn write_file(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> Result<()> {
    let path = path.as_ref();
    fs::write(path, bytes).with_context(|| format!("cannot write `{}`", path.display()))
}

/// A table's name and what encodes it.
pub(crate) type TableEncoder<'a> = (&'static str, &'a (dyn Fn() -> Vec<u8> + Sync));

/// Encode, write and digest tables over the pool, each digest recorded in `tables`.
pub(crate) fn write_tables(
    staging: &Path,
    tables: &mut BTreeMap<String, String>,
    encoders: &[TableEncoder<'_>],
) -> Result<()> {
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

pub(crate) fn create_dir(path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    fs::create_dir_all(path).with_context(|| format!("cannot create the folder `{}`", path.display()))
}

pub(crate) fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> Result<()> {
    let (from, to) = (from.as_ref(), to.as_ref());
    fs::rename(from, to).with_context(|| format!("cannot move `{}` to `{}`", from.display(), to.display()))
}

/// Where a build stages its snapshot, and whether it draws progress.
pub(crate) struct Staged<'a> {
    pub(crate) dir: &'a Path,
    pub(crate) layout: &'a IndexLayout,
    pub(crate) progress: bool,
}
