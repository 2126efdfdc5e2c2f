//! Tables of rows kept as JSON and decoded on first use, and the reader and
//! writer of the binary frames around them (`tables/docs.rows`,
//! `tables/patterns.rows`): the parts every such table shares.

use std::ops::Index;
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use serde::de::DeserializeOwned;

use crate::table_bytes::TableBytes;

/// A row type that may take row numbers from its table's checked columns.
pub trait Row: DeserializeOwned + Send + Sync {
    /// What a row is called in an error ("section", "program").
    const WHAT: &'static str;
    /// Set the row numbers the columns hold for this row.
    fn set_refs(&mut self, _refs: [u32; 2]) {}
}

/// A column of strings: one text, and where each ends in it.
pub struct Strings {
    text: Text,
    ends: Vec<u32>,
}

/// A column's text: where the table's bytes hold it (checked UTF-8 when the
/// column was read), so that opening a table copies no column; or a copy,
/// when the reader has no shared bytes.
enum Text {
    Owned(String),
    Shared { bytes: Arc<TableBytes>, start: usize, len: usize },
}

impl Strings {
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text()[start..self.ends[i] as usize]
    }

    fn text(&self) -> &str {
        match &self.text {
            Text::Owned(text) => text,
            // SAFETY: `Reader::strings` checked these bytes as UTF-8, and a
            // table's bytes never change while it is held.
            Text::Shared { bytes, start, len } => unsafe { std::str::from_utf8_unchecked(&bytes[*start..start + len]) },
        }
    }
}

/// Rows kept as their JSON bytes and decoded on first use, each once.
///
/// The table's digest is checked before any row is decoded, so a row that
/// does not decode is a table fabdex did not write; indexing (`rows[i]`)
/// then panics naming the row, and [`Rows::get`] and [`Rows::decode_all`]
/// (which `fabdex verify` runs) return the error instead.
pub struct Rows<T> {
    bytes: Arc<TableBytes>,
    /// Where the rows begin in `bytes`, and where each ends, relative to that.
    start: usize,
    ends: Vec<u32>,
    /// Row numbers each row takes from checked columns (empty: none).
    pub refs: Vec<[u32; 2]>,
    /// Boxed: a row is decoded on first use, and most never are, so an
    /// empty cell should cost a pointer, not a row's worth of fresh pages.
    cells: Vec<OnceLock<Box<T>>>,
}

impl<T: Row> Rows<T> {
    pub fn new(bytes: &Arc<TableBytes>, (start, ends): (usize, Vec<u32>), refs: Vec<[u32; 2]>) -> Rows<T> {
        let cells = (0..ends.len()).map(|_| OnceLock::new()).collect();
        Rows { bytes: Arc::clone(bytes), start, ends, refs, cells }
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// How many rows have been decoded so far.
    pub fn decoded(&self) -> usize {
        self.cells.iter().filter(|c| c.get().is_some()).count()
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
        if let Some(&refs) = self.refs.get(i) {
            row.set_refs(refs);
        }
        Ok(cell.get_or_init(|| Box::new(row)))
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

    pub fn decode_all(&self) -> Result<(), String> {
        (0..self.len()).into_par_iter().try_for_each(|i| self.get(i).map(|_| ()))
    }
}

impl<T: Row> Index<usize> for Rows<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        self.get(i).unwrap_or_else(|e| panic!("the docs table is damaged: {e}; run `fabdex verify`"))
    }
}

pub fn count(n: usize) -> u32 {
    u32::try_from(n).expect("a docs table holds fewer than 2^32 rows and bytes per column")
}

pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_blob(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Pieces back to back, after the end of each (so piece `i` is
/// `ends[i-1] .. ends[i]`).
pub fn put_pieces(out: &mut Vec<u8>, pieces: impl Iterator<Item = Vec<u8>>) {
    let mut blob = Vec::new();
    for piece in pieces {
        blob.extend_from_slice(&piece);
        put_u32(out, count(blob.len()));
    }
    put_blob(out, &blob);
}

/// Ends of pieces must rise and stay inside their bytes.
pub fn check_ends(ends: &[u32], len: usize, what: &str) -> Result<(), String> {
    let mut previous = 0;
    for (i, &end) in ends.iter().enumerate() {
        if end < previous || end as usize > len {
            return Err(format!("{what} {i} ends at byte {end}, outside its column of {len} bytes"));
        }
        previous = end;
    }
    Ok(())
}

/// Reads the table's parts in order; running out of bytes is an error naming the part.
pub struct Reader<'a> {
    pub bytes: &'a [u8],
    pub at: usize,
    /// The same bytes, shared, when the caller has them so: string columns then point into them.
    shared: Option<&'a Arc<TableBytes>>,
}

impl<'a> Reader<'a> {
    /// A reader past the table's magic, or the error naming the table and the magic it lacks.
    pub fn after_magic(bytes: &'a [u8], magic: &[u8; 8], table: &str) -> Result<Reader<'a>, String> {
        let mut r = Reader { bytes, at: 0, shared: None };
        if r.take(magic.len(), "its magic")? != magic {
            let magic = String::from_utf8_lossy(magic);
            return Err(format!("not a {table} of this format (its first bytes are not `{magic}`)"));
        }
        Ok(r)
    }

    /// A reader past the magic of the table `bytes`, whose string columns share its bytes.
    pub fn shared(bytes: &'a Arc<TableBytes>, magic: &[u8; 8], table: &str) -> Result<Reader<'a>, String> {
        let mut r = Reader::after_magic(bytes, magic, table)?;
        r.shared = Some(bytes);
        Ok(r)
    }

    /// Every byte was read: the last part, `last`, ends the table.
    pub fn finish(&self, last: &str) -> Result<(), String> {
        match self.bytes.len() - self.at {
            0 => Ok(()),
            extra => Err(format!("{extra} bytes follow {last}")),
        }
    }

    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("the table ends inside {what}"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    pub fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }

    pub fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes")))
    }

    pub fn u32s(&mut self, n: usize, what: &str) -> Result<Vec<u32>, String> {
        // Taken before allocating, so a damaged count cannot ask for more memory than the file has.
        let bytes = self.take(n.checked_mul(4).ok_or_else(|| format!("{what} are too many"))?, what)?;
        Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect())
    }

    pub fn blob_range(&mut self, what: &str) -> Result<(usize, usize), String> {
        let len = self.u64(what)?;
        let len = usize::try_from(len).map_err(|_| format!("{what} are too long"))?;
        let start = self.at;
        self.take(len, what)?;
        Ok((start, len))
    }

    pub fn blob(&mut self, what: &str) -> Result<&'a [u8], String> {
        let (start, len) = self.blob_range(what)?;
        Ok(&self.bytes[start..start + len])
    }

    /// `n` pieces: where their bytes start, and each one's end (checked).
    pub fn pieces(&mut self, n: usize, what: &str) -> Result<(usize, Vec<u32>), String> {
        let ends = self.u32s(n, &format!("the {what} ends"))?;
        let (start, len) = self.blob_range(&format!("the {what} bytes"))?;
        check_ends(&ends, len, what)?;
        Ok((start, ends))
    }

    /// `n` strings, each ending on a character boundary.
    pub fn strings(&mut self, n: usize, what: &str) -> Result<Strings, String> {
        let (start, ends) = self.pieces(n, what)?;
        let len = ends.last().map_or(0, |&e| e as usize);
        let text = std::str::from_utf8(&self.bytes[start..self.at])
            .map_err(|e| format!("the {what} column is not UTF-8: {e}"))?;
        if let Some(i) = ends.iter().position(|&e| !text.is_char_boundary(e as usize)) {
            return Err(format!("{what} {i} ends inside a character"));
        }
        if len != text.len() {
            return Err(format!("the {what} column has {} bytes after its last piece", text.len() - len));
        }
        let text = match self.shared {
            Some(bytes) => Text::Shared { bytes: Arc::clone(bytes), start, len: text.len() },
            None => Text::Owned(text.to_string()),
        };
        Ok(Strings { text, ends })
    }
}
