//! Publish: the staged snapshot renamed into `snapshots/`, `CURRENT`
//! replaced atomically, old snapshots collected; and a whole-snapshot check.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};

use super::files::{rename, write_file};
use crate::cache::Caches;
use fabdex_snapshot::snapshot::{IndexLayout, Snapshot};

/// Move the staged snapshot into place and point `CURRENT` at it. Returns true
/// when an identical, intact snapshot was already there.
pub(crate) fn publish(layout: &IndexLayout, staging: &Path, id: &str, replace: bool) -> Result<bool> {
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
pub(crate) fn exchange(a: &Path, b: &Path) -> bool {
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
pub(crate) fn exchange(_: &Path, _: &Path) -> bool {
    false
}

/// Point `CURRENT` at a snapshot, atomically.
pub(crate) fn publish_current(layout: &IndexLayout, id: &str) -> Result<()> {
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
pub(crate) fn gc(layout: &IndexLayout, current: &str, keep: usize) {
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
    fabdex_snapshot::integrity::prune_stamps(&layout.cache(), &live);
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
