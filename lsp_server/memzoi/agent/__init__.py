"""The agent side of the core: what agents may read (:mod:`.recall`, :mod:`.precheck`, :mod:`.context`) and the
tool table with its channel rules (:mod:`.tools`, extended by :mod:`.tools_recall`), served over MCP by
``memzoi_mcp``. Nothing here imports a protocol library."""

from . import tools_recall  # noqa: F401,E402 - registers the recall and planning tools with the table
