"""Cancels of unknown or finished requests and late replies are normal traffic: no warning, no traceback
(issue 28: 46 "Cancel notification for unknown message id" warnings in one session, and a traceback for a late
reply to a request cancelled by a timeout)."""

from __future__ import annotations

import asyncio
import logging

from memzoi_lsp.server import create_server


async def test_unknown_cancels_and_late_replies_log_nothing_above_debug(caplog):
    server = create_server()
    protocol = server.protocol
    caplog.set_level(logging.DEBUG)
    protocol._handle_cancel_notification(4242)  # never seen
    done = asyncio.get_running_loop().create_future()
    done.set_result(None)
    protocol._request_futures["answered"] = done
    protocol._handle_cancel_notification("answered")  # answered already
    gave_up = asyncio.get_running_loop().create_future()
    gave_up.cancel()  # a wait_for timeout cancelled it
    protocol._request_futures["late"] = gave_up
    protocol._handle_response("late", result={"applied": True})  # pygls raised InvalidStateError here
    protocol._handle_response("never-sent", result=None)
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == [], [r.getMessage() for r in loud]
    assert "late" not in protocol._request_futures
    # a running request is still cancelled
    running = asyncio.get_running_loop().create_future()
    protocol._request_futures[7] = running
    protocol._handle_cancel_notification(7)
    assert running.cancelled()
