//! Pattern programs: entries, the closure of their relative imports, their
//! content identity and their contracts, assembled from the extracted files.

use std::collections::{BTreeSet, HashMap, VecDeque};

use fabdex_model::digest_text;
use fabdex_model::records::RootKind;
use fabdex_model::ts::{
    Agreement, Contract, Identity, IdentityStatus, PatternsTable, ProgramFile, ProgramOrigin, ProgramRow,
    SchemaAgreement, SourceFileRow, published_file_path,
};
use fabdex_ts::Parsed;
use fabdex_ts::program::{program_contract_with, resolve_relative};
use rayon::prelude::*;
use serde_json::Value;

use crate::config::Config;
use crate::published::{PublishedSet, RecordLine};
use crate::walk::Candidate;
use crate::walk::Skipped;
use fabdex_model::ts::{Outline, TsExtraction};

/// A TS/TSX source, read and extracted: what programs are assembled from.
pub(crate) struct TsFile {
    pub candidate: Candidate,
    pub text: String,
    pub digest: String,
    pub ts: TsExtraction,
    pub outline: Outline,
    pub from_cache: bool,
}

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

/// Files by `(root, path)`, for closures.
type FileIndex<'a> = HashMap<(usize, &'a str), usize>;

/// The closure of relative imports from `entry`, entry first, cycles visited
/// once. Imports are resolved only to paths `inside` accepts; the others are
/// returned as `(specifier, importing file)`.
fn closure(
    files: &[TsFile],
    index: &FileIndex<'_>,
    entry: usize,
    inside: impl Fn(&str) -> bool,
) -> (Vec<usize>, Vec<(String, String)>) {
    let root = files[entry].candidate.root;
    let mut order = Vec::new();
    let mut seen = BTreeSet::new();
    let mut unresolved = Vec::new();
    let mut queue = VecDeque::from([entry]);
    while let Some(fi) = queue.pop_front() {
        if !seen.insert(fi) {
            continue;
        }
        order.push(fi);
        let file = &files[fi];
        for imp in file.ts.imports.iter().filter(|imp| imp.kind == fabdex_model::ts::ImportKind::Relative) {
            let exists = |p: &str| inside(p) && index.contains_key(&(root, p));
            match resolve_relative(&file.candidate.path, &imp.specifier, exists) {
                Some(target) => queue.push_back(index[&(root, target.as_str())]),
                None => unresolved.push((imp.specifier.clone(), file.candidate.path.clone())),
            }
        }
    }
    (order, unresolved)
}

/// `cf:pattern:` ids the files import.
fn scanned_dependencies(files: &[TsFile], order: &[usize]) -> Vec<String> {
    let mut deps: Vec<String> = order
        .iter()
        .flat_map(|&fi| files[fi].ts.imports.iter())
        .filter_map(|imp| imp.cf.as_ref().and_then(|c| c.pattern_id()).map(str::to_string))
        .collect();
    deps.sort();
    deps.dedup();
    deps
}

/// Description and hashtags from source: the result type's JSDoc (or the
/// entry pattern's), and its `#tags`.
fn described(contract: &Contract, entry: &TsFile) -> (Option<String>, Vec<String>) {
    let result = contract.result_schema.as_ref();
    let description = result
        .and_then(|r| r.get("description"))
        .and_then(|d| d.as_str())
        .map(str::to_string)
        .or_else(|| entry.ts.patterns.iter().find(|p| p.default_export).and_then(|p| p.jsdoc.clone()));
    let hashtags = result
        .and_then(|r| r.get("tags"))
        .and_then(|t| t.as_array())
        .map(|t| t.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    (description, hashtags)
}

fn program_files(files: &[TsFile], order: &[usize], name: impl Fn(&TsFile) -> String) -> Vec<ProgramFile> {
    order
        .iter()
        .map(|&fi| ProgramFile {
            name: name(&files[fi]),
            bytes: files[fi].text.len() as u64,
            digest: files[fi].digest.clone(),
        })
        .collect()
}

/// Where contracts are cached, and the digest of the declarations they were
/// computed against: a contract is a function of its sources' paths and
/// texts (in closure order) and of those declarations alone.
#[derive(Clone, Copy)]
pub(crate) struct ContractCache<'a> {
    cache: Option<&'a crate::cache::Cache>,
    types: &'a str,
}

impl ContractCache<'_> {
    /// The cache key of a closure's contract.
    fn key(&self, files: &[TsFile], order: &[usize]) -> String {
        let mut h = blake3::Hasher::new();
        h.update(format!("types {}\n", self.types).as_bytes());
        for &fi in order {
            h.update(format!("source {} {}\n", files[fi].candidate.path, files[fi].digest).as_bytes());
        }
        h.finalize().to_hex().to_string()
    }
}

/// A closure's contract, from the cache when it holds it (the declarations
/// are parsed only for a miss); and its cache key.
fn contract_of<'d>(
    files: &[TsFile],
    order: &[usize],
    declarations: impl FnOnce() -> &'d [Parsed],
    cache: ContractCache<'_>,
) -> (Contract, String) {
    let compute = || {
        let sources: Vec<(String, String)> =
            order.iter().map(|&fi| (files[fi].candidate.path.clone(), files[fi].text.clone())).collect();
        program_contract_with(&sources, declarations())
    };
    let key = cache.key(files, order);
    let contract = match cache.cache {
        Some(cache) => crate::cache::cached(cache, &key, compute).0,
        None => compute(),
    };
    (contract, key)
}

/// Sort `required` arrays so that two schemas compare as the compiler's
/// baselines are compared (object keys are already unordered in `Value`).
pub fn normalized(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let v = match (k.as_str(), v) {
                    ("required", Value::Array(items)) => {
                        let mut items = items.clone();
                        items.sort_by_key(|x| x.to_string());
                        Value::Array(items)
                    }
                    _ => normalized(v),
                };
                out.insert(k.clone(), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

fn agreement(declared: Option<&Value>, extracted: Option<&Value>) -> Agreement {
    match (declared, extracted) {
        (Some(d), Some(e)) if normalized(d) == normalized(e) => Agreement::Agree,
        (Some(_), Some(_)) => Agreement::Disagree,
        (Some(_), None) => Agreement::DeclaredOnly,
        (None, Some(_)) => Agreement::ExtractedOnly,
        (None, None) => Agreement::Neither,
    }
}

/// One source tree program as assembled, before duplicates are settled.
struct Built {
    /// The entry's place in the files.
    file: usize,
    unresolved: Vec<(String, String)>,
    program_files: Vec<ProgramFile>,
    contract: Contract,
    /// The contract's cache key.
    key: String,
    dependencies: Vec<String>,
    description: Option<String>,
    hashtags: Vec<String>,
    pattern_id: String,
}

/// Build the pattern tables: every indexed file, every program of a source
/// tree and every published record. Returns the rows, the programs left
/// out because an earlier one has the same pattern id, and the contract
/// cache's keys the build used (`contracts`: the contracts cache, if any).
pub(crate) fn assemble(
    config: &Config,
    files: &[TsFile],
    published: &[(usize, PublishedSet)],
    types: Option<&str>,
    contracts: Option<&crate::cache::Cache>,
) -> (PatternsTable, Vec<Skipped>, Vec<String>) {
    // The platform's declarations, parsed once per worker that needs them (a
    // parse holds swc's single-threaded source map) and shared by its
    // programs' contracts; a contract from the cache needs none.
    let parse_types = || -> Vec<Parsed> {
        types.map(|text| vec![fabdex_ts::parse("commonfabric/index.ts", text)]).unwrap_or_default()
    };
    let types_digest = types.map_or_else(|| "none".to_string(), |t| blake3::hash(t.as_bytes()).to_hex().to_string());
    let cache = ContractCache { cache: contracts, types: &types_digest };
    let mut table = PatternsTable::default();
    let mut duplicates = Vec::new();
    let index: FileIndex<'_> =
        files.iter().enumerate().map(|(i, f)| ((f.candidate.root, f.candidate.path.as_str()), i)).collect();
    table.files = source_file_rows(config, files);
    // Each entry's program (its closure, contract, id) on its own over the
    // pool: parsing the closure's sources for the contract is most of this
    // phase. Duplicates are then settled in file order, as before.
    let built: Vec<Built> = files
        .par_iter()
        .enumerate()
        .filter(|(_, f)| {
            config.roots[f.candidate.root].kind != Some(RootKind::Published) && is_entry(&f.candidate.path, f)
        })
        .map_init(std::cell::OnceCell::new, |declarations, (i, f)| {
            let (order, unresolved) = closure(files, &index, i, |_| true);
            let program_files = program_files(files, &order, |f| f.candidate.path.clone());
            let (contract, key) = contract_of(files, &order, || declarations.get_or_init(parse_types), cache);
            let dependencies = scanned_dependencies(files, &order);
            let (description, hashtags) = described(&contract, f);
            let pattern_id = program_id(&f.candidate.path, &program_files);
            Built { file: i, unresolved, program_files, contract, key, dependencies, description, hashtags, pattern_id }
        })
        .collect();
    let mut keys: Vec<String> = built.iter().map(|b| b.key.clone()).collect();
    let declarations = std::cell::OnceCell::new();
    let declarations = || declarations.get_or_init(parse_types).as_slice();
    let mut ids: HashMap<String, String> = HashMap::new();
    for b in built {
        let f = &files[b.file];
        let root = &config.roots[f.candidate.root];
        let entry = format!("{}/{}", root.name, f.candidate.path);
        if let Some(first) = ids.get(&b.pattern_id) {
            duplicates.push(Skipped {
                root: root.name.clone(),
                path: f.candidate.path.clone(),
                reason: format!("program has the same pattern id `{}` as {first} (indexed once)", b.pattern_id),
            });
            continue;
        }
        ids.insert(b.pattern_id.clone(), entry.clone());
        table.programs.push(tree_row(root, &f.candidate.path, entry, b));
    }
    for (root_index, set) in published {
        let root = &config.roots[*root_index];
        for r in &set.records {
            let (row, key) = published_row(config, *root_index, r, files, &index, declarations, cache);
            keys.extend(key);
            if let Some(first) = ids.get(&row.pattern_id) {
                duplicates.push(Skipped {
                    root: root.name.clone(),
                    path: format!("{}:{}", r.file, r.line),
                    reason: format!("record has the same pattern id `{}` as {first} (indexed once)", row.pattern_id),
                });
                continue;
            }
            ids.insert(row.pattern_id.clone(), row.entry.clone());
            table.programs.push(row);
        }
    }
    fill_dependents(&mut table);
    (table, duplicates, keys)
}

/// The row of a source tree's program, verified by construction (its id is
/// its content identity).
fn tree_row(root: &crate::config::RootConfig, path: &str, entry: String, built: Built) -> ProgramRow {
    let Built { unresolved, program_files, contract, dependencies, description, hashtags, pattern_id, .. } = built;
    let unresolved: Vec<String> =
        unresolved.into_iter().map(|(spec, file)| format!("`{spec}` imported by {file}")).collect();
    ProgramRow {
        identity: Identity { status: IdentityStatus::Verified, computed: Some(pattern_id.clone()), reasons: vec![] },
        pattern_id,
        aliases: vec![entry.clone(), path.to_string()],
        entry,
        files: program_files,
        unresolved_imports: unresolved,
        agreement: SchemaAgreement {
            argument: agreement(None, contract.argument_schema.as_ref()),
            result: agreement(None, contract.result_schema.as_ref()),
        },
        contract,
        scanned_dependencies: dependencies.clone(),
        dependencies,
        description,
        hashtags,
        origin: root.origin_label(),
        source: ProgramOrigin::Tree { root: root.name.clone() },
        has_source: true,
        published: None,
        dependents: vec![],
        profile: Default::default(),
    }
}

/// Every indexed TS/TSX file's row.
fn source_file_rows(config: &Config, files: &[TsFile]) -> Vec<SourceFileRow> {
    files
        .iter()
        .map(|f| {
            let root = &config.roots[f.candidate.root];
            SourceFileRow {
                root: root.name.clone(),
                path: f.candidate.path.clone(),
                origin: root.origin_label(),
                digest: f.digest.clone(),
                bytes: f.text.len() as u64,
                lines: f.text.lines().count() as u32,
                extraction: f.ts.clone(),
                outline: f.outline.clone(),
                entry: root.kind != Some(RootKind::Published) && is_entry(&f.candidate.path, f),
            }
        })
        .collect()
}

/// Each program's `dependents`: the reverse edges among indexed programs.
fn fill_dependents(table: &mut PatternsTable) {
    let position: HashMap<String, usize> =
        table.programs.iter().enumerate().map(|(i, p)| (p.pattern_id.clone(), i)).collect();
    let mut dependents: Vec<Vec<String>> = vec![Vec::new(); table.programs.len()];
    for p in &table.programs {
        for d in &p.dependencies {
            if let Some(&target) = position.get(d) {
                dependents[target].push(p.pattern_id.clone());
            }
        }
    }
    for (p, mut deps) in table.programs.iter_mut().zip(dependents) {
        deps.sort();
        deps.dedup();
        p.dependents = deps;
    }
}

/// One published record as a program row: its files (if it has a program),
/// the closure from main inside those files, the identity check and both
/// contracts side by side.
fn published_row<'d>(
    config: &Config,
    root_index: usize,
    r: &RecordLine,
    files: &[TsFile],
    index: &FileIndex<'_>,
    declarations: impl FnOnce() -> &'d [Parsed],
    cache: ContractCache<'_>,
) -> (ProgramRow, Option<String>) {
    let root = &config.roots[root_index];
    let record = &r.record;
    let id = &record.pattern_id;
    let read = match &record.program {
        None => ReadProgram::missing(),
        Some(program) => read_program(id, root_index, program, files, index, declarations, cache),
    };
    let ReadProgram {
        reasons,
        listed: program_files_out,
        unresolved: unresolved_out,
        contract,
        scanned,
        computed,
        cache_key,
        described: extracted_description,
    } = read;
    let status = match (&computed, reasons.is_empty()) {
        (Some(_), true) => IdentityStatus::Verified,
        (Some(_), false) => IdentityStatus::Mismatch,
        (None, _) => IdentityStatus::Unverifiable,
    };
    let mut dependencies: Vec<String> = record
        .dependencies
        .iter()
        .map(|d| d.trim().trim_start_matches("cf:pattern:").to_string())
        .chain(scanned.iter().cloned())
        .collect();
    dependencies.sort();
    dependencies.dedup();
    let description = Some(record.description.trim().to_string()).filter(|d| !d.is_empty()).or(extracted_description.0);
    let hashtags = if record.hashtags.is_empty() { extracted_description.1 } else { record.hashtags.clone() };
    let mut declared = record.clone();
    declared.program = None;
    let agreement = SchemaAgreement {
        argument: agreement(record.argument_schema.as_ref(), contract.argument_schema.as_ref()),
        result: agreement(record.result_schema.as_ref(), contract.result_schema.as_ref()),
    };
    let entry = match &record.program {
        Some(p) => format!("{}/{}", root.name, published_file_path(id, &p.main)),
        None => format!("{}/{id}", root.name),
    };
    let row = ProgramRow {
        pattern_id: id.clone(),
        aliases: vec![],
        entry,
        files: program_files_out,
        unresolved_imports: unresolved_out,
        contract,
        dependencies,
        description,
        hashtags,
        origin: root.origin_label(),
        source: ProgramOrigin::Published { root: root.name.clone(), file: r.file.clone(), line: r.line },
        has_source: record.program.is_some(),
        identity: Identity { status, computed, reasons },
        published: Some(declared),
        agreement,
        scanned_dependencies: scanned,
        dependents: vec![],
        profile: Default::default(),
    };
    (row, cache_key)
}

/// What a published record's program gives once read: why its identity is
/// not verified (if it is not), its files (main first), the imports that
/// resolve to no file of it, its contract and scanned dependencies, the
/// content identity computed, and the description and tags its source gives.
struct ReadProgram {
    reasons: Vec<String>,
    listed: Vec<ProgramFile>,
    unresolved: Vec<String>,
    contract: Contract,
    scanned: Vec<String>,
    computed: Option<String>,
    cache_key: Option<String>,
    described: (Option<String>, Vec<String>),
}

impl ReadProgram {
    /// A record published without its program.
    fn missing() -> ReadProgram {
        ReadProgram {
            reasons: vec!["the record has no program (source missing)".to_string()],
            listed: Vec::new(),
            unresolved: Vec::new(),
            contract: Contract {
                argument_schema: None,
                result_schema: None,
                inferred: None,
                notes: vec!["no source: the record has no program, so nothing was extracted".into()],
            },
            scanned: Vec::new(),
            computed: None,
            cache_key: None,
            described: (None, Vec::new()),
        }
    }
}

/// Read a record's program: its file names checked, its main's import
/// closure, contract and dependencies, and its content identity.
fn read_program<'d>(
    id: &str,
    root_index: usize,
    program: &fabdex_model::registry::Program,
    files: &[TsFile],
    index: &FileIndex<'_>,
    declarations: impl FnOnce() -> &'d [Parsed],
    cache: ContractCache<'_>,
) -> ReadProgram {
    let prefix = published_file_path(id, "");
    let mut read = ReadProgram::missing();
    read.reasons.clear();
    for f in &program.files {
        if let Err(e) = fabdex_model::address::validate_relative_path(f.name.trim_start_matches('/')) {
            read.reasons.push(format!("file name `{}` is not usable: {e}", f.name.escape_debug()));
        }
    }
    let main_key = published_file_path(id, &program.main);
    let main = index.get(&(root_index, main_key.as_str())).copied();
    // Every file of the record, main first, in the record's order.
    let mut listed: Vec<ProgramFile> = program
        .files
        .iter()
        .map(|f| ProgramFile { name: f.name.clone(), bytes: f.contents.len() as u64, digest: digest_text(&f.contents) })
        .collect();
    if let Some(pos) =
        listed.iter().position(|f| f.name.trim_start_matches('/') == program.main.trim_start_matches('/'))
    {
        let main_file = listed.remove(pos);
        listed.insert(0, main_file);
    }
    match main {
        None => {
            read.reasons.push(format!("main `{}` is not among the program's files", program.main));
            read.contract.notes = vec![format!("no contract: main `{}` is not among the files", program.main)];
        }
        Some(entry) => {
            let (order, unresolved) = closure(files, index, entry, |p| p.starts_with(&prefix));
            for (spec, file) in unresolved {
                let file = file.strip_prefix(&prefix).unwrap_or(&file).to_string();
                read.reasons.push(format!("`{spec}` imported by {file} resolves to no file of the program"));
                read.unresolved.push(format!("`{spec}` imported by {file}"));
            }
            let (computed, key) = contract_of(files, &order, declarations, cache);
            read.contract = computed;
            read.cache_key = Some(key);
            read.scanned = scanned_dependencies(files, &order);
            read.described = described(&read.contract, &files[entry]);
        }
    }
    if read.reasons.is_empty() {
        let id_now = program_id(program.main.trim_start_matches('/'), &normalized_names(&listed));
        if id_now != id {
            read.reasons.push(format!(
                "patternId `{id}` is not the content identity `{id_now}` of main and its {} files",
                listed.len()
            ));
        }
        read.computed = Some(id_now);
    }
    read.listed = listed;
    read
}

/// File names without a leading `/`, so `/main.tsx` and `main.tsx` are one identity.
fn normalized_names(files: &[ProgramFile]) -> Vec<ProgramFile> {
    files.iter().map(|f| ProgramFile { name: f.name.trim_start_matches('/').to_string(), ..f.clone() }).collect()
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
