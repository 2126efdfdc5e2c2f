//! A pattern's neighbourhood as a small inline SVG: what uses it on the
//! left, the pattern in the middle, what it depends on at the right. The
//! lists beside it say the same for screen readers and keyboards, so the
//! drawing is hidden from them.

use std::fmt::Write;

use serde_json::Value;

use crate::html::{esc, pattern_href, s};

const ROW: usize = 36;
const BOX_W: usize = 210;
const COLS: [usize; 3] = [10, 255, 500];

fn short(label: &str) -> String {
    let label = label.rsplit('/').take(2).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("/");
    if label.chars().count() > 28 { format!("{}…", label.chars().take(27).collect::<String>()) } else { label }
}

fn node(out: &mut String, x: usize, y: usize, label: &str, href: Option<String>, class: &str) {
    if let Some(h) = &href {
        let _ = write!(out, "<a href=\"{}\" tabindex=\"-1\">", esc(h));
    }
    let _ = write!(
        out,
        "<rect class=\"{class}\" x=\"{x}\" y=\"{y}\" width=\"{BOX_W}\" height=\"26\" rx=\"5\"/>\
         <text x=\"{}\" y=\"{}\">{}</text>",
        x + 8,
        y + 17,
        esc(&short(label))
    );
    if href.is_some() {
        out.push_str("</a>");
    }
}

/// The drawing; empty when the pattern has no neighbours.
pub fn svg(center: &str, deps: &[&Value], dependents: &[&str]) -> String {
    if deps.is_empty() && dependents.is_empty() {
        return String::new();
    }
    let rows = deps.len().max(dependents.len()).max(1);
    let height = rows * ROW + 10;
    let cy = (height - 26) / 2;
    let mut out = format!(
        "<svg class=\"graph\" viewBox=\"0 0 720 {height}\" width=\"720\" height=\"{height}\" aria-hidden=\"true\" focusable=\"false\">"
    );
    for (i, d) in dependents.iter().enumerate() {
        let y = 5 + i * ROW;
        let _ =
            write!(out, "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", COLS[0] + BOX_W, y + 13, COLS[1], cy + 13);
        node(&mut out, COLS[0], y, d, Some(pattern_href(d)), "user");
    }
    for (i, d) in deps.iter().enumerate() {
        let y = 5 + i * ROW;
        let _ =
            write!(out, "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", COLS[1] + BOX_W, cy + 13, COLS[2], y + 13);
        let id = s(d, "patternId");
        let label = if s(d, "entry").is_empty() { id } else { s(d, "entry") };
        let indexed = d["indexed"].as_bool() == Some(true);
        node(&mut out, COLS[2], y, label, indexed.then(|| pattern_href(id)), if indexed { "dep" } else { "missing" });
    }
    node(&mut out, COLS[1], cy, center, None, "self");
    out.push_str("</svg>");
    out
}
