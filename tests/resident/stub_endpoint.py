"""A local stand-in for an OpenAI-compatible chat-completions endpoint: an HTTP server on 127.0.0.1 that answers
each request with the next scripted reply (tool calls, streamed as server-sent events or as one JSON document, a
stream cut short, an answer that never comes) and keeps every request body it received."""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def call(name: str, arguments: Any, call_id: str = "call_1") -> dict[str, Any]:
    """One scripted tool call; ``arguments`` is JSON-encoded unless it is already a string (malformed JSON)."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)},
    }


@dataclass
class Reply:
    """One scripted answer. ``mode``: ``json`` (one document), ``stream`` (SSE, arguments split over chunks),
    ``truncate`` (SSE cut before the end), ``hang`` (no answer until the test ends), ``status`` (HTTP 500)."""

    mode: str = "stream"
    calls: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""


class Stub:
    """The server: ``url`` (the endpoint to configure), ``replies`` (consumed in order), ``requests`` (bodies)."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                stub.requests.append(json.loads(body))
                stub.headers.append(dict(self.headers))
                reply = stub.replies.pop(0) if stub.replies else Reply()
                getattr(self, "_" + reply.mode)(reply)

            def _json(self, reply):
                data = json.dumps(
                    {
                        "id": "cmpl",
                        "object": "chat.completion",
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "tool_calls" if reply.calls else "stop",
                                "message": {
                                    "role": "assistant",
                                    "content": reply.text,
                                    "tool_calls": reply.calls or None,
                                },
                            }
                        ],
                    }
                )
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

            def _chunks(self, reply):
                if reply.text:
                    yield {"choices": [{"index": 0, "delta": {"role": "assistant", "content": reply.text}}]}
                for i, c in enumerate(reply.calls):
                    args = c["function"]["arguments"]
                    half = len(args) // 2
                    yield {
                        "choices": [
                            {
                                "index": 0,
                                "delta": {
                                    "tool_calls": [
                                        {
                                            "index": i,
                                            "id": c["id"],
                                            "type": "function",
                                            "function": {"name": c["function"]["name"], "arguments": args[:half]},
                                        }
                                    ]
                                },
                            }
                        ]
                    }
                    yield {
                        "choices": [
                            {
                                "index": 0,
                                "delta": {"tool_calls": [{"index": i, "function": {"arguments": args[half:]}}]},
                            }
                        ]
                    }

            def _sse_head(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()

            def _stream(self, reply):
                self._sse_head()
                for chunk in self._chunks(reply):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if reply.calls else "stop"}]}
                self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())

            def _truncate(self, reply):
                self._sse_head()
                first = next(iter(self._chunks(reply)), None)
                if first is not None:
                    self.wfile.write(f"data: {json.dumps(first)}\n\n".encode())
                self.wfile.flush()  # then the connection closes (HTTP/1.0): no finish_reason, no [DONE]

            def _hang(self, reply):
                stub.release.wait()

            def _status(self, reply):
                self.send_response(500)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Stub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def closed_port_url() -> str:
    """An endpoint on 127.0.0.1 where nothing listens (the port was bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
