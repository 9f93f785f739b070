"""One chat-completions call to an OpenAI-compatible endpoint with tool calling, streamed where the endpoint
streams (reference ``zuno-memory.md`` §6: "exactly one streamed completion … Tool results are not fed back").

:func:`complete` POSTs the request body exactly as given (bytes) to ``<endpoint>/chat/completions`` with httpx2
(the HTTP client the MCP SDK brings), reads the answer as server-sent events when the endpoint answers
``text/event-stream`` and as one JSON document otherwise, and returns the assistant's text and tool calls with
their raw argument strings (parsing them is the caller's: malformed JSON is a recorded failure there). Every
failure is a :class:`ProviderError` with a ``kind`` (``unreachable``, ``timeout``, ``http_status``,
``truncated``, ``malformed``) and a message that never carries the API key.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


class ProviderError(Exception):
    """A failed completion: ``kind`` (see the module docstring) and a message naming the endpoint and cause."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


@dataclass
class ToolCall:
    """One tool call of the answer: its id, function name and raw ``arguments`` text (JSON, unparsed)."""

    id: str | None
    name: str
    arguments: str

    def to_json(self) -> dict[str, Any]:
        """``{"id", "name", "arguments"}``."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass
class Completion:
    """The assistant's answer: ``text``, ``tool_calls``, whether it was streamed, and ``finish_reason``."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    streamed: bool = False
    finish_reason: str | None = None


def url_for(endpoint: str) -> str:
    """``<endpoint>/chat/completions`` (an endpoint already ending so is kept)."""
    base = endpoint.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


def _text(value: Any) -> str:
    """A string field of the answer as text (``""`` when absent; anything else as its JSON, never a crash)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _from_json(data: Any) -> Completion:
    try:
        choice = data["choices"][0]
        message = choice["message"]
        calls = [
            ToolCall(_text(c.get("id")) or None, _text(c["function"]["name"]), _text(c["function"].get("arguments")))
            for c in message.get("tool_calls") or []
        ]
        return Completion(_text(message.get("content")), calls, False, choice.get("finish_reason"))
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ProviderError(
            "malformed", "the endpoint's answer is not a chat completion (no choices[0].message)"
        ) from None


def accumulate(lines: Iterable[str]) -> Completion:
    """Fold server-sent ``data:`` lines of a streamed chat completion into one :class:`Completion` (tool-call
    deltas joined by ``index``). Raises :class:`ProviderError` ``truncated`` when the stream ends before
    ``[DONE]`` or a ``finish_reason``, ``malformed`` for a chunk that is not JSON."""
    out = Completion(streamed=True)
    calls: dict[int, dict[str, Any]] = {}
    done = False
    for line in lines:
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            done = True
            break
        try:
            chunk = json.loads(payload)
            choice = (chunk.get("choices") or [{}])[0]
            delta = choice.get("delta") or {}
            out.text += _text(delta.get("content"))
            for part in delta.get("tool_calls") or []:
                slot = calls.setdefault(int(part.get("index", len(calls))), {"id": None, "name": "", "arguments": ""})
                slot["id"] = _text(part.get("id")) or slot["id"]
                fn = part.get("function") or {}
                slot["name"] += _text(fn.get("name"))
                slot["arguments"] += _text(fn.get("arguments"))
        except (ValueError, AttributeError, TypeError, IndexError):
            raise ProviderError(
                "malformed", "a streamed chunk of the endpoint's answer is not a chat-completion chunk"
            ) from None
        if choice.get("finish_reason"):
            out.finish_reason = str(choice["finish_reason"])
    if not done and out.finish_reason is None:
        raise ProviderError(
            "truncated", "the endpoint's stream ended before the message ended (no finish_reason, no [DONE])"
        )
    out.tool_calls = [ToolCall(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items())]
    return out


def complete(endpoint: str, body: bytes, *, api_key: str | None, timeout_s: float) -> Completion:
    """POST ``body`` (the request exactly as recorded) and read the answer (see the module docstring). Raises
    :class:`ProviderError`."""
    import httpx2 as httpx  # noqa: PLC0415 lazy: start-up

    url = url_for(endpoint)
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream, application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout_s), trust_env=False) as client:
            with client.stream("POST", url, content=body, headers=headers) as resp:
                if resp.status_code >= 400:
                    raise ProviderError("http_status", f"{url} answered HTTP {resp.status_code}")
                if resp.headers.get("content-type", "").startswith("text/event-stream"):
                    return accumulate(resp.iter_lines())
                try:
                    return _from_json(json.loads(resp.read()))
                except ValueError:
                    raise ProviderError("malformed", f"{url} answered with a body that is not JSON") from None
    except httpx.TimeoutException:
        raise ProviderError("timeout", f"{url} did not answer within {timeout_s:g} s") from None
    except (httpx.RemoteProtocolError, httpx.ReadError) as err:
        raise ProviderError("truncated", f"{url}: the answer broke off ({type(err).__name__})") from None
    except httpx.TransportError as err:
        raise ProviderError("unreachable", f"{url} cannot be reached ({type(err).__name__})") from None
    except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, UnicodeDecodeError) as err:
        raise ProviderError("malformed", f"{url}: the exchange failed ({type(err).__name__})") from None
