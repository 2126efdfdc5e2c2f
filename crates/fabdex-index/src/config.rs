//! `fabdex.toml`: named roots with kind, origin label and globs.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use fabdex_model::records::RootKind;
use serde::{Deserialize, Serialize};

/// Files larger than this are skipped (and reported) unless the config says otherwise.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub index: IndexSettings,
    #[serde(default, rename = "root")]
    pub roots: Vec<RootConfig>,
    /// The `[research]` table: the research service's endpoint defaults,
    /// read and checked by `fabdex-research` (the indexer ignores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub research: Option<toml::Table>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexSettings {
    /// Index directory, relative to the config file.
    #[serde(default)]
    pub out: Option<PathBuf>,
    #[serde(default = "default_max_file_bytes")]
    pub max_file_bytes: u64,
    /// Older snapshots kept besides the published one.
    #[serde(default = "default_keep_snapshots")]
    pub keep_snapshots: usize,
    /// The platform's API declarations (`packages/api/index.ts` of a Common
    /// Fabric checkout): types patterns import from `commonfabric` resolve
    /// against it, as the compiler resolves them. Relative to the config file.
    #[serde(default)]
    pub commonfabric_types: Option<PathBuf>,
    /// A local sentence-embedding model folder (sentence-transformers
    /// layout). When set, every search unit is also encoded by it, and docs
    /// search fuses the vectors in. Relative to the config file. Never fetched.
    #[serde(default)]
    pub embeddings: Option<PathBuf>,
    /// How the model computes: `int8` (linear layers in 8-bit integers,
    /// vectors within cosine 0.998 of f32's, the same recall@10 on the labs
    /// dev questions) or `f32` (the weights as shipped). Unset: the faster
    /// on this CPU, int8 where AVX-512 VNNI runs it at about three times
    /// f32's speed, else f32 ([`fabdex_embed::Precision::fastest_here`]).
    /// See docs/ranking.md.
    #[serde(default)]
    pub embedding_precision: Option<fabdex_embed::Precision>,
    /// How far an incremental build may fold edited units into the semantic
    /// models' fitted space before it refits them: units folded in since the
    /// fit, per unit fitted. 0 refits on every build that changes a unit.
    #[serde(default = "default_semantic_drift")]
    pub semantic_drift: f64,
    /// Which passages of a docs section the sentence model reads: the
    /// standard reading unless set (the `[index.embedding_passages]` table;
    /// for measuring each kind of passage on and off).
    #[serde(default)]
    pub embedding_passages: PassageSettings,
}

/// `[index.embedding_passages]`: the passages of a docs section that get a
/// vector. The defaults are the standard reading, measured in
/// docs/ranking.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassageSettings {
    /// Passages of the section's own text, 1 to [`crate::embeddings::MAX_PASSAGES`]:
    /// the first, then windows of the rest.
    #[serde(default = "default_windows")]
    pub windows: usize,
    /// One more passage of the heading path alone.
    #[serde(default = "crate::embeddings::yes")]
    pub heading: bool,
    /// One more per list item in another file that opens with a link to the section.
    #[serde(default = "crate::embeddings::yes")]
    pub referrers: bool,
}

impl Default for PassageSettings {
    fn default() -> Self {
        PassageSettings { windows: default_windows(), heading: true, referrers: true }
    }
}

fn default_windows() -> usize {
    crate::embeddings::MAX_PASSAGES
}

/// How a build's embedding precision was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrecisionChoice {
    /// By `--embedding-precision` or `[index] embedding_precision`.
    Set,
    /// Unset, so the faster on this CPU ([`fabdex_embed::Precision::fastest_here`]).
    FastestHere,
}

impl PrecisionChoice {
    /// A few words for the text report.
    pub fn describe(self) -> &'static str {
        match self {
            PrecisionChoice::Set => "as set",
            PrecisionChoice::FastestHere => "the faster on this CPU",
        }
    }
}

impl IndexSettings {
    /// The precision a build's sentence model computes in, and how it was
    /// chosen: as set, else the faster on this CPU.
    pub fn precision(&self) -> (fabdex_embed::Precision, PrecisionChoice) {
        match self.embedding_precision {
            Some(p) => (p, PrecisionChoice::Set),
            None => (fabdex_embed::Precision::fastest_here(), PrecisionChoice::FastestHere),
        }
    }
}

/// [`IndexSettings::semantic_drift`]'s default: a tenth of the units.
pub const DEFAULT_SEMANTIC_DRIFT: f64 = 0.10;

fn default_semantic_drift() -> f64 {
    DEFAULT_SEMANTIC_DRIFT
}

fn default_keep_snapshots() -> usize {
    2
}

impl Default for IndexSettings {
    fn default() -> Self {
        IndexSettings {
            out: None,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            keep_snapshots: default_keep_snapshots(),
            commonfabric_types: None,
            embeddings: None,
            embedding_precision: None,
            semantic_drift: DEFAULT_SEMANTIC_DRIFT,
            embedding_passages: PassageSettings::default(),
        }
    }
}

fn default_max_file_bytes() -> u64 {
    DEFAULT_MAX_FILE_BYTES
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RootConfig {
    /// The `<root>` of addresses.
    pub name: String,
    pub path: PathBuf,
    /// `docs`, `skills` or `patterns`; absent: each file's kind follows from its type.
    #[serde(default)]
    pub kind: Option<RootKind>,
    /// Origin label carried by every read from this root.
    #[serde(default)]
    pub origin: Option<String>,
    /// Globs (root-relative) a file must match; empty means every supported file.
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
}

impl RootConfig {
    /// A root from a bare path: named after its folder, kind from file types.
    pub fn from_path(path: &Path) -> Result<RootConfig> {
        let canonical = path
            .canonicalize()
            .with_context(|| format!("root `{}` does not exist or cannot be read", path.display()))?;
        let name: String = canonical
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "root".to_string())
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
            .collect();
        Ok(RootConfig { name, path: canonical, kind: None, origin: None, include: Vec::new(), exclude: Vec::new() })
    }

    /// The origin label: configured, or the kind's name, or `local`.
    pub fn origin_label(&self) -> String {
        self.origin.clone().unwrap_or_else(|| self.kind.map_or("local", RootKind::as_str).to_string())
    }
}

impl Config {
    /// Read a config file; root paths and `out` are resolved against its folder.
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read config `{}`", path.display()))?;
        let mut config: Config =
            toml::from_str(&text).with_context(|| format!("config `{}` is not valid", path.display()))?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        for root in &mut config.roots {
            if root.path.is_relative() {
                root.path = base.join(&root.path);
            }
        }
        if let Some(out) = &config.index.out
            && out.is_relative()
        {
            config.index.out = Some(base.join(out));
        }
        if let Some(types) = &config.index.commonfabric_types
            && types.is_relative()
        {
            config.index.commonfabric_types = Some(base.join(types));
        }
        if let Some(model) = &config.index.embeddings
            && model.is_relative()
        {
            config.index.embeddings = Some(base.join(model));
        }
        config.validate().with_context(|| format!("config `{}` is not valid", path.display()))?;
        Ok(config)
    }

    /// Roots given on the command line.
    pub fn from_roots(paths: &[PathBuf]) -> Result<Config> {
        let roots = paths.iter().map(|p| RootConfig::from_path(p)).collect::<Result<Vec<_>>>()?;
        let config = Config { index: IndexSettings::default(), roots, research: None };
        config.validate()?;
        Ok(config)
    }

    pub fn validate(&self) -> Result<()> {
        if self.roots.is_empty() {
            bail!("no roots to index: give ROOT paths or a config with [[root]] entries");
        }
        if let Some(types) = &self.index.commonfabric_types
            && !types.is_file()
        {
            bail!("[index] commonfabric_types: `{}` does not exist or is not a file", types.display());
        }
        if let Some(model) = &self.index.embeddings
            && !model.is_dir()
        {
            bail!("[index] embeddings: `{}` does not exist or is not a folder", model.display());
        }
        let windows = self.index.embedding_passages.windows;
        if !(1..=crate::embeddings::MAX_PASSAGES).contains(&windows) {
            bail!(
                "[index.embedding_passages] windows: {windows} is not between 1 and {}",
                crate::embeddings::MAX_PASSAGES
            );
        }
        if !(0.0..=1.0).contains(&self.index.semantic_drift) {
            bail!("[index] semantic_drift: {} is not a share between 0 and 1", self.index.semantic_drift);
        }
        let mut seen = std::collections::HashSet::new();
        for root in &self.roots {
            fabdex_model::address::validate_root(&root.name)
                .map_err(|e| anyhow::anyhow!("root `{}`: {e}", root.name))?;
            if !seen.insert(root.name.as_str()) {
                bail!(
                    "two roots are named `{}`; root names must be unique (they are the <root> of addresses)",
                    root.name
                );
            }
            if root.kind == Some(RootKind::Published) {
                if !root.path.is_dir() && !root.path.is_file() {
                    bail!(
                        "root `{}`: `{}` does not exist (a published root is a .jsonl file or a folder of them)",
                        root.name,
                        root.path.display()
                    );
                }
            } else if !root.path.is_dir() {
                bail!("root `{}`: `{}` does not exist or is not a folder", root.name, root.path.display());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_roots_relative_to_the_config() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        std::fs::write(
            dir.path().join("fabdex.toml"),
            "[index]\nout = \"idx\"\n[[root]]\nname = \"docs\"\npath = \"docs\"\nkind = \"docs\"\norigin = \"docs\"\nexclude = [\"history/**\"]\n",
        )
        .unwrap();
        let config = Config::load(&dir.path().join("fabdex.toml")).unwrap();
        assert_eq!(config.roots[0].path, dir.path().join("docs"));
        assert_eq!(config.index.out.as_deref(), Some(dir.path().join("idx").as_path()));
        assert_eq!(config.roots[0].exclude, ["history/**"]);
        assert_eq!(config.index.embedding_precision, None, "unset: the build picks the faster here");
        let fastest = fabdex_embed::Precision::fastest_here();
        assert_eq!(config.index.precision(), (fastest, PrecisionChoice::FastestHere));
    }

    #[test]
    fn an_embedding_precision_is_read_by_its_name_and_another_is_refused_naming_the_choices() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        let load = |precision: &str| {
            let text =
                format!("[index]\nembedding_precision = \"{precision}\"\n[[root]]\nname = \"docs\"\npath = \"docs\"\n");
            std::fs::write(dir.path().join("fabdex.toml"), text).unwrap();
            Config::load(&dir.path().join("fabdex.toml")).map_err(|e| format!("{e:#}"))
        };
        assert_eq!(load("f32").unwrap().index.precision(), (fabdex_embed::Precision::F32, PrecisionChoice::Set));
        assert_eq!(load("int8").unwrap().index.embedding_precision, Some(fabdex_embed::Precision::Int8));
        let err = load("f16").unwrap_err();
        assert!(err.contains("f16") && err.contains("int8") && err.contains("f32"), "{err}");
    }

    #[test]
    fn rejects_missing_roots_duplicates_and_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let write = |text: &str| {
            std::fs::write(dir.path().join("f.toml"), text).unwrap();
            format!("{:#}", Config::load(&dir.path().join("f.toml")).unwrap_err())
        };
        assert!(write("[[root]]\nname = \"a\"\npath = \"nope\"\n").contains("does not exist"));
        std::fs::create_dir(dir.path().join("d")).unwrap();
        assert!(
            write("[[root]]\nname = \"a\"\npath = \"d\"\n[[root]]\nname = \"a\"\npath = \"d\"\n")
                .contains("two roots are named `a`")
        );
        assert!(write("[[root]]\nname = \"a\"\npath = \"d\"\ncolour = 1\n").contains("colour"));
        assert!(write("[[root]]\nname = \"a b\"\npath = \"d\"\n").contains("root name"));
        let err = format!("{:#}", Config::from_roots(&[dir.path().join("missing")]).unwrap_err());
        assert!(err.contains("missing") && err.contains("does not exist"), "{err}");
    }
}
