//! `fabdex index`: its arguments (flattened into the binary's CLI) and its
//! logic: which configuration (`Config::resolve`), which sentence model,
//! an optional pull from a pattern index service, then the build.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::build::{BuildOptions, IndexReport};
use crate::config::{Config, RootConfig};

/// `fabdex index`'s arguments.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct IndexArgs {
    /// Folders to index; each becomes a root named after its folder.
    pub roots: Vec<PathBuf>,
    /// Config file (default: ./fabdex.toml when no ROOT is given).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Index directory to write (overrides --index and the config).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Pull every record (with source) from a pattern index service at this
    /// base URL and index it as the `published` root `remote`. The bearer
    /// token comes from $FABDEX_INDEX_TOKEN.
    #[arg(long, value_name = "URL")]
    pub from_index: Option<String>,
    /// Per-request timeout of the pull, in seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// Index without sentence embeddings, even when a model is registered
    /// (`fabdex models add`) or the config names one.
    #[arg(long)]
    pub no_embeddings: bool,
    /// How the sentence model computes: `int8` (about 3 times f32's speed
    /// on AVX-512 VNNI, slower than f32 without it) or `f32` (the weights
    /// as shipped). Overrides the config's `[index] embedding_precision`;
    /// with neither, the faster on this CPU.
    #[arg(long, value_name = "PRECISION", value_parser = precision_parser())]
    pub embedding_precision: Option<fabdex_embed::Precision>,
    /// Build whole: carry no search document or semantic vector from the
    /// published snapshot, and refit the semantic models (by default a
    /// build updates the published snapshot's search index for the files
    /// that changed and folds them into its semantic space).
    #[arg(long)]
    pub full: bool,
    /// List every unresolved link, skipped file and diagnostic (by
    /// default unresolved links are one summary line).
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// A `--…-precision` flag's parser: the precisions by name.
pub fn precision_parser() -> impl clap::builder::TypedValueParser<Value = fabdex_embed::Precision> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(fabdex_embed::Precision::ALL.map(fabdex_embed::Precision::as_str))
        .try_map(|name| name.parse::<fabdex_embed::Precision>())
}

impl Config {
    /// The configuration `fabdex index` builds with: its ROOT paths, or
    /// `--config`, or `./fabdex.toml`; then the sentence model (`embeddings`,
    /// the global `--embeddings`, over the config's, over the registered
    /// default; none with `--no-embeddings`) and its precision.
    pub fn resolve(args: &IndexArgs, embeddings: Option<&Path>) -> Result<Config> {
        let mut config = match (&args.config, args.roots.is_empty()) {
            (Some(path), true) => Config::load(path)?,
            (Some(_), false) => bail!("give either ROOT paths or --config, not both"),
            (None, false) => Config::from_roots(&args.roots)?,
            (None, true) if args.from_index.is_some() => Config::default(),
            (None, true) => {
                let default = PathBuf::from("fabdex.toml");
                if !default.exists() {
                    bail!("nothing to index: give ROOT paths or --config FILE (no ./fabdex.toml here)");
                }
                Config::load(&default)?
            }
        };
        if let Some(model) = embeddings {
            config.index.embeddings = Some(model.to_path_buf());
        }
        if args.no_embeddings && embeddings.is_some() {
            bail!("give --embeddings DIR (or $FABDEX_EMBEDDINGS) or --no-embeddings, not both");
        }
        if let Some(precision) = args.embedding_precision {
            config.index.embedding_precision = Some(precision);
        }
        if args.no_embeddings {
            config.index.embeddings = None;
        } else if config.index.embeddings.is_none() {
            config.index.embeddings = registered_model()?;
        }
        Ok(config)
    }
}

/// The registered default model's folder, said on stderr; `None` when none is registered.
pub fn registered_model() -> Result<Option<PathBuf>> {
    let registry = fabdex_embed::registry::Registry::locate();
    let Some(model) = registry.default_model()? else {
        eprintln!(
            "embeddings: none registered in {} (lexical and corpus-learned ranking; `fabdex models add DIR` adds a model)",
            registry.dir().display()
        );
        return Ok(None);
    };
    eprintln!("embeddings: the registered model {} ({}); --no-embeddings indexes without", model.name, model.digest);
    Ok(Some(model.dir))
}

/// Run `fabdex index`: resolve the configuration, pull the service named by
/// `--from-index` (all of it before anything is written), and build into
/// `--out`, else the global `--index`, else the config's, else `.fabdex`.
pub fn index(
    args: &IndexArgs,
    index_flag: Option<PathBuf>,
    embeddings: Option<&Path>,
    quiet: bool,
) -> Result<IndexReport> {
    let mut config = Config::resolve(args, embeddings)?;
    let dir = args.out.clone().or(index_flag).or(config.index.out.clone()).unwrap_or_else(|| PathBuf::from(".fabdex"));
    if let Some(url) = &args.from_index {
        let feed = pull(url, args.timeout, &dir, quiet)?;
        config.roots.push(RootConfig {
            name: "remote".into(),
            path: feed.canonicalize()?,
            kind: Some(fabdex_model::records::RootKind::Published),
            origin: Some("remote-index".into()),
            include: vec![],
            exclude: vec![],
        });
    }
    let mut opts = BuildOptions::new(dir);
    opts.progress = !quiet;
    opts.keep_snapshots = config.index.keep_snapshots;
    opts.full = args.full;
    crate::build::build(&config, &opts)
}

/// Every record of the service at `url`, with its source, written to
/// `<index>/pulls/remote.jsonl`; the feed's path.
fn pull(url: &str, timeout: u64, dir: &Path, quiet: bool) -> Result<PathBuf> {
    let token = std::env::var("FABDEX_INDEX_TOKEN").ok().filter(|t| !t.is_empty());
    let opts = fabdex_remote::ClientOptions {
        token,
        timeout: std::time::Duration::from_secs(timeout.max(1)),
        ..Default::default()
    };
    let records = fabdex_remote::Client::new(url, opts)?
        .pull()
        .with_context(|| format!("pulling from `{url}` failed; the index was not changed"))?;
    let pulls = dir.join("pulls");
    std::fs::create_dir_all(&pulls).with_context(|| format!("cannot create `{}`", pulls.display()))?;
    let feed = pulls.join("remote.jsonl");
    fabdex_remote::write_feed(&feed, &records)?;
    if !quiet {
        eprintln!("pulled {} records from {url}", records.len());
    }
    Ok(feed)
}
