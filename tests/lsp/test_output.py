"""The server's output gathered per turn of the event loop (``memzoi_lsp.output.GatheredWriter``): one write per
turn, in the order written; at once off the loop or past the limit; a lost client logged, never raised later."""

from __future__ import annotations

import asyncio
import io
import threading

from memzoi_lsp import output
from memzoi_lsp.output import GatheredWriter


class Stream(io.BytesIO):
    """A binary stream that counts its writes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data) -> int:  # type: ignore[override]
        self.writes += 1
        return super().write(data)


def test_one_turn_s_frames_go_out_in_one_write_at_its_end_in_order():
    stream = Stream()
    writer = GatheredWriter(stream)

    async def turn() -> tuple[bytes, int]:
        for i in range(5):
            writer.write(b"frame%d;" % i)
        seen = (stream.getvalue(), stream.writes)  # nothing sent within the turn
        await asyncio.sleep(0)  # the turn ends: its frames go out
        return seen

    assert asyncio.run(turn()) == (b"", 0)
    assert stream.getvalue() == b"frame0;frame1;frame2;frame3;frame4;" and stream.writes == 1


def test_a_write_off_the_loop_goes_out_at_once_after_what_was_gathered():
    stream = Stream()
    writer = GatheredWriter(stream)
    writer.write(b"no-loop;")  # no loop running: now
    assert stream.getvalue() == b"no-loop;"

    async def turn() -> None:
        writer.write(b"gathered;")
        thread = threading.Thread(target=writer.write, args=(b"thread;",))
        thread.start()
        thread.join()

    asyncio.run(turn())
    assert stream.getvalue() == b"no-loop;gathered;thread;"


def test_past_the_limit_a_write_goes_out_at_once(monkeypatch):
    monkeypatch.setattr(output, "LIMIT", 10)
    stream = Stream()
    writer = GatheredWriter(stream)

    async def turn() -> bytes:
        writer.write(b"12345")
        writer.write(b"678901")  # 11 bytes gathered
        return stream.getvalue()

    assert asyncio.run(turn()) == b"12345678901"


def test_a_lost_client_in_a_gathered_write_is_logged_not_raised(caplog):
    class Broken(Stream):
        def write(self, data) -> int:  # type: ignore[override]
            raise BrokenPipeError("gone")

    writer = GatheredWriter(Broken())

    async def turn() -> None:
        writer.write(b"frame;")
        await asyncio.sleep(0)
        writer.write(b"again;")
        await asyncio.sleep(0)

    with caplog.at_level("ERROR", logger="memzoi_lsp.output"):
        asyncio.run(turn())
    assert [r.getMessage() for r in caplog.records].count("the connection to the client is lost: gone") == 1
    writer.drain()  # at the end: nothing raised either


def test_the_lost_client_s_log_record_may_write_again_without_a_deadlock():
    """The server's log bridge sends an error record to the client through this very writer: logging the lost
    connection while the writer held its lock left the server's loop waiting for that lock forever (a server whose
    client went away never ended)."""
    import logging

    class Broken(Stream):
        def write(self, data) -> int:  # type: ignore[override]
            raise BrokenPipeError("gone")

    writer = GatheredWriter(Broken())

    class Bridge(logging.Handler):  # as memzoi_lsp.logbridge: the record goes to the client, through the writer
        def emit(self, record: logging.LogRecord) -> None:
            writer.write(b"window/logMessage;")

    bridge = Bridge()
    output.log.addHandler(bridge)

    async def turn() -> None:
        writer.write(b"frame;")
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    runner = threading.Thread(target=asyncio.run, args=(turn(),), daemon=True)
    try:
        runner.start()
        runner.join(60)  # the bound of a wait for the condition below, not a time asserted
        assert not runner.is_alive(), "the writer deadlocked on its own lock"
    finally:
        output.log.removeHandler(bridge)
