//! The release policy: which origins' text may be released to which
//! consumer. Whether text enters a model context is the operator's decision,
//! so the policy is a file the operator writes, never a code default:
//!
//! ```toml
//! default = "deny"                       # or "allow": what no rule decides
//!
//! [[allow]]
//! origins = ["docs", "skill"]            # "*" matches every origin
//! consumers = ["research", "author"]     # "*" matches every consumer
//!
//! [[deny]]
//! origins = ["remote-index"]
//! consumers = ["research"]
//! ```
//!
//! A `deny` rule wins over an `allow` rule; with no matching rule, `default`
//! decides. Without a policy file every origin is released, and every ledger
//! record says `policy: none`.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DefaultDecision {
    Allow,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub origins: Vec<String>,
    pub consumers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    default: DefaultDecision,
    #[serde(default)]
    allow: Vec<Rule>,
    #[serde(default)]
    deny: Vec<Rule>,
}

/// A loaded policy.
#[derive(Debug, Clone)]
pub struct Policy {
    file: PolicyFile,
    /// `<path> <digest>`: which policy decided, for the ledger.
    pub label: String,
}

/// The decision for one origin and consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Release,
    /// Withheld, with the rule that decided (for the caller and the ledger).
    Deny(String),
}

fn matches(list: &[String], value: &str) -> bool {
    list.iter().any(|x| x == "*" || x == value)
}

impl Policy {
    pub fn load(path: &Path) -> Result<Policy> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read policy `{}`", path.display()))?;
        Policy::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, name: &str) -> Result<Policy> {
        let file: PolicyFile = toml::from_str(text).with_context(|| format!("policy `{name}` is not valid"))?;
        for (i, r) in file.allow.iter().chain(&file.deny).enumerate() {
            if r.origins.is_empty() || r.consumers.is_empty() {
                bail!("policy `{name}`: rule {} needs at least one origin and one consumer", i + 1);
            }
        }
        let digest = fabdex_model::digest_text(text);
        Ok(Policy { file, label: format!("{name} {digest}") })
    }

    pub fn decide(&self, origin: &str, consumer: &str) -> Decision {
        let deny_rule =
            self.file.deny.iter().position(|r| matches(&r.origins, origin) && matches(&r.consumers, consumer));
        if let Some(i) = deny_rule {
            return Decision::Deny(format!(
                "policy {}: [[deny]] rule {} withholds origin `{origin}` from consumer `{consumer}`",
                self.label,
                i + 1
            ));
        }
        if self.file.allow.iter().any(|r| matches(&r.origins, origin) && matches(&r.consumers, consumer)) {
            return Decision::Release;
        }
        match self.file.default {
            DefaultDecision::Allow => Decision::Release,
            DefaultDecision::Deny => Decision::Deny(format!(
                "policy {}: no rule releases origin `{origin}` to consumer `{consumer}` and the default is deny",
                self.label
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_beats_allow_and_the_default_decides_the_rest() {
        let p = Policy::parse(
            "default = \"deny\"\n[[allow]]\norigins = [\"*\"]\nconsumers = [\"author\"]\n[[allow]]\norigins = [\"docs\"]\nconsumers = [\"research\"]\n[[deny]]\norigins = [\"remote-index\"]\nconsumers = [\"*\"]\n",
            "p.toml",
        )
        .unwrap();
        assert_eq!(p.decide("docs", "research"), Decision::Release);
        assert_eq!(p.decide("docs", "author"), Decision::Release);
        assert!(matches!(p.decide("remote-index", "author"), Decision::Deny(r) if r.contains("[[deny]] rule 1")));
        assert!(matches!(p.decide("skill", "research"), Decision::Deny(r) if r.contains("default is deny")));
        let open = Policy::parse("default = \"allow\"\n", "q.toml").unwrap();
        assert_eq!(open.decide("anything", "anyone"), Decision::Release);
        let err = format!("{:#}", Policy::parse("default = \"maybe\"\n", "r.toml").unwrap_err());
        assert!(err.contains("r.toml") && err.contains("maybe"), "{err}");
        assert!(Policy::parse("[[allow]]\norigins = []\nconsumers = [\"x\"]\ndefault = \"deny\"\n", "s").is_err());
    }
}
