//! GitHub-style heading anchors (the github-slugger rules).

/// The anchor GitHub gives a heading with this rendered text: lowercased,
/// every char that is not a letter, mark, number, `_`, `-` or space removed,
/// each space turned into `-`. `fetchJson<T>` → `fetchjsont`.
/// Duplicates (`-1`, `-2`, …) are the caller's business.
pub fn github_anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() || is_mark(c) => Some(c),
            _ => None,
        })
        .collect()
}

/// Combining marks (Unicode category M), the common blocks.
fn is_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x0610..=0x061A | 0x064B..=0x065F
        | 0x0900..=0x0903 | 0x093A..=0x094F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF
        | 0xFE20..=0xFE2F)
}

#[cfg(test)]
mod tests {
    use super::github_anchor;

    #[test]
    fn matches_github() {
        let cases = [
            ("Result Shape", "result-shape"),
            ("Defaults: Default<>", "defaults-default"),
            (
                "Periodic work: polling a data source on a #now/N tick",
                "periodic-work-polling-a-data-source-on-a-nown-tick",
            ),
            ("fetchJson<T>", "fetchjsont"),
            ("wish()", "wish"),
            ("Writable<>", "writable"),
            ("snake_case and kebab-case", "snake_case-and-kebab-case"),
            ("Two  spaces", "two--spaces"),
            ("Émoji 🚀 and Ümlaut", "émoji--and-ümlaut"),
            ("1. Install", "1-install"),
            ("", ""),
        ];
        for (heading, anchor) in cases {
            assert_eq!(github_anchor(heading), anchor, "{heading}");
        }
    }
}
