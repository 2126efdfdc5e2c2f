//! # fabdex-fuzz
//!
//! The invariants of fabdex's parsers of untrusted input, one function per
//! door: Markdown, TS/TSX, addresses, `cf:` specifiers, published-record
//! lines, run artifacts, kits (through admission) and the tool API's
//! request bodies. Each function takes any text, runs the parser as the index does,
//! and panics when an invariant breaks, so that a crash and a wrong answer
//! are both findings.
//!
//! Two callers: the `cargo fuzz` targets in `fuzz_targets/` (built with the
//! `libfuzzer` feature and the nightly toolchain, run by
//! `scripts/fuzz.sh`), and this crate's tests, which run every function over
//! seed inputs from `corpus/` and over `regressions/` (inputs that once broke
//! an invariant) on the stable toolchain.

use fabdex_model::address::Address;
use serde_json::Value;

/// Markdown → sections, parts, links and front matter (`fabdex_md::extract`).
///
/// - Sections tile the file after the front matter: each starts where the
///   previous one ended, the last ends at the end of the text, and every
///   boundary is a char boundary.
/// - Parts tile their section; lines and parents are in order.
/// - Every section's address, as the index writes it, parses back to itself.
pub fn markdown(text: &str) {
    // A small split cap, so that parts are made of fuzzed input too.
    for extraction in [fabdex_md::extract(text), fabdex_md::extract_with_split(text, 64)] {
        let sections = &extraction.sections;
        let Some(first) = sections.first() else { continue };
        let mut at = first.byte_start as usize;
        assert!(text.is_char_boundary(at), "first section starts inside a char at {at}");
        for (i, s) in sections.iter().enumerate() {
            assert_eq!(s.byte_start as usize, at, "section {i} does not start where section {} ended", i.max(1) - 1);
            assert!(s.byte_end >= s.byte_start, "section {i} ends before it starts");
            at = s.byte_end as usize;
            assert!(text.is_char_boundary(at), "section {i} ends inside a char at {at}");
            assert!(s.line_start <= s.line_end.max(s.line_start), "section {i}: lines out of order");
            if let Some(p) = s.parent {
                assert!((p as usize) < i, "section {i}'s parent {p} does not come before it");
            }
            if !s.parts.is_empty() {
                let mut part_at = s.byte_start;
                for part in &s.parts {
                    assert_eq!(part.byte_start, part_at, "section {i}: parts do not tile it");
                    assert!(text.is_char_boundary(part.byte_end as usize), "section {i}: a part ends inside a char");
                    part_at = part.byte_end;
                }
                assert_eq!(part_at, s.byte_end, "section {i}: parts stop short of its end");
            }
            let address = format!("doc:fuzz/notes/file.md#{}", s.anchor);
            round_trip(&address);
            for part in 1..=s.parts.len() {
                round_trip(&format!("{address}~{part}"));
            }
        }
        assert_eq!(at, text.len(), "the sections stop at byte {at} of {}", text.len());
    }
}

/// An address fabdex emits must parse, and print back as the same text.
fn round_trip(address: &str) {
    match Address::parse(address) {
        Ok(parsed) => assert_eq!(parsed.to_string(), address, "address does not print back as itself"),
        Err(e) => panic!("fabdex emits `{address}`, which does not parse: {e}"),
    }
}

/// TS/TSX → extraction (swc), outline (tree-sitter) and contract, for both
/// grammars. None may panic; the outline's lines lie in the file; a
/// contract's schemas are JSON Schema objects whose every `#/$defs/…`
/// reference names a definition they carry.
pub fn typescript(text: &str) {
    let lines = text.lines().count() as u32 + 1;
    for path in ["fuzz/main.tsx", "fuzz/lib.ts"] {
        let extraction = fabdex_ts::extract(path, text);
        std::hint::black_box(&extraction);
        let outline = fabdex_ts::outline::outline(path, text);
        for d in &outline.definitions {
            assert!(
                1 <= d.line_start && d.line_start <= d.line_end && d.line_end <= lines,
                "{path}: definition `{}` on lines {}-{} of {lines}",
                d.name,
                d.line_start,
                d.line_end
            );
        }
        let contract = fabdex_ts::program::program_contract(&[(path.to_string(), text.to_string())]);
        for schema in [&contract.argument_schema, &contract.result_schema].into_iter().flatten() {
            check_schema(schema, path);
        }
    }
}

/// A schema is an object (or `true`/`false`), and its references resolve.
fn check_schema(schema: &Value, path: &str) {
    assert!(schema.is_object() || schema.is_boolean(), "{path}: a schema that is neither object nor boolean: {schema}");
    let defs = schema.get("$defs").and_then(Value::as_object);
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref")
                    && let Some(name) = r.strip_prefix("#/$defs/")
                {
                    assert!(
                        defs.is_some_and(|d| d.contains_key(name)),
                        "{path}: `$ref` {r} names no definition of the schema"
                    );
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
}

/// Addresses from a caller: whatever parses prints back as text that parses
/// to the same address.
pub fn address(text: &str) {
    if let Ok(parsed) = Address::parse(text) {
        let printed = parsed.to_string();
        let again = Address::parse(&printed).unwrap_or_else(|e| panic!("`{text}` printed as `{printed}`: {e}"));
        assert_eq!(again, parsed, "`{text}` printed as `{printed}` parses to another address");
    }
}

/// `cf:` specifiers: whatever parses prints in its canonical spelling, which
/// parses to the same reference.
pub fn cf_specifier(text: &str) {
    if let Ok(Some(parsed)) = fabdex_ts::cf_spec::parse(text) {
        let printed = parsed.to_string();
        match fabdex_ts::cf_spec::parse(&printed) {
            Ok(Some(again)) => assert_eq!(again, parsed, "`{text}` printed as `{printed}` parses to another reference"),
            other => panic!("`{text}` printed as `{printed}`, which parses as {other:?}"),
        }
    }
}

/// A line of a published-records file: a record that parses serialises to
/// JSON that parses to the same record.
pub fn published_line(text: &str) {
    if let Ok(record) = serde_json::from_str::<fabdex_model::registry::PublishedPattern>(text) {
        let json = serde_json::to_string(&record).expect("a parsed record serialises");
        let again: fabdex_model::registry::PublishedPattern =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("a record's own JSON does not parse: {e}: {json}"));
        assert_eq!(again, record, "a record does not survive its own JSON");
    }
}

pub mod artifacts;
pub mod served;

pub use artifacts::run_artifacts;
pub use served::{kit, tool_call};

#[cfg(test)]
mod tests;
