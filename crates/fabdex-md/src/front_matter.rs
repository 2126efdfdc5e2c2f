//! YAML front matter (only at byte 0) and a leading HTML comment.

use std::collections::BTreeMap;

use yaml_rust2::{Yaml, YamlLoader};

type Metadata = BTreeMap<String, serde_json::Value>;

pub(crate) struct FrontMatter {
    /// Where the Markdown body starts (0 when there is no front matter).
    pub body_start: usize,
    /// Parsed keys, or why they could not be parsed.
    /// On error: the keys still recovered, and why YAML rejected it.
    pub metadata: Option<Result<Metadata, (Metadata, String)>>,
}

/// Split front matter off: `---` on the first line, closed by `---` or `...`.
pub(crate) fn split(text: &str) -> FrontMatter {
    let none = FrontMatter { body_start: 0, metadata: None };
    let first_line_end = match text.find('\n') {
        Some(i) => i,
        None => return none,
    };
    if text[..first_line_end].trim_end_matches('\r') != "---" {
        return none;
    }
    let mut pos = first_line_end + 1;
    while pos <= text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        let line = text[pos..line_end].trim_end_matches('\r');
        if line == "---" || line == "..." {
            let yaml = &text[first_line_end + 1..pos];
            let body_start = (line_end + 1).min(text.len());
            let metadata = parse_yaml(yaml).map_err(|message| (lenient_keys(yaml), message));
            return FrontMatter { body_start, metadata: Some(metadata) };
        }
        if line_end >= text.len() {
            break;
        }
        pos = line_end + 1;
    }
    none
}

fn parse_yaml(yaml: &str) -> Result<BTreeMap<String, serde_json::Value>, String> {
    let docs = YamlLoader::load_from_str(yaml).map_err(|e| format!("front matter is not valid YAML: {e}"))?;
    let mut map = BTreeMap::new();
    match docs.into_iter().next() {
        None | Some(Yaml::Null) => {}
        Some(Yaml::Hash(hash)) => {
            for (k, v) in hash {
                map.insert(yaml_key(&k), to_json(v));
            }
        }
        Some(_) => return Err("front matter is YAML but not a mapping of keys".to_string()),
    }
    Ok(map)
}

fn yaml_key(key: &Yaml) -> String {
    match key {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        other => format!("{other:?}"),
    }
}

fn to_json(value: Yaml) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Yaml::String(s) => Value::String(s),
        Yaml::Integer(i) => Value::from(i),
        Yaml::Real(r) => r.parse::<f64>().map(Value::from).unwrap_or(Value::String(r)),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(items) => Value::Array(items.into_iter().map(to_json).collect()),
        Yaml::Hash(hash) => Value::Object(hash.into_iter().map(|(k, v)| (yaml_key(&k), to_json(v))).collect()),
        _ => Value::Null,
    }
}

/// `key: value` lines of front matter that YAML rejected, as strings.
pub(crate) fn lenient_keys(text: &str) -> BTreeMap<String, serde_json::Value> {
    let mut map = BTreeMap::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once(':') {
            let k = k.trim_end();
            if !k.is_empty()
                && !line.starts_with([' ', '\t', '-'])
                && k.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_')
            {
                let v = v.trim().trim_matches('"');
                map.insert(k.to_string(), serde_json::Value::String(v.to_string()));
            }
        }
    }
    map
}

/// The text of an HTML comment that opens the body (after blank lines).
pub(crate) fn leading_comment(body: &str) -> Option<String> {
    let rest = body.trim_start().strip_prefix("<!--")?;
    let end = rest.find("-->")?;
    Some(rest[..end].trim().to_string())
}
