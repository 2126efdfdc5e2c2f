//! The search page: one box for docs and patterns, the pattern filters as
//! form controls that map one to one onto `search_patterns`'s arguments,
//! and each hit with its `why` and `fit`.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::answer::{Answer, Chrome};
use crate::html::{address_link, answered, arr, enc, esc, page, pattern_href, s};

/// Hits asked for first; "load more" asks for this many more.
pub const PAGE: usize = 10;
/// The most hits a tool gives.
pub const MAX_LIMIT: usize = 50;

/// The search form's fields, as the query string gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchForm {
    pub q: String,
    /// `all` (default), `docs` or `patterns`.
    pub scope: String,
    /// `NAME[:TYPE]` fields, comma-separated: `--returns`.
    pub returns: String,
    /// `--accepts`.
    pub accepts: String,
    /// `TOKEN:TYPE` handles: `--have`.
    pub have: String,
    pub tier: String,
    /// `part`, `app` or empty.
    pub kind: String,
    /// `proven`, `unproven`, `penalized` or empty.
    pub quality: String,
    /// Empty (the tools' default: words and meaning) or `words` (docs
    /// `mode: bm25`, patterns without sentence embeddings: faster).
    pub ranking: String,
    pub limit: usize,
}

impl SearchForm {
    /// The form from decoded query pairs; unknown keys are ignored.
    pub fn from_pairs<I: IntoIterator<Item = (String, String)>>(pairs: I) -> SearchForm {
        let mut form = SearchForm { limit: PAGE, ..SearchForm::default() };
        for (k, v) in pairs {
            let v = v.trim().to_string();
            match k.as_str() {
                "q" => form.q = v,
                "scope" => form.scope = v,
                "returns" => form.returns = v,
                "accepts" => form.accepts = v,
                "have" => form.have = v,
                "tier" => form.tier = v,
                "kind" => form.kind = v,
                "quality" => form.quality = v,
                "ranking" => form.ranking = v,
                "limit" => form.limit = v.parse().unwrap_or(PAGE).clamp(1, MAX_LIMIT),
                _ => {}
            }
        }
        form
    }

    fn pattern_filters(&self) -> bool {
        [&self.returns, &self.accepts, &self.have, &self.tier, &self.kind, &self.quality].iter().any(|f| !f.is_empty())
    }

    /// Whether to search docs: a query, the scope allows it, and no pattern-only filter.
    pub fn wants_docs(&self) -> bool {
        !self.q.is_empty() && self.scope != "patterns" && !self.pattern_filters()
    }

    /// Whether to search patterns: text or a filter, and the scope allows it.
    pub fn wants_patterns(&self) -> bool {
        self.scope != "docs" && (!self.q.is_empty() || self.pattern_filters())
    }

    /// `search_docs`'s input.
    pub fn docs_input(&self) -> Value {
        let mut input = json!({"query": self.q, "limit": self.limit});
        if self.ranking == "words" {
            input["mode"] = json!("bm25");
        }
        input
    }

    /// `search_patterns`'s input.
    pub fn patterns_input(&self) -> Value {
        let mut input = json!({
            "text": self.q,
            "limit": self.limit,
            "returns": fields(&self.returns),
            "accepts": fields(&self.accepts),
            "have": fields(&self.have),
        });
        if self.ranking == "words" {
            input["embeddings"] = json!(false);
        }
        for (key, value) in [("tier", &self.tier), ("kind", &self.kind), ("min_quality", &self.quality)] {
            if !value.is_empty() {
                input[key] = json!(value);
            }
        }
        input
    }

    /// This search's URL with another limit.
    pub fn href_with_limit(&self, limit: usize) -> String {
        let mut href = format!("/search?q={}", enc(&self.q));
        for (k, v) in [
            ("scope", &self.scope),
            ("returns", &self.returns),
            ("accepts", &self.accepts),
            ("have", &self.have),
            ("tier", &self.tier),
            ("kind", &self.kind),
            ("quality", &self.quality),
            ("ranking", &self.ranking),
        ] {
            if !v.is_empty() {
                let _ = write!(href, "&{k}={}", enc(v));
            }
        }
        let _ = write!(href, "&limit={limit}");
        href
    }
}

/// `a:string, b` → `[{"name":"a","type":"string"},{"name":"b"}]`.
fn fields(text: &str) -> Vec<Value> {
    text.split([',', ' '])
        .filter(|f| !f.is_empty())
        .map(|f| match f.split_once(':') {
            Some((name, ty)) => json!({"name": name, "type": ty}),
            None => json!({"name": f}),
        })
        .collect()
}

/// The whole search page. `docs`/`patterns` are the tools' answers when
/// they were asked.
pub fn page_html(chrome: &Chrome<'_>, form: &SearchForm, docs: Option<&Answer>, patterns: Option<&Answer>) -> String {
    let mut main = String::from("<h1>Search</h1>");
    main.push_str(&form_html(form));
    if docs.is_none() && patterns.is_none() {
        main.push_str(
            "<p class=\"hint\">Search the docs and the pattern programs from one box. \
             The filters narrow patterns by contract: what they return, what they accept, and what handles you hold.</p>",
        );
        return page(chrome, "Search", &main);
    }
    main.push_str("<div id=\"results\" class=\"results\">");
    let mut more = false;
    if let Some(answer) = patterns {
        main.push_str(&pattern_hits(answer, &mut more));
    }
    if let Some(answer) = docs {
        main.push_str(&doc_hits(answer, form.limit, &mut more));
    }
    if more && form.limit < MAX_LIMIT {
        let href = form.href_with_limit((form.limit + PAGE).min(MAX_LIMIT));
        let _ = write!(main, "<p><a class=\"more\" data-more=\"results\" href=\"{}\">Load more</a></p>", esc(&href));
    }
    main.push_str("</div>");
    let title = if form.q.is_empty() { "Search".to_string() } else { format!("{} — search", form.q) };
    page(chrome, &title, &main)
}

fn select(name: &str, label: &str, current: &str, options: &[(&str, &str)]) -> String {
    let mut out = format!("<label>{} <select name=\"{name}\">", esc(label));
    for (value, text) in options {
        let selected = if *value == current { " selected" } else { "" };
        let _ = write!(out, "<option value=\"{}\"{selected}>{}</option>", esc(value), esc(text));
    }
    out.push_str("</select></label>");
    out
}

fn text_input(name: &str, label: &str, value: &str, placeholder: &str) -> String {
    format!(
        "<label>{} <input name=\"{name}\" value=\"{}\" placeholder=\"{}\" autocomplete=\"off\"></label>",
        esc(label),
        esc(value),
        esc(placeholder)
    )
}

fn form_html(form: &SearchForm) -> String {
    let mut out = String::from("<form class=\"search\" action=\"/search\" method=\"get\">");
    let _ = write!(
        out,
        "<div class=\"bigbox\"><label for=\"q2\" class=\"sr\">Words, an API name, or a task</label>\
         <input id=\"q2\" name=\"q\" type=\"search\" value=\"{}\" placeholder=\"e.g. show my email inbox\">\
         <button type=\"submit\">Search</button></div><fieldset class=\"filters\"><legend>Filters</legend>",
        esc(&form.q)
    );
    let scopes = [("all", "docs and patterns"), ("docs", "docs only"), ("patterns", "patterns only")];
    out.push_str(&select("scope", "Search", if form.scope.is_empty() { "all" } else { &form.scope }, &scopes));
    out.push_str(&text_input("returns", "Returns", &form.returns, "messages:array"));
    out.push_str(&text_input("accepts", "Accepts", &form.accepts, "db"));
    out.push_str(&text_input("have", "Have", &form.have, "mailDb:MailDatabase"));
    out.push_str(&text_input("tier", "Tier", &form.tier, "exemplar, legacy, none"));
    out.push_str(&select("kind", "Kind", &form.kind, &[("", "any"), ("app", "app"), ("part", "part")]));
    let qualities = [("", "any"), ("unproven", "unproven or better"), ("proven", "proven")];
    out.push_str(&select("quality", "Quality", &form.quality, &qualities));
    let rankings = [("", "words and meaning"), ("words", "words only (faster)")];
    out.push_str(&select("ranking", "Ranking", &form.ranking, &rankings));
    out.push_str("</fieldset></form>");
    out
}

fn pattern_hits(answer: &Answer, more: &mut bool) -> String {
    let value = match answered(answer, "pattern search") {
        Ok(v) => v,
        Err(html) => return html,
    };
    let hits = arr(value, "hits");
    *more |= value["omitted"].as_u64().unwrap_or(0) > 0;
    let mut out = format!(
        "<section aria-labelledby=\"ph\"><h2 id=\"ph\">Patterns <span class=\"count\">{} of {}</span></h2>",
        hits.len(),
        value["matched"].as_u64().unwrap_or(0)
    );
    if hits.is_empty() {
        out.push_str("<p class=\"hint\">No pattern matched.</p>");
    }
    out.push_str("<ol class=\"hits\">");
    for hit in hits {
        out.push_str(&pattern_hit(hit));
    }
    out.push_str("</ol></section>");
    out
}

fn badge(class: &str, text: &str) -> String {
    if text.is_empty() { String::new() } else { format!("<span class=\"badge {class}\">{}</span>", esc(text)) }
}

fn pattern_hit(hit: &Value) -> String {
    let id = s(hit, "patternId");
    let mut out = format!(
        "<li class=\"hit pattern\"><a class=\"title\" href=\"{}\">{}</a> {}{}{}{}",
        esc(&pattern_href(id)),
        esc(s(hit, "entry")),
        badge("kind", s(hit, "kind")),
        badge("tier", s(hit, "tier")),
        badge(&format!("id-{}", s(hit, "identity")), s(hit, "identity")),
        badge("quality", s(hit, "quality")),
    );
    if let Some(reason) = hit.get("denied").and_then(Value::as_str) {
        let _ = write!(
            out,
            "<div class=\"withheld\"><strong>Withheld</strong> by the release policy: {}</div>",
            esc(reason)
        );
        out.push_str("</li>");
        return out;
    }
    let _ = write!(out, "<p class=\"desc\">{}</p>", esc(s(hit, "description")));
    out.push_str(&fit_html(&hit["fit"]));
    out.push_str(&why_list(arr(hit, "why").iter().filter_map(Value::as_str).map(str::to_string)));
    out.push_str("</li>");
    out
}

/// A hit's fit: the verdict, fields found and not found, inputs bound and missing.
fn fit_html(fit: &Value) -> String {
    let mut out =
        format!("<div class=\"fit\"><span class=\"label\">fit</span> {}", badge("verdict", s(fit, "verdict")));
    let mut items = Vec::new();
    for (key, sign) in [("returns", "returns"), ("accepts", "accepts")] {
        for m in arr(fit, key) {
            items.push(format!(
                "<li class=\"ok\">{sign} <code>{}: {}</code></li>",
                esc(s(m, "field")),
                esc(s(m, "type"))
            ));
        }
    }
    for (key, sign) in [("notReturned", "does not return"), ("notAccepted", "does not accept")] {
        for f in arr(fit, key).iter().filter_map(Value::as_str) {
            items.push(format!("<li class=\"no\">{sign} <code>{}</code></li>", esc(f)));
        }
    }
    for (key, sign, class) in [("satisfied", "bound input", "ok"), ("missing", "needs input", "need")] {
        for m in arr(fit, key) {
            items.push(format!(
                "<li class=\"{class}\">{sign} <code>{}: {}</code></li>",
                esc(s(m, "input")),
                esc(s(m, "type"))
            ));
        }
    }
    if !items.is_empty() {
        let _ = write!(out, "<ul class=\"fitlist\">{}</ul>", items.join(""));
    }
    out.push_str("</div>");
    out
}

fn why_list(why: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = why.map(|w| format!("<li>{}</li>", esc(&w))).collect();
    if items.is_empty() {
        return String::new();
    }
    format!("<div class=\"why\"><span class=\"label\">why</span><ul>{}</ul></div>", items.join(""))
}

fn doc_hits(answer: &Answer, limit: usize, more: &mut bool) -> String {
    let value = match answered(answer, "docs search") {
        Ok(v) => v,
        Err(html) => return html,
    };
    let hits = arr(value, "hits");
    *more |= value["matched"].as_u64().unwrap_or(0) as usize > limit;
    let mut out = format!(
        "<section aria-labelledby=\"dh\"><h2 id=\"dh\">Docs <span class=\"count\">{} of {}</span></h2><ol class=\"hits\">",
        hits.len(),
        value["matched"].as_u64().unwrap_or(0)
    );
    for hit in hits {
        out.push_str(&doc_hit(hit));
    }
    out.push_str("</ol></section>");
    out
}

fn doc_hit(hit: &Value) -> String {
    let address = s(hit, "address");
    let path: Vec<&str> = arr(hit, "heading_path").iter().filter_map(Value::as_str).collect();
    let label = if path.is_empty() { address.to_string() } else { path.join(" › ") };
    let mut out = format!(
        "<li class=\"hit doc\">{} {}<div class=\"addr\"><code>{}</code></div>",
        address_link(address, &label).replacen("<a ", "<a class=\"title\" ", 1),
        badge("origin", s(hit, "origin")),
        esc(address)
    );
    if let Some(reason) = hit.get("denied").and_then(Value::as_str) {
        let _ = write!(
            out,
            "<div class=\"withheld\"><strong>Withheld</strong> by the release policy: {}</div></li>",
            esc(reason)
        );
        return out;
    }
    let _ = write!(out, "<p class=\"snippet\">{}</p>", esc(s(hit, "snippet")));
    let why = &hit["why"];
    let mut reasons: Vec<String> = Vec::new();
    if let Some(fields) = why["fields"].as_object() {
        for (field, terms) in fields {
            let terms: Vec<&str> = terms.as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            reasons.push(format!("{field}: {}", terms.join(", ")));
        }
    }
    let missing: Vec<&str> = arr(why, "missing_terms").iter().filter_map(Value::as_str).collect();
    if !missing.is_empty() {
        reasons.push(format!("missing: {}", missing.join(", ")));
    }
    out.push_str(&why_list(reasons.into_iter()));
    out.push_str("</li>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_maps_onto_the_tools_arguments() {
        let pairs =
            [("q", "inbox"), ("returns", "messages:array, count"), ("have", "mailDb:MailDatabase"), ("kind", "app")];
        let form = SearchForm::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let input = form.patterns_input();
        assert_eq!(input["returns"], json!([{"name": "messages", "type": "array"}, {"name": "count"}]));
        assert_eq!(input["have"], json!([{"name": "mailDb", "type": "MailDatabase"}]));
        assert_eq!(input["kind"], "app");
        assert!(input.get("tier").is_none());
        assert!(!form.wants_docs() && form.wants_patterns());
        assert!(input.get("embeddings").is_none() && form.docs_input().get("mode").is_none(), "the tools' defaults");
        let words = SearchForm { ranking: "words".into(), ..form.clone() };
        assert_eq!(
            (words.docs_input()["mode"].as_str(), words.patterns_input()["embeddings"].as_bool()),
            (Some("bm25"), Some(false))
        );
        assert!(form.href_with_limit(20).ends_with("&kind=app&limit=20"), "{}", form.href_with_limit(20));
    }

    #[test]
    fn withheld_hits_show_no_text() {
        let answer: Answer = Ok(json!({"matched": 1, "hits": [
            {"address": "doc:docs/a.md#x", "origin": "docs", "snippet": "", "heading_path": [], "denied": "[[deny]] rule 1"}
        ]}));
        let html = doc_hits(&answer, 10, &mut false);
        assert!(html.contains("Withheld") && html.contains("[[deny]] rule 1"), "{html}");
    }
}
