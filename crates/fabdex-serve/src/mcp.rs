//! `fabdex serve --mcp`: the tool registry over MCP on stdio.
//!
//! `tools/list` returns every registry descriptor (input and output schema);
//! `tools/call` runs the tool on a blocking thread and answers with the JSON
//! result as text and as structured content. A failed call is an MCP tool
//! error (`isError`) whose text is the CLI's message, prefixed by its kind.
//! Logging goes to stderr only: stdout carries the protocol.

use std::path::Path;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::state::{AppState, ServeOptions, descriptors, timeout_for};

#[derive(Clone)]
struct FabdexMcp {
    state: Arc<AppState>,
}

fn object(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

impl ServerHandler for FabdexMcp {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        config.server_info.name = "fabdex".into();
        config.server_info.version = env!("CARGO_PKG_VERSION").into();
        config.instructions = Some(
            "Search and read Common Fabric docs and pattern programs by address, with bounded reads. \
             Pass `run` to record calls in a research run."
                .into(),
        );
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = descriptors()
            .into_iter()
            .map(|d| {
                let mut tool = Tool::new_with_raw(
                    d.name,
                    Some(format!("{} Bounds: {}", d.description, d.bounds).into()),
                    object(d.input_schema),
                );
                tool.output_schema = Some(Arc::new(object(d.output_schema)));
                tool
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Ok(_slot) = self.state.slots.acquire().await else {
            return Ok(CallToolResult::error(vec![ContentBlock::text("unavailable: server is shutting down")]).into());
        };
        let state = self.state.clone();
        let name = request.name.to_string();
        let input = Value::Object(request.arguments.unwrap_or_default());
        let timeout = timeout_for(&state.opts, &name);
        let task = tokio::task::spawn_blocking(move || state.call_tool(&name, input));
        let result = match tokio::time::timeout(timeout, task).await {
            Err(_) => Err(format!("timeout: the call took longer than {} ms", timeout.as_millis())),
            Ok(Err(join)) => Err(format!("internal: {join}")),
            Ok(Ok(Err(e))) => Err(format!("{}: {}", e.kind, e.message)),
            Ok(Ok(Ok(value))) => Ok(value),
        };
        Ok(match result {
            Ok(value) => {
                let text = serde_json::to_string(&value).unwrap_or_default();
                let mut ok = CallToolResult::success(vec![ContentBlock::text(text)]);
                ok.structured_content = Some(value);
                ok
            }
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        }
        .into())
    }
}

/// Serve MCP on stdin/stdout until the client closes the stream.
pub fn serve_mcp(index_dir: &Path, opts: ServeOptions) -> anyhow::Result<()> {
    let state = Arc::new(AppState::open(index_dir, opts)?);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let server = FabdexMcp { state }
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("MCP initialization failed: {e}"))?;
        server.waiting().await.map_err(|e| anyhow::anyhow!("MCP server stopped: {e}"))?;
        Ok(())
    })
}
