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

fn seeds(target: &str) -> Vec<PathBuf> {
    files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds").join(target), &[""])
}

#[test]
fn run_artifacts_of_the_seeds_and_edge_cases() {
    let seeds = seeds("run_artifacts");
    assert!(seeds.len() >= 6, "{} run-artifact seeds", seeds.len());
    let spec = std::fs::read_to_string(seeds.iter().find(|p| p.ends_with("spec.json")).unwrap()).unwrap();
    let (parsed, violations) = fabdex_runstate::artifacts::check_spec("spec.json", &spec);
    assert!(
        parsed.is_some() && violations.is_empty(),
        "the spec seed is valid, so its round trip is checked: {violations:?}"
    );
    let edge_cases = ["", "{}", "[]", "null", "{\"round\": -1}", "{\"dimensions\": [{}]}", "# draft [@x/y]", "\u{0}"];
    check_all(crate::run_artifacts, "run_artifacts", &seeds, &edge_cases);
}

#[test]
fn kits_of_the_seeds_through_admission() {
    let seeds = seeds("kit");
    let fixture = crate::served::fixture();
    assert!(
        fixture.citations.len() >= 4 && fixture.patterns.len() >= 3,
        "the fixture run read and inspected: {:?} {:?}",
        fixture.citations,
        fixture.patterns
    );
    let complete = std::fs::read_to_string(seeds.iter().find(|p| p.ends_with("complete.json")).unwrap()).unwrap();
    let mut text = complete.replace("$PATTERN0", &fixture.patterns[0]);
    for (i, c) in fixture.citations.iter().enumerate() {
        text = text.replace(&format!("$CITE{i}"), c);
    }
    let admission = fabdex_kit::admit(
        &fixture.engine,
        &fixture.contents,
        &[fabdex_kit::Handle { token: "mailDb".into(), description: "mail".into(), schema: None }],
        &serde_json::from_str(&text).unwrap(),
    );
    assert_eq!(admission.status, fabdex_kit::KitStatus::Complete, "{:?}", admission.problems);
    let edge_cases = ["", "{}", "{\"task\": \"\"}", "{\"patterns\": [{\"patternId\": \"\"}]}"];
    check_all(crate::kit, "kit", &seeds, &edge_cases);
}

#[test]
fn tool_calls_of_the_seeds() {
    let seeds = seeds("tool_call");
    assert!(seeds.len() >= 10, "{} tool-call seeds", seeds.len());
    let fixture = crate::served::fixture();
    // Every seed call answers but these two, which must be refused: an
    // alias in `read_source` and `have` as `TOKEN:TYPE` text once were too.
    let refused: Vec<String> = seeds
        .iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let (name, body) = text.split_once('\n').unwrap();
            let ctx = fabdex_tools::Context {
                session: fabdex_ledger::Session::new(&fixture.engine),
                runs: None,
                grants: None,
            };
            let answer = fabdex_tools::call(&ctx, name, serde_json::from_str(body).unwrap());
            if let Err(e) = &answer {
                eprintln!("{}: [{}] {}", p.display(), e.kind, e.message);
            }
            answer.is_err()
        })
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(refused, ["ledger.txt", "unknown.txt"], "seed calls refused");
    let edge_cases = [
        "",
        "read\n{\"address\": \"doc:../../etc/passwd\"}",
        "read\n{\"address\": \"doc:docs/x.md\", \"max_chars\": 0}",
        "search_docs\n{\"query\": \"\", \"limit\": 100000}",
        "read_source\n{\"pattern_id\": \"patterns/mail/inbox.tsx\", \"start_line\": 4294967295}",
        "pattern_deps\n{\"id\": \"patterns/mail/inbox.tsx\", \"depth\": 1000000}",
        "search_docs\n[1, 2]",
        "search_docs\n{\"run\": 5}",
    ];
    check_all(crate::tool_call, "tool_call", &seeds, &edge_cases);
}
