//! Outlines (sections of a file or folder, no text) and related sections
//! (parent, children, siblings, outgoing links, backlinks).

use fabdex_model::Limits;
use fabdex_model::records::{LinkKind, LinkTarget};
use serde::{Deserialize, Serialize};

use crate::read::{parse_doc, suggest};
use crate::{Engine, QueryError};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OutlineRow {
    pub address: String,
    pub heading: String,
    pub level: u8,
    pub line: u32,
    pub chars: u64,
    /// Parts of a section split for size (0 when whole).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub parts: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outline {
    pub prefix: String,
    pub files: usize,
    pub sections: Vec<OutlineRow>,
    /// True when rows were left out to respect the row limit.
    pub truncated: bool,
    /// How many rows were left out.
    pub omitted: usize,
}

/// A section named by address and heading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SectionRef {
    pub address: String,
    pub heading: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RelatedLink {
    /// The section the link is written in.
    pub from: String,
    pub kind: LinkKind,
    pub dest: String,
    pub line: u32,
    pub target: LinkTarget,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Related {
    pub address: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub parent: Option<SectionRef>,
    pub children: Vec<SectionRef>,
    pub siblings: Vec<SectionRef>,
    pub outgoing: Vec<RelatedLink>,
    pub backlinks: Vec<RelatedLink>,
    /// Items left out of each list to respect the limit, by list name.
    pub omitted: std::collections::BTreeMap<String, usize>,
}

impl Engine {
    /// The sections of every file whose `<root>/<path>` (or `<path>`) starts
    /// with `prefix`, or of the file a `doc:` address names.
    pub fn outline(&self, prefix: &str) -> Result<Outline, QueryError> {
        let prefix = prefix.trim();
        // A `doc:` address names exactly one file; anything else is a string prefix.
        let exact = prefix.starts_with("doc:");
        let wanted = if exact {
            let doc = parse_doc(prefix)?;
            self.file_index(&doc.root, &doc.path)?;
            doc.file_key()
        } else {
            prefix.trim_start_matches('/').to_string()
        };
        let files: Vec<u32> = self
            .snap
            .docs
            .files
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                let key = format!("{}/{}", f.root, f.path);
                if exact {
                    key == wanted
                } else {
                    wanted.is_empty() || key.starts_with(&wanted) || f.path.starts_with(&wanted)
                }
            })
            .map(|(i, _)| i as u32)
            .collect();
        if files.is_empty() {
            let all = self.snap.docs.files.iter().map(|f| f.path.as_str());
            return Err(QueryError::NotFound(format!(
                "no indexed file matches `{prefix}`{}",
                suggest(&wanted, all, "")
            )));
        }
        let mut rows = Vec::new();
        let mut total = 0usize;
        for &fi in &files {
            let f = &self.snap.docs.files[fi as usize];
            for s in self.snap.docs.sections.range(f.first_section, f.section_count) {
                total += 1;
                if rows.len() < Limits::OUTLINE_MAX_ROWS {
                    rows.push(OutlineRow {
                        address: s.address.clone(),
                        heading: s.section.heading.clone(),
                        level: s.section.level,
                        line: s.section.line_start,
                        chars: s.section.chars,
                        parts: s.section.parts.len(),
                    });
                }
            }
        }
        let omitted = total - rows.len();
        Ok(Outline { prefix: prefix.to_string(), files: files.len(), sections: rows, truncated: omitted > 0, omitted })
    }

    /// Navigation around one section.
    pub fn related(&self, address: &str) -> Result<Related, QueryError> {
        let doc = parse_doc(address)?;
        if doc.anchor.is_none() {
            return Err(QueryError::InvalidArgument(format!(
                "`{address}` names a whole file; `related` takes a section address (`…#anchor`); use `outline` for a file"
            )));
        }
        let resolved = self.resolve(&doc.base().with_part(None))?;
        let idx = resolved.section.expect("a section address resolves to a section");
        let rows = &self.snap.docs.sections;
        let row = &rows[idx as usize];
        let graph = self.graph();
        let sref = |i: u32| SectionRef {
            address: rows[i as usize].address.clone(),
            heading: rows[i as usize].section.heading.clone(),
        };
        let max = Limits::RELATED_MAX_ITEMS;
        let mut omitted = std::collections::BTreeMap::new();
        let mut bounded = |name: &str, items: Vec<u32>| -> Vec<u32> {
            if items.len() > max {
                omitted.insert(name.to_string(), items.len() - max);
            }
            items.into_iter().take(max).collect()
        };
        let siblings: Vec<u32> = match row.parent_row {
            Some(p) => graph.children[p as usize].iter().copied().filter(|&c| c != idx).collect(),
            None => {
                let f = &self.snap.docs.files[row.file as usize];
                (f.first_section..f.first_section + f.section_count)
                    .filter(|&i| {
                        i != idx && rows[i as usize].parent_row.is_none() && rows[i as usize].section.level > 0
                    })
                    .collect()
            }
        };
        let children = bounded("children", graph.children[idx as usize].clone());
        let siblings = bounded("siblings", siblings);
        let outgoing = bounded("outgoing", graph.outgoing[idx as usize].clone());
        let backlinks = bounded("backlinks", graph.backlinks[idx as usize].clone());
        let link = |i: u32| {
            let l = &self.snap.docs.links[i as usize];
            RelatedLink {
                from: rows[l.from as usize].address.clone(),
                kind: l.kind,
                dest: l.dest.clone(),
                line: l.line,
                target: l.target.clone(),
            }
        };
        Ok(Related {
            address: row.address.clone(),
            parent: row.parent_row.map(sref),
            children: children.into_iter().map(sref).collect(),
            siblings: siblings.into_iter().map(sref).collect(),
            outgoing: outgoing.into_iter().map(link).collect(),
            backlinks: backlinks.into_iter().map(link).collect(),
            omitted,
        })
    }
}
