//! The docs table on disk (`tables/docs.json`): the table as JSON, and the
//! checks a decoded table must pass before the readers index with it.
//!
//! A binary layout (bitcode) was tried at stop 32 and withdrawn: its decoder
//! read past the end of small strings under AddressSanitizer in the `kit`
//! and `tool_call` fuzz targets (docs/performance.md).

use fabdex_model::records::DocsTable;

/// Where the table lives in a snapshot.
pub const PATH: &str = "tables/docs.json";

/// The table's bytes as written to [`PATH`].
pub fn encode(docs: &DocsTable) -> Vec<u8> {
    serde_json::to_vec(docs).expect("the docs table serializes")
}

/// The table back from [`encode`]'s bytes, or what is wrong with them.
pub fn decode(bytes: &[u8]) -> Result<DocsTable, String> {
    let table: DocsTable = serde_json::from_slice(bytes).map_err(|e| format!("cannot decode the docs table: {e}"))?;
    check_references(&table)?;
    Ok(table)
}

/// The row numbers the query layer indexes with are in range, so that a
/// table that decodes is one the readers can use without panicking.
fn check_references(t: &DocsTable) -> Result<(), String> {
    let (files, sections) = (t.files.len() as u64, t.sections.len() as u64);
    for (i, f) in t.files.iter().enumerate() {
        if u64::from(f.first_section) + u64::from(f.section_count) > sections {
            return Err(format!("file row {i} names sections past the table's {sections}"));
        }
    }
    for (i, s) in t.sections.iter().enumerate() {
        if u64::from(s.file) >= files || s.parent_row.is_some_and(|p| u64::from(p) >= sections) {
            return Err(format!("section row {i} names a file or parent that is not in the table"));
        }
    }
    for (i, l) in t.links.iter().enumerate() {
        if u64::from(l.from) >= sections || l.to_section.is_some_and(|s| u64::from(s) >= sections) {
            return Err(format!("link row {i} names a section that is not in the table"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdex_model::records::{
        Diagnostic, DocFileRow, LinkKind, LinkRow, LinkTarget, MdSection, RootKind, SectionRow,
    };
    use std::collections::BTreeMap;

    fn table() -> DocsTable {
        let mut metadata = BTreeMap::new();
        metadata.insert("status".to_string(), serde_json::json!("historical"));
        metadata.insert("tags".to_string(), serde_json::json!(["a", {"b": 1.5}]));
        let file = |path: &str, metadata: BTreeMap<String, serde_json::Value>, first: u32| DocFileRow {
            root: "docs".into(),
            path: path.into(),
            origin: "local".into(),
            kind: RootKind::Docs,
            digest: "blake3:00".into(),
            bytes: 10,
            chars: 9,
            lines: 2,
            title: Some("T".into()),
            metadata,
            leading_comment: None,
            historical: false,
            diagnostics: vec![Diagnostic { line: 1, column: 2, message: "m".into() }],
            first_section: first,
            section_count: 1,
        };
        let section = |address: &str, file: u32, parent_row: Option<u32>| SectionRow {
            address: address.into(),
            file,
            section: MdSection {
                anchor: "a".into(),
                heading: "A".into(),
                level: 2,
                heading_path: vec!["A".into()],
                parent: None,
                line_start: 1,
                line_end: 2,
                byte_start: 0,
                byte_end: 10,
                chars: 9,
                parts: vec![],
                code_blocks: vec![],
                mentions: ["wish", "wish()"].into_iter().collect(),
                defines: vec![],
                html_anchors: vec![],
            },
            parent_row,
        };
        DocsTable {
            files: vec![file("a.md", metadata, 0), file("b.md", BTreeMap::new(), 1)],
            sections: vec![section("doc:docs/a.md#a", 0, None), section("doc:docs/b.md#a", 1, Some(0))],
            links: vec![LinkRow {
                from: 1,
                kind: LinkKind::Inline,
                dest: "a.md#a".into(),
                text: "x".into(),
                line: 1,
                lines: Some((1, 2)),
                target: LinkTarget::File { path: "a.md".into(), address: None, indexed: true },
                to_section: Some(0),
            }],
        }
    }

    #[test]
    fn a_table_round_trips_with_its_front_matter() {
        let t = table();
        assert_eq!(decode(&encode(&t)).unwrap(), t);
    }

    #[test]
    fn damaged_bytes_are_an_error_not_a_panic() {
        let bytes = encode(&table());
        assert!(decode(b"{}").unwrap_err().contains("docs table"));
        for cut in [0, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
    }

    proptest::proptest! {
        /// Any bytes after the magic decode to a table or to an error, never a panic,
        /// and one flipped byte of a real table is caught or decodes to a valid one.
        #[test]
        fn arbitrary_bytes_never_panic(body in proptest::collection::vec(proptest::num::u8::ANY, 0..512), flip in 0usize..400) {
            let _ = decode(&body);
            let mut real = encode(&table());
            let at = flip % real.len();
            real[at] ^= 0x5a;
            if let Ok(t) = decode(&real) {
                proptest::prop_assert!(check_references(&t).is_ok());
            }
        }
    }

    #[test]
    fn rows_pointing_outside_the_table_are_refused() {
        let mut t = table();
        t.links[0].to_section = Some(7);
        assert!(decode(&encode(&t)).unwrap_err().contains("link row 0"), "links");
        let mut t = table();
        t.sections[1].file = 2;
        assert!(decode(&encode(&t)).unwrap_err().contains("section row 1"), "sections");
        let mut t = table();
        t.files[1].section_count = 5;
        assert!(decode(&encode(&t)).unwrap_err().contains("file row 1"), "files");
    }
}
