//! # fabdex-ledger
//!
//! Research runs and what they read. A run has an id (`fabdex run new`);
//! every call made under it appends one record to the run's append-only
//! ledger (`store`): the tool, its arguments, the snapshot, and for every
//! item returned its address, origin, range, total, the digest of exactly the
//! text returned, and a citation id. The release policy (`policy`) decides,
//! per origin and consumer, whether text is returned at all; a withheld item
//! is recorded without text. `session` applies both to every query call, so
//! every shell (CLI, MCP, HTTP) records and withholds the same way. `audit`
//! answers what a run was exposed to, what it consulted, and whether what it
//! read still reads the same.

pub mod audit;
pub mod cli;
pub mod policy;
pub mod record;
pub mod session;
pub mod store;

pub use policy::{Decision, Policy};
pub use record::{ContextFit, Item, ItemKind, NewRecord, Record, RecordKind, TurnCall, TurnUsage, citation_id};
pub use session::Session;
pub use store::{Contents, Ledger, RunInfo, RunStore};
