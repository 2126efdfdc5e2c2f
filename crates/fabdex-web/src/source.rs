//! The source viewer: one bounded `read_source` window of a pattern's file,
//! with a link per line (`#L12`), ranges highlighted by the script
//! (`#L10-L20`), server-side ranges (`?lines=10-20`) and definitions
//! (`?symbol=Name`), and "load more" following the read's `next`.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::answer::{Answer, Chrome};
use crate::html::{answered, arr, enc, esc, file_href, page, pattern_href, s};

/// The most characters one window of the viewer reads.
pub const WINDOW: u64 = 32000;

/// What the viewer was asked to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileRequest {
    pub id: String,
    pub path: String,
    pub lines: Option<(u64, u64)>,
    pub symbol: Option<String>,
    pub offset: Option<u64>,
}

impl FileRequest {
    /// `lines=10-20` (or `10`), `symbol=Name` and `offset=N` from decoded query pairs.
    pub fn with_query<I: IntoIterator<Item = (String, String)>>(mut self, pairs: I) -> FileRequest {
        for (k, v) in pairs {
            match k.as_str() {
                "lines" => {
                    let (a, b) = v.split_once('-').unwrap_or((&v, &v));
                    let parse = |x: &str| x.trim().trim_start_matches('L').parse::<u64>().ok();
                    self.lines = parse(a).zip(parse(b));
                }
                "symbol" if !v.is_empty() => self.symbol = Some(v),
                "offset" => self.offset = v.parse().ok(),
                _ => {}
            }
        }
        self
    }

    /// `read_source`'s input for this request.
    pub fn read_input(&self) -> Value {
        let mut input = json!({"pattern_id": self.id, "path": self.path, "max_chars": WINDOW});
        if let Some((a, b)) = self.lines {
            input["start_line"] = json!(a);
            input["end_line"] = json!(b);
        }
        if let Some(sym) = &self.symbol {
            input["symbol"] = json!(sym);
        }
        if let Some(o) = self.offset {
            input["offset"] = json!(o);
        }
        input
    }

    fn href(&self, offset: Option<u64>) -> String {
        let mut query = Vec::new();
        if let Some((a, b)) = self.lines {
            query.push(format!("lines={a}-{b}"));
        }
        if let Some(sym) = &self.symbol {
            query.push(format!("symbol={}", enc(sym)));
        }
        if let Some(o) = offset {
            query.push(format!("offset={o}"));
        }
        let base = file_href(&self.id, &self.path);
        if query.is_empty() { base } else { format!("{base}?{}", query.join("&")) }
    }
}

/// The viewer page. `files` is `list_pattern_files`'s answer (for the file
/// list and the pattern's name), `read` the window's `read_source` answer.
pub fn page_html(chrome: &Chrome<'_>, req: &FileRequest, files: &Answer, read: &Answer) -> String {
    let mut main = String::new();
    let entry = files.as_ref().ok().map(|f| s(f, "entry")).filter(|e| !e.is_empty()).unwrap_or(&req.id);
    let _ = write!(
        main,
        "<nav class=\"crumbs\" aria-label=\"Breadcrumb\"><a href=\"{}\">{}</a> › <span aria-current=\"page\">{}</span></nav><h1 class=\"file\">{}</h1>",
        esc(&pattern_href(&req.id)),
        esc(entry),
        esc(&req.path),
        esc(&req.path)
    );
    if let Ok(f) = files {
        main.push_str(&file_tabs(req, arr(f, "files")));
    }
    match answered(read, "this file") {
        Ok(window) => main.push_str(&window_html(req, window)),
        Err(html) => main.push_str(&html),
    }
    page(chrome, &req.path, &main)
}

fn file_tabs(req: &FileRequest, files: &[Value]) -> String {
    let mut out = String::from("<nav class=\"filetabs\" aria-label=\"Files\"><ul>");
    for f in files {
        let name = s(f, "name");
        let current = if name == req.path { " aria-current=\"page\"" } else { "" };
        let _ = write!(out, "<li><a href=\"{}\"{current}>{}</a></li>", esc(&file_href(&req.id, name)), esc(name));
    }
    out.push_str("</ul></nav>");
    out
}

/// The window's facts, its lines, and "load more" when it was cut.
fn window_html(req: &FileRequest, w: &Value) -> String {
    let first = w["lines"][0].as_u64().unwrap_or(1);
    let last = w["lines"][1].as_u64().unwrap_or(first);
    let mut out = String::from("<p class=\"meta\">");
    if req.lines.is_some() || req.symbol.is_some() {
        let what = req.symbol.as_deref().map_or(String::new(), |s| format!("<code>{}</code>, ", esc(s)));
        let _ = write!(
            out,
            "{what}lines {first}–{last} · <a href=\"{}#L{first}-L{last}\">show in the whole file</a> · ",
            esc(&file_href(&req.id, &req.path))
        );
    }
    let _ = write!(
        out,
        "chars {}–{} of {} · <code class=\"digest\" title=\"{}\">{}</code> · {}</p>",
        w["offset"].as_u64().unwrap_or(0),
        w["end"].as_u64().unwrap_or(0),
        w["total"].as_u64().unwrap_or(0),
        esc(s(w, "digest")),
        esc(s(w, "digest").get(..19).unwrap_or("")),
        esc(s(w, "origin"))
    );
    for clipped in arr(w, "clipped_lines") {
        let _ = write!(out, "<p class=\"note\">Line {} was cut at the per-line limit.</p>", esc(&clipped.to_string()));
    }
    out.push_str("<div class=\"srcwrap\"><table class=\"src\" id=\"source\"><tbody>");
    out.push_str(&rows(s(w, "text"), first, req.symbol.as_deref()));
    out.push_str("</tbody></table></div>");
    if let Some(next) = w.get("next").and_then(Value::as_str) {
        let offset = next.rsplit_once('@').and_then(|(_, o)| o.parse::<u64>().ok());
        let _ = write!(
            out,
            "<p><a class=\"more\" data-more-rows=\"source\" href=\"{}\">Load more</a> <span class=\"hint\">(the next window of at most {WINDOW} chars)</span></p>",
            esc(&req.href(offset))
        );
    }
    out
}

/// One table row per line, numbered from `first`, each with its anchor.
fn rows(text: &str, first: u64, symbol: Option<&str>) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let body = text.strip_suffix('\n').unwrap_or(text);
    for (i, line) in body.split('\n').enumerate() {
        let n = first + i as u64;
        let anchor = match symbol {
            Some(sym) if i == 0 => format!("<span id=\"{}\"></span>", esc(sym)),
            _ => String::new(),
        };
        let _ = write!(
            out,
            "<tr id=\"L{n}\"><td class=\"ln\"><a href=\"#L{n}\" aria-label=\"line {n}\">{n}</a></td><td class=\"code\">{anchor}<code>{}</code></td></tr>",
            esc(line)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_become_bounded_reads() {
        let req = FileRequest { id: "abc".into(), path: "a/b.ts".into(), ..FileRequest::default() };
        let req = req.with_query([("lines".to_string(), "3-6".to_string())]);
        assert_eq!(req.lines, Some((3, 6)));
        let input = req.read_input();
        assert_eq!((input["start_line"].as_u64(), input["end_line"].as_u64()), (Some(3), Some(6)));
        assert_eq!(req.href(Some(40)), "/file/abc/a/b.ts?lines=3-6&offset=40");
    }

    #[test]
    fn lines_are_numbered_and_escaped() {
        let html = rows("a <b>\nc\n", 7, None);
        assert!(html.contains("<tr id=\"L7\">") && html.contains("<tr id=\"L8\">") && !html.contains("L9"), "{html}");
        assert!(html.contains("a &lt;b&gt;"), "{html}");
    }
}
