"""The automatic memory loop, the way agents' hosts run hooks: `memvault hook claude-code` reads a hook's
payload and answers it (`claude_code`), `memvault hooks install|uninstall` adds the hooks to a host's
settings and takes exactly them out again (`settings`), `memvault hooks mcp-config` prints the MCP
set-up for a host (`mcp_config`). A front door like the CLI and MCP: it only translates to verbs."""
