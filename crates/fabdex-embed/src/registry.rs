//! The local model registry: model folders a user has added, each copied
//! under the registry and known by its digest, and which one `fabdex index`
//! uses by default.
//!
//! The registry is a folder: `$FABDEX_MODELS`, else
//! `$XDG_DATA_HOME/fabdex/models`, else `~/.local/share/fabdex/models`. It
//! holds `registry.json` and one folder per model, `<name>-<digest 12>/`.
//! Adding copies the model, so moving or deleting the folder it came from
//! breaks nothing; the copy's digest is checked against the original's.
//! `registry.json` is replaced atomically (written beside, then renamed).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{EmbedError, SentenceEncoder};

/// One registered model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisteredModel {
    /// The folder name it was added from (`all-MiniLM-L6-v2`).
    pub name: String,
    /// `blake3:` over its config, tokenizer and weights (as an index records it).
    pub digest: String,
    pub dim: usize,
    /// Its copy under the registry.
    pub dir: PathBuf,
    /// Where it was added from, for people.
    pub source: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RegistryFile {
    /// Digest of the model `fabdex index` uses unless told otherwise.
    default: Option<String>,
    models: Vec<RegisteredModel>,
}

/// A model registry folder.
#[derive(Debug, Clone)]
pub struct Registry {
    dir: PathBuf,
}

fn fail(path: &Path, message: String) -> EmbedError {
    EmbedError::Model { path: path.to_path_buf(), message }
}

impl Registry {
    /// The registry of this user: `$FABDEX_MODELS`, else
    /// `$XDG_DATA_HOME/fabdex/models`, else `$HOME/.local/share/fabdex/models`.
    pub fn locate() -> Registry {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let dir = var("FABDEX_MODELS")
            .or_else(|| var("XDG_DATA_HOME").map(|d| d.join("fabdex/models")))
            .or_else(|| var("HOME").map(|h| h.join(".local/share/fabdex/models")))
            .unwrap_or_else(|| PathBuf::from(".fabdex-models"));
        Registry { dir }
    }

    pub fn at(dir: &Path) -> Registry {
        Registry { dir: dir.to_path_buf() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self) -> PathBuf {
        self.dir.join("registry.json")
    }

    fn read(&self) -> Result<RegistryFile, EmbedError> {
        let path = self.file();
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| fail(&path, format!("is not a model registry (delete it to start over): {e}"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RegistryFile::default()),
            Err(e) => Err(fail(&path, format!("cannot read it: {e}"))),
        }
    }

    fn write(&self, file: &RegistryFile) -> Result<(), EmbedError> {
        let path = self.file();
        let tmp = self.dir.join(format!("registry.json.{}.tmp", std::process::id()));
        let bytes = serde_json::to_vec_pretty(file).expect("the registry serialises");
        std::fs::write(&tmp, bytes)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| fail(&path, format!("cannot write it: {e}")))
    }

    /// Every registered model, the default first.
    pub fn list(&self) -> Result<Vec<RegisteredModel>, EmbedError> {
        let file = self.read()?;
        let mut models = file.models;
        models.sort_by_key(|m| Some(&m.digest) != file.default.as_ref());
        Ok(models)
    }

    /// The model `fabdex index` uses by default, if any is registered. A
    /// default whose copy is gone is an error that says so.
    pub fn default_model(&self) -> Result<Option<RegisteredModel>, EmbedError> {
        let file = self.read()?;
        let Some(digest) = &file.default else { return Ok(None) };
        let Some(model) = file.models.into_iter().find(|m| &m.digest == digest) else {
            return Err(fail(&self.file(), format!("names a default model {digest} it does not list")));
        };
        if !model.dir.join("model.safetensors").is_file() {
            return Err(fail(
                &model.dir,
                format!(
                    "the registered model {} is missing its files; add it again (`fabdex models add DIR`)",
                    model.name
                ),
            ));
        }
        Ok(Some(model))
    }

    /// Load `source` (it must be a model fabdex can run), copy it under the
    /// registry, check the copy, and make it the default. Adding a model
    /// that is already registered only makes it the default again.
    pub fn add(&self, source: &Path) -> Result<RegisteredModel, EmbedError> {
        let encoder = SentenceEncoder::load(source)?;
        let identity = encoder.identity().clone();
        std::fs::create_dir_all(&self.dir).map_err(|e| fail(&self.dir, format!("cannot create it: {e}")))?;
        let mut file = self.read()?;
        let hex = &identity.digest["blake3:".len()..];
        let target = self.dir.join(format!("{}-{}", identity.name, &hex[..12]));
        if !file.models.iter().any(|m| m.digest == identity.digest && m.dir.join("model.safetensors").is_file()) {
            let staging = self.dir.join(format!(".adding-{}-{}", &hex[..12], std::process::id()));
            let _ = std::fs::remove_dir_all(&staging);
            copy_tree(source, &staging)?;
            let copy = SentenceEncoder::load(&staging)?;
            if copy.identity().digest != identity.digest {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(fail(&staging, "the copy does not have the digest of the original".into()));
            }
            let _ = std::fs::remove_dir_all(&target);
            std::fs::rename(&staging, &target).map_err(|e| fail(&target, format!("cannot move the copy here: {e}")))?;
            file.models.retain(|m| m.digest != identity.digest);
            file.models.push(RegisteredModel {
                name: identity.name.clone(),
                digest: identity.digest.clone(),
                dim: identity.dim,
                dir: target.canonicalize().unwrap_or(target),
                source: source.canonicalize().unwrap_or_else(|_| source.to_path_buf()).display().to_string(),
            });
        }
        file.default = Some(identity.digest.clone());
        self.write(&file)?;
        Ok(file.models.into_iter().find(|m| m.digest == identity.digest).expect("just registered"))
    }

    /// Unregister the model named `key` (its name or a prefix of its digest)
    /// and delete its copy. The default passes to the latest other model.
    pub fn remove(&self, key: &str) -> Result<RegisteredModel, EmbedError> {
        let mut file = self.read()?;
        let matches = |m: &RegisteredModel| {
            m.name == key || m.digest == key || (key.len() >= 6 && m.digest["blake3:".len()..].starts_with(key))
        };
        let found: Vec<usize> = (0..file.models.len()).filter(|&i| matches(&file.models[i])).collect();
        let i = match found.as_slice() {
            [i] => *i,
            [] => return Err(fail(&self.file(), format!("registers no model named `{key}`"))),
            _ => return Err(fail(&self.file(), format!("`{key}` names {} models; give a digest", found.len()))),
        };
        let model = file.models.remove(i);
        if file.default.as_ref() == Some(&model.digest) {
            file.default = file.models.last().map(|m| m.digest.clone());
        }
        self.write(&file)?;
        if model.dir.starts_with(&self.dir) || model.dir.starts_with(self.dir.canonicalize().unwrap_or_default()) {
            let _ = std::fs::remove_dir_all(&model.dir);
        }
        Ok(model)
    }
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), EmbedError> {
    std::fs::create_dir_all(to).map_err(|e| fail(to, format!("cannot create it: {e}")))?;
    let entries = std::fs::read_dir(from).map_err(|e| fail(from, format!("cannot list it: {e}")))?;
    for entry in entries {
        let entry = entry.map_err(|e| fail(from, format!("cannot list it: {e}")))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| fail(&src, format!("cannot copy it: {e}")))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_copies_checks_and_makes_default_and_remove_hands_it_on() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("model-a"), tmp.path().join("model-b"));
        crate::tiny::write_tiny_model(&a, &["wish"], 1).unwrap();
        crate::tiny::write_tiny_model(&b, &["wish"], 2).unwrap();
        let registry = Registry::at(&tmp.path().join("registry"));
        assert_eq!(registry.default_model().unwrap(), None);
        let first = registry.add(&a).unwrap();
        assert!(first.dir.starts_with(registry.dir().canonicalize().unwrap()));
        // The copy stands on its own.
        std::fs::remove_dir_all(&a).unwrap();
        assert_eq!(SentenceEncoder::load(&first.dir).unwrap().identity().digest, first.digest);
        let second = registry.add(&b).unwrap();
        assert_ne!(first.digest, second.digest);
        assert_eq!(registry.default_model().unwrap().unwrap().digest, second.digest);
        assert_eq!(registry.list().unwrap().len(), 2);
        // Adding again registers nothing new.
        registry.add(&b).unwrap();
        assert_eq!(registry.list().unwrap().len(), 2);
        let removed = registry.remove(&second.digest["blake3:".len()..][..8]).unwrap();
        assert_eq!(removed.digest, second.digest);
        assert!(!second.dir.exists());
        assert_eq!(registry.default_model().unwrap().unwrap().digest, first.digest);
        let err = registry.remove("nothing-such").unwrap_err().to_string();
        assert!(err.contains("registers no model named `nothing-such`"), "{err}");
        // Not a model: refused, and the registry is untouched.
        assert!(registry.add(tmp.path()).is_err());
        assert_eq!(registry.list().unwrap().len(), 1);
    }
}
