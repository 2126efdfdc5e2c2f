//! The pattern index service's record shapes (`Pattern`, `Program`,
//! `SearchResult`), as published records arrive in JSON lines, as the client
//! pulls them and as `fabdex serve --http` answers them.
//!
//! Field names follow the service (camelCase). Unknown fields are ignored so a
//! newer service does not break an older fabdex; a wrong type or an unknown
//! `kind`/`quality` value is an error naming the field.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `part` (a building block) or `app` (meant to be run on its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PatternKind {
    Part,
    App,
}

impl PatternKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PatternKind::Part => "part",
            PatternKind::App => "app",
        }
    }
}

/// The service's quality tiers, worst first (so `>=` compares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Quality {
    /// Net-negative recorded outcome.
    Penalized,
    /// No recorded success.
    Unproven,
    /// At least one success or positive rating, not net-negative.
    Proven,
}

impl Quality {
    pub fn as_str(self) -> &'static str {
        match self {
            Quality::Penalized => "penalized",
            Quality::Unproven => "unproven",
            Quality::Proven => "proven",
        }
    }
}

/// Usage signals recorded by the service.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct Signals {
    #[serde(default)]
    pub uses: u64,
    #[serde(default)]
    pub score: f64,
}

/// One source file of a published program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProgramSource {
    pub name: String,
    pub contents: String,
}

/// A published program: the entry file's name and every file's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Program {
    pub main: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub main_export: Option<String>,
    pub files: Vec<ProgramSource>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source_roots: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub data_files: Option<Vec<String>>,
}

/// A pattern record in the service's `Pattern` shape (`getPattern`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PublishedPattern {
    pub pattern_id: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub owner_did: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub hashtags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kind: Option<PatternKind>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub quality: Option<Quality>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub signals: Option<Signals>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub argument_schema: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub result_schema: Option<Value>,
    #[serde(default)]
    pub dependencies: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub prior_pattern_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub program: Option<Program>,
}

/// A hit of `searchPatterns` and a row of `listPatterns`: the record without
/// schemas or program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatternSummary {
    pub pattern_id: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub hashtags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub owner_did: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub dependencies: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub signals: Option<Signals>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kind: Option<PatternKind>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub quality: Option<Quality>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub matched_terms: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub query_terms: Option<u32>,
}

/// `POST /searchPatterns` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct SearchRequest {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tags: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub limit: Option<usize>,
}

/// `POST /listPatterns` body: pages of summaries in a stable order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct ListRequest {
    /// Opaque position returned as `nextCursor` by the previous page.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub limit: Option<usize>,
}

/// `POST /listPatterns` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListResponse {
    pub patterns: Vec<PatternSummary>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub next_cursor: Option<String>,
}

/// `POST /getPattern` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetRequest {
    pub pattern_id: String,
    #[serde(default)]
    pub include_source: bool,
}

impl PublishedPattern {
    pub fn summary(&self) -> PatternSummary {
        PatternSummary {
            pattern_id: self.pattern_id.clone(),
            description: self.description.clone(),
            hashtags: self.hashtags.clone(),
            owner_did: self.owner_did.clone(),
            created_at: self.created_at.clone(),
            dependencies: self.dependencies.clone(),
            signals: self.signals,
            kind: self.kind,
            quality: self.quality,
            matched_terms: None,
            query_terms: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_the_service_shape_and_reject_unknown_tiers() {
        let line = r##"{"patternId":"abc","ownerDid":"did:key:z1","createdAt":"2026-11-01T00:00:00Z",
            "description":"d","hashtags":["#a"],"kind":"app","quality":"proven","signals":{"uses":3,"score":1.5},
            "dependencies":[],"program":{"main":"/main.tsx","files":[{"name":"/main.tsx","contents":"x"}]},
            "futureField":1}"##;
        let p: PublishedPattern = serde_json::from_str(line).unwrap();
        assert_eq!(p.kind, Some(PatternKind::App));
        assert_eq!(p.quality, Some(Quality::Proven));
        assert_eq!(p.program.as_ref().unwrap().files[0].name, "/main.tsx");
        assert!(Quality::Proven > Quality::Unproven && Quality::Unproven > Quality::Penalized);
        let bad = line.replace("\"proven\"", "\"great\"");
        let err = serde_json::from_str::<PublishedPattern>(&bad).unwrap_err().to_string();
        assert!(err.contains("unknown variant `great`"), "{err}");
        let round: PublishedPattern = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(round, p);
    }
}
