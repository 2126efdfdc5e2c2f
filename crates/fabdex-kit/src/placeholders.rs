//! The placeholder detector: text that stands in for something the author
//! still has to supply. A kit with any of these is not complete.

use std::sync::LazyLock;

use regex::Regex;

struct Detector {
    what: &'static str,
    re: Regex,
}

static DETECTORS: LazyLock<Vec<Detector>> = LazyLock::new(|| {
    let d = |what, re: &str| Detector { what, re: Regex::new(re).expect("placeholder regexes compile") };
    vec![
        d("a TODO/FIXME/XXX/TBD marker", r"\b(TODO|FIXME|XXX|TBD)\b"),
        d("`xxx` filler", r"\bx{3,}\b"),
        d(
            "a `<…>` slot",
            r"<\s*(\.\.\.|…)\s*>|<[^<>\n]*\b(?i:your|insert|placeholder|fill in|replace with)\b[^<>\n]*>",
        ),
        d("a `your-…` value", r"\b[Yy]our[-_][A-Za-z]|\bYOUR_[A-Z]"),
        d(
            "an elided `...` body",
            r"\{\s*(\.\.\.|…)\s*\}|^\s*(\.\.\.|…)\s*$|//\s*(\.\.\.|…)\s*$|/\*\s*(\.\.\.|…)\s*\*/|=>\s*(\.\.\.|…)\s*[;,)]?\s*$|\(\s*(\.\.\.|…)\s*\)",
        ),
        d(
            "an invented pattern id",
            r#"(?i)"patternId"\s*:\s*"(?:|id|abc\d*|123\d*|example[-_]?id|pattern[-_]?id|PATTERN_ID|<[^"]*>)""#,
        ),
    ]
});

/// `cf:pattern:` references, whose ids are 43 base64url chars.
static CF_PATTERN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"cf:pattern:([A-Za-z0-9_-]*)").expect("regex compiles"));

/// Every placeholder in `text`: what it is, and its 1-based line.
pub fn placeholders(text: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for c in CF_PATTERN.captures_iter(line) {
            if c[1].len() != 43 {
                out.push((format!("an invented pattern id: `{}` (ids are 43 base64url chars)", &c[0]), i as u32 + 1));
            }
        }
        for d in DETECTORS.iter() {
            if let Some(m) = d.re.find(line) {
                out.push((format!("{}: `{}`", d.what, m.as_str().trim()), i as u32 + 1));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_kind_and_leaves_real_code_alone() {
        let cases = [
            ("// TODO: wire the reader", "TODO"),
            ("const key = \"xxx\";", "xxx"),
            ("pass <your mail handle> here", "slot"),
            ("<...>", "slot"),
            ("token: \"your-token\"", "your-"),
            ("const f = () => { ... };", "elided"),
            ("  ...", "elided"),
            ("import X from \"cf:pattern:abc123\";", "invented"),
            ("{\"patternId\": \"PATTERN_ID\"}", "invented"),
        ];
        for (text, what) in cases {
            let found = placeholders(text);
            assert!(found.iter().any(|(w, _)| w.contains(what)), "{text}: {found:?}");
        }
        let real = "import MailReader from \"cf:pattern:T543wtqDml66ODwjtMbBqtK8YqyhYK60bZMbhZFNogc\";\n\
                    import A from \"cf:pattern:NaKN0VjZq8rMPO0qCxGXTnNhjUFh0cZcYZD2d2dQz-M\";\n\
                    const all = [...a, ...b];\nreturn <MessageList {...props} messages={r.messages} />;\n\
                    const s = `${x}...`;\n// Your inbox, newest first.\n";
        assert_eq!(placeholders(real), vec![], "spreads, JSX, real ids and prose are not placeholders");
    }
}
