"""Whether an editor buffer may be acted on: the one "unsaved" rule of the server's code actions and commands.

Every lifecycle change, resident decision and materialization step reads and writes the file on disk (a change is
ledgered from the disk's bytes, ``memzoi.ledger.run_change``), never the editor's buffer. An action offered on a
buffer whose text the disk does not hold, or a command run on it, would act on other text than the person sees and
could overwrite what they typed. So a code action is offered disabled, and a command refuses, for exactly the
buffers :func:`unsaved` names; the two can never disagree (issue 32).
"""

from __future__ import annotations

from pathlib import Path


def unsaved(
    path: Path | None,
    text: str,
    *,
    is_open: bool,
    behind: bool = False,
    edited: bool = True,
    disk_changed: bool = False,
) -> str | None:
    """Why the buffer ``text`` of ``path`` may not be acted on yet, or ``None`` when it may.

    * a closed file, or a buffer without a file path: ``None`` (nothing of the editor's to lose);
    * ``behind``: the buffer still shows the text from before the server's own last write of the file (the client
      reloads it): ``None``, the disk governs;
    * the file is gone (``FileNotFoundError``: moved or deleted by a change): ``None``, a change acting on the disk
      finds nothing of the buffer's there to overwrite (it refuses on its own when it needs the file);
    * the file cannot be read (any other ``OSError``: permissions, a directory, I/O): a reason naming the file,
      since whether the buffer is saved cannot be told and acting could lose the person's text;
    * else a reason when the disk's text (UTF-8, undecodable bytes replaced, as the editor shows them) differs from
      ``text``. ``edited``: the buffer differs from what the editor last loaded from or saved to the file;
      ``disk_changed``: the file changed on disk since then (another program, an agent, ``git pull``). An unedited
      buffer of a file changed on disk is told to reload it, never to save it: saving would overwrite that change.

    Reasons name the file (its name only) and what to do; they never quote its content.
    """
    if not is_open or behind or path is None:
        return None
    try:
        disk = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        return (
            f"{path.name} cannot be read to compare it with its open buffer ({type(err).__name__}); make the "
            "file readable, then try again"
        )
    if disk.decode("utf-8", errors="replace") == text:
        return None
    if disk_changed and not edited:
        return (
            f"{path.name} changed on disk since the editor loaded it (another program wrote it); reload it from "
            "disk and review it again. Do not save the buffer: that would overwrite the change on disk"
        )
    if disk_changed:
        return (
            f"{path.name} has unsaved edits, and the file also changed on disk since the editor loaded it; saving "
            "would overwrite that change: compare the two, keep what you want, then try again"
        )
    return f"{path.name} has unsaved changes; save or revert it first"


__all__ = ["unsaved"]
