"""``memzoi-mcp``: the agent side over the Model Context Protocol (stdio). Protocol glue only: the tools, their
rules and every decision live in :mod:`memzoi.agent` and the lifecycle core."""
