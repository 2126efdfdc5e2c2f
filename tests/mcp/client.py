"""Drive `fabdex serve --mcp` with the official MCP Python SDK.

Usage: client.py FABDEX_BIN INDEX_DIR RUNS_DIR RUN_ID
Prints one JSON object: the tool names, a search result, a read result, a
withheld-free error call, and the ledger the calls produced.
"""
import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def g(obj, snake, camel):
    """A field by its v2 (snake_case) or v1 (camelCase) name."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


async def main() -> None:
    binary, index, runs, run = sys.argv[1:5]
    params = StdioServerParameters(
        command=binary,
        args=["--index", index, "--runs", runs, "--run", run, "serve", "--mcp"],
    )
    out = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = g(init, "server_info", "serverInfo").name
            tools = await session.list_tools()
            out["tools"] = [t.name for t in tools.tools]
            out["has_output_schemas"] = all(g(t, "output_schema", "outputSchema") for t in tools.tools)
            search = await session.call_tool("search_docs", {"query": "what does a wish give back", "limit": 3})
            out["search_error"] = g(search, "is_error", "isError")
            out["search"] = g(search, "structured_content", "structuredContent")
            top = out["search"]["hits"][0]["address"]
            read_result = await session.call_tool("read", {"address": top, "max_chars": 120})
            out["read_error"] = g(read_result, "is_error", "isError")
            out["read"] = g(read_result, "structured_content", "structuredContent")
            missing = await session.call_tool("read", {"address": "doc:docs/nope.md"})
            out["missing_error"] = g(missing, "is_error", "isError")
            out["missing_text"] = missing.content[0].text
            research = await session.call_tool("research", {"task": "a list of my emails"})
            out["research_error"] = g(research, "is_error", "isError")
            out["research_text"] = research.content[0].text
            ledger = await session.call_tool("ledger_show", {})
            out["ledger"] = g(ledger, "structured_content", "structuredContent")
    print(json.dumps(out))


asyncio.run(main())
