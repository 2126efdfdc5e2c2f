//! # fabdex-web
//!
//! The pages of the contract browser that `fabdex serve --http` serves at
//! `/`: a docs.rs-like view of one snapshot for pattern authors (search,
//! pattern pages with contracts, a bounded source viewer, doc sections).
//!
//! This crate only renders. Every page function is pure: it takes the JSON
//! answers of the tool registry's tools (`search_docs`, `search_patterns`,
//! `inspect_pattern`, `pattern_contract`, `pattern_deps`, `list_pattern_files`,
//! `read_source`, `read`, `outline`, `related`, `ledger_show`,
//! `ledger_exposure`), exactly as `POST /v1/tools/{name}` returns them, or the
//! tool's error, and returns an HTML string. `fabdex-serve` calls the tools
//! through the same registry path as its JSON API, so the pages cannot show
//! anything the API would not (same release policy, same run ledger).
//!
//! Everything taken from the index is untrusted: it is HTML-escaped, and
//! Markdown is rendered by [`markdown::render`], which drops raw HTML and
//! only links to `http(s)`, page-relative or `mailto:` targets. A `denied`
//! answer shows as *withheld*, with no text.
//!
//! The CSS and the small script are embedded ([`asset`]); there is no build
//! step and no CDN. Pages read without JavaScript (the contract shows both
//! views, "load more" is a link); the script adds keyboard shortcuts (`/`
//! focuses search, `j`/`k` move through hits), the TypeScript / JSON Schema
//! toggle, line-range highlighting (`#L10-L20`) and loading more in place.

mod answer;
pub mod html;
pub mod markdown;
pub mod pattern;
mod pattern_graph;
pub mod provenance;
pub mod search;
pub mod section;
pub mod source;

pub use answer::{Answer, Chrome, Failure};

/// An embedded asset by file name: its content type and body.
pub fn asset(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "style.css" => Some(("text/css; charset=utf-8", include_str!("../assets/style.css"))),
        "app.js" => Some(("text/javascript; charset=utf-8", include_str!("../assets/app.js"))),
        _ => None,
    }
}

/// A page for an error the server answers itself (unknown page, bad address).
pub fn error_page(chrome: &Chrome<'_>, title: &str, message: &str) -> String {
    let main = format!("<h1>{}</h1><p class=\"error\">{}</p>", html::esc(title), html::esc(message));
    html::page(chrome, title, &main)
}

/// The page asking for the server's token (stored as a cookie by `POST /login`).
pub fn login_page(next: &str, failed: bool) -> String {
    let note = if failed { "<p class=\"error\" role=\"alert\">That token is not this server's.</p>" } else { "" };
    let main = format!(
        "<h1>Sign in</h1><p>This server needs its token (<code>$FABDEX_SERVE_TOKEN</code>). \
         It is kept in a cookie for this site only.</p>{note}\
         <form class=\"login\" method=\"post\" action=\"/login\">\
         <input type=\"hidden\" name=\"next\" value=\"{}\">\
         <label for=\"token\">Token</label> <input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"current-password\" required>\
         <button type=\"submit\">Sign in</button></form>",
        html::esc(next)
    );
    html::page(&Chrome::default(), "Sign in", &main)
}
