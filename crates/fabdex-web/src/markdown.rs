//! Markdown from the index as safe HTML: every text escaped, raw HTML shown
//! as text, images as their alt text, and links either to `http(s)`/`mailto:`
//! targets or rewritten to the doc page they point at.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::html::{doc_href, esc};

/// Render `text`, a section or file of the docs file `file` (`root/path`),
/// whose relative links resolve against that file.
pub fn render(text: &str, file: &str) -> String {
    render_body(text, file, false)
}

/// Like [`render`], leaving out a heading the text starts with (a section
/// page shows it as the page's title).
pub fn render_body(text: &str, file: &str, skip_leading_heading: bool) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut out = String::with_capacity(text.len() * 3 / 2);
    let mut state = State::default();
    let mut events = Parser::new_ext(text, options).peekable();
    if skip_leading_heading && matches!(events.peek(), Some(Event::Start(Tag::Heading { .. }))) {
        for event in events.by_ref() {
            if matches!(event, Event::End(TagEnd::Heading(_))) {
                break;
            }
        }
    }
    for event in events {
        match event {
            Event::Start(tag) => state.start(&mut out, tag, file),
            Event::End(tag) => state.end(&mut out, tag),
            Event::Text(t) => out.push_str(&esc(&t)),
            Event::Code(t) => {
                out.push_str("<code>");
                out.push_str(&esc(&t));
                out.push_str("</code>");
            }
            Event::Html(t) | Event::InlineHtml(t) if state.image == 0 => {
                out.push_str("<code class=\"rawhtml\">");
                out.push_str(&esc(&t));
                out.push_str("</code>");
            }
            Event::SoftBreak => out.push('\n'),
            Event::HardBreak => out.push_str("<br>"),
            Event::Rule => out.push_str("<hr>"),
            Event::TaskListMarker(done) => out.push_str(if done { "☑ " } else { "☐ " }),
            Event::InlineMath(t) | Event::DisplayMath(t) | Event::FootnoteReference(t) => out.push_str(&esc(&t)),
            Event::Html(_) | Event::InlineHtml(_) => {}
        }
    }
    out
}

#[derive(Default)]
struct State {
    /// Inside an image: its text is the alt text, shown as text.
    image: usize,
    /// Closing tags of the open links (`</a>` or `</span>`).
    links: Vec<&'static str>,
    alignments: Vec<Alignment>,
    cell: usize,
    in_head: bool,
}

fn heading(level: HeadingLevel) -> usize {
    // The page's own title is the h1: the section's headings start at h2.
    (level as usize + 1).min(6)
}

impl State {
    fn start(&mut self, out: &mut String, tag: Tag<'_>, file: &str) {
        match tag {
            Tag::Paragraph => out.push_str("<p>"),
            Tag::Heading { level, .. } => out.push_str(&format!("<h{}>", heading(level))),
            Tag::BlockQuote(_) => out.push_str("<blockquote>"),
            Tag::CodeBlock(CodeBlockKind::Fenced(lang)) if !lang.is_empty() => {
                let lang = lang.split_whitespace().next().unwrap_or("");
                out.push_str(&format!("<pre><code class=\"language-{}\">", esc(lang)));
            }
            Tag::CodeBlock(_) => out.push_str("<pre><code>"),
            Tag::List(Some(1)) => out.push_str("<ol>"),
            Tag::List(Some(n)) => out.push_str(&format!("<ol start=\"{n}\">")),
            Tag::List(None) => out.push_str("<ul>"),
            Tag::Item => out.push_str("<li>"),
            Tag::Table(alignments) => {
                self.alignments = alignments;
                out.push_str("<div class=\"tablewrap\"><table>");
            }
            Tag::TableHead => {
                self.in_head = true;
                self.cell = 0;
                out.push_str("<thead><tr>");
            }
            Tag::TableRow => {
                self.cell = 0;
                out.push_str("<tr>");
            }
            Tag::TableCell => {
                let cell = if self.in_head { "th" } else { "td" };
                let align = match self.alignments.get(self.cell) {
                    Some(Alignment::Center) => " class=\"c\"",
                    Some(Alignment::Right) => " class=\"r\"",
                    _ => "",
                };
                out.push_str(&format!("<{cell}{align}>"));
            }
            Tag::Emphasis => out.push_str("<em>"),
            Tag::Strong => out.push_str("<strong>"),
            Tag::Strikethrough => out.push_str("<del>"),
            Tag::Link { dest_url, title, .. } => self.link(out, &dest_url, &title, file),
            Tag::Image { .. } => {
                self.image += 1;
                out.push_str("<span class=\"img\">[image: ");
            }
            _ => {}
        }
    }

    fn link(&mut self, out: &mut String, dest: &str, title: &str, file: &str) {
        match link_target(dest, file) {
            Some(href) => {
                let external = href.starts_with("http");
                out.push_str(&format!(
                    "<a href=\"{}\"{}{}>",
                    esc(&href),
                    if title.is_empty() { String::new() } else { format!(" title=\"{}\"", esc(title)) },
                    if external { " rel=\"noopener noreferrer nofollow\"" } else { "" }
                ));
                self.links.push("</a>");
            }
            None => {
                out.push_str(&format!("<span class=\"deadlink\" title=\"{}\">", esc(dest)));
                self.links.push("</span>");
            }
        }
    }

    fn end(&mut self, out: &mut String, tag: TagEnd) {
        let close: String = match tag {
            TagEnd::Paragraph => "</p>".into(),
            TagEnd::Heading(level) => format!("</h{}>", heading(level)),
            TagEnd::BlockQuote(_) => "</blockquote>".into(),
            TagEnd::CodeBlock => "</code></pre>".into(),
            TagEnd::List(true) => "</ol>".into(),
            TagEnd::List(false) => "</ul>".into(),
            TagEnd::Item => "</li>".into(),
            TagEnd::Table => "</tbody></table></div>".into(),
            TagEnd::TableHead => {
                self.in_head = false;
                "</tr></thead><tbody>".into()
            }
            TagEnd::TableRow => "</tr>".into(),
            TagEnd::TableCell => {
                self.cell += 1;
                if self.in_head { "</th>" } else { "</td>" }.into()
            }
            TagEnd::Emphasis => "</em>".into(),
            TagEnd::Strong => "</strong>".into(),
            TagEnd::Strikethrough => "</del>".into(),
            TagEnd::Link => self.links.pop().unwrap_or("").into(),
            TagEnd::Image => {
                self.image = self.image.saturating_sub(1);
                "]</span>".into()
            }
            _ => String::new(),
        };
        out.push_str(&close);
    }
}

/// Where a link of `file` goes: external `http(s)`/`mailto:` targets as
/// they are, Markdown files and in-file anchors to their doc pages; `None`
/// for anything else (other schemes, non-Markdown files).
pub fn link_target(dest: &str, file: &str) -> Option<String> {
    let lower = dest.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("mailto:") {
        return Some(dest.to_string());
    }
    if lower.contains(':') {
        return None;
    }
    let (path, anchor) = match dest.split_once('#') {
        Some((p, a)) => (p, Some(a).filter(|a| !a.is_empty())),
        None => (dest, None),
    };
    if path.is_empty() {
        return Some(doc_href(file, anchor));
    }
    if !path.ends_with(".md") {
        return None;
    }
    Some(doc_href(&resolve(file, path)?, anchor))
}

/// `rel` resolved against the folder of `file` (`root/dir/file.md`), never
/// above the root.
fn resolve(file: &str, rel: &str) -> Option<String> {
    let root = file.split('/').next()?;
    let mut parts: Vec<&str> = file.split('/').collect();
    parts.pop();
    if rel.starts_with('/') {
        parts.truncate(1);
    }
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." if parts.len() > 1 => {
                parts.pop();
            }
            ".." => return None,
            s => parts.push(s),
        }
    }
    (parts.first() == Some(&root)).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_and_scripts_are_text() {
        let html = render("Hi <script>alert(1)</script>\n\n<div onclick=x>y</div>\n", "docs/a.md");
        assert!(!html.contains("<script") && !html.contains("<div"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn links_resolve_to_doc_pages_or_are_dropped() {
        let html = render("[a](../c/wish.md#result-shape) [b](javascript:alert(1)) [c](https://x.org)", "docs/x/y.md");
        assert!(html.contains("href=\"/doc/docs/c/wish.md?section=result-shape\""), "{html}");
        assert!(!html.contains("href=\"javascript"), "{html}");
        assert!(html.contains("href=\"https://x.org\" rel=\"noopener noreferrer nofollow\""), "{html}");
        assert_eq!(link_target("../../../etc.md", "docs/a.md"), None);
        assert_eq!(link_target("#x", "docs/a.md").unwrap(), "/doc/docs/a.md?section=x");
    }

    #[test]
    fn a_leading_heading_can_be_left_out() {
        assert_eq!(render_body("## Title\n\nText", "d/a.md", true), "<p>Text</p>");
        assert_eq!(render_body("Text\n\n## Later", "d/a.md", true), "<p>Text</p><h3>Later</h3>");
    }

    #[test]
    fn tables_code_and_images() {
        let html =
            render("| a | b |\n|---|--:|\n| `x` | y |\n\n```ts\nlet a = 1 < 2;\n```\n\n![alt \"q\"](i.png)", "d/a.md");
        assert!(
            html.contains("<thead><tr><th>a</th><th class=\"r\">b</th></tr></thead><tbody><tr><td><code>x</code></td>")
        );
        assert!(html.contains("<pre><code class=\"language-ts\">let a = 1 &lt; 2;"), "{html}");
        assert!(html.contains("[image: alt &quot;q&quot;]") && !html.contains("<img"), "{html}");
    }
}
