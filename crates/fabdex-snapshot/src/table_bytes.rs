//! A table's bytes as a reader holds them: mapped from the snapshot's file
//! when it is large enough for that to pay, read into memory otherwise.
//!
//! Reading labs' 9 MB docs table into fresh memory took about 5 ms of every
//! command, a quarter of an `open`; mapped, its pages come straight from
//! the page cache as the digest check walks them.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::Path;

/// Below this size a table is read: mapping costs more than it saves.
const MAP_FROM_BYTES: u64 = 1 << 20;

/// The bytes of one table file.
pub enum TableBytes {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl TableBytes {
    /// The file's bytes, mapped when the file is large.
    pub fn open(path: &Path) -> std::io::Result<TableBytes> {
        let mut file = File::open(path)?;
        let size = file.metadata()?.len();
        if size < MAP_FROM_BYTES {
            let mut bytes = Vec::with_capacity(size as usize);
            file.read_to_end(&mut bytes)?;
            return Ok(TableBytes::Read(bytes));
        }
        // SAFETY: a published snapshot's files are never written again:
        // a build writes a new snapshot directory beside it, and garbage
        // collection removes whole directories, which leaves an open mapping
        // valid. Only a process outside fabdex that truncated a table under
        // a running reader could invalidate the mapping (the reader would
        // then stop with SIGBUS, as tantivy's mapped search files would).
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(TableBytes::Mapped(map))
    }
}

impl From<Vec<u8>> for TableBytes {
    fn from(bytes: Vec<u8>) -> TableBytes {
        TableBytes::Read(bytes)
    }
}

impl AsRef<[u8]> for TableBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl Deref for TableBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            TableBytes::Read(bytes) => bytes,
            TableBytes::Mapped(map) => map,
        }
    }
}
