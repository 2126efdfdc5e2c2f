//! Pattern programs: look one up by id or alias, inspect it, export all, and
//! render a contract for authors.

use fabdex_model::records::Diagnostic;
use fabdex_model::registry::{PatternKind, Quality, Signals};
use fabdex_model::ts::{
    ExportRecord, Identity, ImportRecord, ProgramFile, ProgramOrigin, ProgramProfile, ProgramRow, SchemaAgreement,
    SourceFileRow,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::read::suggest;
use crate::{Engine, QueryError};

/// Diagnostics of one program file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileDiagnostic {
    pub file: String,
    #[serde(flatten)]
    pub diagnostic: Diagnostic,
}

/// `fabdex inspect`: a program with its entry's exports and imports and both schemas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Inspection {
    #[serde(rename = "patternId")]
    pub pattern_id: String,
    pub aliases: Vec<String>,
    pub entry: String,
    #[serde(rename = "importHint")]
    pub import_hint: String,
    pub files: Vec<ProgramFile>,
    pub exports: Vec<ExportRecord>,
    pub imports: Vec<ImportRecord>,
    #[serde(rename = "argumentSchema")]
    pub argument_schema: Option<Value>,
    #[serde(rename = "resultSchema")]
    pub result_schema: Option<Value>,
    /// `partial` or `complete` when the result was inferred; absent when both types were written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inferred: Option<String>,
    pub notes: Vec<String>,
    pub dependencies: Vec<String>,
    #[serde(rename = "unresolvedImports", skip_serializing_if = "Vec::is_empty", default)]
    pub unresolved_imports: Vec<String>,
    pub diagnostics: Vec<FileDiagnostic>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub hashtags: Vec<String>,
    /// Origin label (`local-registry`, `remote-index`, …).
    pub origin: String,
    /// Where the program was read (a source tree, or a feed file and line).
    pub source: ProgramOrigin,
    #[serde(rename = "hasSource")]
    pub has_source: bool,
    /// `argumentSchema`/`resultSchema` above are extracted from source; this
    /// is the content identity check against the pattern id.
    pub identity: Identity,
    /// The record's own schemas, side by side with the extracted ones.
    #[serde(rename = "declaredSchemas", skip_serializing_if = "Option::is_none")]
    pub declared_schemas: Option<DeclaredSchemas>,
    /// Declared against extracted, per schema.
    pub agreement: SchemaAgreement,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<PatternKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality: Option<Quality>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signals: Option<Signals>,
    #[serde(rename = "ownerDid", skip_serializing_if = "Option::is_none")]
    pub owner_did: Option<String>,
    #[serde(rename = "createdAt", skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(rename = "priorPatternId", skip_serializing_if = "Option::is_none")]
    pub prior_pattern_id: Option<String>,
    /// Dependencies the record declares (`dependencies` is their union with the scanned ones).
    #[serde(rename = "declaredDependencies", skip_serializing_if = "Vec::is_empty")]
    pub declared_dependencies: Vec<String>,
    #[serde(rename = "scannedDependencies")]
    pub scanned_dependencies: Vec<String>,
    /// Indexed programs that depend on this one.
    pub dependents: Vec<String>,
    /// What describes the program beyond its contract, each part with its
    /// address: catalog sections, README and linking sections (`doc:…`,
    /// reopened by `open`), its own text (read from its entry file), and its tier.
    #[serde(skip_serializing_if = "ProgramProfile::is_empty", default)]
    pub profile: ProgramProfile,
}

/// A published record's declared schemas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeclaredSchemas {
    #[serde(rename = "argumentSchema")]
    pub argument_schema: Option<Value>,
    #[serde(rename = "resultSchema")]
    pub result_schema: Option<Value>,
}

impl Engine {
    /// A program by pattern id, id prefix (at least 6 chars, unique), or alias.
    pub fn program(&self, id: &str) -> Result<&ProgramRow, QueryError> {
        // Also accept the `pattern:<id>` address of a hit (a path after it is ignored).
        let id = id.trim();
        let id = match id.strip_prefix("pattern:") {
            Some(rest) => rest.split(['/', '@']).next().unwrap_or(rest),
            None => id.trim_start_matches("cf:pattern:"),
        };
        let table = &self.snap.patterns;
        let programs = 0..table.programs.len();
        if let Some(i) = programs.clone().find(|&i| table.pattern_id(i) == id || table.aliases(i).any(|a| a == id)) {
            return Ok(&table.programs[i]);
        }
        if id.len() >= 6 {
            let matches: Vec<usize> = programs.filter(|&i| table.pattern_id(i).starts_with(id)).collect();
            match matches.len() {
                1 => return Ok(&table.programs[matches[0]]),
                n if n > 1 => {
                    return Err(QueryError::InvalidArgument(format!("pattern id prefix `{id}` matches {n} programs")));
                }
                _ => {}
            }
        }
        let aliases = (0..table.programs.len()).flat_map(|i| table.aliases(i));
        Err(QueryError::NotFound(format!("no pattern with id or alias `{id}`{}", suggest(id, aliases, ""))))
    }

    pub fn inspect(&self, id: &str) -> Result<Inspection, QueryError> {
        let p = self.program(id)?;
        Ok(self.inspection(p))
    }

    /// The indexed file row of one of a program's files.
    pub(crate) fn program_file_row(&self, p: &ProgramRow, name: &str) -> Option<&SourceFileRow> {
        let (root, path) = p.file_key(name);
        self.snap.patterns.file_index(root, &path).map(|i| &self.snap.patterns.files[i])
    }

    fn inspection(&self, p: &ProgramRow) -> Inspection {
        let file_row = |name: &str| self.program_file_row(p, name);
        let meta = p.published.as_ref();
        let entry = p.files.first().and_then(|f| file_row(&f.name));
        let diagnostics = p
            .files
            .iter()
            .filter_map(|f| file_row(&f.name))
            .flat_map(|f| {
                let (_, prefix) = p.file_key("");
                let file = f.path.strip_prefix(&prefix).unwrap_or(&f.path).to_string();
                f.extraction
                    .diagnostics
                    .iter()
                    .map(move |d| FileDiagnostic { file: file.clone(), diagnostic: d.clone() })
            })
            .collect();
        Inspection {
            pattern_id: p.pattern_id.clone(),
            aliases: p.aliases.clone(),
            entry: p.entry.clone(),
            import_hint: format!("import X from \"cf:pattern:{}\"", p.pattern_id),
            files: p.files.clone(),
            exports: entry.map(|e| e.extraction.exports.clone()).unwrap_or_default(),
            imports: entry.map(|e| e.extraction.imports.clone()).unwrap_or_default(),
            argument_schema: p.contract.argument_schema.clone(),
            result_schema: p.contract.result_schema.clone(),
            inferred: p.contract.inferred.clone(),
            notes: p.contract.notes.clone(),
            dependencies: p.dependencies.clone(),
            unresolved_imports: p.unresolved_imports.clone(),
            diagnostics,
            description: p.description.clone(),
            hashtags: p.hashtags.clone(),
            origin: p.origin.clone(),
            source: p.source.clone(),
            has_source: p.has_source,
            identity: p.identity.clone(),
            declared_schemas: meta.map(|m| DeclaredSchemas {
                argument_schema: m.argument_schema.clone(),
                result_schema: m.result_schema.clone(),
            }),
            agreement: p.agreement,
            kind: meta.and_then(|m| m.kind),
            quality: meta.and_then(|m| m.quality),
            signals: meta.and_then(|m| m.signals),
            owner_did: meta.and_then(|m| m.owner_did.clone()),
            created_at: meta.and_then(|m| m.created_at.clone()),
            prior_pattern_id: meta.and_then(|m| m.prior_pattern_id.clone()),
            declared_dependencies: meta.map(|m| m.dependencies.clone()).unwrap_or_default(),
            scanned_dependencies: p.scanned_dependencies.clone(),
            dependents: p.dependents.clone(),
            profile: p.profile.clone(),
        }
    }

    /// Every program, in entry order.
    pub fn export_patterns(&self) -> Vec<Inspection> {
        self.snap.patterns.programs.iter().map(|p| self.inspection(p)).collect()
    }

    /// A TypeScript-like rendering of a program's argument and result, for authors.
    pub fn contract_text(&self, id: &str) -> Result<String, QueryError> {
        let p = self.program(id)?;
        let mut out = format!("// {} — {}\n", p.entry, p.pattern_id);
        if let Some(d) = &p.description {
            out.push_str(&format!("/** {} */\n", d.replace('\n', " ")));
        }
        for (name, schema) in [("Argument", &p.contract.argument_schema), ("Result", &p.contract.result_schema)] {
            match schema {
                Some(s) => {
                    out.push_str(&format!("type {name} = {};\n", render(s, 0)));
                    if let Some(defs) = s.get("$defs").and_then(|d| d.as_object()) {
                        for (def, body) in defs {
                            out.push_str(&format!("type {def} = {};\n", render(body, 0)));
                        }
                    }
                }
                None => out.push_str(&format!("type {name} = unknown; // not derived: see notes\n")),
            }
        }
        if let Some(i) = &p.contract.inferred {
            out.push_str(&format!("// result inferred: {i}\n"));
        }
        for n in &p.contract.notes {
            out.push_str(&format!("// note: {n}\n"));
        }
        Ok(out)
    }
}

/// A property's type as one line of TypeScript.
pub(crate) fn render_type(s: &Value, _defs: Option<&Value>) -> String {
    render(s, 0).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Render a schema as a TypeScript type.
fn render(s: &Value, depth: usize) -> String {
    let indent = "  ".repeat(depth + 1);
    let base = match s {
        Value::Bool(true) => "any".to_string(),
        Value::Bool(false) => "never".to_string(),
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(|r| r.as_str()) {
                r.strip_prefix("#/$defs/")
                    .map_or_else(|| if r.contains("vnode") { "VNode".into() } else { r.into() }, str::to_string)
            } else if let Some(values) = m.get("enum").and_then(|e| e.as_array()) {
                values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" | ")
            } else if let Some(any) = m.get("anyOf").and_then(|a| a.as_array()) {
                any.iter().map(|x| render(x, depth)).collect::<Vec<_>>().join(" | ")
            } else {
                match m.get("type") {
                    Some(Value::String(t)) if t == "object" => {
                        let props = m.get("properties").and_then(|p| p.as_object());
                        let required: Vec<&str> = m
                            .get("required")
                            .and_then(|r| r.as_array())
                            .map(|r| r.iter().filter_map(|x| x.as_str()).collect())
                            .unwrap_or_default();
                        let mut lines = Vec::new();
                        for (k, v) in props.into_iter().flatten() {
                            if let Some(d) = v.get("description").and_then(|d| d.as_str()) {
                                lines.push(format!("{indent}/** {} */", d.replace('\n', " ")));
                            }
                            let opt = if required.contains(&k.as_str()) { "" } else { "?" };
                            let key = match k.strip_prefix('$') {
                                Some(sym) => format!("[{sym}]"),
                                None => k.clone(),
                            };
                            lines.push(format!("{indent}{key}{opt}: {};", render(v, depth + 1)));
                        }
                        if let Some(extra) = m.get("additionalProperties")
                            && extra != &Value::Bool(false)
                        {
                            lines.push(format!("{indent}[key: string]: {};", render(extra, depth + 1)));
                        }
                        if lines.is_empty() {
                            "{}".to_string()
                        } else {
                            format!("{{\n{}\n{}}}", lines.join("\n"), "  ".repeat(depth))
                        }
                    }
                    Some(Value::String(t)) if t == "array" => {
                        let items = m.get("items").map_or("unknown".to_string(), |i| render(i, depth));
                        if items.contains(' ') { format!("({items})[]") } else { format!("{items}[]") }
                    }
                    Some(Value::String(t)) if t == "integer" => "number".into(),
                    Some(Value::String(t)) => t.clone(),
                    Some(Value::Array(ts)) => ts.iter().filter_map(|t| t.as_str()).collect::<Vec<_>>().join(" | "),
                    _ => {
                        if m.get("asCell").is_some() {
                            "void".into()
                        } else {
                            "unknown".into()
                        }
                    }
                }
            }
        }
        _ => "unknown".into(),
    };
    let mut out = base;
    if let Some(d) = s.get("default") {
        out = format!("Default<{out}, {d}>");
    }
    if let Some(cells) = s.get("asCell").and_then(|c| c.as_array()) {
        for c in cells.iter().rev() {
            let kind = c.as_str().or_else(|| c.get("kind").and_then(|k| k.as_str())).unwrap_or("cell");
            let wrapper = match kind {
                "cell" => "Writable",
                "stream" => "Stream",
                "opaque" => "OpaqueCell",
                "readonly" => "ReadonlyCell",
                "writeonly" => "WriteonlyCell",
                "comparable" => "ComparableCell",
                "sqlite" => "SqliteDb",
                other => other,
            };
            out = if wrapper == "OpaqueCell" && out == "void" { "void".into() } else { format!("{wrapper}<{out}>") };
        }
    }
    out
}
