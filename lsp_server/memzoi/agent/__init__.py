"""The agent side of the core: what agents may read (:mod:`.recall`) and the tool table with its channel rules
(:mod:`.tools`), served over MCP by ``memzoi_mcp``. Nothing here imports a protocol library."""
