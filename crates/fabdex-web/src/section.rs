//! The section page: one docs section (or a whole file) rendered from a
//! bounded `read`, its heading path and the file's outline (`outline`), and
//! the sections around it (`related`: parent, children, siblings, links
//! and backlinks). The URL `/doc/<root>/<path>?section=<anchor>` is stable
//! per address.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::answer::{Answer, Chrome};
use crate::html::{address_href, address_link, answered, arr, doc_href, esc, failure_box, page, s};

/// The most characters of a section one page shows; more is a link away.
pub const WINDOW: u64 = 32000;

/// A docs file (`root/path`) and, for a section, its anchor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SectionRequest {
    pub file: String,
    pub anchor: Option<String>,
    pub offset: Option<u64>,
}

impl SectionRequest {
    /// The address the page shows.
    pub fn address(&self) -> String {
        match &self.anchor {
            Some(a) => format!("doc:{}#{a}", self.file),
            None => format!("doc:{}", self.file),
        }
    }

    /// `read`'s input.
    pub fn read_input(&self) -> Value {
        let mut input = json!({"address": self.address(), "max_chars": WINDOW});
        if let Some(o) = self.offset {
            input["offset"] = json!(o);
        }
        input
    }

    /// `outline`'s input: the whole file.
    pub fn outline_input(&self) -> Value {
        json!({"prefix": format!("doc:{}", self.file)})
    }

    /// `related`'s input, for a section.
    pub fn related_input(&self) -> Option<Value> {
        self.anchor.as_ref().map(|_| json!({"address": self.address()}))
    }
}

/// The tool answers of a section page.
pub struct SectionAnswers {
    pub read: Answer,
    pub outline: Answer,
    pub related: Option<Answer>,
}

/// The whole section page.
pub fn page_html(chrome: &Chrome<'_>, req: &SectionRequest, a: &SectionAnswers) -> String {
    let address = req.address();
    let sections: &[Value] = a.outline.as_ref().map_or(&[], |o| arr(o, "sections"));
    let path = heading_path(sections, &address);
    let title = path.last().map_or(req.file.as_str(), |(h, _)| h.as_str());
    let mut main = format!(
        "<nav class=\"crumbs\" aria-label=\"Heading path\"><a href=\"{}\">{}</a>",
        esc(&doc_href(&req.file, None)),
        esc(&req.file)
    );
    for (heading, addr) in &path {
        let current = if *addr == address { " aria-current=\"page\"" } else { "" };
        let href = address_href(addr).unwrap_or_default();
        let _ = write!(main, " › <a href=\"{}\"{current}>{}</a>", esc(&href), esc(heading));
    }
    let _ = write!(
        main,
        "</nav><h1>{}</h1><p class=\"meta\">Address <code class=\"addr\">{}</code> · <a href=\"{}\" rel=\"bookmark\">permalink</a></p><div class=\"docgrid\"><article class=\"prose\">",
        esc(title),
        esc(&address),
        esc(&address_href(&address).unwrap_or_default())
    );
    main.push_str(&body(req, &a.read));
    main.push_str("</article><aside class=\"side\">");
    if let Some(related) = &a.related {
        main.push_str(&related_html(related));
    }
    main.push_str(&outline_html(sections, &address, &a.outline));
    main.push_str("</aside></div>");
    page(chrome, title, &main)
}

/// `(heading, address)` from the file's first heading down to `address`.
pub fn heading_path(sections: &[Value], address: &str) -> Vec<(String, String)> {
    let mut stack: Vec<(u64, String, String)> = Vec::new();
    for sec in sections {
        let level = sec["level"].as_u64().unwrap_or(0);
        if level == 0 {
            continue;
        }
        while stack.last().is_some_and(|(l, _, _)| *l >= level) {
            stack.pop();
        }
        stack.push((level, s(sec, "heading").to_string(), s(sec, "address").to_string()));
        if s(sec, "address") == address {
            return stack.into_iter().map(|(_, h, a)| (h, a)).collect();
        }
    }
    Vec::new()
}

fn body(req: &SectionRequest, read: &Answer) -> String {
    let window = match answered(read, "this section") {
        Ok(w) => w,
        Err(html) => return html,
    };
    // The page's h1 is the section's heading; a continued window starts mid-text.
    let skip = req.anchor.is_some() && window["offset"].as_u64() == Some(0);
    let mut out = crate::markdown::render_body(s(window, "text"), &req.file, skip);
    if let Some(next) = window.get("next").and_then(Value::as_str) {
        let offset = next.rsplit_once('@').map_or("0", |(_, o)| o);
        let base = address_href(&req.address()).unwrap_or_default();
        let sep = if base.contains('?') { '&' } else { '?' };
        let _ = write!(
            out,
            "<p><a class=\"more\" href=\"{}{sep}offset={}\">Continue reading</a> <span class=\"hint\">(chars {} of {})</span></p>",
            esc(&base),
            esc(offset),
            window["end"].as_u64().unwrap_or(0),
            window["total"].as_u64().unwrap_or(0)
        );
    }
    let _ = write!(
        out,
        "<p class=\"meta src\">{} chars · <code class=\"digest\">{}</code> · origin {}</p>",
        window["total"].as_u64().unwrap_or(0),
        esc(s(window, "digest").get(..19).unwrap_or("")),
        esc(s(window, "origin"))
    );
    out
}

fn link_list(title: &str, items: &[Value], key: impl Fn(&Value) -> (String, String)) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut out = format!("<h3>{}</h3><ul class=\"rel\">", esc(title));
    for item in items {
        let (address, label) = key(item);
        let _ = write!(out, "<li>{}</li>", address_link(&address, &label));
    }
    out.push_str("</ul>");
    out
}

fn related_html(related: &Answer) -> String {
    let mut out = String::from("<nav class=\"related\" aria-labelledby=\"rel-h\"><h2 id=\"rel-h\">Related</h2>");
    let r = match related {
        Ok(r) => r,
        Err(f) => return out + &failure_box("the related sections", f) + "</nav>",
    };
    let heading = |v: &Value| (s(v, "address").to_string(), s(v, "heading").to_string());
    if r["parent"].is_object() {
        let (address, label) = heading(&r["parent"]);
        let _ = write!(
            out,
            "<h3>Parent</h3><p>{}</p>",
            address_link(&address, &label).replacen("<a ", "<a rel=\"up\" class=\"parent\" ", 1)
        );
    }
    out.push_str(&link_list("Children", arr(r, "children"), heading));
    out.push_str(&link_list("Siblings", arr(r, "siblings"), heading));
    out.push_str(&link_list("Links to", arr(r, "outgoing"), |v| {
        let target = s(&v["target"], "address");
        (
            target.to_string(),
            if target.is_empty() { s(v, "dest").to_string() } else { target.trim_start_matches("doc:").to_string() },
        )
    }));
    out.push_str(&link_list("Linked from", arr(r, "backlinks"), |v| {
        (s(v, "from").to_string(), s(v, "from").trim_start_matches("doc:").to_string())
    }));
    out.push_str("</nav>");
    out
}

fn outline_html(sections: &[Value], current: &str, outline: &Answer) -> String {
    let mut out = String::from("<nav class=\"outline\" aria-labelledby=\"ol-h\"><h2 id=\"ol-h\">Outline</h2>");
    if let Err(f) = outline {
        return out + &failure_box("the outline", f) + "</nav>";
    }
    out.push_str("<ul>");
    for sec in sections.iter().filter(|s| s["level"].as_u64().unwrap_or(0) > 0) {
        let address = s(sec, "address");
        let level = sec["level"].as_u64().unwrap_or(1).min(6);
        let link = address_link(address, s(sec, "heading"));
        let link = if address == current { link.replacen("<a ", "<a aria-current=\"location\" ", 1) } else { link };
        let _ = write!(out, "<li class=\"lv{level}\">{link}</li>");
    }
    out.push_str("</ul></nav>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heading_path_follows_levels() {
        let secs = json!([
            {"level": 0, "heading": "", "address": "doc:d/a.md#"},
            {"level": 1, "heading": "A", "address": "doc:d/a.md#a"},
            {"level": 2, "heading": "B", "address": "doc:d/a.md#b"},
            {"level": 2, "heading": "C", "address": "doc:d/a.md#c"},
            {"level": 3, "heading": "D", "address": "doc:d/a.md#d"},
        ]);
        let path = heading_path(secs.as_array().unwrap(), "doc:d/a.md#d");
        let names: Vec<&str> = path.iter().map(|(h, _)| h.as_str()).collect();
        assert_eq!(names, ["A", "C", "D"]);
    }
}
