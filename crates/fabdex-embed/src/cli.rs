//! `fabdex models …`: add, list and remove the registry's sentence-embedding
//! model folders. Returns the models touched for the binary's printing module.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::EmbedError;
use crate::registry::{RegisteredModel, Registry};

#[derive(Debug, Clone, clap::Subcommand)]
pub enum ModelsCommand {
    /// Register a sentence-transformers model folder: checked, copied under
    /// the registry ($FABDEX_MODELS, else ~/.local/share/fabdex/models) and
    /// made the default.
    Add { dir: PathBuf },
    /// The registered models, the default first.
    List,
    /// Unregister a model (by name or digest prefix) and delete its copy.
    Remove { model: String },
}

/// The models a command added, listed or removed, and the registry's folder.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Models {
    pub models: Vec<RegisteredModel>,
    #[serde(skip)]
    pub registry: PathBuf,
}

impl ModelsCommand {
    pub fn run(&self) -> Result<Models, EmbedError> {
        let registry = Registry::locate();
        let models = match self {
            ModelsCommand::Add { dir } => vec![registry.add(dir)?],
            ModelsCommand::List => registry.list()?,
            ModelsCommand::Remove { model } => vec![registry.remove(model)?],
        };
        Ok(Models { models, registry: registry.dir().to_path_buf() })
    }
}
