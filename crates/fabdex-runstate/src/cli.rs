//! `fabdex run …`: make a run, print an artifact's schema, validate one
//! artifact or a whole run folder, and plan (or apply) its next step. Each
//! returns what it found for the binary's printing module to show.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use fabdex_ledger::RunInfo;
use fabdex_ledger::cli::Scope;
use serde::Serialize;

use crate::artifacts as a;
use crate::plan::{Action, Plan};

#[derive(Debug, Clone, clap::Subcommand)]
pub enum RunCommand {
    /// Make a new research run and print its id.
    New,
    /// Print the JSON Schema of a run artifact: spec, evidence, eval or meta.
    Schema { name: String },
    /// Validate one artifact of a deep-research run folder.
    Validate(ValidateArgs),
    /// Validate a whole run folder: meta.json against itself and every artifact.
    ValidateRun { root: PathBuf },
    /// The next action for a run folder, from the files on disk (changes nothing
    /// unless --apply, which performs the state-only transitions and re-validates).
    Plan {
        root: PathBuf,
        #[arg(long)]
        apply: bool,
    },
}

/// `fabdex run validate`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ValidateArgs {
    /// spec, evidence, draft, eval, feedback or meta.
    pub kind: String,
    pub path: PathBuf,
    /// The run's spec.json (evidence, draft, eval).
    #[arg(long)]
    pub spec: Option<PathBuf>,
    /// Round 2+ evidence: the canonical prior evidence it must keep.
    #[arg(long)]
    pub prior: Option<PathBuf>,
    /// The context directory of canonical evidence (draft, eval).
    #[arg(long)]
    pub evidence_dir: Option<PathBuf>,
    /// The draft an eval judges (eval).
    #[arg(long)]
    pub draft: Option<PathBuf>,
    /// The eval a feedback file pairs with (feedback).
    #[arg(long)]
    pub eval: Option<PathBuf>,
    /// Evidence: fabdex-address sources must be citations of this fabdex run.
    #[arg(long = "ledger", value_name = "RUN")]
    pub ledger_run: Option<String>,
}

/// What a `fabdex run …` command found.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum RunAnswer {
    New(RunInfo),
    Schema(serde_json::Value),
    Checked(Checked),
    Planned(Plan),
    Applied(Applied),
}

/// The violations of one file or run folder (none: valid).
#[derive(Debug, Serialize)]
pub struct Checked {
    #[serde(skip)]
    pub what: String,
    pub valid: bool,
    pub violations: Vec<a::Violation>,
}

impl Checked {
    pub fn new(what: &str, violations: Vec<a::Violation>) -> Checked {
        Checked { what: what.to_string(), valid: violations.is_empty(), violations }
    }
}

/// The state-only transitions applied, and the run's violations after them.
#[derive(Debug, Serialize)]
pub struct Applied {
    #[serde(skip)]
    pub root: PathBuf,
    pub applied: Vec<Action>,
    pub violations: Vec<a::Violation>,
}

impl RunCommand {
    pub fn run(&self, scope: &Scope) -> Result<RunAnswer> {
        Ok(match self {
            RunCommand::New => RunAnswer::New(scope.store().new_run(scope.snapshot_id().as_deref())?),
            RunCommand::Schema { name } => RunAnswer::Schema(crate::schema(name).ok_or_else(|| {
                fabdex_query::QueryError::InvalidArgument(format!("no schema `{name}` (spec, evidence, eval, meta)"))
            })?),
            RunCommand::Validate(args) => RunAnswer::Checked(args.run(scope)?),
            RunCommand::ValidateRun { root } => {
                RunAnswer::Checked(Checked::new(&root.display().to_string(), crate::meta::validate_run(root)))
            }
            RunCommand::Plan { root, apply } => {
                let plan = crate::plan::plan(root);
                if !apply {
                    return Ok(RunAnswer::Planned(plan));
                }
                let violations = crate::plan::apply(root, &plan, &fabdex_ledger::store::now_rfc3339())?;
                RunAnswer::Applied(Applied { root: root.clone(), applied: plan.actions, violations })
            }
        })
    }
}

fn read(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).with_context(|| format!("cannot read `{}`", p.display()))
}

fn invalid(message: String) -> anyhow::Error {
    fabdex_query::QueryError::InvalidArgument(message).into()
}

impl ValidateArgs {
    /// Check one artifact, with the context its kind needs.
    pub fn run(&self, scope: &Scope) -> Result<Checked> {
        let text = read(&self.path)?;
        let name = self.path.display().to_string();
        let spec = match &self.spec {
            Some(p) => {
                let (spec, violations) = a::check_spec(&p.display().to_string(), &read(p)?);
                if spec.is_none() {
                    // A spec that does not parse cannot vouch for anything checked against it.
                    return Ok(Checked::new(&p.display().to_string(), violations));
                }
                spec
            }
            None => None,
        };
        let violations = match self.kind.as_str() {
            "spec" => a::check_spec(&name, &text).1,
            "meta" => crate::meta::check_meta(&name, &text).1,
            "evidence" => self.evidence(scope, &name, &text, spec.as_ref())?,
            "draft" => {
                let dir = self.evidence_dir.as_ref().ok_or_else(|| invalid("draft needs --evidence-dir".into()))?;
                a::check_draft(&name, &text, &a::load_evidence_dir(dir))
            }
            "eval" => {
                let mut v = a::check_eval(&name, &text, spec.as_ref()).1;
                if let Some(d) = &self.draft
                    && !d.exists()
                {
                    v.push(a::Violation {
                        file: name.clone(),
                        pointer: String::new(),
                        rule: "missing".into(),
                        message: format!("the draft `{}` it judges is missing", d.display()),
                    });
                }
                v
            }
            "feedback" => {
                let e = match &self.eval {
                    Some(p) => a::check_eval(&p.display().to_string(), &read(p)?, spec.as_ref()).0,
                    None => None,
                };
                a::check_feedback(&name, &text, e.as_ref())
            }
            other => {
                return Err(invalid(format!("`{other}`: expected spec, evidence, draft, eval, feedback or meta")));
            }
        };
        Ok(Checked::new(&name, violations))
    }

    /// Evidence, against its spec, the prior evidence it must keep, and the
    /// citations of the fabdex run it claims to have read.
    fn evidence(&self, scope: &Scope, name: &str, text: &str, spec: Option<&a::Spec>) -> Result<Vec<a::Violation>> {
        let prior = match &self.prior {
            Some(p) => serde_json::from_str::<a::Evidence>(&read(p)?)
                .map(Some)
                .map_err(|e| invalid(format!("--prior `{}` is not valid evidence: {e}", p.display())))?,
            None => None,
        };
        let citations = match &self.ledger_run {
            Some(run) => {
                let contents = scope.store().ledger(run)?.read()?;
                Some(
                    contents
                        .records
                        .iter()
                        .flat_map(|r| &r.call.items)
                        .filter_map(|i| i.citation.clone().map(|c| (c, i.address.clone())))
                        .collect::<BTreeMap<_, _>>(),
                )
            }
            None => None,
        };
        let ctx = a::EvidenceContext { spec, prior: prior.as_ref(), citations: citations.as_ref() };
        Ok(a::check_evidence(name, text, &ctx).1)
    }
}
