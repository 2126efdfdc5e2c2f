//! The CLI's one printing module: every command's answer as text for a
//! person, or with `--json` as pretty JSON, and the failures whose details
//! were printed already (only the exit status and one stderr line remain).

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;

use anyhow::Result;
use fabdex_embed::cli::Models;
use fabdex_index::IndexReport;
use fabdex_kit::cli::{Admitted, KitAnswer};
use fabdex_ledger::audit;
use fabdex_ledger::cli::{LedgerAnswer, Verified, Written};
use fabdex_model::{Limits, ReadEnvelope};
use fabdex_query::{DepNode, DepTree, FileListing, Outline, PatternSearch, QueryError, Related, SearchResult};
use fabdex_research::Outcome;
use fabdex_research::cli::Listing;
use fabdex_runstate::cli::{Checked, RunAnswer};
use fabdex_tools::cli::{Contract, Evaluated, Found, Inspected, Intact};
use serde::Serialize;

/// A failure whose details were already printed (as text or JSON).
#[derive(Debug)]
pub struct Reported(pub String);

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Reported {}

/// Print a command's error (also as JSON under `--json`, unless its details
/// were printed already) and give the exit status its kind maps to.
pub fn failure(err: &anyhow::Error, json: bool) -> ExitCode {
    let (kind, code) = match err.downcast_ref::<QueryError>() {
        Some(q @ QueryError::InvalidArgument(_)) => (q.kind(), 2),
        Some(q @ QueryError::NotFound(_)) => (q.kind(), 3),
        Some(q @ QueryError::NoSnapshot(_)) => (q.kind(), 4),
        Some(q @ QueryError::Corrupt(_)) => (q.kind(), 5),
        Some(q @ QueryError::Denied(_)) => (q.kind(), 6),
        None => ("error", 1),
    };
    let message = format!("{err:#}");
    if json && err.downcast_ref::<Reported>().is_none() {
        println!("{}", serde_json::json!({"error": {"kind": kind, "message": message}}));
    }
    eprintln!("fabdex: {message}");
    ExitCode::from(code)
}

/// An answer a command prints: as JSON (its serde form) or as text.
pub trait Show: Serialize {
    /// Print the answer for a person.
    fn text(&self) -> Result<()>;
    /// Why the command fails although it answered (exit status 1), if it does.
    fn failure(&self) -> Option<String> {
        None
    }
    /// Print the JSON with every object's keys in sorted order: the answers
    /// `fabdex` has always printed that way (they were built as JSON values).
    fn sorted_keys(&self) -> bool {
        false
    }
}

/// Print `value` as JSON or text, then fail if the answer is a failure.
pub fn emit<T: Show>(value: &T, json: bool) -> Result<()> {
    if json && value.sorted_keys() {
        print_json(&serde_json::to_value(value)?)?
    } else if json {
        print_json(value)?
    } else {
        value.text()?
    }
    match value.failure() {
        Some(message) => Err(Reported(message).into()),
        None => Ok(()),
    }
}

pub fn print_json<T: Serialize + ?Sized>(value: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// The serde (JSON) name of a unit enum value, for text output.
fn label<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// `fabdex tools`: JSON in the format asked for (whatever `--json` says), or Markdown.
pub fn listing(listing: &Listing) -> Result<()> {
    match listing {
        Listing::Registry(tools) => print_json(tools),
        Listing::Json(value) => print_json(value),
        Listing::Markdown(text) => {
            print!("{text}");
            Ok(())
        }
    }
}

/// One line of `fabdex export`'s JSON lines, whatever `--json` says.
pub fn line(text: &str) {
    println!("{text}");
}

/// `fabdex index`'s report: `verbose` lists every skipped file, diagnostic and unresolved link.
#[derive(Serialize)]
#[serde(transparent)]
pub struct Report<'a> {
    pub report: &'a IndexReport,
    #[serde(skip)]
    pub verbose: bool,
}

impl Show for Report<'_> {
    fn text(&self) -> Result<()> {
        let (r, verbose) = (self.report, self.verbose);
        let c = &r.counts;
        println!(
            "snapshot {} {} in {} ms: {} files ({:.1} MB; {} extracted, {} reused from cache), {} sections ({} split parts), {} skipped",
            r.snapshot_id,
            if r.unchanged { "(unchanged)" } else { "published" },
            r.elapsed_ms,
            c.files,
            c.bytes as f64 / 1e6,
            r.extracted,
            r.reused_from_cache,
            c.sections,
            c.parts,
            c.skipped
        );
        if c.source_files > 0 {
            println!(
                "pattern sources: {} TS/TSX files, {} programs, {} that swc could not parse (outlined and flagged)",
                c.source_files, c.programs, c.source_parse_failures
            );
            println!("{}", r.profiles.summary());
        }
        if c.published_records > 0 {
            println!(
                "published records: {} ({} without source), identity: {} mismatch, {} unverifiable; {} with declared schemas that disagree with the source",
                c.published_records,
                c.records_without_source,
                c.identity_mismatch,
                c.identity_unverifiable,
                c.schema_disagreements
            );
        }
        if let Some(e) = &r.embeddings {
            println!(
                "embeddings: {} units in {} passages and {} programs by {} ({}; {}{}{}; {} encoded in {:.1} s, {} from cache, {} carried; {} read only to {} passages)",
                c.embedded_units,
                e.passages,
                e.programs,
                e.model.name,
                e.model_dir,
                e.precision.as_str(),
                e.int8_kernel.as_deref().map(|k| format!(" on {k}")).unwrap_or_default(),
                e.precision_chosen.map(|c| format!(", {}", c.describe())).unwrap_or_default(),
                e.encoded,
                e.encode_ms as f64 / 1e3,
                e.reused,
                e.carried,
                e.truncated,
                e.max_passages
            );
        }
        if !r.unchanged {
            println!("{}", r.incremental.summary());
        }
        println!(
            "links: {} ({} to sections, {} to files or folders, {} external, {} unresolved)",
            c.links, c.links_to_sections, c.links_to_files, c.links_external, c.links_unresolved
        );
        let mut by_reason: BTreeMap<&str, Vec<&str>> = Default::default();
        for s in &r.skipped {
            by_reason.entry(s.reason.as_str()).or_default().push(s.path.as_str());
        }
        let shown = |n: usize, cap: usize| if verbose { n } else { n.min(cap) };
        for (reason, paths) in &by_reason {
            println!(
                "skipped {} ({reason}): {}{}",
                paths.len(),
                paths.iter().take(shown(paths.len(), 5)).copied().collect::<Vec<_>>().join(", "),
                if paths.len() > shown(paths.len(), 5) { ", …" } else { "" }
            );
        }
        for d in r.diagnostics.iter().take(shown(r.diagnostics.len(), 20)) {
            for diag in &d.diagnostics {
                println!("diagnostic {}:{}:{}: {}", d.address, diag.line, diag.column, diag.message);
            }
        }
        if verbose {
            for u in &r.unresolved_links {
                println!("unresolved link in {} line {}: `{}` ({})", u.from, u.line, u.dest, u.reason);
            }
        } else if !r.unresolved_links.is_empty() {
            let files: BTreeSet<&str> =
                r.unresolved_links.iter().map(|u| u.from.split('#').next().unwrap_or(&u.from)).collect();
            println!(
                "unresolved links: {} in {} files; `fabdex index --verbose` lists them",
                r.unresolved_links.len(),
                files.len()
            );
        }
        if !verbose && (r.skipped.len() > 5 || r.diagnostics.len() > 20) {
            println!(
                "full report: {}/snapshots/{}/report.json (or run with --json or --verbose)",
                r.index_dir, r.snapshot_id
            );
        }
        Ok(())
    }
}

impl Show for Found {
    fn text(&self) -> Result<()> {
        match self {
            Found::Docs(result) => docs_hits(result),
            Found::Patterns(result) => pattern_hits(result),
        }
        Ok(())
    }
}

fn docs_hits(result: &SearchResult) {
    println!(
        "{} of {} matching sections for {:?} (terms: {}; ranked by {})",
        result.hits.len(),
        result.matched,
        result.query,
        result.terms.join(" "),
        result.mode
    );
    if !result.fused_clauses.is_empty() {
        println!("(each clause ranked too, and fused by reciprocal rank: {:?})", result.fused_clauses);
    }
    for (i, hit) in result.hits.iter().enumerate() {
        println!(
            "\n{:>2}. {}  [{:.2}{}]",
            i + 1,
            hit.address,
            hit.score,
            if hit.historical { ", historical" } else { "" }
        );
        println!("    {}", hit.heading_path.join(" › "));
        println!("    {}", hit.snippet);
        let fields: Vec<String> = hit.why.fields.iter().map(|(f, t)| format!("{f}: {}", t.join(" "))).collect();
        println!("    why: {}", fields.join("; "));
    }
}

fn pattern_hits(result: &PatternSearch) {
    println!(
        "{} of {} matching patterns (terms: {}; ranked by {})",
        result.hits.len(),
        result.matched,
        result.terms.join(" "),
        result.mode
    );
    for hit in &result.hits {
        let meta: Vec<&str> = [hit.kind.map(|k| k.as_str()), hit.quality.map(|q| q.as_str()), hit.tier.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        println!(
            "\n{:>2}. {}  [{:.2}] fit: {} · identity {} · {}{}",
            hit.rank,
            hit.entry,
            hit.score,
            hit.fit.verdict,
            hit.identity,
            hit.origin,
            if meta.is_empty() { String::new() } else { format!(" · {}", meta.join(", ")) }
        );
        println!("    {}", hit.import_hint);
        if let Some(d) = &hit.description {
            let d = d.replace('\n', " ");
            let short: String = d.chars().take(200).collect();
            println!("    {short}{}", if d.chars().count() > 200 { "…" } else { "" });
        }
        println!("    why: {}", hit.why.join("; "));
        pattern_fit(&hit.fit);
    }
    if result.omitted > 0 {
        println!(
            "\n… {} more matching patterns omitted (raise --limit, at most {})",
            result.omitted,
            Limits::SEARCH_MAX_LIMIT
        );
    }
}

fn pattern_fit(fit: &fabdex_query::Fit) {
    for m in &fit.returns {
        println!("    returns {}: {}", m.field, m.ty);
    }
    for n in &fit.not_returned {
        println!("    does not return {n}");
    }
    for n in &fit.not_accepted {
        println!("    does not accept {n}");
    }
    for i in &fit.satisfied {
        println!("    input {}: {} ← {}", i.input, i.ty, i.by.as_deref().unwrap_or(""));
    }
    for i in &fit.missing {
        let description = i.description.as_ref().map_or(String::new(), |d| format!(" — {d}"));
        println!("    needs input {}: {}{description}", i.input, i.ty);
    }
}

impl Show for ReadEnvelope {
    fn text(&self) -> Result<()> {
        let env = self;
        print!("{}", env.text);
        if !env.text.ends_with('\n') {
            println!();
        }
        let lines = match (env.lines, env.clipped_lines.is_empty()) {
            (Some([a, b]), true) => format!(" · lines {a}–{b}"),
            (Some([a, b]), false) => format!(" · lines {a}–{b}, {} cut", env.clipped_lines.len()),
            _ => String::new(),
        };
        let next = match &env.next {
            Some(next) => format!("\n── truncated; continue with: fabdex open '{next}'"),
            None => String::new(),
        };
        eprintln!(
            "── {} · chars {}–{} of {} · {} · origin {}{lines}{next}",
            env.address, env.offset, env.end, env.total, env.digest, env.origin
        );
        Ok(())
    }
}

impl Show for Outline {
    fn text(&self) -> Result<()> {
        for row in &self.sections {
            let indent = "  ".repeat(row.level.saturating_sub(1) as usize);
            let heading = if row.level == 0 { "(preamble)" } else { &row.heading };
            let parts = if row.parts > 0 { format!(", {} parts", row.parts) } else { String::new() };
            println!("{indent}{heading}  — {} (line {}, {} chars{parts})", row.address, row.line, row.chars);
        }
        if self.truncated {
            println!(
                "… {} more sections omitted (limit {}); narrow the prefix",
                self.omitted,
                Limits::OUTLINE_MAX_ROWS
            );
        }
        Ok(())
    }
}

impl Show for Related {
    fn text(&self) -> Result<()> {
        println!("{}", self.address);
        if let Some(p) = &self.parent {
            println!("  parent:   {} ({})", p.address, p.heading);
        }
        for c in &self.children {
            println!("  child:    {} ({})", c.address, c.heading);
        }
        for s in &self.siblings {
            println!("  sibling:  {} ({})", s.address, s.heading);
        }
        for l in &self.outgoing {
            println!("  links to: {} → {}", l.dest, serde_json::to_string(&l.target)?);
        }
        for l in &self.backlinks {
            println!("  linked from: {} (line {})", l.from, l.line);
        }
        for (list, n) in &self.omitted {
            println!("  … {n} more {list} omitted (limit {})", Limits::RELATED_MAX_ITEMS);
        }
        Ok(())
    }
}

impl Show for Inspected {
    fn text(&self) -> Result<()> {
        let inspection = &self.inspection;
        println!("{}  {}", inspection.entry, inspection.pattern_id);
        println!("  {}", inspection.import_hint);
        let meta: Vec<String> = [
            inspection.kind.map(|k| format!("kind {}", k.as_str())),
            inspection.quality.map(|q| format!("quality {}", q.as_str())),
            inspection.owner_did.as_ref().map(|o| format!("owner {o}")),
            inspection.created_at.as_ref().map(|c| format!("created {c}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        println!(
            "  origin {} · identity {}{}",
            inspection.origin,
            inspection.identity.status.as_str(),
            if meta.is_empty() { String::new() } else { format!(" · {}", meta.join(" · ")) }
        );
        for reason in &inspection.identity.reasons {
            println!("    {reason}");
        }
        if !inspection.has_source {
            println!("  no source: the record was published without its program");
        }
        if inspection.declared_schemas.is_some() {
            println!(
                "  declared schemas vs extracted: argument {}, result {}",
                label(&inspection.agreement.argument),
                label(&inspection.agreement.result)
            );
        }
        program(inspection);
        println!("{}", self.contract_text()?);
        Ok(())
    }
}

/// A program's dependencies, dependents, description, files, exports and diagnostics.
fn program(inspection: &fabdex_query::Inspection) {
    for d in &inspection.dependencies {
        println!("  depends on {d}");
    }
    for d in &inspection.dependents {
        println!("  used by {d}");
    }
    if let Some(d) = &inspection.description {
        println!("  {}", d.replace('\n', " "));
    }
    for f in &inspection.files {
        println!("  file {} ({} bytes, {})", f.name, f.bytes, f.digest);
    }
    for e in &inspection.exports {
        println!("  export {} {:?} (lines {}-{})", e.name, e.kind, e.line_start, e.line_end);
    }
    for d in &inspection.diagnostics {
        println!("  diagnostic {}:{}:{}: {}", d.file, d.diagnostic.line, d.diagnostic.column, d.diagnostic.message);
    }
}

impl Show for Contract {
    fn text(&self) -> Result<()> {
        print!("{}", Contract::text(self)?);
        Ok(())
    }
}

impl Show for FileListing {
    fn text(&self) -> Result<()> {
        println!("{}  {} (identity {})", self.entry, self.pattern_id, self.identity);
        if !self.has_source {
            println!("  no source: the record was published without its program");
        }
        for f in &self.files {
            let lines = f.lines.map_or(String::new(), |l| format!(", {l} lines"));
            let flags = match (f.main, f.parse_failed) {
                (true, false) => " [main]",
                (true, true) => " [main, does not parse]",
                (false, true) => " [does not parse]",
                _ => "",
            };
            println!("  {}  ({} bytes{lines}, {}){flags}", f.address, f.bytes, f.digest);
        }
        Ok(())
    }
}

impl Show for DepTree {
    fn text(&self) -> Result<()> {
        dep(&self.root, 0);
        if self.omitted > 0 {
            println!("… {} more dependencies omitted (limit {})", self.omitted, Limits::DEPS_MAX_NODES);
        }
        Ok(())
    }
}

fn dep(node: &DepNode, depth: usize) {
    let label = node.entry.as_deref().unwrap_or("(not in this snapshot)");
    let flags = match (node.cycle, node.cut) {
        (true, _) => " (cycle: shown above)",
        (_, true) => " (not expanded: depth or node limit)",
        _ => "",
    };
    println!("{}{}  {}  identity {}{flags}", "  ".repeat(depth), node.pattern_id, label, node.identity);
    for child in &node.dependencies {
        dep(child, depth + 1);
    }
}

impl Show for Intact {
    fn sorted_keys(&self) -> bool {
        true
    }

    fn text(&self) -> Result<()> {
        let v = &self.verified;
        println!(
            "snapshot {}: intact ({} tables, {} search files, {} blobs checked against the manifest)",
            self.snapshot, v.tables, v.search_files, v.blobs
        );
        Ok(())
    }
}

impl Show for Evaluated {
    fn text(&self) -> Result<()> {
        match self {
            Evaluated::Patterns(report) => {
                for t in &report.per_task {
                    let rank = t.best_rank.map_or("-".to_string(), |r| r.to_string());
                    println!("{rank:>5}  {}", t.task);
                }
                println!(
                    "\n{} tasks: success@1 {:.2}  success@5 {:.2}  MRR {:.3} (over the top {})",
                    report.tasks, report.success_at_1, report.success_at_5, report.mrr, report.depth
                );
            }
            Evaluated::Docs(report) => {
                for q in &report.per_question {
                    let rank = q.best_rank.map_or("-".to_string(), |r| r.to_string());
                    println!("{rank:>5}  {}", q.q);
                }
                let at_k = if matches!(report.k, 5 | 10) {
                    String::new()
                } else {
                    format!("  recall@{} {:.2}", report.k, report.recall_at_k)
                };
                println!(
                    "\n{} questions, mode {}: recall@5 {:.2}  recall@10 {:.2}{at_k}  MRR@10 {:.3}  nDCG@10 {:.3}",
                    report.questions,
                    report.mode,
                    report.recall_at_5,
                    report.recall_at_10,
                    report.mrr_at_10,
                    report.ndcg_at_10
                );
            }
        }
        Ok(())
    }
}

impl Show for Models {
    fn text(&self) -> Result<()> {
        if self.models.is_empty() {
            println!("no models registered in {}", self.registry.display());
        }
        for m in &self.models {
            println!("{}  {}  dim {}  {}", m.name, m.digest, m.dim, m.dir.display());
        }
        Ok(())
    }
}

impl Show for LedgerAnswer {
    fn sorted_keys(&self) -> bool {
        matches!(self, LedgerAnswer::Cite(_))
    }

    fn text(&self) -> Result<()> {
        match self {
            LedgerAnswer::Show(contents) => ledger_records(contents)?,
            LedgerAnswer::Cite(cited) => {
                let check = &cited.check;
                let record = &cited.record;
                println!("{} (run {}, record {}): {}", check.address, record.run, record.seq, label(&check.status));
                if let Some(d) = &check.detail {
                    println!("  {d}");
                }
                if let Some(t) = &check.text {
                    println!("{t}");
                }
            }
            LedgerAnswer::Verify(verified) => verification(&verified.verification),
            LedgerAnswer::Consulted(set) => {
                for (label, list) in [("docs", &set.docs), ("patterns", &set.patterns)] {
                    println!("{label}: {}", list.len());
                    for c in list {
                        println!("  {} ({}, {})", c.address, c.origin, c.citation.as_deref().unwrap_or("-"));
                    }
                }
            }
            LedgerAnswer::Exposure(e) => {
                for (origin, n) in &e.released {
                    println!("{origin}: {n} released");
                }
                for (origin, n) in &e.withheld {
                    println!("{origin}: {n} withheld");
                }
            }
        }
        Ok(())
    }

    fn failure(&self) -> Option<String> {
        match self {
            LedgerAnswer::Cite(c) if c.check.status != audit::Status::Identical => {
                Some(format!("citation `{}` is {} in snapshot {}", c.citation, label(&c.check.status), c.snapshot))
            }
            LedgerAnswer::Verify(Verified { verification: v, run }) if !v.ok() => {
                Some(format!("run `{run}` does not verify: {} changed since, {} gone", v.changed_since, v.gone))
            }
            _ => None,
        }
    }
}

fn ledger_records(contents: &fabdex_ledger::Contents) -> Result<()> {
    for r in &contents.records {
        if let Some(turn) = &r.call.turn {
            println!("{:>4} {} {}", r.seq, r.time, turn.summary());
        } else {
            println!("{:>4} {} {} {}", r.seq, r.time, r.call.tool, serde_json::to_string(&r.call.arguments)?);
            for i in &r.call.items {
                let state = if i.released { "" } else { " (withheld)" };
                println!("       {} {}{state}", i.address, label(&i.kind));
            }
        }
        if let Some(e) = &r.call.error {
            println!("       error: {e}");
        }
    }
    for p in &contents.problems {
        println!("line {}: {}", p.line, p.problem);
    }
    Ok(())
}

fn verification(v: &audit::Verification) {
    for c in v.checks.iter().filter(|c| c.status != audit::Status::Identical) {
        println!("{}  #{} {}  {}", label(&c.status), c.seq, c.address, c.detail.as_deref().unwrap_or(""));
    }
    for p in &v.problems {
        println!("ledger line {} (not a read; reported, not failed): {}", p.line, p.problem);
    }
    println!(
        "run {} against snapshot {}: {} identical, {} changed since, {} gone, {} not checked (withheld or metadata)",
        v.run, v.snapshot, v.identical, v.changed_since, v.gone, v.not_checked
    );
}

impl Show for Written {
    fn text(&self) -> Result<()> {
        let s = &self.sidecar;
        println!(
            "wrote {}: {} docs and {} patterns consulted, {} imports, exposure {}",
            self.out.display(),
            s.consulted.docs.len(),
            s.consulted.patterns.len(),
            s.imports.len(),
            s.exposure.join(", ")
        );
        Ok(())
    }
}

impl Show for RunAnswer {
    fn sorted_keys(&self) -> bool {
        matches!(self, RunAnswer::Checked(_) | RunAnswer::Applied(_))
    }

    fn text(&self) -> Result<()> {
        match self {
            RunAnswer::New(info) => println!("{}", info.run),
            RunAnswer::Schema(schema) => print_json(schema)?,
            RunAnswer::Checked(checked) => violations(checked),
            RunAnswer::Planned(plan) => {
                for a in &plan.actions {
                    println!("{}", serde_json::to_string(a)?);
                }
            }
            RunAnswer::Applied(applied) => {
                for a in &applied.applied {
                    println!("{}", serde_json::to_string(a)?);
                }
                if !applied.violations.is_empty() {
                    for v in &applied.violations {
                        println!("{v}");
                    }
                }
            }
        }
        Ok(())
    }

    fn failure(&self) -> Option<String> {
        match self {
            RunAnswer::Checked(c) if !c.valid => Some(format!("{}: {} violations", c.what, c.violations.len())),
            RunAnswer::Applied(a) if !a.violations.is_empty() => {
                Some(format!("{}: {} violations after applying", a.root.display(), a.violations.len()))
            }
            _ => None,
        }
    }
}

fn violations(checked: &Checked) {
    if checked.valid {
        println!("{}: valid", checked.what);
    }
    for v in &checked.violations {
        println!("{v}");
    }
}

impl Show for KitAnswer {
    fn text(&self) -> Result<()> {
        let Admitted { admission, kit } = match self {
            KitAnswer::Schema(schema) => return print_json(schema),
            KitAnswer::Admitted(admitted) => admitted.as_ref(),
        };
        println!("kit {}: {}", kit.display(), label(&admission.status));
        for p in &admission.problems {
            println!("  [{}] {}: {}", p.rule, p.pointer, p.message);
        }
        for m in &admission.kit.missing {
            println!("  missing input `{}` ({}) of {}: {}", m.argument, m.ty, m.pattern_id, m.resolution);
        }
        println!(
            "  {} sources from the ledger, {} patterns admitted, exposure {}",
            admission.kit.sources.len(),
            admission.kit.patterns.len(),
            admission.kit.exposure.join(", ")
        );
        Ok(())
    }

    fn failure(&self) -> Option<String> {
        let KitAnswer::Admitted(admitted) = self else { return None };
        let Admitted { admission, kit } = admitted.as_ref();
        if admission.status == fabdex_kit::KitStatus::Complete {
            return None;
        }
        let n = admission.problems.len();
        Some(format!("kit `{}` is incomplete: {n} problem{}", kit.display(), if n == 1 { "" } else { "s" }))
    }
}

impl Show for Outcome {
    fn text(&self) -> Result<()> {
        print!("{}", outcome(self));
        Ok(())
    }

    fn failure(&self) -> Option<String> {
        (self.status != fabdex_kit::KitStatus::Complete)
            .then(|| format!("research run {} ended with an incomplete kit ({})", self.run, self.stopped))
    }
}

/// A research outcome as text for a person.
fn outcome(o: &Outcome) -> String {
    let k = &o.kit;
    let mut out = format!("research {}: kit {} ({})\n  model: {}\n", o.run, label(&o.status), o.stopped, o.model.label);
    let s = &o.spent;
    out.push_str(&format!(
        "  spent: {} turns ({} repair), {} tool calls ({} refused), {} chars of results, {} tokens in / {} out, {} ms ({} ms model, {} ms tools)\n",
        s.turns, s.repair_turns, s.tool_calls, s.refused_calls, s.chars, s.tokens_in, s.tokens_out, s.wall_ms, s.model_ms, s.tools_ms
    ));
    if let Some(p) = &o.prior {
        out.push_str(&format!("  prior: {}\n", p.note));
    }
    out.push_str(&format!("  recommendation: {} — {}\n", label(&k.recommendation.kind), k.recommendation.rationale));
    for p in &k.patterns {
        let entry = p.record.as_ref().and_then(|r| r.get("entry")).and_then(|e| e.as_str()).unwrap_or("");
        out.push_str(&format!("  pattern {} {entry}: {}\n", p.pattern_id, p.role));
    }
    for i in &k.inputs {
        out.push_str(&format!("  input {} ← handle {}\n", i.name, i.token));
    }
    for (n, step) in k.steps.iter().enumerate() {
        out.push_str(&format!("  {}. {} [{}]\n", n + 1, step.text, step.source_ids.join(", ")));
    }
    for r in &k.rules {
        out.push_str(&format!("  rule: {} [{}]\n", r.rule, r.source_ids.join(", ")));
    }
    for m in &k.missing {
        out.push_str(&format!("  missing {}: {}\n", m.kind, m.description.as_deref().unwrap_or(&m.resolution)));
        if m.kind == "input" {
            out.push_str(&format!("    `{}` ({}) of {}: {}\n", m.argument, m.ty, m.pattern_id, m.resolution));
        }
    }
    for p in &o.problems {
        out.push_str(&format!("  [{}] {}: {}\n", p.rule, p.pointer, p.message));
    }
    out.push_str(&format!("  {} sources cited; exposure: {}\n", k.sources.len(), k.exposure.join(", ")));
    out
}
