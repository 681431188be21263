"""`memvault mcp`: the vault as an MCP server over stdio (`server`), one tool per verb (`tools`)."""
