//! `{{TOOL:POINTER}}` in a scripted reply: a value from the latest result of
//! a tool, found in the request's messages (tool results, and the host's
//! opening calls quoted in the task message as a `TOOL {args}` line followed
//! by the result's JSON line). POINTER is a JSON pointer whose segments may
//! also be `[field=value]` (the first array element whose string field
//! equals value) or `[field~value]` (whose field contains it).

use std::collections::BTreeMap;

use serde_json::Value;

/// The latest result of each tool in a request.
pub struct ToolResults {
    latest: BTreeMap<String, Value>,
}

impl ToolResults {
    pub fn of(body: &Value) -> ToolResults {
        let mut latest = BTreeMap::new();
        let mut names: BTreeMap<String, String> = BTreeMap::new();
        for m in body.get("messages").and_then(Value::as_array).into_iter().flatten() {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("");
            let content = m.get("content").and_then(Value::as_str).unwrap_or("");
            match role {
                "user" => quoted_calls(content, &mut latest),
                "assistant" => {
                    for c in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                        let id = c.get("id").and_then(Value::as_str).unwrap_or("");
                        let name = c.pointer("/function/name").and_then(Value::as_str).unwrap_or("");
                        names.insert(id.to_string(), name.to_string());
                    }
                }
                "tool" => {
                    let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                    if let (Some(name), Ok(v)) = (names.get(id), serde_json::from_str::<Value>(content)) {
                        latest.insert(name.clone(), v);
                    }
                }
                _ => {}
            }
        }
        ToolResults { latest }
    }

    /// Fill every template in a value. A string that is one whole template
    /// becomes the value it names (a number stays a number).
    pub fn fill(&self, v: &Value) -> Result<Value, String> {
        Ok(match v {
            Value::String(s) => self.fill_str(s)?,
            Value::Array(a) => Value::Array(a.iter().map(|x| self.fill(x)).collect::<Result<_, _>>()?),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, x)| Ok((k.clone(), self.fill(x)?))).collect::<Result<_, String>>()?)
            }
            other => other.clone(),
        })
    }

    fn fill_str(&self, s: &str) -> Result<Value, String> {
        let trimmed = s.trim();
        if trimmed.starts_with("{{") && trimmed.ends_with("}}") && trimmed.matches("{{").count() == 1 {
            return self.lookup(&trimmed[2..trimmed.len() - 2]);
        }
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find("{{") {
            let Some(len) = rest[start..].find("}}") else { break };
            out.push_str(&rest[..start]);
            match self.lookup(&rest[start + 2..start + len])? {
                Value::String(x) => out.push_str(&x),
                other => out.push_str(&other.to_string()),
            }
            rest = &rest[start + len + 2..];
        }
        out.push_str(rest);
        Ok(Value::String(out))
    }

    fn lookup(&self, template: &str) -> Result<Value, String> {
        let (tool, pointer) =
            template.split_once(':').ok_or_else(|| format!("`{{{{{template}}}}}` is not TOOL:POINTER"))?;
        let result = self
            .latest
            .get(tool.trim())
            .ok_or_else(|| format!("no result of `{tool}` yet for `{{{{{template}}}}}`"))?;
        walk(result, pointer.trim())
            .cloned()
            .ok_or_else(|| format!("`{pointer}` finds nothing in the latest `{tool}` result"))
    }
}

/// The host's opening calls, as the task message quotes them.
fn quoted_calls(content: &str, latest: &mut BTreeMap<String, Value>) {
    let lines: Vec<&str> = content.lines().collect();
    for pair in lines.windows(2) {
        let (head, body) = (pair[0], pair[1]);
        let Some((tool, _)) = head.split_once(' ') else { continue };
        if tool.is_empty() || !tool.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') || !body.starts_with('{') {
            continue;
        }
        if let Ok(v) = serde_json::from_str::<Value>(body) {
            latest.insert(tool.to_string(), v);
        }
    }
}

/// Pointer segments; a `/` inside `[...]` belongs to the filter's value.
fn segments(pointer: &str) -> Vec<String> {
    let (mut out, mut seg, mut depth) = (Vec::new(), String::new(), 0u32);
    for ch in pointer.chars() {
        match ch {
            '/' if depth == 0 => out.push(std::mem::take(&mut seg)),
            '[' => {
                depth += 1;
                seg.push(ch);
            }
            ']' => {
                depth = depth.saturating_sub(1);
                seg.push(ch);
            }
            _ => seg.push(ch),
        }
    }
    out.push(seg);
    out.retain(|s| !s.is_empty());
    out
}

fn walk<'v>(mut v: &'v Value, pointer: &str) -> Option<&'v Value> {
    for seg in segments(pointer) {
        let seg = seg.as_str();
        v = if let Some(filter) = seg.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            let (field, value, contains) = match filter.split_once('~') {
                Some((f, x)) => (f, x, true),
                None => {
                    let (f, x) = filter.split_once('=')?;
                    (f, x, false)
                }
            };
            v.as_array()?.iter().find(|e| {
                e.pointer(&format!("/{field}"))
                    .and_then(Value::as_str)
                    .is_some_and(|s| if contains { s.contains(value) } else { s == value })
            })?
        } else if let Ok(i) = seg.parse::<usize>() {
            v.get(i)?
        } else {
            v.get(seg)?
        };
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_quote_tool_results_and_the_hosts_opening_calls() {
        let body = json!({"messages": [
            {"role": "user", "content": "Task: x\n\nsearch_patterns {\"text\":\"x\"}\n{\"result\":{\"hits\":[{\"entry\":\"a.tsx\",\"patternId\":\"A\"},{\"entry\":\"mail/inbox.tsx\",\"patternId\":\"B\"}]}}\n"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "function": {"name": "read", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "{\"result\":{\"total\":12},\"citations\":[{\"citation\":\"cit-1\"}]}"},
        ]});
        let r = ToolResults::of(&body);
        assert_eq!(
            r.fill(&json!("{{search_patterns:/result/hits/[entry=mail/inbox.tsx]/patternId}}")).unwrap(),
            json!("B")
        );
        assert_eq!(r.fill(&json!("{{search_patterns:/result/hits/[entry~inbox]/patternId}}")).unwrap(), json!("B"));
        assert_eq!(r.fill(&json!("{{read:/result/total}}")).unwrap(), json!(12));
        assert_eq!(r.fill(&json!(["see {{read:/citations/0/citation}}."])).unwrap(), json!(["see cit-1."]));
        assert!(r.fill(&json!("{{inspect_pattern:/x}}")).unwrap_err().contains("no result of `inspect_pattern`"));
        assert!(r.fill(&json!("{{read:/nope}}")).unwrap_err().contains("finds nothing"));
    }
}
