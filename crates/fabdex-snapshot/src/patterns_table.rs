//! The patterns table on disk (`tables/patterns.rows`, format 4): source
//! files and programs as rows decoded on first use, with the columns a
//! lookup needs (each file's `root/path`, each program's id and aliases).
//!
//! As one JSON document (format 3) labs' 3 MB table took 20 ms to parse on
//! every command, and `inspect` needs one program and its files.
//!
//! Layout (integers little-endian; "pieces" as in [`crate::rows`]):
//!
//! ```text
//! "FDXPATS1"
//! u32 F        source files; then F pieces: each file's `root/path`
//! F pieces     each file's row: a JSON SourceFileRow
//! u32 P        programs; then P pieces: each program's pattern id
//! P pieces     each program's aliases, newline-joined
//! P pieces     each program's row: a JSON ProgramRow
//! ```

use std::sync::Arc;

use fabdex_model::ts::{PatternsTable, ProgramRow, SourceFileRow};

use crate::rows::{Reader, Row, Rows, Strings, count, put_pieces, put_u32};
use crate::table_bytes::TableBytes;

/// Where the table lives in a snapshot.
pub const PATH: &str = "tables/patterns.rows";

/// The first bytes of the file: the layout's name and version.
const MAGIC: &[u8; 8] = b"FDXPATS1";

impl Row for SourceFileRow {
    const WHAT: &'static str = "source file";
}

impl Row for ProgramRow {
    const WHAT: &'static str = "program";
}

/// The patterns table as a snapshot opens it: the lookup columns checked,
/// every row decoded on first use.
pub struct Patterns {
    pub files: Rows<SourceFileRow>,
    pub programs: Rows<ProgramRow>,
    file_keys: Strings,
    pattern_ids: Strings,
    aliases: Strings,
}

impl Patterns {
    /// A table with no files and no programs (a snapshot without one).
    pub fn empty() -> Patterns {
        decode(encode(&PatternsTable::default())).expect("an empty table decodes")
    }

    /// The row of the file `root/path`, if the table has it.
    pub fn file_index(&self, root: &str, path: &str) -> Option<usize> {
        (0..self.files.len()).find(|&i| {
            let key = self.file_keys.get(i);
            key.len() == root.len() + 1 + path.len()
                && key.starts_with(root)
                && key[root.len()..].starts_with('/')
                && key.ends_with(path)
        })
    }

    /// A program's pattern id, without decoding its row.
    pub fn pattern_id(&self, program: usize) -> &str {
        self.pattern_ids.get(program)
    }

    /// A program's aliases, without decoding its row.
    pub fn aliases(&self, program: usize) -> impl Iterator<Item = &str> {
        self.aliases.get(program).split('\n').filter(|a| !a.is_empty())
    }

    /// The row of the program with this pattern id.
    pub fn program_index(&self, pattern_id: &str) -> Option<usize> {
        (0..self.programs.len()).find(|&i| self.pattern_id(i) == pattern_id)
    }

    /// Decode every row now, in parallel: what `fabdex verify` checks.
    pub fn decode_all(&self) -> Result<(), String> {
        self.files.decode_all()?;
        self.programs.decode_all()
    }
}

impl std::fmt::Debug for Patterns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Patterns").field("files", &self.files.len()).field("programs", &self.programs.len()).finish()
    }
}

/// The table's bytes as written to [`PATH`].
pub fn encode(table: &PatternsTable) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    put_u32(&mut out, count(table.files.len()));
    put_pieces(&mut out, table.files.iter().map(|f| format!("{}/{}", f.root, f.path).into_bytes()));
    put_pieces(&mut out, table.files.iter().map(|f| serde_json::to_vec(f).expect("a source file row serializes")));
    put_u32(&mut out, count(table.programs.len()));
    put_pieces(&mut out, table.programs.iter().map(|p| p.pattern_id.clone().into_bytes()));
    put_pieces(&mut out, table.programs.iter().map(|p| p.aliases.join("\n").into_bytes()));
    put_pieces(&mut out, table.programs.iter().map(|p| serde_json::to_vec(p).expect("a program row serializes")));
    out
}

/// The table from [`encode`]'s bytes (already checked against their
/// digest): the columns checked, the rows left to decode on first use.
pub fn decode(bytes: impl Into<TableBytes>) -> Result<Patterns, String> {
    let bytes = Arc::new(bytes.into());
    let mut r = Reader::shared(&bytes, MAGIC, "patterns table")?;
    let files = r.u32("the source file count")? as usize;
    let file_keys = r.strings(files, "source file key")?;
    let file_rows = r.pieces(files, "source file row")?;
    let programs = r.u32("the program count")? as usize;
    let pattern_ids = r.strings(programs, "pattern id")?;
    let aliases = r.strings(programs, "aliases")?;
    let program_rows = r.pieces(programs, "program row")?;
    r.finish("the program rows")?;
    Ok(Patterns {
        files: Rows::new(&bytes, file_rows, Vec::new()),
        programs: Rows::new(&bytes, program_rows, Vec::new()),
        file_keys,
        pattern_ids,
        aliases,
    })
}

/// Standing of a tier name for ranking: how much a task search keeps of a
/// program's score. Test scaffolding and superseded programs rank below the
/// rest; any other tier (primitive, exemplar, demo, …) keeps its score.
pub fn tier_factor(tier: &str) -> f64 {
    match tier_rank(tier) {
        0 => 0.35,
        1 => 0.6,
        _ => 1.0,
    }
}

/// 0 for test scaffolding, 1 for superseded programs, 2 for everything else.
pub fn tier_rank(tier: &str) -> u8 {
    let t = tier.trim().to_ascii_lowercase();
    let t = t.trim_end_matches('s');
    match t {
        "fixture" | "test" | "regression" | "scaffolding" => 0,
        "legacy" | "deprecated" | "obsolete" | "archived" | "superseded" => 1,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_rank_scaffolding_then_superseded_then_the_rest() {
        assert!(tier_factor("fixture") < tier_factor("legacy"));
        assert!(tier_factor("Legacy") < tier_factor("demo"));
        assert_eq!(tier_factor("exemplar"), 1.0);
        assert_eq!(tier_factor("tests"), tier_factor("fixture"));
    }
}
