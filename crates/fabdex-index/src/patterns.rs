//! Pattern programs: entries, the closure of their relative imports, their
//! content identity and their contracts, assembled from the extracted files.

use std::collections::{BTreeSet, HashMap, VecDeque};

use fabdex_model::ts::{PatternsTable, ProgramFile, ProgramRow, SourceFileRow};
use fabdex_ts::program::{program_contract, resolve_relative};

use crate::build::TsFile;
use crate::config::Config;

/// Whether an extracted file is a program entry: it default-exports
/// `pattern(...)`, and is neither a test nor a `mod.ts` re-export module.
pub(crate) fn is_entry(path: &str, file: &TsFile) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    file.ts.is_entry && !name.ends_with(".test.ts") && !name.ends_with(".test.tsx") && name != "mod.ts"
}

/// base64url (no padding) of 32 bytes: 43 chars, the shape of a platform hash.
fn base64url(bytes: &[u8; 32]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(43);
    let mut bits = 0u32;
    let mut nbits = 0;
    for &b in bytes {
        bits = (bits << 8) | u32::from(b);
        nbits += 8;
        while nbits >= 6 {
            nbits -= 6;
            out.push(ALPHABET[((bits >> nbits) & 63) as usize] as char);
        }
    }
    if nbits > 0 {
        out.push(ALPHABET[((bits << (6 - nbits)) & 63) as usize] as char);
    }
    out
}

/// The content identity of a program: its entry's name and every file's name
/// and digest, in name order.
pub fn program_id(entry: &str, files: &[ProgramFile]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(format!("fabdex-program-v1\nmain {entry}\n").as_bytes());
    let mut sorted: Vec<&ProgramFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for f in sorted {
        h.update(format!("file {} {}\n", f.name, f.digest).as_bytes());
    }
    base64url(h.finalize().as_bytes())
}

pub(crate) fn assemble(config: &Config, files: &[TsFile]) -> PatternsTable {
    let mut table = PatternsTable::default();
    let index: HashMap<(usize, &str), usize> =
        files.iter().enumerate().map(|(i, f)| ((f.candidate.root, f.candidate.path.as_str()), i)).collect();
    for f in files {
        let root = &config.roots[f.candidate.root];
        table.files.push(SourceFileRow {
            root: root.name.clone(),
            path: f.candidate.path.clone(),
            origin: root.origin_label(),
            digest: f.digest.clone(),
            bytes: f.text.len() as u64,
            lines: f.text.lines().count() as u32,
            extraction: f.ts.clone(),
            outline: f.outline.clone(),
            entry: is_entry(&f.candidate.path, f),
        });
    }
    for (i, f) in files.iter().enumerate() {
        if !is_entry(&f.candidate.path, f) {
            continue;
        }
        let root_index = f.candidate.root;
        let root = &config.roots[root_index];
        // The closure of relative imports, entry first, cycles visited once.
        let mut order = Vec::new();
        let mut seen = BTreeSet::new();
        let mut unresolved = Vec::new();
        let mut queue = VecDeque::from([i]);
        while let Some(fi) = queue.pop_front() {
            if !seen.insert(fi) {
                continue;
            }
            order.push(fi);
            let file = &files[fi];
            for imp in file.ts.imports.iter().filter(|imp| imp.kind == fabdex_model::ts::ImportKind::Relative) {
                let exists = |p: &str| index.contains_key(&(root_index, p));
                match resolve_relative(&file.candidate.path, &imp.specifier, exists) {
                    Some(target) => queue.push_back(index[&(root_index, target.as_str())]),
                    None => unresolved.push(format!("`{}` imported by {}", imp.specifier, file.candidate.path)),
                }
            }
        }
        let program_files: Vec<ProgramFile> = order
            .iter()
            .map(|&fi| ProgramFile {
                name: files[fi].candidate.path.clone(),
                bytes: files[fi].text.len() as u64,
                digest: files[fi].digest.clone(),
            })
            .collect();
        let sources: Vec<(String, String)> =
            order.iter().map(|&fi| (files[fi].candidate.path.clone(), files[fi].text.clone())).collect();
        let contract = program_contract(&sources);
        let mut dependencies: Vec<String> = order
            .iter()
            .flat_map(|&fi| files[fi].ts.imports.iter())
            .filter_map(|imp| imp.cf.as_ref().and_then(|c| c.pattern_id()).map(str::to_string))
            .collect();
        dependencies.sort();
        dependencies.dedup();
        let result = contract.result_schema.as_ref();
        let description = result
            .and_then(|r| r.get("description"))
            .and_then(|d| d.as_str())
            .map(str::to_string)
            .or_else(|| f.ts.patterns.iter().find(|p| p.default_export).and_then(|p| p.jsdoc.clone()));
        let hashtags = result
            .and_then(|r| r.get("tags"))
            .and_then(|t| t.as_array())
            .map(|t| t.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        table.programs.push(ProgramRow {
            pattern_id: program_id(&f.candidate.path, &program_files),
            aliases: vec![format!("{}/{}", root.name, f.candidate.path), f.candidate.path.clone()],
            entry: format!("{}/{}", root.name, f.candidate.path),
            files: program_files,
            unresolved_imports: unresolved,
            contract,
            dependencies,
            description,
            hashtags,
        });
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_43_base64url_chars_and_track_content() {
        let a = [ProgramFile { name: "a.tsx".into(), bytes: 1, digest: "blake3:1".into() }];
        let b = [ProgramFile { name: "a.tsx".into(), bytes: 1, digest: "blake3:2".into() }];
        let id = program_id("a.tsx", &a);
        assert_eq!(id.len(), 43);
        assert!(fabdex_ts::cf_spec::is_hash(&id));
        assert_eq!(id, program_id("a.tsx", &a));
        assert_ne!(id, program_id("a.tsx", &b));
        assert_eq!(base64url(&[0xff; 32]).len(), 43);
    }
}
