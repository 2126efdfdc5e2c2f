//! The docs table on disk (`tables/docs.rows`, format 4), laid out so that
//! opening it parses almost nothing: every command reads this table, and on
//! labs it is 9 MB of rows, which took 30 ms to parse whole as one JSON
//! document (format 3) when an `open` needs one row.
//!
//! The file holds the file rows as one JSON array (670 on labs, parsed on
//! open), then columns: per section the rows it points at (its file, its
//! parent), its address and the symbols it defines; per search unit its
//! section, part and byte range; per link the sections it joins. The
//! columns are all that the navigation maps, the symbol table and the
//! ranking of every unit need, and they are checked when the table is
//! opened, so a row number a reader indexes with is always in range. Each
//! section and link row follows as its own JSON object, decoded when first
//! used ([`Rows`]): an `open` decodes one, a search the rows of its hits.
//! A decoded row's row numbers are taken from the checked columns.
//!
//! A binary layout of the whole table (bitcode) was tried at stop 32 and
//! withdrawn: its decoder read past the end of small strings under
//! AddressSanitizer in the `kit` and `tool_call` fuzz targets. This layout
//! is read with safe slicing and `serde_json` only.
//!
//! Layout (integers little-endian; "pieces" are `count × u32` ends, then
//! `u64 n` and `n` bytes holding the pieces back to back):
//!
//! ```text
//! "FDXROWS1"
//! u64 n, n bytes        the file rows: one JSON array of DocFileRow
//! u32 S                 sections; then S × (u32 file, u32 parent or 0xFFFF_FFFF)
//! S pieces              each section's address (UTF-8)
//! S pieces              the symbols each section defines, newline-joined (UTF-8)
//! S pieces              each section's row: a JSON SectionRow
//! u32 U                 units; then U × (u32 section, u32 part or 0, u64 byte_start, u64 byte_end, u64 chars)
//! U × (u64 key, u32 unit) the units by key ([`unit_key`] of the unit's address), in key order
//! u32 L                 links; then L × (u32 from, u32 to section or 0xFFFF_FFFF)
//! L pieces              each link's row: a JSON LinkRow
//! ```

use std::sync::Arc;

use rayon::prelude::*;

use fabdex_model::records::{DocFileRow, DocsTable, LinkRow, SectionRow};

use crate::rows::{Reader, Row, Rows, Strings, count, put_blob, put_pieces, put_u32};
use crate::table_bytes::TableBytes;

/// Where the table lives in a snapshot.
pub const PATH: &str = "tables/docs.rows";

/// The first bytes of the file: the layout's name and version.
const MAGIC: &[u8; 8] = b"FDXROWS1";

/// "No row" in a column of optional row numbers.
const NONE: u32 = u32::MAX;

/// A search unit: a whole section, or one part of a split section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub section: u32,
    /// 1-based part number for split sections.
    pub part: Option<u32>,
    pub address: String,
    pub byte_start: u64,
    pub byte_end: u64,
    pub chars: u64,
}

/// The units of a docs table, in order: one per section, or one per part.
pub fn units_of(docs: &DocsTable) -> Vec<Unit> {
    let mut units = Vec::with_capacity(docs.sections.len());
    for (i, row) in docs.sections.iter().enumerate() {
        let s = &row.section;
        if s.parts.is_empty() {
            units.push(Unit {
                section: i as u32,
                part: None,
                address: row.address.clone(),
                byte_start: s.byte_start,
                byte_end: s.byte_end,
                chars: s.chars,
            });
        } else {
            for (n, p) in s.parts.iter().enumerate() {
                units.push(Unit {
                    section: i as u32,
                    part: Some(n as u32 + 1),
                    address: format!("{}~{}", row.address, n + 1),
                    byte_start: p.byte_start,
                    byte_end: p.byte_end,
                    chars: p.chars,
                });
            }
        }
    }
    units
}

/// Row access shared by the table a build holds ([`DocsTable`]) and the
/// table a snapshot opens ([`Docs`]), for code that serves both.
pub trait DocRows {
    fn file_row(&self, file: u32) -> &DocFileRow;
    fn section_row(&self, section: u32) -> &SectionRow;
}

impl DocRows for DocsTable {
    fn file_row(&self, file: u32) -> &DocFileRow {
        &self.files[file as usize]
    }
    fn section_row(&self, section: u32) -> &SectionRow {
        &self.sections[section as usize]
    }
}

impl DocRows for Docs {
    fn file_row(&self, file: u32) -> &DocFileRow {
        &self.files[file as usize]
    }
    fn section_row(&self, section: u32) -> &SectionRow {
        &self.sections[section as usize]
    }
}

/// The docs table as a snapshot opens it: file rows parsed, the columns
/// checked, section and link rows decoded on first use.
pub struct Docs {
    pub files: Vec<DocFileRow>,
    pub sections: Rows<SectionRow>,
    pub links: Rows<LinkRow>,
    addresses: Strings,
    defines: Strings,
    units: Vec<UnitColumns>,
    keys: Vec<(u64, u32)>,
}

/// One search unit as its column holds it.
#[derive(Debug, Clone, Copy)]
struct UnitColumns {
    section: u32,
    part: u32,
    byte_start: u64,
    byte_end: u64,
    chars: u64,
}

impl Docs {
    /// `doc:<root>/<path>#<anchor>` of a section, without decoding its row.
    pub fn section_address(&self, section: u32) -> &str {
        self.addresses.get(section as usize)
    }

    /// The symbols a section defines (its row's `defines`), without decoding its row.
    pub fn section_defines(&self, section: u32) -> impl Iterator<Item = &str> {
        self.defines.get(section as usize).split('\n').filter(|d| !d.is_empty())
    }

    /// The file a section is in, without decoding its row.
    pub fn section_file(&self, section: u32) -> u32 {
        self.sections.refs[section as usize][0]
    }

    /// The parent of a section, without decoding its row.
    pub fn section_parent(&self, section: u32) -> Option<u32> {
        some(self.sections.refs[section as usize][1])
    }

    /// The section a link is written in, and the section it points to.
    pub fn link_ends(&self, link: u32) -> (u32, Option<u32>) {
        let [from, to] = self.links.refs[link as usize];
        (from, some(to))
    }

    /// How many search units the table has (a section, or each of its parts).
    pub fn unit_count(&self) -> usize {
        self.units.len()
    }

    /// The unit whose [`unit_key`] is `key`: how a search hit (which carries
    /// the key, stable across incremental builds) finds its unit.
    pub fn unit_of_key(&self, key: u64) -> Option<u32> {
        self.keys.binary_search_by_key(&key, |(k, _)| *k).ok().map(|i| self.keys[i].1)
    }

    /// The search units, in order, from the columns alone.
    pub fn units(&self) -> Vec<Unit> {
        self.units
            .iter()
            .map(|u| {
                let address = self.section_address(u.section);
                Unit {
                    section: u.section,
                    part: (u.part > 0).then_some(u.part),
                    address: if u.part > 0 { format!("{address}~{}", u.part) } else { address.to_string() },
                    byte_start: u.byte_start,
                    byte_end: u.byte_end,
                    chars: u.chars,
                }
            })
            .collect()
    }

    /// Decode every row now, in parallel: what `fabdex verify` checks.
    pub fn decode_all(&self) -> Result<(), String> {
        self.sections.decode_all()?;
        self.links.decode_all()
    }
}

impl std::fmt::Debug for Docs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Docs")
            .field("files", &self.files.len())
            .field("sections", &self.sections.len())
            .field("links", &self.links.len())
            .finish()
    }
}

fn some(row: u32) -> Option<u32> {
    (row != NONE).then_some(row)
}

impl Row for SectionRow {
    const WHAT: &'static str = "section";
    fn set_refs(&mut self, [file, parent]: [u32; 2]) {
        self.file = file;
        self.parent_row = some(parent);
    }
}

impl Row for LinkRow {
    const WHAT: &'static str = "link";
    fn set_refs(&mut self, [from, to]: [u32; 2]) {
        self.from = from;
        self.to_section = some(to);
    }
}

/// A unit's key in the search index: the first 8 bytes of the blake3 digest
/// of its address. Unlike its number, it survives an edit of another file,
/// so an incremental build leaves other files' documents as they are.
pub fn unit_key(address: &str) -> u64 {
    u64::from_le_bytes(blake3::hash(address.as_bytes()).as_bytes()[..8].try_into().expect("8 bytes"))
}

/// Each unit's key and number, in key order; an error names two units
/// whose keys collide (never seen: 64 bits of a digest).
pub fn keyed_units(units: &[Unit]) -> Result<Vec<(u64, u32)>, String> {
    let mut keys: Vec<(u64, u32)> = units.iter().enumerate().map(|(i, u)| (unit_key(&u.address), i as u32)).collect();
    keys.sort_unstable();
    if let Some(w) = keys.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(format!(
            "units `{}` and `{}` have the same search key; rename a heading",
            units[w[0].1 as usize].address, units[w[1].1 as usize].address
        ));
    }
    Ok(keys)
}

/// The table's bytes as written to [`PATH`], or why it cannot be written:
/// two units with one key ([`keyed_units`]).
pub fn encode(docs: &DocsTable) -> Result<Vec<u8>, String> {
    let units = units_of(docs);
    let keys = keyed_units(&units)?;
    let mut out = MAGIC.to_vec();
    put_blob(&mut out, &serde_json::to_vec(&docs.files).expect("file rows serialize"));
    put_u32(&mut out, count(docs.sections.len()));
    for s in &docs.sections {
        put_u32(&mut out, s.file);
        put_u32(&mut out, s.parent_row.unwrap_or(NONE));
    }
    put_pieces(&mut out, docs.sections.iter().map(|s| s.address.as_bytes().to_vec()));
    put_pieces(&mut out, docs.sections.iter().map(|s| s.section.defines.join("\n").into_bytes()));
    let rows: Vec<Vec<u8>> =
        docs.sections.par_iter().map(|s| serde_json::to_vec(s).expect("a section row serializes")).collect();
    put_pieces(&mut out, rows.into_iter());
    put_u32(&mut out, count(units.len()));
    for u in &units {
        put_u32(&mut out, u.section);
        put_u32(&mut out, u.part.unwrap_or(0));
        for v in [u.byte_start, u.byte_end, u.chars] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    for (key, unit) in keys {
        out.extend_from_slice(&key.to_le_bytes());
        put_u32(&mut out, unit);
    }
    put_u32(&mut out, count(docs.links.len()));
    for l in &docs.links {
        put_u32(&mut out, l.from);
        put_u32(&mut out, l.to_section.unwrap_or(NONE));
    }
    let rows: Vec<Vec<u8>> =
        docs.links.par_iter().map(|l| serde_json::to_vec(l).expect("a link row serializes")).collect();
    put_pieces(&mut out, rows.into_iter());
    Ok(out)
}

/// The table from [`encode`]'s bytes (already checked against their
/// digest): the file rows parsed and every column checked, the rows left
/// to decode on first use.
pub fn decode(bytes: impl Into<TableBytes>) -> Result<Docs, String> {
    let bytes = Arc::new(bytes.into());
    let mut r = Reader::shared(&bytes, MAGIC, "docs table")?;
    let files: Vec<DocFileRow> =
        serde_json::from_slice(r.blob("the file rows")?).map_err(|e| format!("the file rows do not decode: {e}"))?;
    let sections = r.u32("the section count")? as usize;
    let section_refs = pairs(&r.u32s(sections * 2, "the section columns")?);
    let addresses = r.strings(sections, "address")?;
    let defines = r.strings(sections, "defines")?;
    let section_rows = r.pieces(sections, "section row")?;
    let unit_count = r.u32("the unit count")? as usize;
    let units = read_units(&mut r, unit_count)?;
    let keys = read_keys(&mut r, unit_count)?;
    let links = r.u32("the link count")? as usize;
    let link_refs = pairs(&r.u32s(links * 2, "the link columns")?);
    let link_rows = r.pieces(links, "link row")?;
    r.finish("the link rows")?;
    check_references(&files, &section_refs, &link_refs)?;
    check_units(&units, &files, &section_refs)?;
    Ok(Docs {
        files,
        sections: Rows::new(&bytes, section_rows, section_refs),
        links: Rows::new(&bytes, link_rows, link_refs),
        addresses,
        defines,
        units,
        keys,
    })
}

/// The key column: `n` (key, unit) pairs, keys strictly increasing and
/// every unit named once, so a key finds at most one unit and it is in range.
fn read_keys(r: &mut Reader<'_>, n: usize) -> Result<Vec<(u64, u32)>, String> {
    let bytes = r.take(n.checked_mul(12).ok_or("the units are too many")?, "the unit keys")?;
    let keys: Vec<(u64, u32)> = bytes
        .chunks_exact(12)
        .map(|c| {
            (u64::from_le_bytes(c[..8].try_into().expect("8 bytes")), u32::from_le_bytes(c[8..].try_into().expect("4")))
        })
        .collect();
    let mut named = vec![false; n];
    for (i, &(key, unit)) in keys.iter().enumerate() {
        if i > 0 && keys[i - 1].0 >= key {
            return Err(format!("the unit keys are out of order at {i}"));
        }
        match named.get_mut(unit as usize) {
            Some(seen) if !*seen => *seen = true,
            _ => return Err(format!("unit key {i} names unit {unit}, out of range or twice")),
        }
    }
    Ok(keys)
}

/// `n` units' columns, 32 bytes each.
fn read_units(r: &mut Reader<'_>, n: usize) -> Result<Vec<UnitColumns>, String> {
    // 32 bytes a unit, taken before allocating.
    let bytes = r.take(n.checked_mul(32).ok_or("the units are too many")?, "the unit columns")?;
    let word = |c: &[u8], at: usize| u64::from_le_bytes(c[at..at + 8].try_into().expect("8 bytes"));
    Ok(bytes
        .chunks_exact(32)
        .map(|c| UnitColumns {
            section: u32::from_le_bytes(c[0..4].try_into().expect("4 bytes")),
            part: u32::from_le_bytes(c[4..8].try_into().expect("4 bytes")),
            byte_start: word(c, 8),
            byte_end: word(c, 16),
            chars: word(c, 24),
        })
        .collect())
}

fn pairs(column: &[u32]) -> Vec<[u32; 2]> {
    column.chunks_exact(2).map(|c| [c[0], c[1]]).collect()
}

/// The row numbers the query layer indexes with are in range, so that a
/// table that opens is one the readers can use without panicking.
fn check_references(files: &[DocFileRow], sections: &[[u32; 2]], links: &[[u32; 2]]) -> Result<(), String> {
    let (file_count, section_count) = (files.len() as u64, sections.len() as u64);
    for (i, f) in files.iter().enumerate() {
        if u64::from(f.first_section) + u64::from(f.section_count) > section_count {
            return Err(format!("file row {i} names sections past the table's {section_count}"));
        }
    }
    let in_sections = |row: u32| row == NONE || u64::from(row) < section_count;
    for (i, [file, parent]) in sections.iter().enumerate() {
        if u64::from(*file) >= file_count || !in_sections(*parent) {
            return Err(format!("section row {i} names a file or parent that is not in the table"));
        }
    }
    for (i, [from, to]) in links.iter().enumerate() {
        if *from == NONE || !in_sections(*from) || !in_sections(*to) {
            return Err(format!("link row {i} names a section that is not in the table"));
        }
    }
    Ok(())
}

/// Units follow their sections in order, every section has one or more,
/// and each unit's bytes are inside its file.
fn check_units(units: &[UnitColumns], files: &[DocFileRow], sections: &[[u32; 2]]) -> Result<(), String> {
    let mut next_section = 0u64;
    for (i, u) in units.iter().enumerate() {
        let section = u64::from(u.section);
        if section + 1 != next_section && section != next_section {
            return Err(format!("unit {i} is of section {section}, out of order"));
        }
        next_section = section + 1;
        let file = sections.get(u.section as usize).and_then(|[f, _]| files.get(*f as usize));
        if file.is_none_or(|f| u.byte_start > u.byte_end || u.byte_end > f.bytes) {
            return Err(format!("unit {i} names bytes {}..{} outside its file", u.byte_start, u.byte_end));
        }
    }
    if next_section != sections.len() as u64 {
        return Err(format!("the units cover {next_section} of {} sections", sections.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdex_model::records::{
        Diagnostic, DocFileRow, LinkKind, LinkRow, LinkTarget, MdSection, Part, RootKind, SectionRow,
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

    /// The opened table as the build held it, every row decoded.
    fn owned(d: &Docs) -> DocsTable {
        DocsTable {
            files: d.files.clone(),
            sections: d.sections.iter().cloned().collect(),
            links: d.links.iter().cloned().collect(),
        }
    }

    #[test]
    fn a_table_round_trips_with_its_front_matter() {
        let mut t = table();
        t.sections[1].section.defines = vec!["wish".into(), "Cell".into()];
        t.sections[1].section.parts =
            vec![Part { byte_start: 0, byte_end: 4, chars: 4 }, Part { byte_start: 4, byte_end: 10, chars: 5 }];
        let docs = decode(encode(&t).unwrap()).unwrap();
        assert_eq!(owned(&docs), t);
        assert_eq!(docs.units(), units_of(&t));
        assert_eq!(docs.units()[2].address, "doc:docs/b.md#a~2");
        assert_eq!(docs.section_defines(1).collect::<Vec<_>>(), ["wish", "Cell"]);
        assert_eq!(docs.section_defines(0).count(), 0);
        assert_eq!(docs.section_address(1), "doc:docs/b.md#a");
        assert_eq!((docs.section_file(1), docs.section_parent(1), docs.section_parent(0)), (1, Some(0), None));
        assert_eq!(docs.link_ends(0), (1, Some(0)));
        assert_eq!(docs.unit_count(), 3);
        for (i, u) in docs.units().iter().enumerate() {
            assert_eq!(docs.unit_of_key(unit_key(&u.address)), Some(i as u32), "{}", u.address);
        }
        assert_eq!(docs.unit_of_key(unit_key("doc:docs/b.md#a~3")), None);
    }

    #[test]
    fn a_damaged_key_column_is_refused() {
        let t = table();
        let bytes = encode(&t).unwrap();
        let keys = keyed_units(&units_of(&t)).unwrap();
        let column: Vec<u8> =
            keys.iter().flat_map(|(k, u)| [k.to_le_bytes().to_vec(), u.to_le_bytes().to_vec()].concat()).collect();
        let at = bytes.windows(column.len()).position(|w| w == column).unwrap();
        // The second pair names the first pair's unit.
        let mut twice = bytes.clone();
        twice[at + 20..at + 24].copy_from_slice(&keys[0].1.to_le_bytes());
        assert!(decode(twice).unwrap_err().contains("unit key 1 names unit"), "a unit named twice");
        // The first two pairs swapped: keys out of order.
        let mut swapped = bytes.clone();
        swapped[at..at + 24].copy_from_slice(&[&column[12..24], &column[..12]].concat());
        assert!(decode(swapped).unwrap_err().contains("the unit keys are out of order at 1"), "order");
    }

    #[test]
    fn opening_decodes_no_row_and_indexing_decodes_one() {
        let docs = decode(encode(&table()).unwrap()).unwrap();
        assert_eq!(docs.sections.decoded(), 0);
        assert_eq!(docs.sections[1].address, "doc:docs/b.md#a");
        assert_eq!(docs.sections.decoded(), 1);
        assert!(docs.sections.get(0).is_ok());
        assert_eq!(docs.sections.decoded(), 2);
        assert_eq!(docs.sections.range(0, 2).count(), 2);
    }

    #[test]
    fn damaged_bytes_are_an_error_not_a_panic() {
        let bytes = encode(&table()).unwrap();
        assert!(decode(b"{}".to_vec()).unwrap_err().contains("magic"));
        assert!(decode(b"FDXDOCS1........".to_vec()).unwrap_err().contains("FDXROWS1"));
        for cut in 0..bytes.len() {
            assert!(decode(bytes[..cut].to_vec()).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(b' ');
        assert!(decode(longer).unwrap_err().contains("follow"));
    }

    #[test]
    fn a_row_that_does_not_decode_is_named_by_get_and_by_decode_all() {
        let mut bytes = encode(&table()).unwrap();
        // The last section row's opening brace, inside the section rows' blob.
        let rows_at = bytes.windows(13).rposition(|w| w == b"{\"address\":\"d").unwrap();
        bytes[rows_at] = b'[';
        let docs = decode(bytes).unwrap();
        assert!(docs.sections.get(0).is_ok());
        assert!(docs.sections.get(1).unwrap_err().contains("section row 1"));
        assert!(docs.decode_all().unwrap_err().contains("section row 1"));
        assert!(docs.sections.get(2).unwrap_err().contains("no section row 2"));
    }

    #[test]
    fn row_numbers_come_from_the_checked_columns() {
        let mut bytes = encode(&table()).unwrap();
        // Row 1's own JSON names file 0 and parent 1; its columns say file 1 and parent 0.
        let at = bytes.windows(9).rposition(|w| w == b"\"file\":1,").unwrap();
        bytes[at + 7] = b'0';
        let at = bytes.windows(14).rposition(|w| w == b"\"parent_row\":0").unwrap();
        bytes[at + 13] = b'1';
        let docs = decode(bytes).unwrap();
        assert_eq!((docs.sections[1].file, docs.sections[1].parent_row), (1, Some(0)));
    }

    proptest::proptest! {
        /// Any bytes decode to a table or to an error, never a panic; one
        /// flipped byte of a real table is caught on open, or every row it
        /// decodes to is in range.
        #[test]
        fn arbitrary_bytes_never_panic(body in proptest::collection::vec(proptest::num::u8::ANY, 0..512), flip in 0usize..2000) {
            let _ = decode(body.clone());
            let mut with_magic = MAGIC.to_vec();
            with_magic.extend_from_slice(&body);
            let _ = decode(with_magic);
            let mut real = encode(&table()).unwrap();
            let at = flip % real.len();
            real[at] ^= 0x5a;
            if let Ok(docs) = decode(real) {
                let _ = docs.decode_all();
                for i in 0..docs.sections.len() {
                    if let Ok(row) = docs.sections.get(i) {
                        proptest::prop_assert!((row.file as usize) < docs.files.len());
                    }
                }
            }
        }
    }

    #[test]
    fn rows_pointing_outside_the_table_are_refused() {
        let refused = |t: &DocsTable| decode(encode(t).unwrap()).err().unwrap_or_default();
        let mut t = table();
        t.links[0].to_section = Some(7);
        assert!(refused(&t).contains("link row 0"), "links");
        let mut t = table();
        t.sections[1].file = 2;
        assert!(refused(&t).contains("section row 1"), "sections");
        let mut t = table();
        t.sections[0].parent_row = Some(2);
        assert!(refused(&t).contains("section row 0"), "parents");
        let mut t = table();
        t.files[1].section_count = 5;
        assert!(refused(&t).contains("file row 1"), "files");
        let mut t = table();
        t.sections[1].section.byte_end = 11;
        assert!(refused(&t).contains("unit 1 names bytes 0..11 outside its file"), "units");
        // Units out of their sections' order, written by hand.
        let mut bytes = encode(&table()).unwrap();
        let mut first_unit = vec![2, 0, 0, 0]; // the unit count, then unit 0: section 0, whole, bytes 0..10
        first_unit.extend_from_slice(&[0; 16]);
        first_unit.extend_from_slice(&10u64.to_le_bytes());
        let unit_at = bytes.windows(first_unit.len()).position(|w| w == first_unit).unwrap() + 4;
        bytes[unit_at] = 1;
        assert!(decode(bytes).unwrap_err().contains("unit 0 is of section 1"), "unit order");
    }
}
