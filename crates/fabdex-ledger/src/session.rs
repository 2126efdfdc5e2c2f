//! A session: the query calls of one caller, with the release policy applied
//! to every text returned and, under a run, one ledger record per call.
//!
//! The session sits between the query engine and every shell (CLI now, MCP
//! and HTTP tools later), so a denial or a ledger record cannot depend on
//! which shell made the call.

use anyhow::Result;
use fabdex_model::{ReadEnvelope, digest_text};
use fabdex_query::{
    DepTree, Engine, FileListing, Inspection, Outline, PatternQuery, PatternSearch, QueryError, Related, SearchDocs,
    SearchResult,
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::policy::{Decision, Policy};
use crate::record::{Item, ItemKind, NewRecord, RecordKind, citation_id};
use crate::store::Ledger;

/// One caller's view: engine, optional run ledger, optional policy, consumer name.
pub struct Session<'a> {
    pub engine: &'a Engine,
    pub ledger: Option<Ledger>,
    pub policy: Option<Policy>,
    /// Who receives the text (`research`, `author`, …): what the policy decides for.
    pub consumer: String,
}

/// An item that carries names and addresses only.
pub fn metadata_item(address: &str, origin: &str) -> Item {
    Item {
        kind: ItemKind::Metadata,
        address: address.to_string(),
        origin: origin.to_string(),
        offset: None,
        end: None,
        total: None,
        digest: None,
        source_digest: None,
        truncated: false,
        max_line_chars: None,
        citation: None,
        released: true,
        denied_by: None,
    }
}

impl<'a> Session<'a> {
    pub fn new(engine: &'a Engine) -> Session<'a> {
        Session { engine, ledger: None, policy: None, consumer: "research".into() }
    }

    fn decide(&self, origin: &str) -> Decision {
        match &self.policy {
            None => Decision::Release,
            Some(p) => p.decide(origin, &self.consumer),
        }
    }

    fn record(&self, tool: &str, arguments: Value, items: Vec<Item>, error: Option<&QueryError>) -> Result<()> {
        let Some(ledger) = &self.ledger else { return Ok(()) };
        ledger.append(NewRecord {
            kind: RecordKind::Tool,
            turn: None,
            tool: tool.to_string(),
            arguments,
            snapshot: Some(self.engine.snapshot_id().to_string()),
            consumer: self.consumer.clone(),
            policy: self.policy.as_ref().map_or("none".to_string(), |p| p.label.clone()),
            items,
            error: error.map(|e| format!("{}: {e}", e.kind())),
        })?;
        Ok(())
    }

    /// Record a call a shell answered itself (the handle tools): one record, as any query call.
    pub fn record_call(
        &self,
        tool: &str,
        arguments: Value,
        items: Vec<Item>,
        error: Option<&QueryError>,
    ) -> Result<()> {
        self.record(tool, arguments, items, error)
    }

    /// Record a failed call and return its error.
    fn failed<T>(&self, tool: &str, arguments: Value, err: QueryError) -> Result<T> {
        self.record(tool, arguments, vec![], Some(&err))?;
        Err(err.into())
    }

    /// A bounded read (`doc:` or `pattern:`), released or denied by the policy.
    pub fn read(
        &self,
        address: &str,
        offset: Option<u64>,
        max_chars: Option<u64>,
        max_line_chars: Option<u64>,
    ) -> Result<ReadEnvelope> {
        let args =
            json!({"address": address, "offset": offset, "max_chars": max_chars, "max_line_chars": max_line_chars});
        let is_pattern = address.trim().starts_with("pattern:");
        let result = self.engine.read_with(address, offset, max_chars, max_line_chars);
        let env = match result {
            Ok(env) => env,
            Err(e) => return self.failed("read", args, e),
        };
        let mut item = Item {
            kind: ItemKind::Read,
            address: env.address.clone(),
            origin: env.origin.clone(),
            offset: Some(env.offset),
            end: Some(env.end),
            total: Some(env.total),
            digest: None,
            source_digest: None,
            truncated: env.truncated || !env.clipped_lines.is_empty(),
            max_line_chars: is_pattern.then(|| max_line_chars.unwrap_or(fabdex_model::Limits::LINE_DEFAULT_CHARS)),
            citation: None,
            released: false,
            denied_by: None,
        };
        match self.decide(&env.origin) {
            Decision::Deny(reason) => {
                item.denied_by = Some(reason.clone());
                self.record("read", args, vec![item], None)?;
                Err(QueryError::Denied(format!("`{}` is not released: {reason}", env.address)).into())
            }
            Decision::Release => {
                item.digest = Some(env.digest.clone());
                item.citation = Some(citation_id(&env.address, Some(env.offset), Some(env.end), &env.digest));
                item.released = true;
                self.record("read", args, vec![item], None)?;
                Ok(env)
            }
        }
    }

    /// Docs search; hits whose origin the policy withholds keep their address
    /// but lose their snippet.
    pub fn search_docs(&self, q: &SearchDocs) -> Result<SearchResult> {
        let args = serde_json::to_value(q)?;
        let mut result = match self.engine.search_docs(q) {
            Ok(r) => r,
            Err(e) => return self.failed("search_docs", args, e),
        };
        let mut items = Vec::new();
        for hit in &mut result.hits {
            let mut item = metadata_item(&hit.address, &hit.origin);
            item.kind = ItemKind::Snippet;
            match self.decide(&hit.origin) {
                Decision::Deny(reason) => {
                    // Nothing drawn from the withheld text stays: only the address and scores.
                    hit.snippet.clear();
                    hit.title = None;
                    hit.heading_path.clear();
                    hit.why = Default::default();
                    hit.denied = Some(reason.clone());
                    item.released = false;
                    item.denied_by = Some(reason);
                }
                Decision::Release => {
                    let digest = digest_text(&hit.snippet);
                    if self.ledger.is_some() {
                        item.source_digest = self.engine.addressed_digest(&hit.address).ok().map(|d| d.2);
                    }
                    item.citation = Some(citation_id(&hit.address, None, None, &digest));
                    item.digest = Some(digest);
                }
            }
            items.push(item);
        }
        self.record("search_docs", args, items, None)?;
        Ok(result)
    }

    /// Pattern search; withheld hits lose their description.
    pub fn search_patterns(&self, q: &PatternQuery) -> Result<PatternSearch> {
        let args = serde_json::to_value(q)?;
        let mut result = match self.engine.search_patterns(q) {
            Ok(r) => r,
            Err(e) => return self.failed("search_patterns", args, e),
        };
        let mut items = Vec::new();
        for hit in &mut result.hits {
            let mut item = metadata_item(&hit.address, &hit.origin);
            item.kind = ItemKind::PatternHit;
            match self.decide(&hit.origin) {
                Decision::Deny(reason) => {
                    hit.description = None;
                    hit.hashtags.clear();
                    hit.why.clear();
                    hit.fit = fabdex_query::Fit::withheld();
                    hit.denied = Some(reason.clone());
                    item.released = false;
                    item.denied_by = Some(reason);
                }
                Decision::Release => {
                    let digest = digest_text(hit.description.as_deref().unwrap_or(""));
                    item.citation = Some(citation_id(&hit.address, None, None, &digest));
                    item.digest = Some(digest);
                }
            }
            items.push(item);
        }
        self.record("search_patterns", args, items, None)?;
        Ok(result)
    }

    /// A pattern record, released whole or denied.
    pub fn inspect(&self, id: &str) -> Result<Inspection> {
        let args = json!({"id": id});
        let inspection = match self.engine.inspect(id) {
            Ok(i) => i,
            Err(e) => return self.failed("inspect", args, e),
        };
        let address = format!("pattern:{}", inspection.pattern_id);
        let mut item = metadata_item(&address, &inspection.origin);
        item.kind = ItemKind::Record;
        match self.decide(&inspection.origin) {
            Decision::Deny(reason) => {
                item.released = false;
                item.denied_by = Some(reason.clone());
                self.record("inspect", args, vec![item], None)?;
                Err(QueryError::Denied(format!("pattern `{}` is not released: {reason}", inspection.pattern_id)).into())
            }
            Decision::Release => {
                let digest = record_digest(&inspection);
                item.citation = Some(citation_id(&address, None, None, &digest));
                item.digest = Some(digest);
                self.record("inspect", args, vec![item], None)?;
                Ok(inspection)
            }
        }
    }

    /// A metadata call (names, headings, addresses): recorded as metadata
    /// items; denied whole if any origin it draws on is withheld.
    fn metadata<T>(
        &self,
        tool: &str,
        args: Value,
        call: impl FnOnce(&Engine) -> Result<T, QueryError>,
        targets: impl FnOnce(&T) -> Vec<(String, String)>,
    ) -> Result<T> {
        let value = match call(self.engine) {
            Ok(v) => v,
            Err(e) => return self.failed(tool, args, e),
        };
        let mut items: Vec<Item> = targets(&value).iter().map(|(a, o)| metadata_item(a, o)).collect();
        let denied = items.iter().find_map(|i| match self.decide(&i.origin) {
            Decision::Deny(r) => Some((i.address.clone(), r)),
            Decision::Release => None,
        });
        if let Some((address, reason)) = denied {
            for i in &mut items {
                i.released = false;
                i.denied_by = Some(reason.clone());
            }
            self.record(tool, args, items, None)?;
            return Err(QueryError::Denied(format!("`{address}` is not released: {reason}")).into());
        }
        self.record(tool, args, items, None)?;
        Ok(value)
    }

    pub fn outline(&self, prefix: &str) -> Result<Outline> {
        let engine = self.engine;
        self.metadata(
            "outline",
            json!({"prefix": prefix}),
            |e| e.outline(prefix),
            |o| {
                let mut origins: Vec<(String, String)> = o
                    .sections
                    .iter()
                    .filter_map(|s| {
                        let file = s.address.split('#').next().unwrap_or(&s.address);
                        engine.file_origin(file).map(|origin| (file.to_string(), origin))
                    })
                    .collect();
                origins.dedup();
                origins
            },
        )
    }

    pub fn related(&self, address: &str) -> Result<Related> {
        let engine = self.engine;
        self.metadata(
            "related",
            json!({"address": address}),
            |e| e.related(address),
            |r| {
                let file = r.address.split('#').next().unwrap_or(&r.address);
                vec![(r.address.clone(), engine.file_origin(file).unwrap_or_default())]
            },
        )
    }

    pub fn files(&self, id: &str) -> Result<FileListing> {
        let engine = self.engine;
        self.metadata(
            "files",
            json!({"id": id}),
            |e| e.pattern_files(id),
            |l| vec![(format!("pattern:{}", l.pattern_id), engine.program_origin(&l.pattern_id).unwrap_or_default())],
        )
    }

    pub fn deps(&self, id: &str, depth: Option<usize>) -> Result<DepTree> {
        let engine = self.engine;
        self.metadata(
            "deps",
            json!({"id": id, "depth": depth}),
            |e| e.deps(id, depth),
            |t| {
                let mut out = Vec::new();
                collect(&t.root, engine, &mut out);
                out
            },
        )
    }
}

fn collect(node: &fabdex_query::DepNode, engine: &Engine, out: &mut Vec<(String, String)>) {
    if let Some(origin) = engine.program_origin(&node.pattern_id) {
        out.push((format!("pattern:{}", node.pattern_id), origin));
    }
    for d in &node.dependencies {
        collect(d, engine, out);
    }
}

/// Digest of a record as returned (its JSON).
pub fn record_digest<T: Serialize>(value: &T) -> String {
    digest_text(&serde_json::to_string(value).unwrap_or_default())
}
