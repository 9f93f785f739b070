"""A call's line is noted by :class:`memzoi_mcp.arrivals.Arrivals` however JSON spells it: a ``tools/call`` whose
method is written with an escape (``"tools\\/call"``, legal JSON the SDK takes) must not be handed the arrival and
listing noted for an earlier call with the same id that no handler took (a request the SDK answered itself), or its
refresh serves a listing taken before an edit that completed before the call was sent."""

from __future__ import annotations

import json

import mcp_types as types
import pytest
from hypothesis import given, strategies as st

from memzoi_mcp.arrivals import Arrivals

from ..index_setup import NEW, OLD, closed, fact, same_size_edit  # noqa: F401 - fixtures
from .conftest import FACT_ID, home, project  # noqa: F401 - fixtures
from .test_first_call import current_with_a_mark
from .test_warm_start import Ctx, Listing, call_line, noting

ESCAPES = ["tools\\/call", "\\u0074ools/call", "tools\\u002fcall", "tools/cal\\u006c"]


@pytest.mark.parametrize("spelt", ESCAPES)
def test_an_escaped_call_is_noted_anew(spelt):
    started: list[Listing] = []
    arrivals = Arrivals(lambda: started.append(Listing(len(started))) or started[-1])
    assert arrivals.read(call_line(7)) == 7  # never taken: the SDK answered it itself
    escaped = call_line(7).replace("tools/call", spelt)
    assert json.loads(escaped)["method"] == "tools/call"
    assert arrivals.read(escaped) == 7
    noted = arrivals.take(7)
    assert noted is not None and noted[1] is started[1]  # the new call's listing, not the old one
    assert started[0].closed


@given(st.sampled_from(ESCAPES), st.integers(0, 2**31))
def test_every_spelling_of_a_call_is_noted(spelt, rid):
    arrivals = Arrivals(lambda: None)
    assert arrivals.read(call_line(rid).replace("tools/call", spelt)) == rid


async def test_an_escaped_call_after_an_untaken_one_serves_the_edit(project, closed):
    current_with_a_mark(project)
    with noting(project) as (arrivals, call):
        arrivals.read(call_line(7))  # noted with its listing, and never handled
        noted = arrivals._calls[7][1]
        assert noted is not None
        noted()  # find has listed the record as it was
        same_size_edit(fact(project))  # completed before the next call is sent
        arrivals.read(call_line(7).replace("tools/call", "tools\\/call"))
        params = types.CallToolRequestParams(name="search_memory", arguments={"query": NEW})
        res = await call.handler(Ctx(request_id=7), params)
        assert [h["id"] for h in res.structured_content["results"]] == [FACT_ID]
        params = types.CallToolRequestParams(name="search_memory", arguments={"query": OLD})
        res = await call.handler(Ctx(request_id=8), params)
        assert res.structured_content["results"] == []


@pytest.mark.parametrize(
    "line",
    [
        json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}),  # another request with its id
        json.dumps([{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search_memory"}}]),
    ],
    ids=["another request", "a call in a batch"],
)
def test_a_request_with_the_id_of_an_untaken_call_forgets_it(line):
    """A request that is not noted as a call (another method, or a call inside a batch) and reuses the id of a
    call no handler took makes that call forgotten, its listing stopped: were it the one the SDK hands over, its
    handler starts its own listing instead of taking one from before this line."""
    started: list[Listing] = []
    arrivals = Arrivals(lambda: started.append(Listing(len(started))) or started[-1])
    assert arrivals.read(call_line(7)) == 7
    assert arrivals.read(line) is None
    assert arrivals.take(7) is None and started[0].closed
    assert arrivals.read(call_line(8)) == 8
    assert arrivals.read(json.dumps({"jsonrpc": "2.0", "id": 8, "result": {}})) is None  # an answer: another id space
    noted = arrivals.take(8)
    assert noted is not None and noted[1] is started[1]
