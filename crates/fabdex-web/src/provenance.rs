//! Provenance: with `fabdex serve --run`, every page's footer says what the
//! run has read (`ledger_exposure`; [`crate::html::footer`]), and `/run` lists its records
//! (`ledger_show`): each call and each item, released or withheld. Records
//! hold addresses and digests, never text.

use std::fmt::Write;

use serde_json::Value;

use crate::answer::{Answer, Chrome};
use crate::html::{address_link, answered, arr, esc, page, s};

/// The most records `/run` lists (newest first).
pub const MAX_RECORDS: usize = 200;

/// The `/run` page: the run's records, newest first.
pub fn page_html(chrome: &Chrome<'_>, show: &Answer) -> String {
    let mut main = String::from("<h1>What this run has read</h1>");
    if chrome.run_id.is_none() {
        main.push_str("<p class=\"hint\">This server records no run. Start it with <code>fabdex serve --http ADDR --run RUN</code> to keep a ledger of what the pages read.</p>");
        return page(chrome, "Run", &main);
    }
    let contents = match answered(show, "the run's records") {
        Ok(c) => c,
        Err(html) => return page(chrome, "Run", &(main + &html)),
    };
    let records = arr(contents, "records");
    let _ = write!(
        main,
        "<p class=\"meta\">{} records in <code>{}</code>{}</p>",
        records.len(),
        esc(s(contents, "run")),
        if records.len() > MAX_RECORDS { format!(" (the newest {MAX_RECORDS} shown)") } else { String::new() }
    );
    main.push_str("<ol class=\"records\" reversed>");
    for record in records.iter().rev().take(MAX_RECORDS) {
        main.push_str(&record_html(record));
    }
    main.push_str("</ol>");
    page(chrome, "Run", &main)
}

fn record_html(r: &Value) -> String {
    let mut out = format!(
        "<li class=\"record\"><span class=\"badge\">{}</span> <time>{}</time> <span class=\"src\">policy {}</span><ul>",
        esc(s(r, "tool")),
        esc(s(r, "time")),
        esc(s(r, "policy"))
    );
    for item in arr(r, "items") {
        let address = s(item, "address");
        let status = if item["released"].as_bool() == Some(true) {
            "<span class=\"badge rel\">released</span>".to_string()
        } else {
            format!("<span class=\"badge wh\">withheld</span> <span class=\"src\">{}</span>", esc(s(item, "denied_by")))
        };
        let _ = write!(
            out,
            "<li>{status} {} <span class=\"src\">{} · {}</span></li>",
            address_link(address, address),
            esc(s(item, "origin")),
            esc(s(item, "kind"))
        );
    }
    out.push_str("</ul></li>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::footer;
    use serde_json::json;

    #[test]
    fn the_footer_counts_released_and_withheld() {
        let chrome = Chrome {
            query: "",
            run_id: Some("run-1"),
            exposure: Some(Ok(json!({"released": {"docs": 2}, "withheld": {"remote-index": 1}}))),
        };
        let html = footer(&chrome);
        assert!(html.contains("2 released from docs") && html.contains("1 withheld from remote-index"), "{html}");
        assert_eq!(footer(&Chrome::default()), "");
    }
}
