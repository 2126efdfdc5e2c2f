//! Compare fabdex's contracts with the platform compiler's baselines.
//!
//! ```text
//! cargo run --release -p fabdex-ts --example baseline_compare -- LABS_CHECKOUT [--show N] [--no-api] [--dump KEY] [--emit FILE]
//! ```
//!
//! For every key under `packages/patterns/baselines/` (an entry path such as
//! `counter/counter.tsx`), the newest stamp's `argumentSchema` and
//! `resultSchema` are compared with fabdex's (JSON equality after sorting
//! object keys and `required`). Prints the match rate and the mismatch
//! categories. Skips, successfully, when the checkout is absent.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use fabdex_ts::program::{program_contract_with, resolve_relative};
use fabdex_ts::{ImportKind, extract};
use serde_json::Value;

fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, x) in m {
                let mut x = normalize(x);
                if k == "required"
                    && let Value::Array(a) = &mut x
                {
                    a.sort_by_key(|v| v.to_string());
                }
                out.insert(k.clone(), x);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => Value::from(f as i64),
            _ => v.clone(),
        },
        other => other.clone(),
    }
}

/// The first path at which two values differ.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => {
                        if let Some(d) = first_difference(p, q, &format!("{path}/{k}")) {
                            return Some(d);
                        }
                    }
                    (Some(_), None) => return Some(format!("{path}/{k}: only fabdex")),
                    (None, Some(_)) => return Some(format!("{path}/{k}: only compiler")),
                    _ => {}
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}/{i}")))
        }
        _ if a == b => None,
        _ => Some(format!("{path}: fabdex {} ≠ compiler {}", short(a), short(b))),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 80 { format!("{}…", &s[..s.char_indices().nth(80).map_or(s.len(), |(i, _)| i)]) } else { s }
}

/// The entry and the closure of its relative imports, entry first.
fn program(root: &Path, entry: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([entry.to_string()]);
    while let Some(rel) = queue.pop_front() {
        if !seen.insert(rel.clone()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(&rel)) else { continue };
        for imp in extract(&rel, &text).imports.iter().filter(|i| i.kind == ImportKind::Relative) {
            if let Some(target) = resolve_relative(&rel, &imp.specifier, |p| root.join(p).is_file()) {
                queue.push_back(target);
            }
        }
        files.push((rel, text));
    }
    files
}

fn baseline_keys(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut stamps: Vec<PathBuf> = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            let name = e.file_name().to_string_lossy().into_owned();
            baseline_keys(&p, &format!("{prefix}{name}/"), out);
        } else if p.extension().is_some_and(|x| x == "json") {
            stamps.push(p);
        }
    }
    if let Some(newest) = stamps.into_iter().max() {
        out.push((prefix.trim_end_matches('/').to_string(), newest));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(checkout) = args.get(1).map(PathBuf::from) else {
        eprintln!("usage: baseline_compare LABS_CHECKOUT [--show N] [--no-api] [--dump KEY] [--emit FILE]");
        return;
    };
    let show: usize =
        args.iter().position(|a| a == "--show").and_then(|i| args.get(i + 1)).and_then(|n| n.parse().ok()).unwrap_or(0);
    // `--dump KEY`: print both sides of one entry's schemas.
    let dump: Option<String> = args.iter().position(|a| a == "--dump").and_then(|i| args.get(i + 1)).cloned();
    // `--emit FILE`: one JSON line per entry with both sides, for analysis.
    let mut emit = args
        .iter()
        .position(|a| a == "--emit")
        .and_then(|i| args.get(i + 1))
        .map(|p| std::io::BufWriter::new(std::fs::File::create(p).expect("create --emit file")));
    let patterns = checkout.join("packages/patterns");
    if !patterns.join("baselines").is_dir() {
        eprintln!("skipping: no packages/patterns/baselines under {}", checkout.display());
        return;
    }
    let mut keys = Vec::new();
    baseline_keys(&patterns.join("baselines"), "", &mut keys);
    keys.sort();
    let (mut both, mut arg_ok, mut res_ok, mut missing_entry) = (0, 0, 0, 0);
    // The checkout's API declarations resolve the types patterns import from
    // `commonfabric`, as the compiler resolves them (`--no-api`: without).
    let api_path = checkout.join("packages/api/index.ts");
    let api: Vec<fabdex_ts::Parsed> = if args.iter().any(|a| a == "--no-api") {
        Vec::new()
    } else {
        std::fs::read_to_string(&api_path)
            .map(|text| vec![fabdex_ts::parse("commonfabric/index.ts", &text)])
            .unwrap_or_default()
    };
    println!(
        "commonfabric types: {}",
        if api.is_empty() {
            "not resolved (--no-api or no packages/api/index.ts)".to_string()
        } else {
            api_path.display().to_string()
        }
    );
    let mut categories: BTreeMap<String, usize> = BTreeMap::new();
    let mut examples: Vec<String> = Vec::new();
    for (key, stamp) in &keys {
        if !patterns.join(key).is_file() {
            missing_entry += 1;
            continue;
        }
        let expected: Value = serde_json::from_slice(&std::fs::read(stamp).unwrap()).unwrap();
        let sources = program(&patterns, key);
        let contract = program_contract_with(&sources, &api);
        let ours_arg = contract.argument_schema.as_ref().map(normalize).unwrap_or(Value::Null);
        let ours_res = contract.result_schema.as_ref().map(normalize).unwrap_or(Value::Null);
        let want_arg = normalize(&expected["argumentSchema"]);
        let want_res = normalize(&expected["resultSchema"]);
        if let Some(out) = emit.as_mut() {
            use std::io::Write;
            let line =
                serde_json::json!({"key": key, "argument": [ours_arg, want_arg], "result": [ours_res, want_res]});
            writeln!(out, "{line}").expect("write --emit file");
        }
        if dump.as_deref() == Some(key.as_str()) {
            for (what, ours, want) in [("argument", &ours_arg, &want_arg), ("result", &ours_res, &want_res)] {
                println!("== {key} {what}: fabdex\n{}", serde_json::to_string_pretty(ours).unwrap_or_default());
                println!("== {key} {what}: compiler\n{}", serde_json::to_string_pretty(want).unwrap_or_default());
            }
            println!("notes: {:?}", contract.notes);
        }
        let a = ours_arg == want_arg;
        let r = ours_res == want_res;
        arg_ok += usize::from(a);
        res_ok += usize::from(r);
        both += usize::from(a && r);
        for (ok, ours, want, what) in [(a, &ours_arg, &want_arg, "argument"), (r, &ours_res, &want_res, "result")] {
            if ok {
                continue;
            }
            let diff = first_difference(ours, want, "").unwrap_or_default();
            let category = if *ours == Value::Null {
                format!("{what}: not derived ({})", contract.notes.first().map_or("no type", |n| n.as_str()))
            } else {
                // The category is the kind of difference at its first path, without names.
                let tail = diff.rsplit('/').next().unwrap_or("").split(':').next().unwrap_or("").to_string();
                let kind = if diff.contains("only fabdex") {
                    "extra key"
                } else if diff.contains("only compiler") {
                    "missing key"
                } else {
                    "different value"
                };
                format!("{what}: {kind} `{tail}`")
            };
            *categories.entry(category).or_default() += 1;
            if examples.len() < show {
                examples.push(format!("{key} [{what}] {diff}"));
            }
        }
    }
    let n = keys.len() - missing_entry;
    println!("baselined entries: {} ({} keys without a source file skipped)", n, missing_entry);
    println!(
        "both schemas match: {both}/{n} ({:.1}%); argument {arg_ok}/{n} ({:.1}%); result {res_ok}/{n} ({:.1}%)",
        100.0 * both as f64 / n as f64,
        100.0 * arg_ok as f64 / n as f64,
        100.0 * res_ok as f64 / n as f64
    );
    let mut cats: Vec<(String, usize)> = categories.into_iter().collect();
    cats.sort_by_key(|c| std::cmp::Reverse(c.1));
    println!("\nmismatch categories (first difference per schema):");
    for (c, k) in cats.iter().take(25) {
        println!("{k:>5}  {c}");
    }
    for e in examples {
        println!("  {e}");
    }
}
