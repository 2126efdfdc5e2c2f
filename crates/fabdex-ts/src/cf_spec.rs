//! `cf:` import specifiers: the platform's references to other programs and
//! cells, parsed with the exact grammar and its normalisations.
//!
//! ```text
//! cf:<ref>[/<subpath>][@<pin>]                    current space
//! cf:/<space>/<ref>[/<subpath>][@<pin>]           explicit space
//! cf://<host>/<space>/<ref>[/<subpath>][@<pin>]   explicit host
//! ref   = slug | "of:fid1:" hash | "pattern:" hash
//! hash  = [A-Za-z0-9_-]{43}        slug = [a-z0-9]+(-[a-z0-9]+)*, at most 80 chars
//! space = did:[a-z0-9]+:… or slug  host = [a-z0-9.-]+(:digits)?
//! pin   = trailing "@" hash
//! ```
//!
//! `cf:pattern:X@X` normalises to `cf:pattern:X`; `cf:pattern:X@Y` is an error.
//! Rejected: uppercase slugs, empty segments, a trailing `/`, a host without a
//! space, a subpath on a `pattern:` ref, and the compiler-internal namespaces
//! (`cf:module/`, `cf:cache-root/`, `cf:source-root/`, `cf:data-file/`).

pub use fabdex_model::ts::{CfRef, CfTarget};

/// Why a `cf:` specifier is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed cf: specifier `{specifier}`: {reason}")]
pub struct CfError {
    pub specifier: String,
    pub reason: String,
}

const MAX_SLUG: usize = 80;
const INTERNAL: [&str; 4] = ["module/", "cache-root/", "source-root/", "data-file/"];

pub fn is_hash(s: &str) -> bool {
    s.len() == 43 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn slug_problem(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("empty slug".into());
    }
    if s.len() > MAX_SLUG {
        return Some(format!("slug longer than {MAX_SLUG} chars"));
    }
    let ok = s.split('-').all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    (!ok).then(|| format!("`{s}` is not a slug (lowercase letters, digits and single hyphens)"))
}

fn is_did(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("did:") else { return false };
    match rest.split_once(':') {
        // The DID grammar's method-specific id: letters, digits, `.`, `-`,
        // `_`, `:` and `%`-escapes. No `@`, which would make a pin ambiguous
        // (found by the `cf_specifier` fuzz target).
        Some((method, id)) => {
            !method.is_empty()
                && method.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                && !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':' | b'%'))
        }
        None => false,
    }
}

fn is_host(s: &str) -> bool {
    let (name, port) = match s.split_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (s, None),
    };
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        && port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Parse a specifier. `Ok(None)` when it is not a `cf:` specifier at all.
pub fn parse(specifier: &str) -> Result<Option<CfRef>, CfError> {
    let Some(mut rest) = specifier.strip_prefix("cf:") else { return Ok(None) };
    let err = |reason: String| CfError { specifier: specifier.to_string(), reason };
    if let Some(ns) = INTERNAL.iter().find(|ns| rest.starts_with(**ns)) {
        return Err(err(format!("`cf:{ns}` is a compiler-internal namespace and cannot be imported")));
    }
    let mut pin = None;
    if let Some(at) = rest.rfind('@') {
        let p = &rest[at + 1..];
        if !is_hash(p) {
            return Err(err(format!("pin `@{p}` is not a 43-char hash")));
        }
        pin = Some(p.to_string());
        rest = &rest[..at];
    }
    let (host, space, path) = if let Some(r) = rest.strip_prefix("//") {
        let mut parts = r.splitn(3, '/');
        let host = parts.next().unwrap_or("");
        if !is_host(host) {
            return Err(err(format!("host `{host}` is malformed")));
        }
        let (Some(space), Some(path)) = (parts.next(), parts.next()) else {
            return Err(err("a host-qualified reference needs a space: `cf://host/space/ref`".into()));
        };
        (Some(host.to_string()), Some(space.to_string()), path)
    } else if let Some(r) = rest.strip_prefix('/') {
        let Some((space, path)) = r.split_once('/') else {
            return Err(err("a space-qualified reference needs a ref: `cf:/space/ref`".into()));
        };
        (None, Some(space.to_string()), path)
    } else {
        (None, None, rest)
    };
    if let Some(space) = &space {
        if space.is_empty() {
            return Err(err("empty space".into()));
        }
        if !is_did(space)
            && let Some(problem) = slug_problem(space)
        {
            return Err(err(format!("space: {problem}")));
        }
    }
    let mut segments = path.split('/');
    let token = segments.next().unwrap_or("");
    let subpath: Vec<&str> = segments.collect();
    if subpath.iter().any(|s| s.is_empty()) {
        return Err(err("empty path segment (or a trailing `/`)".into()));
    }
    let target = if let Some(hash) = token.strip_prefix("pattern:") {
        if !is_hash(hash) {
            return Err(err(format!("`pattern:{hash}` does not name a 43-char hash")));
        }
        CfTarget::Pattern { hash: hash.to_string() }
    } else if let Some(hash) = token.strip_prefix("of:fid1:") {
        if !is_hash(hash) {
            return Err(err(format!("`of:fid1:{hash}` does not name a 43-char hash")));
        }
        CfTarget::Cell { hash: hash.to_string() }
    } else if token.contains(':') {
        return Err(err(format!(
            "unsupported reference `{token}` (expected a slug, `of:fid1:<hash>` or `pattern:<hash>`)"
        )));
    } else {
        if let Some(problem) = slug_problem(token) {
            return Err(err(problem));
        }
        CfTarget::Slug { slug: token.to_string() }
    };
    if let CfTarget::Pattern { hash } = &target {
        if !subpath.is_empty() {
            return Err(err("a `pattern:` reference takes no subpath".into()));
        }
        match pin.as_deref() {
            Some(p) if p == hash => pin = None,
            Some(p) => return Err(err(format!("pin `@{p}` conflicts with the pattern hash"))),
            None => {}
        }
    }
    Ok(Some(CfRef { host, space, target, subpath: (!subpath.is_empty()).then(|| subpath.join("/")), pin }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const H: &str = "abcdefghijABCDEFGHIJ0123456789_-abcdefghijk";
    const H2: &str = "bbcdefghijABCDEFGHIJ0123456789_-abcdefghijk";

    #[test]
    fn parses_every_form() {
        let r = parse(&format!("cf:pattern:{H}")).unwrap().unwrap();
        assert_eq!(r.pattern_id(), Some(H));
        let r = parse("cf:notes/list.tsx").unwrap().unwrap();
        assert_eq!(r.target, CfTarget::Slug { slug: "notes".into() });
        assert_eq!(r.subpath.as_deref(), Some("list.tsx"));
        let r = parse(&format!("cf:/my-space/notes@{H}")).unwrap().unwrap();
        assert_eq!(r.space.as_deref(), Some("my-space"));
        assert_eq!(r.pin.as_deref(), Some(H));
        let r = parse(&format!("cf://toolshed.example:8000/did:key:z6Mk/of:fid1:{H}")).unwrap().unwrap();
        assert_eq!(r.host.as_deref(), Some("toolshed.example:8000"));
        assert_eq!(r.space.as_deref(), Some("did:key:z6Mk"));
        assert_eq!(r.target, CfTarget::Cell { hash: H.into() });
        assert_eq!(parse("commonfabric").unwrap(), None);
        assert_eq!(parse("./x.ts").unwrap(), None);
    }

    #[test]
    fn normalises_a_redundant_pin() {
        let r = parse(&format!("cf:pattern:{H}@{H}")).unwrap().unwrap();
        assert_eq!(r.pin, None);
        assert_eq!(r.to_string(), format!("cf:pattern:{H}"));
    }

    #[test]
    fn rejects_with_reasons() {
        let cases = [
            (format!("cf:pattern:{H}@{H2}"), "conflicts"),
            ("cf:Notes".to_string(), "not a slug"),
            ("cf:notes//x".to_string(), "empty path segment"),
            ("cf:notes/".to_string(), "trailing"),
            ("cf://host/notes".to_string(), "needs a space"),
            (format!("cf:pattern:{H}/x.tsx"), "no subpath"),
            ("cf:pattern:short".to_string(), "43-char hash"),
            ("cf:module/x".to_string(), "compiler-internal"),
            ("cf:notes@nothash".to_string(), "pin"),
            ("cf://Bad_Host/s/x".to_string(), "host"),
            ("cf:/Bad/x".to_string(), "space"),
            ("cf:".to_string(), "empty slug"),
            ("cf:a--b".to_string(), "not a slug"),
            (format!("cf:{}", "a".repeat(81)), "longer than 80"),
            ("cf:foo:bar".to_string(), "unsupported reference"),
        ];
        for (spec, reason) in cases {
            let e = parse(&spec).unwrap_err();
            assert!(e.to_string().contains(reason), "{spec}: {e}");
            assert!(e.to_string().contains(&spec), "the error names the specifier: {e}");
        }
    }

    proptest! {
        #[test]
        fn never_panics(s in "cf:[a-zA-Z0-9:/@._-]{0,60}") {
            let _ = parse(&s);
        }

        #[test]
        fn display_round_trips(
            host in proptest::option::of("[a-z0-9.-]{1,10}(:[0-9]{1,4})?"),
            space in proptest::option::of("[a-z0-9]{1,8}(-[a-z0-9]{1,5})?"),
            slug in "[a-z0-9]{1,8}(-[a-z0-9]{1,5}){0,2}",
            sub in proptest::option::of("[a-z0-9_.]{1,8}(/[a-z0-9_.]{1,8}){0,2}"),
            pin in proptest::option::of(Just(H.to_string())),
        ) {
            let space = if host.is_some() { space.or(Some("s".into())) } else { space };
            let r = CfRef { host, space, target: CfTarget::Slug { slug }, subpath: sub, pin };
            prop_assert_eq!(parse(&r.to_string()).unwrap().unwrap(), r);
        }
    }
}
