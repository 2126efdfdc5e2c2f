//! House rules of the code, checked on its source (docs/ARCHITECTURE.md):
//! no circle of imports of any length between the files of a crate, its
//! root (`lib.rs`, `main.rs`) included. Files that need each other, however
//! far round, are one job split in the wrong place; the shared part belongs
//! in a file they all use.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crate root's module path in the graph.
const ROOT: &str = "";

/// Every `.rs` file under `src`, by its module path (`a.rs` and `a/mod.rs`
/// are `a`, `a/b.rs` is `a::b`, the crate root `lib.rs` or `main.rs` is
/// [`ROOT`]). A crate with both roots (a library and its binary) keeps
/// `lib.rs`: the binary sees the library as another crate.
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
            [root] if root == "lib" => ROOT.to_string(),
            [root] if root == "main" => {
                if src.join("lib.rs").exists() {
                    continue;
                }
                ROOT.to_string()
            }
            [dirs @ .., last] if last == "mod" => dirs.join("::"),
            all => all.join("::"),
        };
        out.insert(module, path);
    }
    out
}

/// A file's production code: up to its `#[cfg(test)] mod …` (test modules
/// come last in this code base; their `super::` is the file itself).
fn production(text: &str) -> String {
    production_lines(text).into_iter().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The module a path's first segment names from module `this` (whose
/// parent, or the enclosing file in an inline module, is `parent`):
/// `crate`, `super`, `self` or a child module; `None` for anything else
/// (another crate, a local name).
fn path_base(first: &str, this: &str, parent: &str, known: &BTreeMap<String, PathBuf>) -> Option<String> {
    match first {
        "crate" => Some(ROOT.to_string()),
        "super" => Some(parent.to_string()),
        "self" => Some(this.to_string()),
        child if known.contains_key(&join(this, child)) => Some(join(this, child)),
        _ => None,
    }
}

fn join(base: &str, segment: &str) -> String {
    if base.is_empty() { segment.to_string() } else { format!("{base}::{segment}") }
}

/// The modules of its crate that the production code of module `this`
/// names: `crate::a::b…` from the root, `super::x…` from the parent, and a
/// bare `child::…` of its own child module, each as the longest module path
/// it starts with (in an inline `mod tests { … }`, `super::` is the file
/// itself). A path that names an item of a module rather than a
/// submodule (`crate::Engine`, `super::Thing`) names that module itself.
/// `mod x;` declarations are not uses. An item a module re-exports
/// (`pub use x::Thing;` in `lib.rs`) names the module that defines it.
fn named_modules(text: &str, this: &str, known: &BTreeMap<String, PathBuf>, exports: &Exports) -> BTreeSet<String> {
    let parent = this.rsplit_once("::").map_or(ROOT, |(p, _)| p);
    let mut out = BTreeSet::new();
    // Brace depths at which the inline `mod x { … }` blocks we are in
    // opened: in one, `super::` is this file.
    let (mut depth, mut inline) = (0i64, Vec::<i64>::new());
    for line in production(text).lines() {
        let trimmed = line.trim_start();
        let declares =
            ["mod ", "pub mod ", "pub(crate) mod ", "pub(super) mod "].iter().any(|p| trimmed.starts_with(p));
        let opened = depth;
        depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
        if declares {
            if trimmed.trim_end().ends_with('{') {
                inline.push(opened);
            }
            continue;
        }
        inline.retain(|&at| at < depth);
        let parent = if inline.is_empty() { parent } else { this };
        for (at, _) in line.match_indices("::") {
            let before = &line[..at];
            let word_start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            let first = &before[word_start..];
            // Only the first segment of a path: `a::b::c` is seen at `a::`.
            if first.is_empty() || before[..word_start].ends_with("::") {
                continue;
            }
            let Some(base) = path_base(first, this, parent, known) else { continue };
            let path: String = line[at + 2..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':' || *c == '{' || *c == ' ' || *c == ',')
                .collect();
            for named in resolve(&base, &path, known, exports) {
                if named != this {
                    out.insert(named);
                }
            }
        }
    }
    out
}

/// The longest known module of each path that `rest` (after `base::`)
/// spells, one level of `{a, b::c}` groups included; `*` names `base`.
fn resolve(base: &str, rest: &str, known: &BTreeMap<String, PathBuf>, exports: &Exports) -> Vec<String> {
    // A `{` is a group only right after `::` (`a::{b, c}`); after a name
    // it opens a struct literal or a block (`crate::Query { text, .. }`).
    let (head, group) = match rest.split_once('{') {
        Some((head, group)) if head.is_empty() || head.trim_end().ends_with("::") => (head, Some(group)),
        Some((head, _)) => (head, None),
        None => (rest, None),
    };
    let mut module = base.to_string();
    let mut longest = base.to_string();
    let mut item = None;
    for segment in head.split("::").map(str::trim).filter(|s| !s.is_empty()) {
        module = join(&module, segment);
        if known.contains_key(&module) {
            longest = module.clone();
        } else if item.is_none() {
            item = Some(segment.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or(segment));
        }
    }
    match group {
        None => vec![item.map_or(longest.clone(), |item| defined_in(&longest, item, exports))],
        Some(group) => {
            let prefix = head.trim().trim_end_matches("::");
            let inner = if prefix.is_empty() { base.to_string() } else { join(base, prefix) };
            let within = if known.contains_key(&inner) { inner.clone() } else { longest.clone() };
            group
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|item| {
                    let sub = item.split("::").next().unwrap_or(item).trim();
                    let candidate = join(&inner, sub);
                    if known.contains_key(&candidate) { candidate } else { defined_in(&within, sub, exports) }
                })
                .collect()
        }
    }
}

/// Items each module re-exports, by module then item name: the module
/// that the `pub use` takes it from.
type Exports = BTreeMap<String, BTreeMap<String, String>>;

/// The module an `item` of `module` is defined in: `module` itself unless
/// it re-exports the item from another.
/// (followed through a chain of re-exports, as `lib.rs` re-exporting what
/// `snapshot.rs` re-exports from `docs_table.rs`).
fn defined_in(module: &str, item: &str, exports: &Exports) -> String {
    let mut at = module.to_string();
    for _ in 0..8 {
        match exports.get(&at).and_then(|items| items.get(item)) {
            Some(from) if *from != at => at = from.clone(),
            _ => break,
        }
    }
    at
}

/// The `pub use` re-exports of module `this`: `pub use a::b::Thing;`,
/// `pub use a::{X, Y as Z};` and the same from `crate::`, `self::` or
/// `super::`, each item mapped to the module it comes from.
fn reexports(text: &str, this: &str, known: &BTreeMap<String, PathBuf>) -> BTreeMap<String, String> {
    let parent = this.rsplit_once("::").map_or(ROOT, |(p, _)| p);
    let mut out = BTreeMap::new();
    let text = production(text);
    for statement in text.split(';') {
        // The statement's last line that starts a `pub use` (an item with
        // a body may come before it in the same `;`-piece).
        let Some(path) = statement
            .lines()
            .map(str::trim_start)
            .position(|l| l.starts_with("pub use ") || l.starts_with("pub(crate) use "))
            .map(|at| statement.lines().skip(at).collect::<Vec<_>>().join(" "))
        else {
            continue;
        };
        let path = path.trim_start();
        let path = path.strip_prefix("pub use ").or_else(|| path.strip_prefix("pub(crate) use ")).unwrap_or(path);
        let path: String = path.split_whitespace().collect::<Vec<_>>().join(" ");
        let (first, rest) = path.split_once("::").unwrap_or((path.as_str(), ""));
        let Some(base) = path_base(first, this, parent, known) else { continue };
        let (head, items) = match rest.split_once('{') {
            Some((head, group)) => (head.trim_end_matches("::").to_string(), group.trim_end_matches('}').to_string()),
            None => match rest.rsplit_once("::") {
                Some((head, item)) => (head.to_string(), item.to_string()),
                None => (String::new(), rest.to_string()),
            },
        };
        let from = head.split("::").filter(|s| !s.is_empty()).fold(base, |m, s| join(&m, s.trim()));
        for item in items.split(',').map(str::trim).filter(|i| !i.is_empty() && !i.contains("::")) {
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            if known.contains_key(&from) && from != this {
                out.insert(name.to_string(), from.clone());
            }
        }
    }
    out
}

/// Circles of imports (strongly connected components of more than one
/// file) in the crate at `src`, each as its files and the files of the
/// circle that each one names.
fn import_cycles(src: &Path) -> Vec<Vec<String>> {
    let known = modules(src);
    let texts: BTreeMap<&String, String> =
        known.iter().map(|(m, p)| (m, std::fs::read_to_string(p).unwrap())).collect();
    let exports: Exports = texts.iter().map(|(m, text)| (m.to_string(), reexports(text, m, &known))).collect();
    let edges: BTreeMap<String, BTreeSet<String>> = known
        .keys()
        .map(|module| {
            let named = named_modules(&texts[module], module, &known, &exports);
            (module.clone(), named.into_iter().filter(|m| known.contains_key(m)).collect())
        })
        .collect();
    strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|circle| {
            circle
                .iter()
                .map(|m| {
                    let within: Vec<&str> = edges[m].iter().filter(|n| circle.contains(n)).map(|n| shown(n)).collect();
                    format!("{} → {}", shown(m), within.join(", "))
                })
                .collect()
        })
        .collect()
}

/// Tarjan's strongly connected components.
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                let low = s.low[w.as_str()].min(s.low[v]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w.as_str()) {
                let low = s.index[w.as_str()].min(s.low[v]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on_stack: BTreeSet::new(),
        out: vec![],
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

fn shown(module: &str) -> &str {
    if module == ROOT { "(crate root)" } else { module }
}

#[test]
fn no_circle_of_imports_of_any_length_within_a_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = vec![root.join("src")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            sources.push(src);
        }
    }
    assert!(sources.len() > 10, "the workspace's crates are found");
    let cycles: Vec<String> = sources
        .iter()
        .flat_map(|src| import_cycles(src).into_iter().map(move |c| format!("{}: {}", src.display(), c.join("; "))))
        .collect();
    assert!(cycles.is_empty(), "files in a circle of imports:\n{}", cycles.join("\n"));
}

fn known(names: &[&str]) -> BTreeMap<String, PathBuf> {
    names.iter().map(|m| (m.to_string(), PathBuf::new())).collect()
}

#[test]
fn the_check_sees_crate_super_self_and_child_paths_and_skips_comments_and_tests() {
    let known = known(&["", "schema", "decls", "store", "store::blobs", "store::snapshot"]);
    let none = Exports::new();
    let text = "use crate::decls::DeclRef;\n// crate::schema in a comment\nlet x = crate::schema::TypeEnv::new();";
    assert_eq!(named_modules(text, "literal_order", &known, &none), BTreeSet::from(["decls".into(), "schema".into()]));
    let nested = "use super::snapshot::Snapshot;\n#[cfg(test)]\nmod tests { use super::*; use crate::decls; }";
    assert_eq!(named_modules(nested, "store::blobs", &known, &none), BTreeSet::from(["store::snapshot".into()]));
    assert!(named_modules("use my_crate::schema;", "x", &known, &none).is_empty());
    // An item of the root or of a parent names that module.
    assert_eq!(
        named_modules("use crate::{Engine, decls::X};", "schema", &known, &none),
        BTreeSet::from([ROOT.into(), "decls".into()])
    );
    assert_eq!(
        named_modules("let s = super::Snapshot::open();", "store::blobs", &known, &none),
        BTreeSet::from(["store".into()])
    );
    // The root names its children bare; declaring one is not a use.
    let lib = "pub mod schema;\nmod decls;\npub use schema::TypeEnv;\nfn f() { store::blobs::put() }";
    assert_eq!(named_modules(lib, ROOT, &known, &none), BTreeSet::from(["schema".into(), "store::blobs".into()]));
    // In an inline module of a file, `super::` is the file.
    let inline = "mod avx2 {\n    use super::{Dequant, GROUP};\n}\nuse super::blobs::put;";
    assert_eq!(named_modules(inline, "store::snapshot", &known, &none), BTreeSet::from(["store::blobs".into()]));
    // Another crate's path is not this crate's module.
    assert!(named_modules("use fabdex_model::schema::X;", ROOT, &known, &none).is_empty());
    // An item the root re-exports names the module that defines it.
    let lib = "pub use schema::{TypeEnv, Kind as K};\nfn f() {\n    g()\n}\npub use store::snapshot::Snapshot;\npub struct Engine;";
    let exports = Exports::from([
        (ROOT.to_string(), reexports(lib, ROOT, &known)),
        ("store::snapshot".to_string(), reexports("pub use crate::decls::Unit;", "store::snapshot", &known)),
    ]);
    assert_eq!(
        named_modules(
            "use crate::{TypeEnv, K, Engine};\nlet s = crate::Snapshot { open: true };\nuse crate::store::snapshot::Unit;",
            "store::blobs",
            &known,
            &exports
        ),
        BTreeSet::from([ROOT.into(), "schema".into(), "store::snapshot".into(), "decls".into()])
    );
}

#[test]
fn circles_of_any_length_are_found_and_chains_are_not() {
    let graph = |pairs: &[(&str, &str)]| {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            edges.entry(a.to_string()).or_default().insert(b.to_string());
            edges.entry(b.to_string()).or_default();
        }
        edges
    };
    let three = graph(&[("infer", "schema"), ("schema", "literal_order"), ("literal_order", "infer"), ("x", "infer")]);
    let cycles: Vec<_> = strongly_connected(&three).into_iter().filter(|c| c.len() > 1).collect();
    assert_eq!(cycles, vec![vec!["infer".to_string(), "literal_order".into(), "schema".into()]]);
    let chain = graph(&[("a", "b"), ("b", "c"), ("a", "c")]);
    assert!(strongly_connected(&chain).iter().all(|c| c.len() == 1));
}

/// Production functions past 100 lines when the rule was first checked
/// (issue 44), with their length then: each is still to be split into
/// named steps. The list may only shrink: a function not on it may not
/// pass 100 lines, one on it may not grow, and one that got short must
/// leave the list.
const LONG_FUNCTIONS: &[(&str, &str, usize)] = &[];

/// The functions of a file's production code, each as its name and its
/// length in lines (signature to closing brace, which sits at the
/// signature's indentation in rustfmt's layout).
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = production_lines(text);
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let signature = ["pub(crate) ", "pub(super) ", "pub ", "async ", "unsafe ", "const "]
            .iter()
            .fold(trimmed, |rest, prefix| rest.strip_prefix(prefix).unwrap_or(rest));
        let Some(after) = signature.strip_prefix("fn ") else { continue };
        if line.trim_end().ends_with(';') {
            continue;
        }
        let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let close = format!("{indent}}}");
        if let Some(end) = lines[i..].iter().position(|l| *l == close) {
            out.push((name, end + 1));
        }
    }
    out
}

/// A file's lines up to its `#[cfg(test)] mod …`, comments kept (they
/// count towards a function's length as any line does).
fn production_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod "))
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

#[test]
fn no_production_function_grows_past_100_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = vec![root.join("src")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        sources.push(entry.unwrap().path().join("src"));
    }
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for src in sources.iter().filter(|s| s.is_dir()) {
        for entry in ignore::WalkBuilder::new(src).standard_filters(false).build() {
            let path = entry.unwrap().into_path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            for (name, lines) in function_lengths(&std::fs::read_to_string(&path).unwrap()) {
                let listed = LONG_FUNCTIONS.iter().find(|(f, n, _)| *f == rel && *n == name);
                match listed {
                    Some((_, _, was)) if lines > *was => {
                        problems.push(format!("{rel}: `{name}` grew from {was} to {lines} lines"))
                    }
                    Some(_) if lines <= 100 => {
                        problems.push(format!("{rel}: `{name}` is {lines} lines now: take it off LONG_FUNCTIONS"))
                    }
                    Some(_) => {}
                    None if lines > 100 => {
                        problems.push(format!("{rel}: `{name}` is {lines} lines: split it into named steps"))
                    }
                    None => {}
                }
                if listed.is_some() {
                    seen.insert((rel.clone(), name));
                }
            }
        }
    }
    for (file, name, _) in LONG_FUNCTIONS {
        if !seen.contains(&(file.to_string(), name.to_string())) {
            problems.push(format!("{file}: `{name}` is gone: take it off LONG_FUNCTIONS"));
        }
    }
    assert!(problems.is_empty(), "functions past the ~100-line rule:\n{}", problems.join("\n"));
}

#[test]
fn function_lengths_run_from_signature_to_closing_brace() {
    let text = "fn short() {\n    1\n}\n\nimpl X {\n    pub(crate) fn method(&self) {\n        if a {\n        }\n    }\n    fn decl();\n}\n#[cfg(test)]\nmod tests {\n    fn in_tests() {\n    }\n}\n";
    assert_eq!(function_lengths(text), vec![("short".to_string(), 3), ("method".to_string(), 4)]);
}

/// The workspace crates' `[dependencies]` on each other (optional ones
/// included, dev-dependencies not), by crate name.
fn workspace_dependencies(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut manifests = vec![root.join("Cargo.toml")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let manifest = entry.unwrap().path().join("Cargo.toml");
        if manifest.is_file() {
            manifests.push(manifest);
        }
    }
    manifests
        .iter()
        .map(|path| {
            let manifest: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
            let name = manifest["package"]["name"].as_str().unwrap().to_string();
            let deps = manifest
                .get("dependencies")
                .and_then(|d| d.as_table())
                .map(|d| d.keys().filter(|k| k.starts_with("fabdex")).cloned().collect())
                .unwrap_or_default();
            (name, deps)
        })
        .collect()
}

#[test]
fn the_architecture_crate_table_matches_the_manifests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let deps = workspace_dependencies(root);
    let short = |name: &str| name.strip_prefix("fabdex-").unwrap_or(name).to_string();
    let shorts: BTreeSet<String> = deps.keys().map(|n| short(n)).collect();
    let mut problems = Vec::new();
    for (name, uses) in &deps {
        let row = doc.lines().find(|l| l.starts_with(&format!("| `{name}`")));
        let Some(row) = row else {
            problems.push(format!("{name}: no row in the crate table"));
            continue;
        };
        let cell = row.trim_end_matches('|').rsplit('|').next().unwrap_or("");
        if cell.trim() == "all" {
            continue;
        }
        let named: BTreeSet<String> = cell
            .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
            .filter(|w| shorts.contains(*w))
            .map(str::to_string)
            .collect();
        let real: BTreeSet<String> = uses.iter().map(|d| short(d)).collect();
        for missing in real.difference(&named) {
            problems.push(format!("{name}: depends on fabdex-{missing}, which its row does not name"));
        }
        for extra in named.difference(&real) {
            problems.push(format!("{name}: its row names {extra}, which is not a dependency"));
        }
    }
    assert!(problems.is_empty(), "docs/ARCHITECTURE.md's crate table is wrong:\n{}", problems.join("\n"));
}

/// The binary is flags and dispatch: each command's logic and arguments
/// live in the crate that runs it, its printing in `src/print.rs`.
#[test]
fn the_binary_is_flags_and_dispatch() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let main = std::fs::read_to_string(root.join("src/main.rs")).unwrap();
    let lines = main.lines().count();
    assert!(lines <= 200, "src/main.rs is {lines} lines: move a command's logic to its crate (at most 200)");
    let printing = main.lines().filter(|l| l.contains("print!(") || l.contains("println!(")).count();
    assert_eq!(printing, 0, "src/main.rs prints in {printing} places: printing belongs in src/print.rs");
}
