//! `fabdex`: the command-line shell. It parses the flags, hands each command
//! to the crate that runs it (each command's arguments are that crate's
//! `clap` structs, flattened in here), and prints the answer as text or,
//! with `--json`, as JSON through the one printing module (`print.rs`).

mod print;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};
use fabdex_ledger::cli::Scope;
use print::{Report, emit};

#[derive(Parser)]
#[command(name = "fabdex", version, about = "Index Common Fabric docs and answer bounded, addressable queries")]
struct Cli {
    /// Print JSON instead of text.
    #[arg(long, global = true, display_order = 1)]
    json: bool,
    #[command(flatten)]
    scope: Scope,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Research a task: a model runs a bounded, read-only tool loop over the
    /// index and answers with an admitted implementation kit (see docs/research.md).
    Research(fabdex_research::cli::ResearchArgs),
    /// Index roots (or the roots of a config) into a new snapshot.
    Index(fabdex_index::cli::IndexArgs),
    /// Check every table, search file and blob of the published snapshot
    /// against its manifest (queries check only what they use, on first use).
    Verify,
    /// The local model registry: sentence-embedding model folders that
    /// `fabdex index` uses by default (see docs/ranking.md).
    Models {
        #[command(subcommand)]
        what: fabdex_embed::cli::ModelsCommand,
    },
    /// Serve the tools over MCP (stdio) or HTTP (tools, health, and the index service's endpoints).
    Serve(fabdex_serve::cli::ServeArgs),
    /// Search the index.
    Search {
        #[command(subcommand)]
        what: fabdex_tools::cli::SearchCommand,
    },
    /// Read the text at an address (`doc:` or `pattern:`), one bounded window at a time.
    #[command(visible_alias = "read")]
    Open(fabdex_tools::cli::OpenArgs),
    /// The files of a pattern program, with sizes, digests and read addresses.
    Files {
        /// Pattern id, unique id prefix (6+ chars) or alias.
        id: String,
    },
    /// What a pattern depends on (declared and `cf:pattern:` imports), as a tree.
    Deps(fabdex_tools::cli::DepsArgs),
    /// List the sections of a file, or of every file under a path prefix.
    Outline { path_or_prefix: String },
    /// Parent, children, siblings, outgoing links and backlinks of a section.
    Related { address: String },
    /// A pattern program: id, aliases, files, exports, imports, both schemas, dependencies, diagnostics.
    Inspect {
        /// Pattern id (or a unique prefix of at least 6 chars) or alias (`<root>/<entry path>`).
        id: String,
    },
    /// Export indexed data as JSON lines.
    Export {
        #[command(subcommand)]
        what: fabdex_tools::cli::ExportCommand,
    },
    /// A pattern's argument and result as TypeScript-like types, for authors.
    Contract { id: String },
    /// Print the tool descriptors (name, description, input and output schema, bounds).
    Tools(fabdex_research::cli::ToolsArgs),
    /// The implementation kit: its JSON Schema, and admission of a proposed kit.
    Kit {
        #[command(subcommand)]
        what: fabdex_kit::cli::KitCommand,
    },
    /// Research runs.
    Run {
        #[command(subcommand)]
        what: fabdex_runstate::cli::RunCommand,
    },
    /// What a research run read: records, citations, verification, exposure.
    Ledger {
        #[command(subcommand)]
        what: fabdex_ledger::cli::LedgerCommand,
    },
    /// Write the provenance sidecar of an authored pattern: the run, what it
    /// consulted (with digests), the pattern's own `cf:pattern:` imports, and
    /// the run's exposure set.
    Provenance(fabdex_ledger::cli::ProvenanceArgs),
    /// Measure retrieval quality against judged questions.
    Eval {
        #[command(subcommand)]
        what: fabdex_tools::cli::EvalCommand,
    },
}

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`fabdex … | head`), as Unix tools do.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => print::failure(&err, json),
    }
}

fn run(cli: Cli) -> Result<()> {
    use fabdex_tools::cli as tools;
    let (scope, json) = (&cli.scope, cli.json);
    match &cli.command {
        Command::Research(args) => emit(&args.run(scope)?, json),
        Command::Index(args) => {
            let report = fabdex_index::cli::index(args, scope.index.clone(), scope.embeddings.as_deref(), json)?;
            emit(&Report { report: &report, verbose: args.verbose }, json)
        }
        Command::Verify => emit(&tools::verify(scope)?, json),
        Command::Models { what } => emit(&what.run()?, json),
        Command::Serve(args) => args.run(scope),
        Command::Search { what } => emit(&what.run(scope)?, json),
        Command::Open(args) => emit(&args.run(scope)?, json),
        Command::Files { id } => emit(&tools::files(scope, id)?, json),
        Command::Deps(args) => emit(&args.run(scope)?, json),
        Command::Outline { path_or_prefix } => emit(&tools::outline(scope, path_or_prefix)?, json),
        Command::Related { address } => emit(&tools::related(scope, address)?, json),
        Command::Inspect { id } => emit(&tools::inspect(scope, id)?, json),
        Command::Export { what } => what.run(scope, &mut print::line),
        Command::Contract { id } => emit(&tools::contract(scope, id)?, json),
        Command::Tools(args) => print::listing(&args.run()?),
        Command::Kit { what } => emit(&what.run(scope)?, json),
        Command::Run { what } => emit(&what.run(scope)?, json),
        Command::Ledger { what } => emit(&what.run(scope)?, json),
        Command::Provenance(args) => emit(&args.run(scope)?, json),
        Command::Eval { what } => emit(&what.run(scope)?, json),
    }
}

#[cfg(test)]
mod tests {
    /// Every subcommand's arguments are well formed (clap checks names, conflicts and globals).
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
