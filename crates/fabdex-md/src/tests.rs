use super::*;
use proptest::prelude::*;

const DOC: &str = "---\nname: pattern-dev\ndescription: \"Build patterns\"\ntags: [a, b]\n---\n<!-- generated: no -->\nPreamble text with `wish()` and a [link](other.md#result-shape).\n\n# Title\n\nIntro.\n\n```bash\n# not a heading\necho hi\n```\n\n## fetchJson\\<T\\>\n\nSee [ref][r] and `docs/x.md` and `counter/counter.tsx:12-30`.\n\nSetext Heading\n--------------\n\n### Example\n\none\n\n### Example\n\ntwo\n\n[r]: ../y.md#top\n";

#[test]
fn sections_anchors_and_paths() {
    let out = extract(DOC);
    let anchors: Vec<&str> = out.sections.iter().map(|s| s.anchor.as_str()).collect();
    assert_eq!(anchors, ["", "title", "fetchjsont", "setext-heading", "example", "example-1"]);
    let levels: Vec<u8> = out.sections.iter().map(|s| s.level).collect();
    assert_eq!(levels, [0, 1, 2, 2, 3, 3]);
    assert_eq!(out.sections[2].heading, "fetchJson<T>");
    assert_eq!(out.sections[5].heading_path, ["Title", "Setext Heading", "Example"]);
    assert_eq!(out.sections[5].parent, Some(3));
    assert_eq!(out.sections[1].parent, None);
    assert_eq!(out.title.as_deref(), Some("Title"));
    assert_eq!(out.metadata["name"], "pattern-dev");
    assert_eq!(out.metadata["tags"], serde_json::json!(["a", "b"]));
    assert_eq!(out.leading_comment.as_deref(), Some("generated: no"));
    // The `# not a heading` line is code, kept in the Title section.
    let title = &out.sections[1];
    assert_eq!(title.code_blocks.len(), 1);
    assert_eq!(title.code_blocks[0].lang.as_deref(), Some("bash"));
    assert!(DOC[title.byte_start as usize..title.byte_end as usize].contains("# not a heading"));
    assert_eq!(out.sections[0].mentions, ["wish()"]);
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
}

#[test]
fn symbol_names_from_headings_and_definition_tables() {
    for (text, want) in [
        ("wish()", Some("wish")),
        ("`Writable<>`", Some("Writable")),
        ("fetchJson<T>", Some("fetchJson")),
        ("generateObject", Some("generateObject")),
        ("[UI]", Some("UI")),
        ("cf.view", Some("cf.view")),
        ("Overview", None),
        ("Result Shape", None),
        ("Why (not) this", None),
        ("1. Install", None),
    ] {
        assert_eq!(symbol_name(text).as_deref(), want, "{text}");
    }
    let out = extract(
        "# A\n\n## `wish()`\n\n| Name | Does |\n|---|---|\n| `computed()` | derives |\n| `ifElse` | picks |\n| plain | no |\n",
    );
    assert_eq!(out.sections[1].defines, ["wish", "computed", "ifElse"]);
    assert!(out.sections[0].defines.is_empty());
}

#[test]
fn html_anchors_belong_to_their_section() {
    let out = extract("# A\n\n<a id=\"dau\"></a>\n\ntext <a name='x-y'>x</a> <abbr id=\"no\">n</abbr>\n\n# B\n");
    assert_eq!(out.sections[0].html_anchors, ["dau", "x-y"]);
    assert!(out.sections[1].html_anchors.is_empty());
}

#[test]
fn line_numbers_are_one_based_and_inclusive() {
    let out = extract(DOC);
    let lines: Vec<&str> = DOC.lines().collect();
    for s in &out.sections {
        if s.level > 0 {
            assert!(lines[s.line_start as usize - 1].contains(s.heading.trim_matches('`').split('<').next().unwrap()));
        }
    }
    assert_eq!(out.sections[0].line_start, 6, "preamble starts after front matter");
}

#[test]
fn links_of_every_kind() {
    let out = extract(DOC);
    let got: Vec<(LinkKind, &str, u32)> = out.links.iter().map(|l| (l.kind, l.dest.as_str(), l.section)).collect();
    assert_eq!(
        got,
        [
            (LinkKind::Inline, "other.md#result-shape", 0),
            (LinkKind::Reference, "../y.md#top", 2),
            (LinkKind::CodePath, "docs/x.md", 2),
            (LinkKind::FileSpan, "counter/counter.tsx", 2),
        ]
    );
    assert_eq!(out.links[3].lines, Some((12, 30)));
    assert_eq!(out.links[0].text, "link");
}

#[test]
fn front_matter_only_at_byte_zero() {
    let out = extract("\n---\nstatus: historical\n---\n# A\n");
    assert!(out.metadata.is_empty());
    let out = extract("---\nstatus: historical\nsuperseded-by: x.md\n---\n# A\n");
    assert!(fabdex_model::records::is_historical(&out.metadata));
    assert_eq!(out.sections.len(), 1);
    let bad = extract("---\nkey: [unclosed\n---\n# A\n");
    assert!(bad.diagnostics[0].message.contains("front matter is not valid YAML"), "{:?}", bad.diagnostics);
}

#[test]
fn fences_close_only_on_matching_char_and_length() {
    let text = "# A\n\n````md\n```\n# inside\n```\n````\n\n~~~\n```\n# still code\n~~~\n\n# B\n";
    let out = extract(text);
    let headings: Vec<&str> = out.sections.iter().map(|s| s.heading.as_str()).collect();
    assert_eq!(headings, ["A", "B"]);
    assert_eq!(out.sections[0].code_blocks.len(), 2);
    assert!(out.diagnostics.is_empty());
}

#[test]
fn unclosed_fence_is_reported_and_swallows_rest() {
    let text = "# A\n\ntext\n\n```ts\nconst x = 1;\n# Not a heading\n";
    let out = extract(text);
    assert_eq!(out.sections.len(), 1);
    assert_eq!(out.diagnostics.len(), 1);
    assert_eq!(out.diagnostics[0].line, 5);
    assert!(out.diagnostics[0].message.contains("never closed"));
}

#[test]
fn headings_start_at_h2_and_several_h1s() {
    let out = extract("## Deep\n\n### Deeper\n\n# One\n\n## Under one\n\n# Two\n");
    let parents: Vec<Option<u32>> = out.sections.iter().map(|s| s.parent).collect();
    assert_eq!(parents, [None, Some(0), None, Some(2), None]);
    assert_eq!(out.sections[3].heading_path, ["One", "Under one"]);
    assert_eq!(out.title.as_deref(), Some("One"));
}

#[test]
fn no_headings_means_one_preamble() {
    let out = extract("just text\n\nmore\n");
    assert_eq!(out.sections.len(), 1);
    assert_eq!(out.sections[0].anchor, "");
    assert_eq!(out.sections[0].chars, 16);
    assert!(extract("").sections.is_empty());
    assert!(extract("   \n\n").sections.is_empty());
}

#[test]
fn oversized_sections_split_into_parts_that_tile() {
    let para = "word ".repeat(30) + "\n\n";
    let text = format!("# Big\n\n{}# Small\n\nx\n", para.repeat(20));
    let out = extract_with_split(&text, 500);
    let big = &out.sections[0];
    assert!(big.parts.len() >= 6, "{}", big.parts.len());
    assert_eq!(big.parts.first().unwrap().byte_start, big.byte_start);
    assert_eq!(big.parts.last().unwrap().byte_end, big.byte_end);
    for w in big.parts.windows(2) {
        assert_eq!(w[0].byte_end, w[1].byte_start);
    }
    for p in &big.parts {
        assert!(p.chars <= 500);
        assert!(text[..p.byte_end as usize].ends_with("\n\n") || p.byte_end == big.byte_end);
    }
    assert!(out.sections[1].parts.is_empty());
}

#[test]
fn snapshot_of_a_small_document() {
    insta::assert_json_snapshot!("small_document", extract(DOC));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn sections_tile_the_body_and_never_panic(text in "(#{0,3} ?[a-z`*\\[\\]()~<>!-]{0,6}\n?|```\n|~~~\n|---\n|> |  |\n){0,40}") {
        let out = extract_with_split(&text, 40);
        let mut pos = None;
        for s in &out.sections {
            prop_assert!(s.byte_start < s.byte_end);
            prop_assert!(text.is_char_boundary(s.byte_start as usize));
            if let Some(prev) = pos { prop_assert_eq!(prev, s.byte_start); }
            pos = Some(s.byte_end);
            prop_assert_eq!(s.chars as usize, text[s.byte_start as usize..s.byte_end as usize].chars().count());
            if !s.parts.is_empty() {
                prop_assert_eq!(s.parts[0].byte_start, s.byte_start);
                prop_assert_eq!(s.parts.last().unwrap().byte_end, s.byte_end);
            }
        }
        if let Some(end) = pos { prop_assert_eq!(end as usize, text.len()); }
        for l in &out.links { prop_assert!((l.section as usize) < out.sections.len()); }
    }
}
