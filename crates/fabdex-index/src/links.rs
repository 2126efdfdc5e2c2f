//! Resolving links as written (`fabdex-md`) against every root of a build:
//! to a section, a file (indexed or merely present), a folder, an external
//! URL, or an explicit unresolved state with the reason.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use fabdex_model::records::{LinkKind, LinkTarget, MdLink};

pub struct Resolver<'a> {
    /// Root names and their folders.
    pub roots: Vec<(String, PathBuf)>,
    /// Every regular file seen, per root.
    pub seen: Vec<HashSet<String>>,
    /// Every folder that holds a seen file, per root.
    pub folders: Vec<HashSet<String>>,
    /// Indexed Markdown files: (root, path) → file index.
    pub files: HashMap<(usize, String), u32>,
    /// Section address (or `doc:r/p#<html anchor>`) → global section index.
    pub sections: &'a HashMap<String, u32>,
    /// Canonical address of each section, by global index.
    pub section_addresses: &'a [String],
}

fn has_scheme(dest: &str) -> bool {
    match dest.split_once(':') {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// Lexically normalise `base/target`; `None` when it climbs above `base`'s root.
fn normalize(parts: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in parts.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::Prefix(_) => out.push(c.as_os_str()),
        }
    }
    Some(out)
}

impl Resolver<'_> {
    /// Resolve one link found in `from_path` of root `root`.
    pub fn resolve(&self, root: usize, from_path: &str, link: &MdLink) -> (LinkTarget, Option<u32>) {
        let dest = link.dest.trim();
        if matches!(link.kind, LinkKind::Inline | LinkKind::Reference | LinkKind::Autolink)
            && (has_scheme(dest) || dest.starts_with("//"))
        {
            return (LinkTarget::External { url: dest.to_string() }, None);
        }
        let (path_part, anchor) = match dest.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (dest, None),
        };
        let path_part = path_part.split('?').next().unwrap_or("");
        let path_part = percent_decode(path_part);
        let from_dir = Path::new(from_path).parent().unwrap_or(Path::new(""));

        if path_part.is_empty() {
            return self.target_in(root, from_path, anchor);
        }
        // Candidate locations, in order of preference.
        let mut candidates: Vec<(usize, PathBuf)> = Vec::new();
        let root_relative = Path::new(path_part.trim_start_matches('/')).to_path_buf();
        let file_relative = from_dir.join(&path_part);
        match link.kind {
            LinkKind::Inline | LinkKind::Reference | LinkKind::Autolink => {
                if path_part.starts_with('/') {
                    candidates.push((root, root_relative));
                } else {
                    candidates.push((root, file_relative));
                }
            }
            LinkKind::CodePath | LinkKind::FileSpan => {
                candidates.push((root, root_relative.clone()));
                candidates.push((root, file_relative));
                for other in 0..self.roots.len() {
                    if other != root {
                        candidates.push((other, root_relative.clone()));
                    }
                }
            }
        }
        let wants_folder = path_part.ends_with('/');
        for (r, candidate) in &candidates {
            let Some((r, rel)) = self.locate(*r, candidate) else {
                continue;
            };
            if rel.is_empty() {
                return (LinkTarget::Folder { path: format!("{}/", self.roots[r].0) }, None);
            }
            if !wants_folder && self.files.contains_key(&(r, rel.clone())) {
                return self.target_in(r, &rel, anchor);
            }
            if !wants_folder && self.seen[r].contains(&rel) {
                return (
                    LinkTarget::File { path: format!("{}/{rel}", self.roots[r].0), address: None, indexed: false },
                    None,
                );
            }
            if self.folders[r].contains(&rel) {
                return (LinkTarget::Folder { path: format!("{}/{rel}/", self.roots[r].0) }, None);
            }
        }
        let shown = match link.kind {
            LinkKind::Inline | LinkKind::Reference | LinkKind::Autolink => {
                match candidates.first().and_then(|(r, c)| self.locate(*r, c)) {
                    Some((r, rel)) => format!("no file or folder `{}/{rel}`", self.roots[r].0),
                    None => format!("`{path_part}` points outside every indexed root"),
                }
            }
            _ => format!("no file or folder `{path_part}` in any indexed root"),
        };
        (LinkTarget::Unresolved { reason: shown }, None)
    }

    /// Map a root-relative candidate to (root, normalised relative path),
    /// following `..` into another root when the link climbs out of its own.
    fn locate(&self, root: usize, candidate: &Path) -> Option<(usize, String)> {
        if let Some(rel) = normalize(candidate) {
            return Some((root, rel.to_string_lossy().replace('\\', "/")));
        }
        let abs = normalize(&self.roots[root].1.join(candidate))?;
        self.roots
            .iter()
            .enumerate()
            .filter_map(|(i, (_, dir))| abs.strip_prefix(dir).ok().map(|rel| (i, dir.as_os_str().len(), rel)))
            .max_by_key(|(_, len, _)| *len)
            .map(|(i, _, rel)| (i, rel.to_string_lossy().replace('\\', "/")))
    }

    /// A link into an indexed file, with an optional anchor.
    fn target_in(&self, root: usize, path: &str, anchor: Option<&str>) -> (LinkTarget, Option<u32>) {
        let file_address = format!("doc:{}/{path}", self.roots[root].0);
        if !self.files.contains_key(&(root, path.to_string())) {
            return (
                LinkTarget::Unresolved {
                    reason: format!("`{}/{path}` is not an indexed Markdown file", self.roots[root].0),
                },
                None,
            );
        }
        match anchor.map(percent_decode) {
            None => (
                LinkTarget::File {
                    path: format!("{}/{path}", self.roots[root].0),
                    address: Some(file_address),
                    indexed: true,
                },
                None,
            ),
            Some(a) if a.is_empty() => (
                LinkTarget::File {
                    path: format!("{}/{path}", self.roots[root].0),
                    address: Some(file_address),
                    indexed: true,
                },
                None,
            ),
            Some(a) => {
                for candidate in [a.clone(), a.to_lowercase()] {
                    let address = format!("{file_address}#{candidate}");
                    if let Some(&row) = self.sections.get(&address) {
                        let address = self.section_addresses[row as usize].clone();
                        return (LinkTarget::Section { address }, Some(row));
                    }
                }
                (
                    LinkTarget::Unresolved {
                        reason: format!("`{}/{path}` has no heading with anchor `{a}`", self.roots[root].0),
                    },
                    None,
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_and_detects_schemes() {
        assert_eq!(percent_decode("a%20b.md"), "a b.md");
        assert_eq!(percent_decode("100%"), "100%");
        assert!(has_scheme("https://x"));
        assert!(has_scheme("mailto:a@b"));
        assert!(!has_scheme("docs/x.md"));
        assert!(!has_scheme("x.md#a:b"));
        assert_eq!(normalize(Path::new("a/../b/./c.md")), Some(PathBuf::from("b/c.md")));
        assert_eq!(normalize(Path::new("../x.md")), None);
    }
}
