//! Pattern search on the platform's real pattern library: a checkout of
//! `commontoolsinc/labs`'s `packages/patterns`, named by
//! `FABDEX_LABS_PATTERNS` or found at `../labs-checkout/packages/patterns`
//! beside the project. Every test here skips (passes with a note) when no
//! checkout is present; nothing of it is committed.

mod common;

use std::path::PathBuf;

use common::{project_root, read_json};
use fabdex_index::{BuildOptions, Config};
use fabdex_query::{Engine, PatternQuery, PatternTask};

fn labs_patterns() -> Option<PathBuf> {
    let path = std::env::var_os("FABDEX_LABS_PATTERNS")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_root().join("../labs-checkout/packages/patterns"));
    if path.join("index.md").is_file() {
        Some(path)
    } else {
        eprintln!("skipping: no labs pattern checkout at {} (set FABDEX_LABS_PATTERNS)", path.display());
        None
    }
}

/// One build of the checkout, shared by the tests of this file.
fn labs_index() -> Option<&'static (PathBuf, fabdex_index::IndexReport)> {
    static INDEX: std::sync::OnceLock<Option<(PathBuf, fabdex_index::IndexReport)>> = std::sync::OnceLock::new();
    INDEX
        .get_or_init(|| {
            let patterns = labs_patterns()?;
            let dir = common::fresh_scratch_dir("labs-patterns-index");
            std::fs::create_dir_all(&dir).unwrap();
            let toml = dir.join("fabdex.toml");
            let root = patterns.display().to_string().replace('\\', "/");
            std::fs::write(&toml, format!("[[root]]\nname = \"patterns\"\npath = \"{root}\"\nkind = \"patterns\"\n"))
                .unwrap();
            let config = Config::load(&toml).unwrap();
            let report = fabdex_index::build(&config, &BuildOptions::new(dir.join("index"))).unwrap();
            Some((dir.join("index"), report))
        })
        .as_ref()
}

#[test]
fn the_labs_task_set_finds_its_programs() {
    let Some((dir, _)) = labs_index() else { return };
    let engine = Engine::open_index(dir).unwrap();
    let tasks: Vec<PatternTask> = read_json(&project_root().join("tests/data/labs-pattern-tasks.json"));
    assert!(tasks.len() >= 40, "{} tasks", tasks.len());
    let report = engine.eval_patterns(&tasks).unwrap();
    eprintln!(
        "labs pattern tasks: success@1 {:.2} success@5 {:.2} MRR@5 {:.3}",
        report.success_at_1, report.success_at_5, report.mrr_at_5
    );
    assert!(report.success_at_5 >= 0.85, "success@5 {:.2}", report.success_at_5);
    assert!(report.mrr_at_5 >= 0.60, "MRR@5 {:.3}", report.mrr_at_5);
}

#[test]
fn a_hit_says_where_its_description_and_tier_came_from() {
    let Some((dir, report)) = labs_index() else { return };
    let engine = Engine::open_index(dir).unwrap();
    let q = PatternQuery { text: "track expenses by category with budget limits".into(), ..Default::default() };
    let result = engine.search_patterns(&q).unwrap();
    assert_eq!(result.mode, "bm25f+semantic");
    let top = &result.hits[0];
    assert!(
        top.entry.ends_with("budget-tracker/main.tsx"),
        "{:?}",
        result.hits.iter().map(|h| &h.entry).collect::<Vec<_>>()
    );
    assert!(
        top.why.iter().any(|w| w.starts_with("catalog: doc:patterns/index.md#budget-trackermaintsx: ")),
        "{:?}",
        top.why
    );
    assert_eq!(top.tier.as_deref(), Some("demo"));
    assert!(top.tier_source.as_deref().is_some_and(|s| s.starts_with("doc:patterns/index.md#")), "{top:?}");
    // Fixtures are found when asked for by tier, and then not ranked down.
    let fixtures = engine
        .search_patterns(&PatternQuery { tier: Some("fixture".into()), text: "counter".into(), ..Default::default() })
        .unwrap();
    assert!(!fixtures.hits.is_empty() && fixtures.hits.iter().all(|h| h.tier.as_deref() == Some("fixture")));
    // The report counts what was attached and names what no catalog describes.
    let profiles = &report.profiles;
    assert!(profiles.catalog_programs >= 40 && profiles.keyword_programs >= 30, "{profiles:?}");
    assert!(profiles.tiers.values().flat_map(|t| t.keys()).all(|t| !t.contains(['/', '.'])), "{:?}", profiles.tiers);
    assert!(profiles.undescribed.iter().all(|e| !e.ends_with("budget-tracker/main.tsx")));
    assert!(!profiles.undescribed.is_empty());
}
