//! Bounded reads by address.

use fabdex_model::envelope::char_window;
use fabdex_model::{Address, DocAddress, Limits, ReadEnvelope, digest_text};

use crate::{Engine, QueryError};

/// What an address resolves to before windowing.
pub(crate) struct Resolved {
    pub file: u32,
    /// Section index, for section and part addresses.
    pub section: Option<u32>,
    pub byte_start: usize,
    pub byte_end: usize,
}

impl Engine {
    /// Read one window of a `doc:` or `pattern:` address; `max_line_chars`
    /// (source reads only) cuts long lines, and is an error on a `doc:` address.
    pub fn read_with(
        &self,
        address: &str,
        offset: Option<u64>,
        max_chars: Option<u64>,
        max_line_chars: Option<u64>,
    ) -> Result<ReadEnvelope, QueryError> {
        match Address::parse(address.trim()) {
            Ok(Address::Pattern(p)) => self.read_pattern(&p, offset, max_chars, max_line_chars),
            _ if max_line_chars.is_some() => {
                Err(QueryError::InvalidArgument("max_line_chars applies to `pattern:` addresses only".into()))
            }
            _ => self.read(address, offset, max_chars),
        }
    }

    /// Read one window of the text an address names.
    ///
    /// `offset` overrides an `@offset` in the address; `max_chars` defaults to
    /// [`Limits::READ_DEFAULT_CHARS`] and may not exceed [`Limits::READ_MAX_CHARS`].
    pub fn read(&self, address: &str, offset: Option<u64>, max_chars: Option<u64>) -> Result<ReadEnvelope, QueryError> {
        let max_chars = max_chars.unwrap_or(Limits::READ_DEFAULT_CHARS);
        if max_chars == 0 || max_chars > Limits::READ_MAX_CHARS {
            return Err(QueryError::InvalidArgument(format!(
                "max_chars {max_chars} is out of range: it must be between 1 and {}",
                Limits::READ_MAX_CHARS
            )));
        }
        if let Ok(Address::Pattern(p)) = Address::parse(address.trim()) {
            return self.read_pattern(&p, offset, Some(max_chars), None);
        }
        let doc = parse_doc(address)?;
        let offset = offset.unwrap_or(doc.offset);
        let resolved = self.resolve(&doc)?;
        let file_row = &self.snap.docs.files[resolved.file as usize];
        let text = self.snap.file_text(resolved.file).map_err(|e| QueryError::Corrupt(format!("{e:#}")))?;
        let text = &text[resolved.byte_start..resolved.byte_end];
        let total = text.chars().count() as u64;
        if offset > total {
            return Err(QueryError::InvalidArgument(format!(
                "offset {offset} is past the end of `{}` ({total} chars)",
                doc.base()
            )));
        }
        let (start, end, end_char) = char_window(text, offset, max_chars);
        let window = &text[start..end];
        let truncated = end_char < total;
        Ok(ReadEnvelope {
            address: doc.with_offset(offset).to_string(),
            origin: file_row.origin.clone(),
            offset,
            end: end_char,
            total,
            digest: digest_text(window),
            truncated,
            next: truncated.then(|| doc.with_offset(end_char).to_string()),
            lines: None,
            clipped_lines: vec![],
            text: window.to_string(),
        })
    }

    /// Origin, char count and digest of the whole text an address names,
    /// read window by window (source lines are never cut here).
    pub fn addressed_digest(&self, address: &str) -> Result<(String, u64, String), QueryError> {
        let mut text = String::new();
        let mut origin = String::new();
        let mut next = Some(address.to_string());
        while let Some(a) = next {
            let line_limit = a.trim().starts_with("pattern:").then_some(Limits::READ_MAX_CHARS);
            let env = self.read_with(&a, None, Some(Limits::READ_MAX_CHARS), line_limit)?;
            text.push_str(&env.text);
            origin = env.origin;
            next = env.next;
        }
        Ok((origin, text.chars().count() as u64, digest_text(&text)))
    }

    /// Find the file, section or part an address names.
    pub(crate) fn resolve(&self, doc: &DocAddress) -> Result<Resolved, QueryError> {
        let file = self.file_index(&doc.root, &doc.path)?;
        let file_row = &self.snap.docs.files[file as usize];
        let Some(anchor) = &doc.anchor else {
            return Ok(Resolved { file, section: None, byte_start: 0, byte_end: file_row.bytes as usize });
        };
        let base = format!("doc:{}/{}#{anchor}", doc.root, doc.path);
        let Some(section) = self.section_index(&base) else {
            let anchors: Vec<&str> = self
                .snap
                .docs
                .sections
                .range(file_row.first_section, file_row.section_count)
                .map(|s| s.section.anchor.as_str())
                .collect();
            let what = if anchor.is_empty() {
                "no preamble (text before its first heading)".to_string()
            } else {
                format!("no section with anchor `#{anchor}`")
            };
            return Err(QueryError::NotFound(format!(
                "`{}/{}` has {what}{}",
                doc.root,
                doc.path,
                suggest(anchor, anchors.iter().copied().filter(|a| !a.is_empty()), "#")
            )));
        };
        let s = &self.snap.docs.sections[section as usize].section;
        let (start, end) = match doc.part {
            None => (s.byte_start, s.byte_end),
            Some(n) => match s.parts.get(n as usize - 1) {
                Some(p) => (p.byte_start, p.byte_end),
                None if s.parts.is_empty() => {
                    return Err(QueryError::NotFound(format!("`{base}` is not split into parts; open `{base}`")));
                }
                None => {
                    return Err(QueryError::NotFound(format!(
                        "`{base}` has {} parts; part {n} does not exist",
                        s.parts.len()
                    )));
                }
            },
        };
        Ok(Resolved { file, section: Some(section), byte_start: start as usize, byte_end: end as usize })
    }

    pub(crate) fn file_index(&self, root: &str, path: &str) -> Result<u32, QueryError> {
        if let Some(f) = self.file_by_key(&format!("{root}/{path}")) {
            return Ok(f);
        }
        let roots: Vec<&str> = self.snap.manifest.roots.iter().map(|r| r.name.as_str()).collect();
        if !roots.contains(&root) {
            return Err(QueryError::NotFound(format!(
                "no root named `{root}` in this snapshot (roots: {})",
                roots.join(", ")
            )));
        }
        let in_root = self.snap.docs.files.iter().filter(|f| f.root == root).map(|f| f.path.as_str());
        Err(QueryError::NotFound(format!(
            "no indexed file `{root}/{path}`{}",
            suggest(path, in_root, &format!("doc:{root}/"))
        )))
    }
}

pub(crate) fn parse_doc(address: &str) -> Result<DocAddress, QueryError> {
    match Address::parse(address.trim()) {
        Ok(Address::Doc(doc)) => Ok(doc),
        Ok(Address::Pattern(p)) => Err(QueryError::InvalidArgument(format!(
            "`{p}` is a pattern address; this call reads `doc:` addresses (use `fabdex read`)"
        ))),
        Err(e) => Err(QueryError::InvalidArgument(e.to_string())),
    }
}

/// "; nearest: `#a`, `#b`" — the closest few candidates by edit similarity.
pub(crate) fn suggest<'a>(wanted: &str, candidates: impl Iterator<Item = &'a str>, prefix: &str) -> String {
    let mut scored: Vec<(f64, &str)> = candidates.map(|c| (strsim::jaro_winkler(wanted, c), c)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    let shown: Vec<String> = scored.iter().take(3).map(|(_, c)| format!("`{prefix}{c}`")).collect();
    if shown.is_empty() { String::new() } else { format!("; nearest: {}", shown.join(", ")) }
}
