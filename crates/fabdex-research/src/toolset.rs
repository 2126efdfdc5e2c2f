//! The one tool listing ([`listing`]: the registry's tools and `research`,
//! each described once) and the tools a research model is offered from it:
//! the read-only query and handle tools, exactly as published (less the
//! `run` argument, which the loop sets), plus `submit_kit`, whose
//! parameters are the kit's published JSON Schema.

use fabdex_kit::Handle;
use fabdex_tools::Descriptor;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::budget::Budgets;
use crate::service::Outcome;

/// Registry tools research may call. Nothing that writes, no ledger tools,
/// and never `research` itself.
pub const READ_ONLY: &[&str] = &[
    "search_docs",
    "read",
    "outline",
    "related",
    "search_patterns",
    "inspect_pattern",
    "list_pattern_files",
    "read_source",
    "pattern_deps",
    "list_handles",
    "describe_handle",
];

/// The final-answer tool.
pub const SUBMIT_KIT: &str = "submit_kit";

/// Tools whose answer is a bounded read (their `max_chars` is capped by the read budget).
pub const READS: &[&str] = &["read", "read_source"];

pub const NAME: &str = "research";

/// `research` input.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResearchInput {
    /// The task, in a person's words (at most 2,000 chars).
    pub task: String,
    /// The granted handles: each a token with its description and the JSON Schema of what it holds.
    #[serde(default)]
    pub grants: Vec<Handle>,
    /// Patterns the host attaches (ids, unique prefixes or aliases; at most 16).
    #[serde(default)]
    pub pattern_refs: Vec<String>,
    /// An earlier research run whose kit to carry forward.
    #[serde(default)]
    pub prior: Option<String>,
    /// Budgets; each absent one takes its default.
    #[serde(default)]
    pub budgets: Option<BudgetsInput>,
}

/// Budgets of a `research` call (defaults 8 turns, 24 tool calls, 32,000
/// chars per read, 96,000 in all, 300 s; maxima 32, 128, 32,000, 400,000,
/// 1,800): the tool's `budgets` input and, flattened, the CLI's
/// `--budget-…` flags alike.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct BudgetsInput {
    /// Model turns (default 8, at most 32).
    #[arg(long = "budget-turns")]
    pub turns: Option<u32>,
    /// Tool calls (default 24, at most 128).
    #[arg(long = "budget-tool-calls")]
    pub tool_calls: Option<u32>,
    /// Chars one read may return (default and at most 32000).
    #[arg(long = "budget-read-chars")]
    pub read_chars: Option<u64>,
    /// Chars of tool results in all (default 96000, at most 400000).
    #[arg(long = "budget-total-chars")]
    pub total_chars: Option<u64>,
    /// Wall-clock seconds (default 300, at most 1800).
    #[arg(long = "budget-seconds")]
    pub seconds: Option<u64>,
}

impl BudgetsInput {
    pub fn budgets(&self) -> Budgets {
        let d = Budgets::DEFAULT;
        Budgets {
            turns: self.turns.unwrap_or(d.turns),
            tool_calls: self.tool_calls.unwrap_or(d.tool_calls),
            read_chars: self.read_chars.unwrap_or(d.read_chars),
            total_chars: self.total_chars.unwrap_or(d.total_chars),
            seconds: self.seconds.unwrap_or(d.seconds),
        }
    }
}

/// The tool's descriptor, in the registry's shape.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: NAME.into(),
        description: "Research a task: a model runs a bounded, read-only loop over the docs, skills and pattern index (the read-only tools of this registry, never research itself) and answers with an implementation kit admitted by the host's rules. Every call is a new research run whose id is in the result; every model turn and tool call is in its ledger.".into(),
        input_schema: serde_json::to_value(schemars::schema_for!(ResearchInput)).unwrap_or(Value::Null),
        output_schema: serde_json::to_value(schemars::schema_for!(Outcome)).unwrap_or(Value::Null),
        bounds: "budgets: default 8 model turns, 24 tool calls, 32000 chars per read, 96000 chars in all, 300 s; at most 32, 128, 32000, 400000, 1800 s. The call lasts at most its time budget.".into(),
        longest_secs: Some(Budgets::MAX.seconds + 30),
    }
}

/// Every tool, described once: the registry's query and handle tools, then
/// `research`.
pub fn listing() -> &'static [Descriptor] {
    static LISTING: std::sync::OnceLock<Vec<Descriptor>> = std::sync::OnceLock::new();
    LISTING.get_or_init(|| {
        let mut all = fabdex_tools::descriptors();
        all.push(descriptor());
        all
    })
}

/// The tool list sent with every turn, in the OpenAI function shape: the
/// listing's read-only tools (less their `run`, which the loop binds), and
/// `submit_kit`.
pub fn model_tools() -> Vec<Value> {
    let mut tools: Vec<Value> = listing()
        .iter()
        .filter(|d| READ_ONLY.contains(&d.name.as_str()))
        .map(|d| {
            let mut tool = d.openai();
            if let Some(props) = tool["function"]["parameters"].get_mut("properties").and_then(Value::as_object_mut) {
                props.remove("run");
            }
            tool
        })
        .collect();
    let mut kit = fabdex_kit::schema();
    if let Some(obj) = kit.as_object_mut() {
        obj.remove("$schema");
    }
    tools.push(json!({"type": "function", "function": {
        "name": SUBMIT_KIT,
        "description": "Submit the implementation kit: your final answer. The host admits it: every step, rule and example must cite citation ids (`cit-…`) of results this research call returned (rules need a `read` citation); selected patterns must have been inspected; inputs may bind only granted handle tokens. `status`, `sources`, `missing`, `run` and `exposure` are filled by the host.",
        "parameters": kit,
    }}));
    tools
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_gets_the_read_only_registry_tools_and_submit_kit_and_nothing_else() {
        let tools = model_tools();
        let names: Vec<&str> = tools.iter().filter_map(|t| t["function"]["name"].as_str()).collect();
        let mut expected: Vec<&str> = READ_ONLY.to_vec();
        expected.push(SUBMIT_KIT);
        assert_eq!(names, expected);
        // The host binds the ledger run of every registry call (a kit's own
        // `run` field is filled at admission).
        for t in tools.iter().filter(|t| t["function"]["name"] != SUBMIT_KIT) {
            assert!(t["function"]["parameters"]["properties"].get("run").is_none(), "{t}");
        }
        let read = tools.iter().find(|t| t["function"]["name"] == "read").unwrap();
        let registry = fabdex_tools::descriptors().into_iter().find(|d| d.name == "read").unwrap();
        assert_eq!(
            read["function"]["parameters"]["properties"]["address"],
            registry.input_schema["properties"]["address"]
        );
    }
}
