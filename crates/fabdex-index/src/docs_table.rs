//! The docs table on disk (`tables/docs.rows`, format 4), laid out so that
//! opening it parses almost nothing: every command reads this table, and on
//! labs it is 8 MB of rows, which took 30 ms to parse whole as one JSON
//! document (format 3) when an `open` needs one row.
//!
//! The file holds the file rows as one JSON array (670 on labs, parsed on
//! open), then, per section, the row numbers it points at (its file, its
//! parent, its unit count) and its address, then per link the sections it
//! joins. These columns are all the navigation maps need, and they are
//! checked when the table is opened, so a row number a reader indexes with
//! is always in range. Each section and link row follows as its own JSON
//! object, decoded when first used ([`Rows`]); its row numbers are taken
//! from the checked columns.
//!
//! A binary layout of the whole table (bitcode) was tried at stop 32 and
//! withdrawn: its decoder read past the end of small strings under
//! AddressSanitizer in the `kit` and `tool_call` fuzz targets. This layout
//! is read with safe slicing and `serde_json` only.
//!
//! Layout (integers little-endian):
//!
//! ```text
//! "FDXROWS1"
//! u64 n, then n bytes: the file rows, a JSON array
//! u32 S (sections), then S × (u32 file, u32 parent or 0xFFFF_FFFF, u32 units)
//! S × u32 end of each address, u64 n, n bytes: the addresses, back to back
//! S × u32 end of each row, u64 n, n bytes: the section rows, JSON objects back to back
//! u32 L (links), then L × (u32 from, u32 to section or 0xFFFF_FFFF)
//! L × u32 end of each row, u64 n, n bytes: the link rows, likewise
//! ```

use std::ops::Index;
use std::sync::{Arc, OnceLock};

use fabdex_model::records::{DocFileRow, DocsTable, LinkRow, SectionRow};
use rayon::prelude::*;
use serde::de::DeserializeOwned;

/// Where the table lives in a snapshot.
pub const PATH: &str = "tables/docs.rows";

/// The first bytes of the file: the layout's name and version.
const MAGIC: &[u8; 8] = b"FDXROWS1";

/// "No row" in a column of optional row numbers.
const NONE: u32 = u32::MAX;

/// Row access shared by the table a build holds ([`DocsTable`]) and the
/// table a snapshot opens ([`Docs`]), for code that serves both.
pub trait DocRows {
    fn file_row(&self, file: u32) -> &DocFileRow;
    fn section_row(&self, section: u32) -> &SectionRow;
    fn section_count(&self) -> usize;
}

impl DocRows for DocsTable {
    fn file_row(&self, file: u32) -> &DocFileRow {
        &self.files[file as usize]
    }
    fn section_row(&self, section: u32) -> &SectionRow {
        &self.sections[section as usize]
    }
    fn section_count(&self) -> usize {
        self.sections.len()
    }
}

impl DocRows for Docs {
    fn file_row(&self, file: u32) -> &DocFileRow {
        &self.files[file as usize]
    }
    fn section_row(&self, section: u32) -> &SectionRow {
        &self.sections[section as usize]
    }
    fn section_count(&self) -> usize {
        self.sections.len()
    }
}

/// The docs table as a snapshot opens it: file rows parsed, the columns of
/// row numbers checked, section and link rows decoded on first use.
pub struct Docs {
    pub files: Vec<DocFileRow>,
    pub sections: Rows<SectionRow>,
    pub links: Rows<LinkRow>,
    /// Units of each section (1, or its number of parts).
    section_units: Vec<u32>,
    addresses: String,
    address_ends: Vec<u32>,
}

impl Docs {
    /// `doc:<root>/<path>#<anchor>` of a section, without decoding its row.
    pub fn section_address(&self, section: u32) -> &str {
        let i = section as usize;
        let start = if i == 0 { 0 } else { self.address_ends[i - 1] as usize };
        &self.addresses[start..self.address_ends[i] as usize]
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

    /// Search units of the whole table (a section, or each of its parts).
    pub fn unit_count(&self) -> usize {
        self.section_units.iter().map(|&u| u as usize).sum()
    }

    /// Decode every row now, in parallel: what `fabdex verify` checks, and
    /// what a command that reads every row does first.
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

/// A row type whose row numbers come from the table's checked columns.
pub trait Row: DeserializeOwned + Send + Sync {
    const WHAT: &'static str;
    fn set_refs(&mut self, refs: [u32; 2]);
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

/// Rows kept as their JSON bytes and decoded on first use, each once.
///
/// The table's digest is checked before any row is decoded, so a row that
/// does not decode is a table fabdex did not write; indexing (`rows[i]`)
/// then panics naming the row, and [`Rows::get`] and [`Docs::decode_all`]
/// (which `fabdex verify` runs) return the error instead.
pub struct Rows<T> {
    bytes: Arc<Vec<u8>>,
    /// Where the rows begin in `bytes`, and where each ends, relative to that.
    start: usize,
    ends: Vec<u32>,
    refs: Vec<[u32; 2]>,
    cells: Vec<OnceLock<T>>,
}

impl<T: Row> Rows<T> {
    fn new(bytes: &Arc<Vec<u8>>, start: usize, ends: Vec<u32>, refs: Vec<[u32; 2]>) -> Rows<T> {
        let cells = (0..ends.len()).map(|_| OnceLock::new()).collect();
        Rows { bytes: Arc::clone(bytes), start, ends, refs, cells }
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Row `i`, decoded if this is its first use.
    pub fn get(&self, i: usize) -> Result<&T, String> {
        let cell = self.cells.get(i).ok_or_else(|| format!("no {} row {i}", T::WHAT))?;
        if let Some(row) = cell.get() {
            return Ok(row);
        }
        let from = self.start + if i == 0 { 0 } else { self.ends[i - 1] as usize };
        let to = self.start + self.ends[i] as usize;
        let mut row: T = serde_json::from_slice(&self.bytes[from..to])
            .map_err(|e| format!("{} row {i} does not decode: {e}", T::WHAT))?;
        row.set_refs(self.refs[i]);
        Ok(cell.get_or_init(|| row))
    }

    /// Every row, in order (all decoded first, in parallel).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &T> + '_ {
        // Only a table fabdex did not write fails here; indexing says which row.
        let _ = self.decode_all();
        (0..self.len()).map(move |i| &self[i])
    }

    /// Rows `first .. first + count`, in order.
    pub fn range(&self, first: u32, count: u32) -> impl Iterator<Item = &T> + '_ {
        (first as usize..(first + count) as usize).map(move |i| &self[i])
    }

    fn decode_all(&self) -> Result<(), String> {
        (0..self.len()).into_par_iter().try_for_each(|i| self.get(i).map(|_| ()))
    }
}

impl<T: Row> Index<usize> for Rows<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        self.get(i).unwrap_or_else(|e| panic!("the docs table is damaged: {e}; run `fabdex verify`"))
    }
}

/// The table's bytes as written to [`PATH`].
pub fn encode(docs: &DocsTable) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    put_blob(&mut out, &serde_json::to_vec(&docs.files).expect("file rows serialize"));
    put_u32(&mut out, count(docs.sections.len()));
    for s in &docs.sections {
        put_u32(&mut out, s.file);
        put_u32(&mut out, s.parent_row.unwrap_or(NONE));
        put_u32(&mut out, count(s.section.parts.len().max(1)));
    }
    put_pieces(&mut out, docs.sections.iter().map(|s| s.address.as_bytes().to_vec()));
    put_pieces(&mut out, docs.sections.iter().map(|s| serde_json::to_vec(s).expect("a section row serializes")));
    put_u32(&mut out, count(docs.links.len()));
    for l in &docs.links {
        put_u32(&mut out, l.from);
        put_u32(&mut out, l.to_section.unwrap_or(NONE));
    }
    put_pieces(&mut out, docs.links.iter().map(|l| serde_json::to_vec(l).expect("a link row serializes")));
    out
}

fn count(n: usize) -> u32 {
    u32::try_from(n).expect("a docs table holds fewer than 2^32 rows and bytes per column")
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_blob(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Pieces back to back, after the end of each (so piece `i` is
/// `ends[i-1] .. ends[i]`).
fn put_pieces(out: &mut Vec<u8>, pieces: impl Iterator<Item = Vec<u8>>) {
    let mut blob = Vec::new();
    for piece in pieces {
        blob.extend_from_slice(&piece);
        put_u32(out, count(blob.len()));
    }
    put_blob(out, &blob);
}

/// The table from [`encode`]'s bytes (already checked against their
/// digest): the file rows parsed and every column checked, the rows left
/// to decode on first use.
pub fn decode(bytes: Vec<u8>) -> Result<Docs, String> {
    let bytes = Arc::new(bytes);
    let mut r = Reader { bytes: bytes.as_slice(), at: 0 };
    if r.take(MAGIC.len(), "its magic")? != MAGIC {
        return Err("not a docs table of this format (its first bytes are not `FDXROWS1`)".into());
    }
    let files_json = r.blob("the file rows")?;
    let files: Vec<DocFileRow> =
        serde_json::from_slice(files_json).map_err(|e| format!("the file rows do not decode: {e}"))?;
    let sections = r.u32("the section count")? as usize;
    let section_cols = r.u32s(sections * 3, "the section columns")?;
    let address_ends = r.u32s(sections, "the address ends")?;
    let (address_start, address_len) = r.blob_range("the addresses")?;
    let row_ends = r.u32s(sections, "the section row ends")?;
    let (rows_start, rows_len) = r.blob_range("the section rows")?;
    let links = r.u32("the link count")? as usize;
    let link_cols = r.u32s(links * 2, "the link columns")?;
    let link_ends = r.u32s(links, "the link row ends")?;
    let (links_start, links_len) = r.blob_range("the link rows")?;
    if r.at != bytes.len() {
        return Err(format!("{} bytes follow the link rows", bytes.len() - r.at));
    }
    let addresses = std::str::from_utf8(&bytes[address_start..address_start + address_len])
        .map_err(|e| format!("the addresses are not UTF-8: {e}"))?
        .to_string();
    check_ends(&address_ends, address_len, "address")?;
    if let Some(i) = address_ends.iter().position(|&e| !addresses.is_char_boundary(e as usize)) {
        return Err(format!("address {i} ends inside a character"));
    }
    check_ends(&row_ends, rows_len, "section row")?;
    check_ends(&link_ends, links_len, "link row")?;
    let section_refs: Vec<[u32; 2]> = section_cols.chunks_exact(3).map(|c| [c[0], c[1]]).collect();
    let section_units: Vec<u32> = section_cols.chunks_exact(3).map(|c| c[2]).collect();
    let link_refs: Vec<[u32; 2]> = link_cols.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
    check_references(&files, &section_refs, &section_units, &link_refs)?;
    Ok(Docs {
        files,
        sections: Rows::new(&bytes, rows_start, row_ends, section_refs),
        links: Rows::new(&bytes, links_start, link_ends, link_refs),
        section_units,
        addresses,
        address_ends,
    })
}

/// Ends of pieces must rise and stay inside their blob.
fn check_ends(ends: &[u32], len: usize, what: &str) -> Result<(), String> {
    let mut previous = 0;
    for (i, &end) in ends.iter().enumerate() {
        if end < previous || end as usize > len {
            return Err(format!("{what} {i} ends at byte {end}, outside its column of {len} bytes"));
        }
        previous = end;
    }
    Ok(())
}

/// The row numbers the query layer indexes with are in range, so that a
/// table that opens is one the readers can use without panicking.
fn check_references(
    files: &[DocFileRow],
    sections: &[[u32; 2]],
    units: &[u32],
    links: &[[u32; 2]],
) -> Result<(), String> {
    let (file_count, section_count) = (files.len() as u64, sections.len() as u64);
    for (i, f) in files.iter().enumerate() {
        if u64::from(f.first_section) + u64::from(f.section_count) > section_count {
            return Err(format!("file row {i} names sections past the table's {section_count}"));
        }
    }
    let in_sections = |row: u32| row == NONE || u64::from(row) < section_count;
    for (i, [file, parent]) in sections.iter().enumerate() {
        if u64::from(*file) >= file_count || !in_sections(*parent) || units[i] == 0 {
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

/// Reads the table's parts in order; running out of bytes is an error naming the part.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("the table ends inside {what}"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }

    fn u32s(&mut self, n: usize, what: &str) -> Result<Vec<u32>, String> {
        // Taken before allocating, so a damaged count cannot ask for more memory than the file has.
        let bytes = self.take(n.checked_mul(4).ok_or_else(|| format!("{what} are too many"))?, what)?;
        Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect())
    }

    fn blob_range(&mut self, what: &str) -> Result<(usize, usize), String> {
        let len = u64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes"));
        let len = usize::try_from(len).map_err(|_| format!("{what} are too long"))?;
        let start = self.at;
        self.take(len, what)?;
        Ok((start, len))
    }

    fn blob(&mut self, what: &str) -> Result<&'a [u8], String> {
        let (start, len) = self.blob_range(what)?;
        Ok(&self.bytes[start..start + len])
    }
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
        let t = table();
        let docs = decode(encode(&t)).unwrap();
        assert_eq!(owned(&docs), t);
        assert_eq!(docs.section_address(1), "doc:docs/b.md#a");
        assert_eq!((docs.section_file(1), docs.section_parent(1), docs.section_parent(0)), (1, Some(0), None));
        assert_eq!(docs.link_ends(0), (1, Some(0)));
        assert_eq!(docs.unit_count(), 2);
    }

    #[test]
    fn opening_decodes_no_row_and_indexing_decodes_one() {
        let docs = decode(encode(&table())).unwrap();
        assert!(docs.sections.cells.iter().all(|c| c.get().is_none()));
        assert_eq!(docs.sections[1].address, "doc:docs/b.md#a");
        let decoded: Vec<bool> = docs.sections.cells.iter().map(|c| c.get().is_some()).collect();
        assert_eq!(decoded, [false, true]);
        assert_eq!(docs.sections.range(0, 2).count(), 2);
    }

    #[test]
    fn damaged_bytes_are_an_error_not_a_panic() {
        let bytes = encode(&table());
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
        let mut bytes = encode(&table());
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
        let mut bytes = encode(&table());
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
            let mut real = encode(&table());
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
        let refused = |t: &DocsTable| decode(encode(t)).err().unwrap_or_default();
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
    }
}
