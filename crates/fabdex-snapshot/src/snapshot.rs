//! The snapshot format: layout, manifest, and opening a published snapshot
//! with its integrity checked.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use fabdex_model::records::RootKind;

use crate::docs_table::Docs;
use crate::passages::Halves;
use crate::patterns_table::Patterns;
use crate::table_bytes::TableBytes;
use fabdex_semantic::Floats;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::blobs::BlobStore;
use crate::search_schema::{self, SearchDeletions};
use crate::semantic::SemanticModels;

pub use crate::integrity::CorruptSnapshot;
use crate::integrity::{CheckCounts, VerifiedFiles};

/// Version of the snapshot layout and tables; a reader refuses other versions.
pub const FORMAT_VERSION: u32 = 11;

/// Version of the search-index fields and analysis; part of the snapshot id,
/// and a reader refuses a snapshot built with another.
pub const SEARCH_VERSION: u32 = 8;

/// Paths inside an index directory.
#[derive(Debug, Clone)]
pub struct IndexLayout {
    pub root: PathBuf,
}

impl IndexLayout {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        IndexLayout { root: root.into() }
    }
    pub fn current(&self) -> PathBuf {
        self.root.join("CURRENT")
    }
    pub fn snapshots(&self) -> PathBuf {
        self.root.join("snapshots")
    }
    pub fn snapshot(&self, id: &str) -> PathBuf {
        self.snapshots().join(id)
    }
    pub fn staging(&self) -> PathBuf {
        self.root.join("staging")
    }
    pub fn cache(&self) -> PathBuf {
        self.root.join("cache")
    }
    /// Id of the published snapshot, if any.
    pub fn current_id(&self) -> Option<String> {
        let id = fs::read_to_string(self.current()).ok()?;
        let id = id.trim();
        (!id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_string())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestRoot {
    pub name: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kind: Option<RootKind>,
    pub origin: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestFile {
    pub root: String,
    pub path: String,
    pub digest: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub files: u64,
    pub bytes: u64,
    pub sections: u64,
    pub parts: u64,
    pub units: u64,
    pub links: u64,
    pub links_to_sections: u64,
    pub links_to_files: u64,
    pub links_external: u64,
    pub links_unresolved: u64,
    pub skipped: u64,
    pub diagnostics: u64,
    /// TS/TSX sources indexed, programs (entries) among them, and sources swc could not parse.
    #[serde(default)]
    pub source_files: u64,
    #[serde(default)]
    pub programs: u64,
    #[serde(default)]
    pub source_parse_failures: u64,
    /// Published records, and how their identity checks came out.
    #[serde(default)]
    pub published_records: u64,
    #[serde(default)]
    pub records_without_source: u64,
    #[serde(default)]
    pub identity_mismatch: u64,
    #[serde(default)]
    pub identity_unverifiable: u64,
    #[serde(default)]
    pub schema_disagreements: u64,
    /// Dimensions and vocabulary of the units' semantic model (0 when the corpus is too small to fit one).
    #[serde(default)]
    pub semantic_dimensions: u64,
    #[serde(default)]
    pub semantic_vocabulary: u64,
    /// Passages of long units with their own vector in the units' semantic model.
    #[serde(default)]
    pub semantic_passages: u64,
    /// Units with a sentence embedding (0 without `--embeddings`), and of
    /// them, those longer than the passages the model read.
    #[serde(default)]
    pub embedded_units: u64,
    #[serde(default)]
    pub embeddings_truncated: u64,
    /// Programs with a sentence embedding of their profile (0 without a model).
    #[serde(default)]
    pub embedded_programs: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    /// `fabdex-md`'s extractor version and the search-index version the snapshot was built with.
    #[serde(default)]
    pub extractor_version: u32,
    #[serde(default)]
    pub search_version: u32,
    pub snapshot_id: String,
    pub created_unix: u64,
    pub fabdex_version: String,
    pub roots: Vec<ManifestRoot>,
    pub files: Vec<ManifestFile>,
    pub counts: Counts,
    /// Table file (relative to the snapshot) → digest.
    pub tables: BTreeMap<String, String>,
    /// Search-index file (relative to `search/`) → digest.
    pub search_files: BTreeMap<String, String>,
    /// Where the semantic models' space was fitted, and how many units
    /// incremental builds have folded into it since.
    #[serde(default)]
    pub semantic_fit: SemanticFit,
}

/// The lineage of a snapshot's semantic models: fitted whole in snapshot
/// `fitted_in` over `fitted_units` units, with `folded_units` units edited
/// or added since and embedded into that space without a refit. Their
/// share is the drift an incremental build weighs against its limit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SemanticFit {
    pub fitted_in: String,
    pub fitted_units: u64,
    pub folded_units: u64,
}

impl SemanticFit {
    /// Folded units per fitted unit (0 for a fit; 1 for a fit over nothing with anything folded in).
    pub fn drift(&self) -> f64 {
        match (self.folded_units, self.fitted_units) {
            (0, _) => 0.0,
            (_, 0) => 1.0,
            (folded, fitted) => folded as f64 / fitted as f64,
        }
    }
}

pub use crate::docs_table::{Unit, units_of};

/// A published snapshot, opened and checked.
///
/// Opening reads and checks what every command needs: the manifest, the docs
/// and patterns tables (each against its digest). The search index, the
/// semantic models and the sentence embeddings are read and checked against
/// their digests on first use in the process, so `open` or `outline` never
/// pay for them; [`Snapshot::verify`] checks everything at once. A damaged
/// table is a [`CorruptSnapshot`] error whenever it is first used, never a
/// wrong answer.
pub struct Snapshot {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub docs: Docs,
    pub patterns: Patterns,
    /// The search units, listed from the table's columns on first use.
    units: std::sync::OnceLock<Vec<Unit>>,
    pub blobs: BlobStore,
    search: std::sync::OnceLock<Lazy<(tantivy::Index, Option<SearchDeletions>)>>,
    semantic: std::sync::OnceLock<Lazy<SemanticModels>>,
    embeddings: std::sync::OnceLock<Lazy<Option<crate::embeddings::UnitEmbeddings>>>,
    program_embeddings: std::sync::OnceLock<Lazy<Option<crate::embeddings::UnitEmbeddings>>>,
    pattern_terms: std::sync::OnceLock<Lazy<crate::pattern_terms::PatternTerms>>,
    /// The digest checks of this snapshot's files, and the stamps of earlier ones.
    verified: VerifiedFiles,
}

/// A part opened on first use: the part, or why it could not be (kept so
/// that every later use fails the same way).
type Lazy<T> = std::result::Result<T, OpenError>;

#[derive(Debug, Clone)]
struct OpenError {
    corrupt: bool,
    message: String,
}

impl OpenError {
    fn of(err: anyhow::Error) -> OpenError {
        OpenError { corrupt: err.chain().any(|e| e.is::<CorruptSnapshot>()), message: format!("{err:#}") }
    }

    fn to_error(&self) -> anyhow::Error {
        if self.corrupt { CorruptSnapshot(self.message.clone()).into() } else { anyhow::anyhow!(self.message.clone()) }
    }
}

/// The part in `cell`, opened on first use; the stamps of what opening it
/// checked are kept for later processes.
fn lazy<'a, T>(
    cell: &'a std::sync::OnceLock<Lazy<T>>,
    verified: &VerifiedFiles,
    open: impl FnOnce() -> Result<T>,
) -> Result<&'a T> {
    let part = cell.get_or_init(|| {
        let opened = open().map_err(OpenError::of);
        if opened.is_ok() {
            verified.keep();
        }
        opened
    });
    part.as_ref().map_err(OpenError::to_error)
}

pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = fs::read(path).with_context(|| format!("cannot read `{}`", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("`{}` is not valid", path.display()))
}

impl Snapshot {
    /// Open the snapshot `CURRENT` names in `index_dir`.
    pub fn open(index_dir: &Path) -> Result<Snapshot> {
        let layout = IndexLayout::new(index_dir);
        let id = layout.current_id().with_context(|| {
            format!("no published snapshot in `{}` (no CURRENT file); run `fabdex index` first", index_dir.display())
        })?;
        Self::open_dir(&layout.snapshot(&id))
    }

    /// Open one snapshot directory: its manifest, and the docs and patterns
    /// tables checked against the manifest's digests. The other parts are
    /// checked when first used.
    pub fn open_dir(dir: &Path) -> Result<Snapshot> {
        Self::open_checked(dir, VerifiedFiles::for_snapshot(dir))
    }

    fn open_checked(dir: &Path, verified: VerifiedFiles) -> Result<Snapshot> {
        let manifest: Manifest = read_json(&dir.join("manifest.json"))
            .with_context(|| format!("snapshot `{}` has no readable manifest", dir.display()))?;
        check_versions(dir, &manifest)?;
        let docs = read_decoded(dir, &manifest, &verified, crate::docs_table::PATH, crate::docs_table::decode)?;
        let patterns = match manifest.tables.get(crate::patterns_table::PATH) {
            None => Patterns::empty(),
            Some(_) => {
                read_decoded(dir, &manifest, &verified, crate::patterns_table::PATH, crate::patterns_table::decode)?
            }
        };
        verified.keep();
        Ok(Snapshot {
            dir: dir.to_path_buf(),
            blobs: BlobStore::new(dir.join(crate::blobs::PACK)),
            manifest,
            docs,
            patterns,
            units: Default::default(),
            search: Default::default(),
            semantic: Default::default(),
            embeddings: Default::default(),
            program_embeddings: Default::default(),
            pattern_terms: Default::default(),
            verified,
        })
    }

    /// How this process's digest checks of the snapshot went so far: files
    /// hashed, and files trusted by an earlier process's stamp.
    pub fn digest_checks(&self) -> CheckCounts {
        self.verified.counts()
    }

    pub fn id(&self) -> &str {
        &self.manifest.snapshot_id
    }

    /// The search units in table order, listed on first use (only searches
    /// need them), from the table's columns: no row is decoded.
    pub fn units(&self) -> &[Unit] {
        self.units.get_or_init(|| self.docs.units())
    }

    /// The search units of docs file `file`: one run of [`Snapshot::units`],
    /// since units follow their sections and a file's sections are one run.
    pub fn file_units(&self, file: u32) -> &[Unit] {
        let row = &self.docs.files[file as usize];
        let (first, end) = (row.first_section, row.first_section + row.section_count);
        let units = self.units();
        let start = units.partition_point(|u| u.section < first);
        let stop = units.partition_point(|u| u.section < end);
        &units[start..stop]
    }

    /// The tantivy index, its files checked against the manifest on first use.
    pub fn search(&self) -> Result<&tantivy::Index> {
        lazy(&self.search, &self.verified, || open_search(&self.dir, &self.manifest, &self.verified))
            .map(|(index, _)| index)
    }

    /// What documents incremental builds deleted from the search index
    /// still hold ([`SearchDeletions`]), checked with the index on first use;
    /// none when the index was written whole.
    pub fn search_deletions(&self) -> Result<Option<&SearchDeletions>> {
        lazy(&self.search, &self.verified, || open_search(&self.dir, &self.manifest, &self.verified))
            .map(|(_, deletions)| deletions.as_ref())
    }

    /// The corpus-learned semantic models, checked on first use.
    pub fn semantic(&self) -> Result<&SemanticModels> {
        let (units, files) = (self.docs.unit_count(), self.docs.files.len());
        lazy(&self.semantic, &self.verified, || open_semantic(&self.dir, &self.manifest, &self.verified, units, files))
    }

    /// Sentence embeddings of the units, when the index was built with a model.
    pub fn embeddings(&self) -> Result<Option<&crate::embeddings::UnitEmbeddings>> {
        let units = self.docs.unit_count();
        let table = crate::embeddings::TABLE;
        lazy(&self.embeddings, &self.verified, || {
            read_embeddings(&self.dir, &self.manifest, &self.verified, table, units, "units")
        })
        .map(Option::as_ref)
    }

    /// Sentence embeddings of the programs' profiles, likewise.
    pub fn program_embeddings(&self) -> Result<Option<&crate::embeddings::UnitEmbeddings>> {
        let programs = self.patterns.programs.len();
        let name = crate::embeddings::PROGRAMS_TABLE;
        lazy(&self.program_embeddings, &self.verified, || {
            read_embeddings(&self.dir, &self.manifest, &self.verified, name, programs, "programs")
        })
        .map(Option::as_ref)
    }

    /// The term table of pattern search, checked on first use.
    pub fn pattern_terms(&self) -> Result<&crate::pattern_terms::PatternTerms> {
        lazy(&self.pattern_terms, &self.verified, || {
            let name = crate::pattern_terms::PATH;
            let table =
                read_decoded(&self.dir, &self.manifest, &self.verified, name, |b| crate::pattern_terms::decode(&b))?;
            let programs = self.patterns.programs.len();
            if table.programs() != programs {
                return Err(CorruptSnapshot(format!(
                    "snapshot is corrupted: `{}` covers {} programs, the patterns table {programs}; re-run `fabdex index`",
                    self.dir.join(name).display(),
                    table.programs(),
                ))
                .into());
            }
            Ok(table)
        })
    }

    /// Whether the index holds sentence embeddings of its units (without reading them).
    pub fn has_embeddings(&self) -> bool {
        self.manifest.tables.contains_key(crate::embeddings::TABLE)
    }

    /// Whether it holds sentence embeddings of its programs (without reading them).
    pub fn has_program_embeddings(&self) -> bool {
        self.manifest.tables.contains_key(crate::embeddings::PROGRAMS_TABLE)
    }

    /// Check every part against the manifest now, each file hashed whatever
    /// earlier processes stamped: the tables, the search index and every
    /// file's blob. What `fabdex verify` runs.
    pub fn verify(&self) -> Result<Verified> {
        Snapshot::open_checked(&self.dir, VerifiedFiles::hash_always(&self.dir))?.check_every_part()
    }

    fn check_every_part(&self) -> Result<Verified> {
        let corrupt = |table: &str, e: String| {
            CorruptSnapshot(format!(
                "snapshot is corrupted: `{}`: {e}; re-run `fabdex index`",
                self.dir.join(table).display()
            ))
        };
        self.docs.decode_all().map_err(|e| corrupt(crate::docs_table::PATH, e))?;
        self.patterns.decode_all().map_err(|e| corrupt(crate::patterns_table::PATH, e))?;
        self.search()?;
        self.semantic()?;
        self.embeddings()?;
        self.program_embeddings()?;
        self.pattern_terms()?;
        let mut blobs = 0;
        for f in &self.docs.files {
            self.blobs.get(&f.digest)?;
            blobs += 1;
        }
        // The TS/TSX sources are read from the same store (`read pattern:…`).
        for f in self.patterns.files.iter() {
            self.blobs.get(&f.digest)?;
            blobs += 1;
        }
        Ok(Verified { tables: self.manifest.tables.len(), search_files: self.manifest.search_files.len(), blobs })
    }

    /// The whole text of an indexed file, from the blob store.
    pub fn file_text(&self, file: u32) -> Result<String> {
        let row = &self.docs.files[file as usize];
        self.blobs
            .get_text(&row.digest)
            .with_context(|| format!("reading `{}/{}` from the snapshot", row.root, row.path))
    }
}

/// Check the snapshot published in `index_dir` whole: its id and what was checked.
pub fn verify_published(index_dir: &Path) -> Result<(String, Verified)> {
    let snapshot = Snapshot::open(index_dir)?;
    let verified = snapshot.verify()?;
    Ok((snapshot.id().to_string(), verified))
}

/// What [`Snapshot::verify`] checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verified {
    pub tables: usize,
    pub search_files: usize,
    pub blobs: usize,
}

fn check_versions(dir: &Path, manifest: &Manifest) -> Result<()> {
    if manifest.format_version != FORMAT_VERSION {
        bail!(
            "snapshot `{}` has format version {}, this fabdex reads {FORMAT_VERSION}; re-run `fabdex index`",
            dir.display(),
            manifest.format_version
        );
    }
    if manifest.search_version != SEARCH_VERSION {
        bail!(
            "snapshot `{}` was built by another fabdex (search version {}, this one reads {SEARCH_VERSION}); re-run `fabdex index`",
            dir.display(),
            manifest.search_version
        );
    }
    Ok(())
}

/// The search index, each of its files checked against its digest.
fn open_search(
    dir: &Path,
    manifest: &Manifest,
    verified: &VerifiedFiles,
) -> Result<(tantivy::Index, Option<SearchDeletions>)> {
    for (name, digest) in &manifest.search_files {
        let path = dir.join("search").join(name);
        // Mapped, as the tables are: tantivy maps them again to search them.
        verified.check(&format!("search/{name}"), &path, Some(digest))?;
    }
    let search = tantivy::Index::open_in_dir(dir.join("search"))
        .with_context(|| format!("cannot open the search index of `{}`", dir.display()))?;
    search_schema::register(&search);
    let deletions = match manifest.tables.get(search_schema::DELETIONS_TABLE) {
        None => None,
        Some(digest) => {
            let path = dir.join(search_schema::DELETIONS_TABLE);
            let bytes = verified.read(search_schema::DELETIONS_TABLE, &path, Some(digest))?;
            Some(serde_json::from_slice(&bytes).map_err(|e| {
                CorruptSnapshot(format!("snapshot is corrupted: `{}` does not decode: {e}", path.display()))
            })?)
        }
    };
    Ok((search, deletions))
}

/// The semantic models, checked against their digests and against the
/// `units` and `files` of the tables they must cover.
fn open_semantic(
    dir: &Path,
    manifest: &Manifest,
    verified: &VerifiedFiles,
    units: usize,
    files: usize,
) -> Result<SemanticModels> {
    use crate::semantic::UnitPassages;
    use fabdex_semantic::Model;
    let model = |name| {
        let head_len = |prefix: &[u8]| Model::head_len(prefix).map_err(|e| e.to_string());
        // A question's projection rows are read from the file, not through the mapping (`RowFile`).
        let decode = |head: &[u8], values| {
            let model = Model::from_head_and_values(head, values)?;
            Ok::<_, fabdex_semantic::DecodeError>(match fs::File::open(dir.join(name)) {
                Ok(file) => model.with_row_file(file, head.len() as u64),
                Err(_) => model,
            })
        };
        read_float_table(dir, manifest, verified, name, Model::HEAD_PREFIX, head_len, decode)
    };
    // The three tables are read and hashed on threads of their own: this
    // runs inside a `OnceLock`'s initialiser, where work on the rayon pool
    // could deadlock (see `Snapshot::units`), and plain threads cannot.
    let (units_model, files_model, passages) = std::thread::scope(|scope| {
        let files = scope.spawn(|| model(crate::semantic::FILES_TABLE));
        let passages = scope.spawn(|| {
            read_half_table(
                dir,
                manifest,
                verified,
                crate::semantic::PASSAGES_TABLE,
                UnitPassages::HEAD_PREFIX,
                UnitPassages::head_len,
                UnitPassages::from_head_and_values,
            )
        });
        let units = model(crate::semantic::UNITS_TABLE);
        (units, files.join().expect("reading a table does not panic"), passages.join().expect("likewise"))
    });
    let semantic = SemanticModels { units: units_model?, files: files_model?, passages: passages? };
    if semantic.passages.units() != units || semantic.passages.dim() != semantic.units.dim() {
        return Err(CorruptSnapshot(format!(
            "snapshot is corrupted: its passage vectors cover {} units in {} dimensions, the tables {units} units and the model {}; re-run `fabdex index`",
            semantic.passages.units(),
            semantic.passages.dim(),
            semantic.units.dim()
        ))
        .into());
    }
    if semantic.units.docs() != units || semantic.files.docs() != files {
        return Err(CorruptSnapshot(format!(
            "snapshot is corrupted: its semantic models cover {} units and {} files, the tables {units} and {files}; re-run `fabdex index`",
            semantic.units.docs(),
            semantic.files.docs(),
        ))
        .into());
    }
    Ok(semantic)
}

/// A sentence-embeddings table, when the manifest lists it: checked against
/// its digest and against the `expected` rows (units or programs) it must cover.
fn read_embeddings(
    dir: &Path,
    manifest: &Manifest,
    verified: &VerifiedFiles,
    name: &str,
    expected: usize,
    what: &str,
) -> Result<Option<crate::embeddings::UnitEmbeddings>> {
    if !manifest.tables.contains_key(name) {
        return Ok(None);
    }
    let path = dir.join(name);
    let bytes: Arc<TableBytes> = Arc::new(read_table(dir, manifest, verified, name)?);
    let table = match crate::embeddings::UnitEmbeddings::from_shared(bytes) {
        Ok(table) => table,
        Err(e) if e.is::<crate::embeddings::EarlierTable>() => bail!(
            "snapshot `{}` was built by an earlier fabdex: its sentence embeddings (`{}`) hold one vector per unit, and this one reads passages; re-run `fabdex index`",
            dir.display(),
            path.display()
        ),
        Err(e) => {
            return Err(CorruptSnapshot(format!(
                "snapshot is corrupted: `{}`: {e:#}; re-run `fabdex index`",
                path.display()
            ))
            .into());
        }
    };
    if table.len() != expected {
        return Err(CorruptSnapshot(format!(
            "snapshot is corrupted: `{}` covers {} {what}, the tables {expected}; re-run `fabdex index`",
            path.display(),
            table.len(),
        ))
        .into());
    }
    Ok(Some(table))
}

/// A table's bytes, checked against the digest the manifest records for it
/// (or trusted by the stamp of an earlier check, see [`crate::integrity`]).
fn read_table(dir: &Path, manifest: &Manifest, verified: &VerifiedFiles, name: &str) -> Result<TableBytes> {
    verified.read(name, &dir.join(name), manifest.tables.get(name))
}

/// A binary table, read, checked against its digest and decoded; a decoding
/// error names the file.
fn read_decoded<T, E: std::fmt::Display>(
    dir: &Path,
    manifest: &Manifest,
    verified: &VerifiedFiles,
    name: &str,
    decode: impl FnOnce(TableBytes) -> std::result::Result<T, E>,
) -> Result<T> {
    let bytes = read_table(dir, manifest, verified, name)?;
    decode(bytes).map_err(|e| {
        CorruptSnapshot(format!("snapshot is corrupted: `{}`: {e}; re-run `fabdex index`", dir.join(name).display()))
            .into()
    })
}

/// A table whose tail is little-endian `f32`s (the semantic models):
/// mapped and checked against its digest like any table, then its values
/// are used where the mapping holds them ([`Floats`]), so that labs' 14 MB
/// of them are neither copied nor given fresh pages. A table whose values
/// are not aligned (or a machine that is not little-endian) gets a copy.
fn read_float_table<T, E: std::fmt::Display>(
    dir: &Path,
    manifest: &Manifest,
    verified: &VerifiedFiles,
    name: &str,
    head_prefix: usize,
    head_len: impl Fn(&[u8]) -> std::result::Result<usize, String>,
    decode: impl FnOnce(&[u8], Floats) -> std::result::Result<T, E>,
) -> Result<T> {
    let table = ValueTable { dir, manifest, verified, name, head_prefix, value_size: 4 };
    table.read(head_len, Floats::from_table, decode)
}

/// The latent passages' table, whose tail is little-endian `f16`s, read as
/// [`read_float_table`] reads `f32`s.
fn read_half_table<T, E: std::fmt::Display>(
    dir: &Path,
    manifest: &Manifest,
    verified: &VerifiedFiles,
    name: &str,
    head_prefix: usize,
    head_len: impl Fn(&[u8]) -> std::result::Result<usize, String>,
    decode: impl FnOnce(&[u8], Halves) -> std::result::Result<T, E>,
) -> Result<T> {
    let table = ValueTable { dir, manifest, verified, name, head_prefix, value_size: 2 };
    table.read(head_len, Halves::from_table, decode)
}

/// A table of a header and then values of `value_size` bytes each.
struct ValueTable<'a> {
    dir: &'a Path,
    manifest: &'a Manifest,
    verified: &'a VerifiedFiles,
    name: &'a str,
    head_prefix: usize,
    value_size: usize,
}

impl ValueTable<'_> {
    fn read<V, T, E: std::fmt::Display>(
        &self,
        head_len: impl Fn(&[u8]) -> std::result::Result<usize, String>,
        values: impl FnOnce(fabdex_semantic::SharedBytes, usize) -> std::result::Result<V, String>,
        decode: impl FnOnce(&[u8], V) -> std::result::Result<T, E>,
    ) -> Result<T> {
        let path = self.dir.join(self.name);
        let corrupt = |what: String| -> anyhow::Error {
            CorruptSnapshot(format!("snapshot is corrupted: `{}`: {what}; re-run `fabdex index`", path.display()))
                .into()
        };
        let bytes = read_table(self.dir, self.manifest, self.verified, self.name)?;
        let size = bytes.len();
        let head_size = head_len(&head_bytes(&path, &bytes, self.head_prefix.min(size))).map_err(corrupt)?;
        if head_size > size || !(size - head_size).is_multiple_of(self.value_size) {
            return Err(corrupt(format!(
                "its header calls for {head_size} bytes and whole values, but it is {size} bytes"
            )));
        }
        let head = head_bytes(&path, &bytes, head_size).into_owned();
        let bytes: Arc<TableBytes> = Arc::new(bytes);
        let values = values(Arc::clone(&bytes) as fabdex_semantic::SharedBytes, head_size).map_err(corrupt)?;
        decode(&head, values).map_err(|e| corrupt(e.to_string()))
    }
}

/// The first `len` bytes of a table: read from the file when the table is
/// mapped, so that reading its header does not leave the large folio of
/// the page cache around it mapped (see `fabdex_semantic::RowFile`); the
/// mapped bytes when the file cannot be read (they are the same bytes).
fn head_bytes<'a>(path: &Path, bytes: &'a TableBytes, len: usize) -> std::borrow::Cow<'a, [u8]> {
    use std::io::Read;
    if let TableBytes::Mapped(_) = bytes {
        let mut head = vec![0u8; len];
        if fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() {
            return std::borrow::Cow::Owned(head);
        }
    }
    std::borrow::Cow::Borrowed(&bytes[..len])
}
