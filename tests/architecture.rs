//! House rules of the code, checked on its source (docs/ARCHITECTURE.md):
//! no two files of a crate import each other. Two files that need each
//! other are one job split in the wrong place; the shared part belongs in a
//! third file both use.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src`, by its module path (`a.rs` and `a/mod.rs`
/// are `a`, `a/b.rs` is `a::b`); the crate root (`lib.rs`, `main.rs`) is
/// left out: it declares the modules, so it names all of them.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    for entry in ignore::WalkBuilder::new(src).standard_filters(false).build() {
        let path = entry.unwrap().into_path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(src).unwrap().with_extension("");
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let module = match parts.as_slice() {
            [root] if root == "lib" || root == "main" => continue,
            [dirs @ .., last] if last == "mod" => dirs.join("::"),
            all => all.join("::"),
        };
        out.insert(module, path);
    }
    out
}

/// The modules of its crate that a file's code names: `crate::a::b…` and,
/// from module `p::m`, `super::x…` as `p::x…`, each as the longest module
/// path it starts with. Comment lines are skipped.
fn named_modules(text: &str, this: &str, known: &BTreeMap<String, PathBuf>) -> BTreeSet<String> {
    let parent = this.rsplit_once("::").map_or("", |(p, _)| p);
    let mut out = BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (prefix, base) in [("crate::", ""), ("super::", parent)] {
            for (at, _) in line.match_indices(prefix) {
                let boundary = line[..at].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                if !boundary {
                    continue;
                }
                let path: String = line[at + prefix.len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let mut module = base.to_string();
                let mut longest = None;
                for segment in path.split("::").filter(|s| !s.is_empty()) {
                    module = if module.is_empty() { segment.to_string() } else { format!("{module}::{segment}") };
                    if known.contains_key(&module) {
                        longest = Some(module.clone());
                    }
                }
                out.extend(longest.filter(|m| m != this));
            }
        }
    }
    out
}

/// Pairs of files of the crate at `src` that import each other.
fn import_loops(src: &Path) -> Vec<(String, String)> {
    let known = modules(src);
    let edges: BTreeMap<&String, BTreeSet<String>> = known
        .iter()
        .map(|(module, path)| (module, named_modules(&std::fs::read_to_string(path).unwrap(), module, &known)))
        .collect();
    let mut loops = Vec::new();
    for (a, names) in &edges {
        for b in names {
            if a.as_str() < b.as_str() && edges.get(b).is_some_and(|back| back.contains(a.as_str())) {
                loops.push((a.to_string(), b.clone()));
            }
        }
    }
    loops
}

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = vec![root.join("src")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            sources.push(src);
        }
    }
    assert!(sources.len() > 10, "the workspace's crates are found");
    let loops: Vec<String> = sources
        .iter()
        .flat_map(|src| import_loops(src).into_iter().map(move |(a, b)| format!("{}: {a} <-> {b}", src.display())))
        .collect();
    assert!(loops.is_empty(), "files that import each other:\n{}", loops.join("\n"));
}

#[test]
fn the_check_sees_crate_and_super_paths_and_skips_comments() {
    let known: BTreeMap<String, PathBuf> = ["schema", "decls", "store::blobs", "store::snapshot"]
        .iter()
        .map(|m| (m.to_string(), PathBuf::new()))
        .collect();
    let text = "use crate::decls::DeclRef;\n// crate::schema in a comment\nlet x = crate::schema::TypeEnv::new();";
    assert_eq!(named_modules(text, "literal_order", &known), BTreeSet::from(["decls".into(), "schema".into()]));
    let nested = "use super::snapshot::Snapshot;\nmod tests { use super::*; }";
    assert_eq!(named_modules(nested, "store::blobs", &known), BTreeSet::from(["store::snapshot".into()]));
    assert!(named_modules("use my_crate::schema;", "x", &known).is_empty());
}
