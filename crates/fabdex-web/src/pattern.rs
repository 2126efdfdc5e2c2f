//! The pattern page: contract (fields with required and defaults, as
//! TypeScript-like types and as JSON Schema), identity, tags, tier and
//! description with their sources, files, dependencies and dependents as a
//! small graph, an import snippet, and the doc sections that mention it.

use std::fmt::Write;

use serde_json::Value;

use crate::answer::{Answer, Chrome};
use crate::html::{address_link, answered, arr, esc, failure_box, file_href, page, pattern_href, row, s, size};

/// The tool answers a pattern page is made of.
pub struct PatternAnswers {
    /// The id as the URL gave it.
    pub id: String,
    pub inspect: Answer,
    pub contract: Answer,
    pub files: Answer,
    pub deps: Answer,
}

/// The whole pattern page.
pub fn page_html(chrome: &Chrome<'_>, a: &PatternAnswers) -> String {
    let inspect = match answered(&a.inspect, "this pattern") {
        Ok(v) => v,
        Err(html) => return page(chrome, &a.id, &format!("<h1><code>{}</code></h1>{html}", esc(&a.id))),
    };
    let id = s(inspect, "patternId");
    let entry = s(inspect, "entry");
    let mut main = header(inspect);
    main.push_str("<nav class=\"toc\" aria-label=\"On this page\"><a href=\"#contract\">Contract</a> <a href=\"#facts\">Facts</a> <a href=\"#files\">Files</a> <a href=\"#graph\">Dependencies</a> <a href=\"#docs\">Docs</a></nav>");
    main.push_str(&import_snippet(s(inspect, "importHint")));
    main.push_str(&contract_section(&a.contract, inspect));
    main.push_str(&facts(inspect));
    main.push_str(&files_section(&a.files, id));
    main.push_str(&exports(inspect));
    main.push_str(&graph_section(&a.deps, inspect));
    main.push_str(&docs_section(inspect));
    page(chrome, if entry.is_empty() { id } else { entry }, &main)
}

fn badge(class: &str, text: &str) -> String {
    if text.is_empty() { String::new() } else { format!("<span class=\"badge {class}\">{}</span>", esc(text)) }
}

fn header(v: &Value) -> String {
    let tier = v["profile"]["tier"]["tier"].as_str().unwrap_or("");
    format!(
        "<h1 class=\"pattern\">{}</h1><p class=\"meta\">{}{}{}{}{} <code class=\"id\">{}</code></p><p class=\"lead\">{}</p>",
        esc(s(v, "entry")),
        badge("kind", s(v, "kind")),
        badge("tier", tier),
        badge(&format!("id-{}", s(&v["identity"], "status")), s(&v["identity"], "status")),
        badge("quality", s(v, "quality")),
        badge("origin", s(v, "origin")),
        esc(s(v, "patternId")),
        esc(s(v, "description"))
    )
}

fn import_snippet(hint: &str) -> String {
    format!(
        "<section class=\"import\" aria-label=\"Import\"><pre><code id=\"import-hint\">{}</code></pre>\
         <button type=\"button\" class=\"copy js-only\" data-copy=\"import-hint\" hidden>Copy</button></section>",
        esc(hint)
    )
}

fn contract_section(contract: &Answer, inspect: &Value) -> String {
    let mut out =
        String::from("<section id=\"contract\" aria-labelledby=\"contract-h\"><h2 id=\"contract-h\">Contract</h2>");
    let c = match answered(contract, "the contract") {
        Ok(c) => c,
        Err(html) => return out + &html + "</section>",
    };
    let argument = c.get("argumentSchema").filter(|v| !v.is_null()).unwrap_or(&inspect["argumentSchema"]);
    let result = c.get("resultSchema").filter(|v| !v.is_null()).unwrap_or(&inspect["resultSchema"]);
    out.push_str(&fields_table("Argument", "arg", argument));
    out.push_str(&fields_table("Result", "res", result));
    for note in arr(c, "notes").iter().filter_map(Value::as_str) {
        let _ = write!(out, "<p class=\"note\">{}</p>", esc(note));
    }
    let schemas = serde_json::json!({"argument": argument, "result": result});
    let pretty = serde_json::to_string_pretty(&schemas).unwrap_or_default();
    let _ = write!(
        out,
        "<div class=\"views\" data-view=\"ts\"><div class=\"toggle js-only\" role=\"group\" aria-label=\"Contract view\" hidden>\
         <button type=\"button\" data-show=\"ts\" aria-pressed=\"true\">TypeScript</button>\
         <button type=\"button\" data-show=\"schema\" aria-pressed=\"false\">JSON Schema</button></div>\
         <details class=\"view\" data-view=\"ts\" open><summary>TypeScript</summary><pre><code class=\"language-ts\">{}</code></pre></details>\
         <details class=\"view\" data-view=\"schema\" open><summary>JSON Schema</summary><pre><code class=\"language-json\">{}</code></pre></details></div>",
        esc(s(c, "typescript")),
        esc(&pretty)
    );
    out.push_str("</section>");
    out
}

/// One schema's top-level fields: name, type, required, default, description.
fn fields_table(caption: &str, prefix: &str, schema: &Value) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return format!("<p class=\"hint\">{caption}: no fields known.</p>");
    };
    let required: Vec<&str> = arr(schema, "required").iter().filter_map(Value::as_str).collect();
    let mut out = format!(
        "<div class=\"tablewrap\"><table class=\"fields\" id=\"{prefix}-fields\"><caption>{}</caption>\
         <thead><tr><th scope=\"col\">field</th><th scope=\"col\">type</th><th scope=\"col\">required</th><th scope=\"col\">default</th><th scope=\"col\">description</th></tr></thead><tbody>",
        esc(caption)
    );
    for (name, prop) in props {
        let is_required = required.contains(&name.as_str());
        let shown = name.strip_prefix('$').map_or(name.clone(), |n| format!("[{n}]"));
        let default = prop.get("default").map(|d| format!("<code>{}</code>", esc(&d.to_string()))).unwrap_or_default();
        let _ = write!(
            out,
            "<tr id=\"{prefix}-{}\" class=\"{}\"><th scope=\"row\"><code>{}</code></th><td><code>{}</code></td><td>{}</td><td>{default}</td><td>{}</td></tr>",
            esc(name),
            if is_required { "required" } else { "optional" },
            esc(&shown),
            esc(&type_of(prop)),
            if is_required { "<span class=\"req\">required</span>" } else { "<span class=\"opt\">optional</span>" },
            esc(s(prop, "description"))
        );
    }
    out.push_str("</tbody></table></div>");
    out
}

/// A JSON Schema as a short TypeScript-like type.
pub fn type_of(schema: &Value) -> String {
    let inner = plain_type(schema);
    match arr(schema, "asCell").first().and_then(Value::as_str) {
        Some("stream") => format!("Stream<{inner}>"),
        Some(_) => format!("Writable<{inner}>"),
        None => inner,
    }
}

fn plain_type(schema: &Value) -> String {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r).trim_end_matches(".json");
        return if name == "vnode" { "VNode".into() } else { name.to_string() };
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            return options.iter().map(type_of).collect::<Vec<_>>().join(" | ");
        }
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.iter().map(Value::to_string).collect::<Vec<_>>().join(" | ");
    }
    match &schema["type"] {
        Value::String(t) if t == "array" => {
            let item = type_of(&schema["items"]);
            if item.contains(' ') { format!("({item})[]") } else { format!("{item}[]") }
        }
        Value::String(t) if t == "object" => match schema.get("properties").and_then(Value::as_object) {
            Some(p) => format!("{{ {} }}", p.keys().cloned().collect::<Vec<_>>().join(", ")),
            None => "object".into(),
        },
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" | "),
        _ => "unknown".into(),
    }
}

fn facts(v: &Value) -> String {
    let identity = &v["identity"];
    let mut dl = String::new();
    let mut id_html =
        format!("{} — computed <code>{}</code>", esc(s(identity, "status")), esc(s(identity, "computed")));
    if let Some(prior) = v.get("priorPatternId").and_then(Value::as_str) {
        let _ = write!(id_html, "; prior id <a href=\"{}\"><code>{}</code></a>", esc(&pattern_href(prior)), esc(prior));
    }
    dl.push_str(&row("Identity", &id_html));
    let source = &v["source"];
    let origin = format!(
        "{} <span class=\"src\">from {} <code>{}</code></span>",
        esc(s(v, "origin")),
        esc(s(source, "kind")),
        esc(s(source, "root"))
    );
    dl.push_str(&row("Origin", &origin));
    let own = &v["profile"]["own"];
    let mut desc = format!("{} <span class=\"src\">source: the record's description</span>", esc(s(v, "description")));
    if let Some(doc) = own.get("module_doc").and_then(Value::as_str) {
        let _ = write!(desc, "<br>{} <span class=\"src\">source: the module's doc comment</span>", esc(doc));
    }
    dl.push_str(&row("Description", &desc));
    let tags: Vec<String> = arr(v, "hashtags")
        .iter()
        .filter_map(Value::as_str)
        .map(|t| format!("<span class=\"tag\">#{}</span>", esc(t.trim_start_matches('#'))))
        .collect();
    let tags_html = if tags.is_empty() {
        "none".to_string()
    } else {
        format!("{} <span class=\"src\">source: hashtags of the description and result schema</span>", tags.join(" "))
    };
    dl.push_str(&row("Tags", &tags_html));
    let tier = &v["profile"]["tier"];
    let tier_html = match tier.get("tier").and_then(Value::as_str) {
        Some(t) => format!(
            "{} <span class=\"src\">source: {} (matched <code>{}</code>)</span>",
            esc(t),
            address_link(s(tier, "source"), s(tier, "source")),
            esc(s(tier, "matched"))
        ),
        None => "none <span class=\"src\">no catalog or path names one</span>".into(),
    };
    dl.push_str(&row("Tier", &tier_html));
    let agreement = &v["agreement"];
    dl.push_str(&row(
        "Schemas",
        &format!("argument {}, result {}", esc(s(agreement, "argument")), esc(s(agreement, "result"))),
    ));
    if let Some(q) = v.get("quality").and_then(Value::as_str) {
        dl.push_str(&row(
            "Quality",
            &format!("{} <span class=\"src\">{}</span>", esc(q), esc(&v["signals"].to_string())),
        ));
    }
    format!(
        "<section id=\"facts\" aria-labelledby=\"facts-h\"><h2 id=\"facts-h\">Facts</h2><dl class=\"facts\">{dl}</dl></section>"
    )
}

fn files_section(files: &Answer, id: &str) -> String {
    let mut out = String::from("<section id=\"files\" aria-labelledby=\"files-h\"><h2 id=\"files-h\">Files</h2>");
    let listing = match answered(files, "the file list") {
        Ok(v) => v,
        Err(html) => return out + &html + "</section>",
    };
    out.push_str("<div class=\"tablewrap\"><table class=\"files\"><thead><tr><th scope=\"col\">file</th><th scope=\"col\" class=\"r\">size</th><th scope=\"col\" class=\"r\">lines</th><th scope=\"col\">digest</th></tr></thead><tbody>");
    for f in arr(listing, "files") {
        let name = s(f, "name");
        let main = if f["main"].as_bool() == Some(true) { " <span class=\"badge\">main</span>" } else { "" };
        let _ = write!(
            out,
            "<tr><td><a href=\"{}\">{}</a>{main}</td><td class=\"r\">{}</td><td class=\"r\">{}</td><td><code class=\"digest\">{}</code></td></tr>",
            esc(&file_href(id, name)),
            esc(name),
            size(f["bytes"].as_u64().unwrap_or(0)),
            f["lines"].as_u64().unwrap_or(0),
            esc(s(f, "digest").get(..19).unwrap_or(s(f, "digest")))
        );
    }
    out.push_str("</tbody></table></div></section>");
    out
}

fn exports(v: &Value) -> String {
    let exports = arr(v, "exports");
    if exports.is_empty() {
        return String::new();
    }
    let id = s(v, "patternId");
    let main_file = s(v, "entry").split_once('/').map_or(s(v, "entry"), |(_, p)| p);
    let mut out = String::from(
        "<section id=\"exports\" aria-labelledby=\"exports-h\"><h2 id=\"exports-h\">Exports</h2><ul class=\"exports\">",
    );
    for e in exports {
        let (start, end) = (e["line_start"].as_u64().unwrap_or(1), e["line_end"].as_u64().unwrap_or(1));
        let href = format!("{}#L{start}-L{end}", file_href(id, main_file));
        let _ = write!(
            out,
            "<li><a href=\"{}\"><code>{}</code></a> <span class=\"badge\">{}</span> <code class=\"sig\">{}</code></li>",
            esc(&href),
            esc(s(e, "name")),
            esc(s(e, "kind")),
            esc(s(e, "signature"))
        );
    }
    out.push_str("</ul></section>");
    out
}

fn graph_section(deps: &Answer, inspect: &Value) -> String {
    let mut out = String::from(
        "<section id=\"graph\" aria-labelledby=\"graph-h\"><h2 id=\"graph-h\">Dependencies and dependents</h2>",
    );
    let dependents: Vec<&str> = arr(inspect, "dependents").iter().filter_map(Value::as_str).collect();
    let tree = match deps {
        Ok(t) => Some(&t["root"]),
        Err(f) => {
            out.push_str(&failure_box("the dependency tree", f));
            None
        }
    };
    let direct: Vec<&Value> = tree.map(|t| arr(t, "dependencies").iter().collect()).unwrap_or_default();
    out.push_str(&crate::pattern_graph::svg(s(inspect, "entry"), &direct, &dependents));
    out.push_str("<div class=\"cols\"><div><h3>Depends on</h3>");
    match tree {
        Some(t) if !arr(t, "dependencies").is_empty() => out.push_str(&dep_list(arr(t, "dependencies"))),
        _ => out.push_str("<p class=\"hint\">Nothing.</p>"),
    }
    out.push_str("</div><div><h3>Used by</h3>");
    if dependents.is_empty() {
        out.push_str("<p class=\"hint\">Nothing in this index.</p>");
    } else {
        out.push_str("<ul class=\"deps\">");
        for d in dependents {
            let _ = write!(out, "<li><a href=\"{}\"><code>{}</code></a></li>", esc(&pattern_href(d)), esc(d));
        }
        out.push_str("</ul>");
    }
    out.push_str("</div></div></section>");
    out
}

/// A dependency tree level as nested lists; nodes not in the index say so.
fn dep_list(nodes: &[Value]) -> String {
    let mut out = String::from("<ul class=\"deps\">");
    for n in nodes {
        let id = s(n, "patternId");
        let label = if s(n, "entry").is_empty() { id } else { s(n, "entry") };
        if n["indexed"].as_bool() == Some(true) {
            let _ = write!(
                out,
                "<li><a class=\"dep\" href=\"{}\">{}</a> {}",
                esc(&pattern_href(id)),
                esc(label),
                badge(&format!("id-{}", s(n, "identity")), s(n, "identity"))
            );
        } else {
            let _ =
                write!(out, "<li><code>{}</code> <span class=\"badge missing\">not in the index</span>", esc(label));
        }
        let children = arr(n, "dependencies");
        if !children.is_empty() {
            out.push_str(&dep_list(children));
        }
        out.push_str("</li>");
    }
    out.push_str("</ul>");
    out
}

fn docs_section(v: &Value) -> String {
    let docs = arr(&v["profile"], "docs");
    let mut out = String::from(
        "<section id=\"docs\" aria-labelledby=\"docs-h\"><h2 id=\"docs-h\">Doc sections that mention it</h2>",
    );
    if docs.is_empty() {
        out.push_str("<p class=\"hint\">None in this index.</p></section>");
        return out;
    }
    out.push_str("<ul class=\"mentions\">");
    for d in docs {
        let heading = if s(d, "heading").is_empty() { s(d, "address") } else { s(d, "heading") };
        let _ = write!(
            out,
            "<li>{} <span class=\"badge\">{}</span> <code class=\"addr\">{}</code></li>",
            address_link(s(d, "address"), heading),
            esc(s(d, "role")),
            esc(s(d, "address"))
        );
    }
    out.push_str("</ul></section>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schema_types_read_like_typescript() {
        assert_eq!(type_of(&json!({"$ref": "#/$defs/MailDatabase", "asCell": ["cell"]})), "Writable<MailDatabase>");
        assert_eq!(type_of(&json!({"type": "array", "items": {"$ref": "#/$defs/M"}})), "M[]");
        assert_eq!(type_of(&json!({"anyOf": [{"type": "undefined"}, {"$ref": "#/$defs/M"}]})), "undefined | M");
        assert_eq!(
            type_of(&json!({"type": "object", "properties": {"id": {}}, "asCell": ["stream"]})),
            "Stream<{ id }>"
        );
    }

    #[test]
    fn required_fields_are_marked_and_defaults_shown() {
        let schema = json!({"properties": {"db": {"type": "string"}, "month": {"type": "string", "default": "2026-11"}}, "required": ["db"]});
        let html = fields_table("Argument", "arg", &schema);
        assert!(html.contains("<tr id=\"arg-db\" class=\"required\">"), "{html}");
        assert!(
            html.contains("<tr id=\"arg-month\" class=\"optional\">")
                && html.contains("<code>&quot;2026-11&quot;</code>"),
            "{html}"
        );
    }
}
