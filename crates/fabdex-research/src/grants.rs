//! The grants file: the handles a host lets research bind, as the kit's
//! handle inventory (`{"handles": [...]}` or a bare list), with a digest of
//! the inventory so a follow-up can tell whether it changed.

use std::path::Path;

use anyhow::{Context, Result, bail};
use fabdex_kit::{Handle, Inventory};

/// A host's granted handles.
#[derive(Debug, Clone, PartialEq)]
pub struct Grants {
    pub handles: Vec<Handle>,
    /// blake3 of the inventory, handles sorted by token (order does not matter).
    pub digest: String,
}

impl Grants {
    pub fn new(mut handles: Vec<Handle>) -> Result<Grants> {
        handles.sort_by(|a, b| a.token.cmp(&b.token));
        if let Some(w) = handles.windows(2).find(|w| w[0].token == w[1].token) {
            bail!("handle `{}` is granted twice", w[0].token);
        }
        if let Some(h) = handles.iter().find(|h| h.token.trim().is_empty()) {
            bail!("a handle has an empty token (description: {:?})", h.description);
        }
        let digest = blake3::hash(&serde_json::to_vec(&handles)?).to_hex()[..32].to_string();
        Ok(Grants { handles, digest })
    }

    /// No handles: what a research call without `--grants` has.
    pub fn none() -> Grants {
        Grants::new(Vec::new()).expect("an empty inventory is valid")
    }

    pub fn parse(text: &str, name: &str) -> Result<Grants> {
        let inventory: Inventory = serde_json::from_str(text)
            .with_context(|| format!("grants `{name}` are not a handle inventory ({{\"handles\": [...]}})"))?;
        Grants::new(inventory.handles().to_vec()).with_context(|| format!("grants `{name}`"))
    }

    pub fn load(path: &Path) -> Result<Grants> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read grants `{}`", path.display()))?;
        Grants::parse(&text, &path.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_ignores_order_and_changes_with_the_inventory() {
        let a = Grants::parse(r#"{"handles": [{"token": "a"}, {"token": "b", "description": "B"}]}"#, "x").unwrap();
        let b = Grants::parse(r#"[{"token": "b", "description": "B"}, {"token": "a"}]"#, "x").unwrap();
        let c = Grants::parse(r#"[{"token": "b", "description": "changed"}, {"token": "a"}]"#, "x").unwrap();
        assert_eq!(a.digest, b.digest);
        assert_ne!(a.digest, c.digest);
        assert_ne!(a.digest, Grants::none().digest);
    }

    #[test]
    fn a_bad_inventory_names_the_file_and_the_fault() {
        let twice = Grants::parse(r#"[{"token": "a"}, {"token": "a"}]"#, "g.json").unwrap_err();
        assert!(format!("{twice:#}").contains("g.json") && format!("{twice:#}").contains("`a` is granted twice"));
        let junk = Grants::parse("{", "g.json").unwrap_err();
        assert!(format!("{junk:#}").contains("grants `g.json`"), "{junk:#}");
    }
}
