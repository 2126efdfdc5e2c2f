//! Escaping, links between pages, and the page shell every page shares.

use std::fmt::Write;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use crate::answer::{Answer, Chrome, Failure};

/// Text as HTML: `&`, `<`, `>`, `"` and `'` escaped, so index text can go
/// in element content and in quoted attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Characters kept as they are in one path segment of a page URL.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// Characters kept in a query value (a space becomes `%20`).
const QUERY: &AsciiSet = &SEGMENT.remove(b'/').remove(b':');

/// One query-string value, percent-encoded.
pub fn enc(value: &str) -> String {
    utf8_percent_encode(value, QUERY).to_string()
}

/// A slash-separated path, each segment percent-encoded.
pub fn enc_path(path: &str) -> String {
    path.split('/').map(|s| utf8_percent_encode(s, SEGMENT).to_string()).collect::<Vec<_>>().join("/")
}

/// The page of a pattern.
pub fn pattern_href(id: &str) -> String {
    format!("/pattern/{}", enc_path(id))
}

/// The source viewer of one file of a pattern.
pub fn file_href(id: &str, path: &str) -> String {
    format!("/file/{}/{}", enc_path(id), enc_path(path))
}

/// The page of a docs file (`root/path`), or of one of its sections.
pub fn doc_href(file: &str, anchor: Option<&str>) -> String {
    match anchor {
        Some(a) => format!("/doc/{}?section={}", enc_path(file), enc(a)),
        None => format!("/doc/{}", enc_path(file)),
    }
}

/// The page that shows an address: `doc:root/path#anchor` → the section,
/// `pattern:ID/path[:Lx-Ly]` → the source viewer, `pattern:ID` → the pattern.
pub fn address_href(address: &str) -> Option<String> {
    if let Some(rest) = address.strip_prefix("doc:") {
        let rest = rest.split('@').next().unwrap_or(rest);
        return Some(match rest.split_once('#') {
            Some((file, anchor)) => doc_href(file, Some(anchor)),
            None => doc_href(rest, None),
        });
    }
    let rest = address.strip_prefix("pattern:")?;
    let rest = rest.split('@').next().unwrap_or(rest);
    let Some((id, path)) = rest.split_once('/') else {
        return Some(pattern_href(rest));
    };
    if let Some((path, symbol)) = path.split_once('#') {
        return Some(format!("{}?symbol={}", file_href(id, path), enc(symbol)));
    }
    match path.rsplit_once(":L") {
        Some((path, lines)) => Some(format!("{}?lines={}", file_href(id, path), enc(&lines.replace("-L", "-")))),
        None => Some(file_href(id, path)),
    }
}

/// An address as a link to the page that shows it (plain text when none does).
pub fn address_link(address: &str, label: &str) -> String {
    match address_href(address) {
        Some(href) => format!("<a href=\"{}\">{}</a>", esc(&href), esc(label)),
        None => esc(label),
    }
}

/// A string field of a JSON answer ("" when absent).
pub fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An array field of a JSON answer (empty when absent).
pub fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A failed or withheld answer, shown in place of what it would have shown.
/// A `denied` answer shows as withheld and carries no text of the source.
pub fn failure_box(what: &str, failure: &Failure) -> String {
    if failure.kind == "denied" {
        format!(
            "<div class=\"withheld\" role=\"note\"><strong>Withheld</strong> — the release policy withholds {}: {}</div>",
            esc(what),
            esc(&failure.message)
        )
    } else {
        format!(
            "<div class=\"error\" role=\"alert\"><strong>{}</strong> ({}): {}</div>",
            esc(what),
            esc(&failure.kind),
            esc(&failure.message)
        )
    }
}

/// The answer's value, or the box that says why there is none.
pub fn answered<'a>(answer: &'a Answer, what: &str) -> Result<&'a Value, String> {
    answer.as_ref().map_err(|f| failure_box(what, f))
}

/// A whole page: head, header with the search box, `main`, and the run's
/// provenance footer when the server records a run.
pub fn page(chrome: &Chrome<'_>, title: &str, main: &str) -> String {
    let mut out = String::with_capacity(main.len() + 4096);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · fabdex</title><link rel=\"stylesheet\" href=\"/assets/style.css\">\
         <script src=\"/assets/app.js\" defer></script></head><body>\
         <a class=\"skip\" href=\"#main\">Skip to content</a>\
         <header class=\"top\"><a class=\"brand\" href=\"/\">fabdex</a>\
         <form class=\"topsearch\" action=\"/search\" method=\"get\" role=\"search\">\
         <label for=\"q\" class=\"sr\">Search docs and patterns</label>\
         <input id=\"q\" name=\"q\" type=\"search\" value=\"{}\" placeholder=\"Search docs and patterns (press /)\" autocomplete=\"off\">\
         <button type=\"submit\">Search</button></form>{}</header>\
         <main id=\"main\" tabindex=\"-1\">{}</main>{}</body></html>",
        esc(title),
        esc(chrome.query),
        if chrome.run_id.is_some() { "<a class=\"runlink\" href=\"/run\">Run</a>" } else { "" },
        main,
        footer(chrome),
    );
    out
}

/// The provenance footer: the run and its exposure, or nothing without a run.
pub fn footer(chrome: &Chrome<'_>) -> String {
    let Some(run) = chrome.run_id else {
        return String::new();
    };
    let mut out = format!(
        "<footer class=\"prov\" aria-label=\"Provenance\">Recording in run <a href=\"/run\"><code>{}</code></a>",
        esc(run)
    );
    match &chrome.exposure {
        Some(Ok(e)) => out.push_str(&exposure_counts(e)),
        Some(Err(f)) => out.push_str(&failure_box("the run's exposure", f)),
        None => {}
    }
    out.push_str("</footer>");
    out
}

fn counts(v: &Value) -> Vec<(String, u64)> {
    v.as_object().map_or(Vec::new(), |m| m.iter().map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0))).collect())
}

fn exposure_counts(e: &Value) -> String {
    let released = counts(&e["released"]);
    let withheld = counts(&e["withheld"]);
    if released.is_empty() && withheld.is_empty() {
        return " · nothing read yet".into();
    }
    let mut parts: Vec<String> =
        released.iter().map(|(o, n)| format!("<span class=\"rel\">{} released from {}</span>", n, esc(o))).collect();
    parts.extend(withheld.iter().map(|(o, n)| format!("<span class=\"wh\">{} withheld from {}</span>", n, esc(o))));
    format!(" · {}", parts.join(", "))
}

/// A labelled definition list row.
pub fn row(label: &str, value_html: &str) -> String {
    format!("<dt>{}</dt><dd>{}</dd>", esc(label), value_html)
}

/// Bytes as `1.2 KB`.
pub fn size(bytes: u64) -> String {
    if bytes < 1024 { format!("{bytes} B") } else { format!("{:.1} KB", bytes as f64 / 1024.0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(esc("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    }

    #[test]
    fn addresses_map_to_pages() {
        assert_eq!(address_href("doc:docs/a b.md#x-y").unwrap(), "/doc/docs/a%20b.md?section=x-y");
        assert_eq!(address_href("doc:docs/a.md").unwrap(), "/doc/docs/a.md");
        assert_eq!(address_href("pattern:abc").unwrap(), "/pattern/abc");
        assert_eq!(address_href("pattern:abc/mail/t.ts").unwrap(), "/file/abc/mail/t.ts");
        assert_eq!(address_href("pattern:abc/mail/t.ts:L3-L6").unwrap(), "/file/abc/mail/t.ts?lines=3-6");
        assert_eq!(address_href("pattern:abc/t.ts#Foo").unwrap(), "/file/abc/t.ts?symbol=Foo");
        assert_eq!(address_href("pattern:abc/t.ts@300").unwrap(), "/file/abc/t.ts");
        assert_eq!(address_href("http://x"), None);
    }
}
