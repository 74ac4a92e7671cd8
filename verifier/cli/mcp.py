"""``bankproof mcp``: the MCP server over stdio (``verifier/agents/mcp_server.py``)."""

from __future__ import annotations

import argparse
import importlib.util
from typing import TextIO

from bankproof.models.errors import InputError


def mcp(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if importlib.util.find_spec("mcp") is None:
        raise InputError("mcp", "extra", "needs the MCP Python SDK: pip install 'bankproof[mcp]'")
    from bankproof.verifier.agents.mcp_server import serve

    serve()
    return 0
