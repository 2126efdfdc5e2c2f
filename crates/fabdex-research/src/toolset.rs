//! The tools a research model is offered: the registry's read-only query
//! tools and handle tools, exactly as the registry publishes them (less the
//! `run` argument, which the loop sets), plus `submit_kit`, whose parameters
//! are the kit's published JSON Schema.

use serde_json::{Value, json};

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

/// The tool list sent with every turn, in the OpenAI function shape: the
/// listing's read-only tools (less their `run`, which the loop binds), and
/// `submit_kit`.
pub fn model_tools() -> Vec<Value> {
    let mut tools: Vec<Value> = crate::tool::listing()
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
