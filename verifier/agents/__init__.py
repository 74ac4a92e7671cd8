"""Front ends for programs rather than people: the MCP server (``mcp_server``)."""
