"""The agent side of the core: what agents may read (:mod:`.recall`, :mod:`.precheck`, :mod:`.context`) and
the tool table with its channel rules (:mod:`.tools`, listing the tools of :mod:`.tools_memory`,
:mod:`.tools_resident`, :mod:`.resident_turn` and :mod:`.tools_recall`), served over MCP by
``memzoi_mcp``. Nothing here imports a protocol library.

Layer 8 of the core (agent): What agents are given: recall, the MCP tool table, exports and the agent instruction
file block, the client configuration snippet.

May import: base, read, judge, models, safety, ledger, project, resident, stores, runs, lifecycle, agent.
"""
