//! Every invariant over seed inputs: the project's own corpus (the fuzz
//! targets' seeds too), hand-made edge cases, and `regressions/` (inputs that
//! once broke an invariant, named `<target>-<what>.txt`).

use std::path::{Path, PathBuf};

fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Files under `dir` whose names end with one of `exts`.
fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if exts.iter().any(|e| path.to_string_lossy().ends_with(e)) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn regressions(target: &str) -> Vec<String> {
    files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions"), &[".txt"])
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(&format!("{target}-")))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// `check` over the text of each seed file, each edge case, and the
/// target's regressions.
fn check_all(check: fn(&str), target: &str, seeds: &[PathBuf], edge_cases: &[&str]) {
    for path in seeds {
        check(&std::fs::read_to_string(path).unwrap());
    }
    for text in edge_cases {
        check(text);
    }
    for text in regressions(target) {
        check(&text);
    }
}

#[test]
fn markdown_of_the_corpus_and_edge_cases() {
    let seeds = files(&project_root().join("corpus"), &[".md"]);
    assert!(seeds.len() > 10, "{} Markdown seeds", seeds.len());
    let long = "word ".repeat(500);
    let edge_cases = [
        "",
        "no heading at all",
        "---\ntitle: x\n---\n# T\nbody",
        "---\nbroken: [\n---\n# T",
        "# é\n## é\n### é",
        "```\nnever closed\n# not a heading",
        "# A\n\n<a id=\"x\"></a>\n\n## A\n",
        &long,
    ];
    check_all(crate::markdown, "markdown", &seeds, &edge_cases);
}

#[test]
fn typescript_of_the_corpus_and_edge_cases() {
    let seeds = files(&project_root().join("corpus/patterns"), &[".ts", ".tsx"]);
    assert!(seeds.len() > 5, "{} TS seeds", seeds.len());
    let edge_cases = [
        "",
        "export default pattern<{ a: string }>(({ a }) => ({ a }));",
        "export default pattern(",
        "interface A { b: A }\nexport default pattern<A, A>((x) => x);",
        "const x = <div>{</div>",
    ];
    check_all(crate::typescript, "typescript", &seeds, &edge_cases);
}

#[test]
fn addresses_and_specifiers_round_trip() {
    for text in [
        "doc:docs/a.md",
        "doc:docs/a.md#x~2@10",
        "doc:docs/a%20b.md#x",
        "pattern:abc/main.tsx:L1-L9",
        "pattern:abc/types.ts#Message",
        "doc:",
        "doc:/",
        "pattern:",
        "",
    ] {
        crate::address(text);
    }
    let hash = "a".repeat(43);
    for text in [
        format!("cf:pattern:{hash}"),
        format!("cf:/space/pattern:{hash}@{hash}"),
        "cf://host.example:8080/space/slug/sub".to_string(),
        format!("cf:of:fid1:{hash}/a/b"),
        "cf:".to_string(),
        "cf:/".to_string(),
    ] {
        crate::cf_specifier(&text);
    }
    for text in regressions("address") {
        crate::address(&text);
    }
    for text in regressions("cf_specifier") {
        crate::cf_specifier(&text);
    }
}

#[test]
fn published_lines_of_the_corpus_round_trip() {
    let text = std::fs::read_to_string(project_root().join("corpus/published/registry.jsonl")).unwrap();
    let mut parsed = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        crate::published_line(line);
        parsed += serde_json::from_str::<fabdex_model::registry::PublishedPattern>(line).is_ok() as usize;
    }
    assert!(parsed > 0, "the corpus's records parse");
    for text in ["{}", "[]", "{\"patternId\": 1}", "null"] {
        crate::published_line(text);
    }
    for text in regressions("published_line") {
        crate::published_line(&text);
    }
}

/// The invariants can fail: an address that prints as other text is caught.
#[test]
#[should_panic(expected = "does not print back as itself")]
fn a_broken_invariant_is_a_finding() {
    crate::round_trip("doc:fuzz/notes/file.md#a@0");
}
