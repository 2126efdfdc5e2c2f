//! # fabdex-tools
//!
//! The tool registry: every query fabdex answers, as a named tool with a
//! description, a JSON Schema for its input and for its output, and its
//! bounds. The CLI (`fabdex tools`), the MCP server and the HTTP API
//! (`fabdex-serve`) are shells over [`call`] and [`descriptors`]; a tool's
//! behaviour, errors and ledger records cannot differ between them because
//! every call goes through the same [`Session`] (release policy, run ledger).
//!
//! Every tool input also takes an optional `run`: the research run to record
//! the call in. A server started with a run applies it when the call has none.

pub mod cli;

use fabdex_ledger::Session;
use fabdex_model::{Limits, ReadEnvelope};
use fabdex_query::{
    DepTree, FileListing, Inspection, Outline, PatternQuery, PatternSearch, QueryError, Related, SearchDocs,
    SearchResult,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Why a tool call failed. `kind` is stable; `message` is the same text the
/// CLI prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolError {
    /// `unknown-tool`, `invalid-argument`, `not-found`, `no-snapshot`,
    /// `corrupt`, `denied` or `internal`.
    pub kind: String,
    pub message: String,
}

impl ToolError {
    pub fn new(kind: &str, message: impl Into<String>) -> ToolError {
        ToolError { kind: kind.into(), message: message.into() }
    }

    fn from_anyhow(err: anyhow::Error) -> ToolError {
        match err.downcast_ref::<QueryError>() {
            Some(q) => ToolError::new(q.kind(), q.to_string()),
            None => ToolError::new("internal", format!("{err:#}")),
        }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ToolError {}

/// What a tool is, for callers: the registry's public face.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Descriptor {
    pub name: String,
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
    #[serde(rename = "outputSchema")]
    pub output_schema: Value,
    /// Defaults, maximums and what is reported when something is left out.
    pub bounds: String,
    /// Longest a call may take, when it is longer than any server's
    /// per-request timeout (`research` runs as long as its time budget):
    /// the shells wait this long for it instead.
    #[serde(rename = "longestSecs", default, skip_serializing_if = "Option::is_none")]
    pub longest_secs: Option<u64>,
}

impl Descriptor {
    /// The descriptor in the OpenAI function-calling shape.
    pub fn openai(&self) -> Value {
        json!({"type": "function", "function": {
            "name": self.name,
            "description": format!("{} Bounds: {}", self.description, self.bounds),
            "parameters": self.input_schema,
        }})
    }

    /// The descriptor in the MCP `tools/list` shape.
    pub fn mcp(&self) -> Value {
        json!({"name": self.name, "description": format!("{} Bounds: {}", self.description, self.bounds),
               "inputSchema": self.input_schema, "outputSchema": self.output_schema})
    }
}

/// `read` input.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// A `doc:` or `pattern:` address, as search hits and `next` give them.
    pub address: String,
    /// Char offset to start at (overrides an `@offset` in the address).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Most chars to return (default 8000, at most 32000).
    #[serde(default)]
    pub max_chars: Option<u64>,
    /// Source reads: most chars of one line before it is cut (default 1000).
    #[serde(default)]
    pub max_line_chars: Option<u64>,
}

/// `read_source` input: a program file by id and path, optionally lines or a symbol.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadSourceInput {
    /// Pattern id (or a unique prefix of 6+ chars, or an alias).
    pub pattern_id: String,
    /// File name as `list_pattern_files` gives it (default: the main file).
    #[serde(default)]
    pub path: Option<String>,
    /// First line (1-based) of a range.
    #[serde(default)]
    pub start_line: Option<u32>,
    /// Last line (inclusive); default: `start_line`.
    #[serde(default)]
    pub end_line: Option<u32>,
    /// A definition to read, found by the file's outline (instead of lines).
    #[serde(default)]
    pub symbol: Option<String>,
    #[serde(default)]
    pub offset: Option<u64>,
    /// Most chars to return (default 8000, at most 32000).
    #[serde(default)]
    pub max_chars: Option<u64>,
    /// Most chars of one line before it is cut (default 1000).
    #[serde(default)]
    pub max_line_chars: Option<u64>,
}

/// Input of the tools that take a path prefix or file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutlineInput {
    /// `<root>/<path prefix>` (every file under it) or a `doc:` file address.
    pub prefix: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddressInput {
    /// A section address (`doc:<root>/<path>#<anchor>`).
    pub address: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatternIdInput {
    /// Pattern id, a unique id prefix of 6+ chars, an alias (`<root>/<entry>`), or a `pattern:` address.
    pub id: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DepsInput {
    pub id: String,
    /// Levels to expand (default 3, at most 10).
    #[serde(default)]
    pub depth: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunInput {}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CiteInput {
    /// A citation id from a ledger item (`cit-…`).
    pub citation: String,
}

/// `pattern_contract` output.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ContractOutput {
    #[serde(rename = "patternId")]
    pub pattern_id: String,
    /// The argument and result as TypeScript-like types.
    pub typescript: String,
    #[serde(rename = "argumentSchema")]
    pub argument_schema: Option<Value>,
    #[serde(rename = "resultSchema")]
    pub result_schema: Option<Value>,
    pub inferred: Option<String>,
    pub notes: Vec<String>,
}

/// `ledger_cite` output.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CiteOutput {
    pub record: fabdex_ledger::Record,
    pub check: fabdex_ledger::audit::Check,
}

/// `describe_handle` input.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HandleInput {
    /// A token as `list_handles` gives it.
    pub token: String,
}

/// One granted handle as `list_handles` shows it (its schema via `describe_handle`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HandleSummary {
    pub token: String,
    pub description: String,
    /// Whether `describe_handle` has a schema for it.
    pub has_schema: bool,
}

/// `list_handles` output.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HandleList {
    pub handles: Vec<HandleSummary>,
    /// What a caller may do with them.
    pub note: String,
}

/// Everything a call needs besides its input.
pub struct Context<'a> {
    pub session: Session<'a>,
    pub runs: Option<fabdex_ledger::RunStore>,
    /// The handles the host granted (research calls); `None` where no grants
    /// file was given, and then the handle tools say so.
    pub grants: Option<Vec<fabdex_kit::Handle>>,
}

fn grants<'c>(ctx: &'c Context<'_>) -> &'c [fabdex_kit::Handle] {
    ctx.grants.as_deref().unwrap_or(&[])
}

/// Handle calls are recorded like any other: metadata items `handle:<token>`
/// of origin `host` (the grants come from the host, not from a corpus).
fn record_handles(ctx: &Context<'_>, tool: &str, args: Value, tokens: &[&str], error: Option<&QueryError>) {
    let items = tokens.iter().map(|t| fabdex_ledger::session::metadata_item(&format!("handle:{t}"), "host")).collect();
    let _ = ctx.session.record_call(tool, args, items, error);
}

type Handler = fn(&Context<'_>, Value) -> Result<Value, ToolError>;

struct Tool {
    name: &'static str,
    description: &'static str,
    bounds: &'static str,
    input: fn() -> Value,
    output: fn() -> Value,
    handler: Handler,
}

fn schema<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

fn input<T: DeserializeOwned>(tool: &str, value: Value) -> Result<T, ToolError> {
    serde_json::from_value(value).map_err(|e| ToolError::new("invalid-argument", format!("{tool}: invalid input: {e}")))
}

fn output<T: Serialize>(result: anyhow::Result<T>) -> Result<Value, ToolError> {
    let value = result.map_err(ToolError::from_anyhow)?;
    serde_json::to_value(value).map_err(|e| ToolError::new("internal", format!("cannot encode the answer: {e}")))
}

fn run_of(ctx: &Context<'_>) -> Result<String, ToolError> {
    ctx.session.ledger.as_ref().map(|l| l.run.clone()).ok_or_else(|| {
        ToolError::new(
            "invalid-argument",
            "this tool needs a run: pass `run` in the input or start the server with one",
        )
    })
}

fn contents(ctx: &Context<'_>) -> Result<fabdex_ledger::Contents, ToolError> {
    run_of(ctx)?;
    ctx.session.ledger.as_ref().expect("checked above").read().map_err(ToolError::from_anyhow)
}

const TOOLS: &[Tool] = &[
    Tool {
        name: "search_docs",
        description: "Search Common Fabric documentation and skills. Hits are sections with an address to read, the heading path, a snippet, the origin and why they matched.",
        bounds: "limit: default 10, at most 50; snippets at most 280 chars; query at most 2000 chars.",
        input: schema::<SearchDocs>,
        output: schema::<SearchResult>,
        handler: |ctx, v| {
            let q: SearchDocs = input("search_docs", v)?;
            output(ctx.session.search_docs(&q))
        },
    },
    Tool {
        name: "read",
        description: "Read one bounded window of the text at an address (`doc:` section or file, `pattern:` source file, lines or symbol). The answer says the range, total, digest, whether it was truncated, and the address of the next window.",
        bounds: "max_chars: default 8000, at most 32000; max_line_chars (source): default 1000; `next` continues a truncated read.",
        input: schema::<ReadInput>,
        output: schema::<ReadEnvelope>,
        handler: |ctx, v| {
            let i: ReadInput = input("read", v)?;
            output(ctx.session.read(&i.address, i.offset, i.max_chars, i.max_line_chars))
        },
    },
    Tool {
        name: "outline",
        description: "The sections (headings, addresses, sizes) of a docs file or of every file under a path prefix, without text.",
        bounds: "at most 500 rows; the rest are counted in `omitted` and `truncated` is set.",
        input: schema::<OutlineInput>,
        output: schema::<Outline>,
        handler: |ctx, v| {
            let i: OutlineInput = input("outline", v)?;
            output(ctx.session.outline(&i.prefix))
        },
    },
    Tool {
        name: "related",
        description: "Navigate from a docs section: its parent, children, siblings, the links it makes (resolved) and the sections that link to it.",
        bounds: "at most 100 items per list; the rest are counted in `omitted`.",
        input: schema::<AddressInput>,
        output: schema::<Related>,
        handler: |ctx, v| {
            let i: AddressInput = input("related", v)?;
            output(ctx.session.related(&i.address))
        },
    },
    Tool {
        name: "search_patterns",
        description: "Search pattern programs by text, tags and contract. Each hit has an address, an import hint, kind, quality, identity status, why it matched, and a fit verdict: which requested outputs it returns, which required inputs the given handles bind, and which are missing.",
        bounds: "limit: default 10, at most 50; text at most 2000 chars.",
        input: schema::<PatternQuery>,
        output: schema::<PatternSearch>,
        handler: |ctx, v| {
            let q: PatternQuery = input("search_patterns", v)?;
            output(ctx.session.search_patterns(&q))
        },
    },
    Tool {
        name: "inspect_pattern",
        description: "A pattern's record: identity status, import hint, exports, imports, extracted and declared argument/result schemas and whether they agree, files with sizes and digests, dependencies and dependents.",
        bounds: "one record; file contents are read with `read` or `read_source`.",
        input: schema::<PatternIdInput>,
        output: schema::<Inspection>,
        handler: |ctx, v| {
            let i: PatternIdInput = input("inspect_pattern", v)?;
            output(ctx.session.inspect(&i.id))
        },
    },
    Tool {
        name: "list_pattern_files",
        description: "The files of a pattern program with sizes, digests, line counts and the address to read each.",
        bounds: "every file of the program.",
        input: schema::<PatternIdInput>,
        output: schema::<FileListing>,
        handler: |ctx, v| {
            let i: PatternIdInput = input("list_pattern_files", v)?;
            output(ctx.session.files(&i.id))
        },
    },
    Tool {
        name: "read_source",
        description: "Read a pattern program's source: one file (default the main file), a line range, or a definition by name. Same envelope as `read`, plus the lines covered and any lines cut at the per-line limit.",
        bounds: "max_chars: default 8000, at most 32000; max_line_chars: default 1000; `next` continues a truncated read.",
        input: schema::<ReadSourceInput>,
        output: schema::<ReadEnvelope>,
        handler: |ctx, v| {
            let i: ReadSourceInput = input("read_source", v)?;
            // The id may be an alias (`<root>/<entry>`) or a prefix: the address
            // needs the pattern id itself, or its first segment is taken for the id.
            let listing = ctx
                .session
                .engine
                .pattern_files(i.pattern_id.trim())
                .map_err(|e| ToolError::new(e.kind(), e.to_string()))?;
            let mut address = format!("pattern:{}", listing.pattern_id);
            if let Some(path) = &i.path {
                address.push('/');
                address.push_str(path.trim_start_matches('/'));
            } else if i.start_line.is_some() || i.symbol.is_some() {
                let main =
                    listing.files.first().map(|f| f.name.trim_start_matches('/').to_string()).unwrap_or_default();
                address.push('/');
                address.push_str(&main);
            }
            match (i.start_line, &i.symbol) {
                (Some(_), Some(_)) => {
                    return Err(ToolError::new("invalid-argument", "read_source: give start_line or symbol, not both"));
                }
                (Some(a), None) => address.push_str(&format!(":L{a}-L{}", i.end_line.unwrap_or(a))),
                (None, Some(s)) => address.push_str(&format!("#{s}")),
                (None, None) if i.end_line.is_some() => {
                    return Err(ToolError::new("invalid-argument", "read_source: end_line needs start_line"));
                }
                (None, None) => {}
            }
            output(ctx.session.read(&address, i.offset, i.max_chars, i.max_line_chars))
        },
    },
    Tool {
        name: "pattern_deps",
        description: "What a pattern depends on (declared and `cf:pattern:` imports), as a tree with each node's identity status; nodes not in the index say so.",
        bounds: "depth: default 3, at most 10; at most 500 nodes, the rest counted in `omitted`.",
        input: schema::<DepsInput>,
        output: schema::<DepTree>,
        handler: |ctx, v| {
            let i: DepsInput = input("pattern_deps", v)?;
            output(ctx.session.deps(&i.id, i.depth))
        },
    },
    Tool {
        name: "pattern_contract",
        description: "A pattern's argument and result as TypeScript-like types for authors, with the JSON Schemas, whether the result was inferred, and what could not be derived.",
        bounds: "one contract.",
        input: schema::<PatternIdInput>,
        output: schema::<ContractOutput>,
        handler: |ctx, v| {
            let i: PatternIdInput = input("pattern_contract", v)?;
            let p = ctx.session.inspect(&i.id).map_err(ToolError::from_anyhow)?;
            let typescript =
                ctx.session.engine.contract_text(&p.pattern_id).map_err(|e| ToolError::new(e.kind(), e.to_string()))?;
            output(Ok(ContractOutput {
                pattern_id: p.pattern_id,
                typescript,
                argument_schema: p.argument_schema,
                result_schema: p.result_schema,
                inferred: p.inferred,
                notes: p.notes,
            }))
        },
    },
    Tool {
        name: "list_handles",
        description: "The handles the host granted this call: each token with its description. Only these tokens may be bound as a pattern's inputs.",
        bounds: "every granted handle; none when no grants were given.",
        input: schema::<RunInput>,
        output: schema::<HandleList>,
        handler: list_handles,
    },
    Tool {
        name: "describe_handle",
        description: "One granted handle: its token, description and the JSON Schema of what it holds.",
        bounds: "one handle; a token that was not granted is `not-found`.",
        input: schema::<HandleInput>,
        output: schema::<fabdex_kit::Handle>,
        handler: describe_handle,
    },
    Tool {
        name: "ledger_show",
        description: "Every record of the call's research run: tools called, arguments, snapshot, and each item returned with address, origin, range, digest and citation id.",
        bounds: "the whole run; lines that are not records are listed in `problems`.",
        input: schema::<RunInput>,
        output: schema::<fabdex_ledger::Contents>,
        handler: |ctx, v| {
            let _: RunInput = input("ledger_show", v)?;
            let c = contents(ctx)?;
            output(Ok(c))
        },
    },
    Tool {
        name: "ledger_cite",
        description: "Reopen a cited text from the snapshot and check its digest: identical, changed since, or gone.",
        bounds: "one citation, looked up in the call's run.",
        input: schema::<CiteInput>,
        output: schema::<CiteOutput>,
        handler: |ctx, v| {
            let i: CiteInput = input("ledger_cite", v)?;
            let run = run_of(ctx)?;
            let store = ctx.runs.as_ref().ok_or_else(|| ToolError::new("invalid-argument", "no runs folder"))?;
            let (record, mut check) = fabdex_ledger::audit::cite(ctx.session.engine, store, &i.citation, Some(&run))
                .map_err(ToolError::from_anyhow)?;
            let origin = record
                .call
                .items
                .iter()
                .find(|x| x.citation.as_deref() == Some(i.citation.as_str()))
                .map(|x| x.origin.clone());
            if let (Some(policy), Some(origin)) = (&ctx.session.policy, origin)
                && let fabdex_ledger::Decision::Deny(reason) = policy.decide(&origin, &ctx.session.consumer)
            {
                check.text = None;
                check.detail = Some(format!("text withheld: {reason}"));
            }
            output(Ok(CiteOutput { record, check }))
        },
    },
    Tool {
        name: "ledger_exposure",
        description: "The origins the call's research run has read, with released and withheld counts. It only grows.",
        bounds: "the whole run.",
        input: schema::<RunInput>,
        output: schema::<fabdex_ledger::audit::Exposure>,
        handler: |ctx, v| {
            let _: RunInput = input("ledger_exposure", v)?;
            output(Ok(fabdex_ledger::audit::exposure(&contents(ctx)?)))
        },
    },
];

fn list_handles(ctx: &Context<'_>, v: Value) -> Result<Value, ToolError> {
    let _: RunInput = input("list_handles", v)?;
    let handles: Vec<HandleSummary> = grants(ctx)
        .iter()
        .map(|h| HandleSummary {
            token: h.token.clone(),
            description: h.description.clone(),
            has_schema: h.schema.is_some(),
        })
        .collect();
    let tokens: Vec<&str> = handles.iter().map(|h| h.token.as_str()).collect();
    record_handles(ctx, "list_handles", json!({}), &tokens, None);
    let note = if ctx.grants.is_none() {
        "no grants were given: bind no input to a handle".to_string()
    } else {
        "only these tokens may be bound as inputs; a handle is never inferred from a connector's or pattern's name"
            .to_string()
    };
    output(Ok(HandleList { handles, note }))
}

fn describe_handle(ctx: &Context<'_>, v: Value) -> Result<Value, ToolError> {
    let i: HandleInput = input("describe_handle", v)?;
    let args = json!({"token": i.token});
    match grants(ctx).iter().find(|h| h.token == i.token) {
        Some(h) => {
            record_handles(ctx, "describe_handle", args, &[h.token.as_str()], None);
            output(Ok(h.clone()))
        }
        None => {
            let known: Vec<&str> = grants(ctx).iter().map(|h| h.token.as_str()).collect();
            let err = QueryError::NotFound(format!(
                "no granted handle `{}` (granted: {})",
                i.token,
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ));
            record_handles(ctx, "describe_handle", args, &[], Some(&err));
            Err(ToolError::new(err.kind(), err.to_string()))
        }
    }
}

fn with_run(mut schema: Value) -> Value {
    if let Some(props) = schema.get_mut("properties").and_then(|p| p.as_object_mut()) {
        props.insert(
            "run".into(),
            json!({"type": ["string", "null"], "description": "Research run to record this call in (default: the server's run, if any)."}),
        );
    } else if let Some(obj) = schema.as_object_mut() {
        obj.insert("properties".into(), json!({"run": {"type": ["string", "null"]}}));
    }
    schema
}

/// Every tool's descriptor, in registry order.
pub fn descriptors() -> Vec<Descriptor> {
    TOOLS
        .iter()
        .map(|t| Descriptor {
            name: t.name.into(),
            description: t.description.into(),
            input_schema: with_run((t.input)()),
            output_schema: (t.output)(),
            bounds: t.bounds.into(),
            longest_secs: None,
        })
        .collect()
}

/// Tool names.
pub fn names() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.name).collect()
}

/// Split the `run` field off a tool input.
pub fn take_run(input: &mut Value) -> Result<Option<String>, ToolError> {
    let Some(obj) = input.as_object_mut() else {
        return Err(ToolError::new("invalid-argument", "tool input must be a JSON object"));
    };
    match obj.remove("run") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(r)) => Ok(Some(r)),
        Some(other) => Err(ToolError::new("invalid-argument", format!("`run` must be a string, not {other}"))),
    }
}

/// Call a tool by name. `input` must already have its `run` taken off (the
/// context's session carries the run's ledger).
pub fn call(ctx: &Context<'_>, name: &str, input: Value) -> Result<Value, ToolError> {
    let Some(tool) = TOOLS.iter().find(|t| t.name == name) else {
        return Err(ToolError::new("unknown-tool", format!("no tool named `{name}` (tools: {})", names().join(", "))));
    };
    let input = if input.is_null() { json!({}) } else { input };
    (tool.handler)(ctx, input)
}

/// Descriptors in the OpenAI function-calling shape.
pub fn openai(tools: &[Descriptor]) -> Value {
    Value::Array(tools.iter().map(Descriptor::openai).collect())
}

/// Descriptors in the MCP `tools/list` shape.
pub fn mcp(tools: &[Descriptor]) -> Value {
    Value::Array(tools.iter().map(Descriptor::mcp).collect())
}

/// `docs/tools.md`, generated from the tool listing so it cannot drift.
pub fn markdown(tools: &[Descriptor]) -> String {
    let mut out = String::from(
        "# fabdex tools\n\n<!-- Generated by `fabdex tools --format markdown`; do not edit by hand. -->\n\n\
         Every tool is served the same way by the CLI (`fabdex tools`), MCP (`fabdex serve --mcp`) and HTTP \
         (`POST /v1/tools/<name>` on `fabdex serve --http`), from one listing; the research model is offered \
         the read-only ones (never `research` itself). Every input but `research`'s also takes `run` (a \
         research run id) to record the call in that run's ledger; `research` makes a run of its own.\n\n\
         Errors carry a `kind`: `unknown-tool`, `invalid-argument`, `not-found`, `no-snapshot`, `corrupt`, \
         `denied` (the release policy withholds the origin), `internal`; the message is the CLI's. Over HTTP \
         the server adds `unauthorized` (401), `too-large` (413), `method-not-allowed` (405) and `timeout` (503).\n\n",
    );
    out.push_str("| tool | what it does |\n|---|---|\n");
    for d in tools {
        out.push_str(&format!(
            "| [`{}`](#{}) | {} |\n",
            d.name,
            d.name,
            d.description.split(". ").next().unwrap_or("")
        ));
    }
    for d in tools {
        out.push_str(&format!(
            "\n## `{}`\n\n{}\n\n**Bounds.** {}\n\n**Arguments.**\n\n",
            d.name, d.description, d.bounds
        ));
        out.push_str("| argument | type | required | description |\n|---|---|---|---|\n");
        let required: Vec<&str> = d
            .input_schema
            .get("required")
            .and_then(|r| r.as_array())
            .map(|r| r.iter().filter_map(|x| x.as_str()).collect())
            .unwrap_or_default();
        for (name, prop) in d.input_schema.get("properties").and_then(|p| p.as_object()).into_iter().flatten() {
            let ty = type_label(prop);
            let desc = prop.get("description").and_then(|x| x.as_str()).unwrap_or("").replace('\n', " ");
            let req = if required.contains(&name.as_str()) { "yes" } else { "no" };
            out.push_str(&format!("| `{name}` | {ty} | {req} | {desc} |\n"));
        }
        let title = d.output_schema.get("title").and_then(|t| t.as_str()).unwrap_or("object");
        let fields: Vec<String> = d
            .output_schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().map(|k| format!("`{k}`")).collect())
            .unwrap_or_default();
        out.push_str(&format!("\n**Returns** `{title}`: {}.\n", fields.join(", ")));
    }
    out
}

fn type_label(prop: &Value) -> String {
    match prop.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => {
            ts.iter().filter_map(|t| t.as_str()).filter(|t| *t != "null").collect::<Vec<_>>().join(" | ")
        }
        _ => {
            if let Some(r) = prop.get("$ref").and_then(|r| r.as_str()) {
                r.rsplit('/').next().unwrap_or(r).to_string()
            } else if let Some(any) = prop.get("anyOf").and_then(|a| a.as_array()) {
                any.iter().map(type_label).filter(|t| t != "null").collect::<Vec<_>>().join(" | ")
            } else {
                "any".into()
            }
        }
    }
}

/// Bounds the registry reports, re-exported for shells.
pub const READ_MAX_CHARS: u64 = Limits::READ_MAX_CHARS;
