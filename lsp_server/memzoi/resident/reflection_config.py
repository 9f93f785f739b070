"""``[reflection]`` of the user's own configuration: which small model reviews delivered turns, where, and how
often (reference ``zuno-memory.md`` §5 ``memory.nudge_interval``, §6 "When it runs").

Read from ``memzoi.toml`` in the Zuno configuration folder (``$ZUNO_CONFIG_DIR``, else ``~/.config/zuno``;
:func:`memzoi.resident.scope.user_config_path`), **never** from a repository: a repository must not choose which
model reads its users' transcripts, where they are sent, or which credential goes with them.

```toml
[reflection]
small_model = "openai/gpt-4o-mini"            # provider/model; the part after the first "/" is sent as `model`
endpoint = "https://api.example.com/v1"       # OpenAI-compatible base URL (…/chat/completions is appended)
api_key_env = "OPENAI_API_KEY"                # the environment variable holding the key (never the key itself)
timeout_s = 60                                # one request, seconds
nudge_interval = 10                           # review every N delivered messages; 0: only after a recovery
```

Without ``small_model`` and ``endpoint`` reflection is disabled and says so; there is no fallback model
(Zuno ``resolve_reflection_model``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..base.smallfile import read_small, why_unread
from ..judge.pathsafety import shown_local_path, with_shown_paths
from ..ledger import Refusal
from .scope import user_config_path

DISABLED = (
    "memory reflection disabled: configure `small_model` and `endpoint` under [reflection] in {path} "
    "(the user's configuration; no fallback model is used)"
)


class ReflectionSection(BaseModel):
    """``[reflection]`` (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    small_model: str | None = Field(None, pattern=r"^[^/\s]+/\S+$", description="provider/model")
    endpoint: str | None = Field(None, pattern=r"^https?://\S+$", description="OpenAI-compatible base URL")
    api_key_env: str | None = Field(
        None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="name of the environment variable holding the API key"
    )
    timeout_s: float = Field(60.0, gt=0, le=3600, description="seconds one request may take")
    nudge_interval: int = Field(10, ge=0, le=1_000_000, description="review every N delivered messages")


@dataclass(frozen=True)
class ReflectionSettings:
    """The user's ``[reflection]`` and whether reflection can run: ``disabled`` says why not (``None``: enabled)."""

    section: ReflectionSection
    disabled: str | None

    @property
    def provider(self) -> str:
        """The provider part of ``small_model``."""
        return (self.section.small_model or "/").split("/", 1)[0]

    @property
    def wire_model(self) -> str:
        """The model id sent to the endpoint: ``small_model`` after its first ``/``."""
        return (self.section.small_model or "/").split("/", 1)[1]


def reflection_settings() -> ReflectionSettings:
    """The user's ``[reflection]`` (:func:`user_config_path`). An absent file or section, or one without
    ``small_model``/``endpoint``, gives disabled settings (``nudge_interval`` still counts turns). Raises
    :class:`Refusal` ``invalid_config`` naming the file and key when it cannot be read or a value is invalid. The file
    is named as :func:`~memzoi.judge.pathsafety.shown_local_path` shows it, in the refusal and in ``disabled``."""
    path = user_config_path()
    try:
        # the user's own file: a link is followed (dotfile managers make them), but never a FIFO, device or a
        # file over the cap (memzoi.base.smallfile)
        raw = tomllib.loads(read_small(path, follow=True).decode("utf-8"))
    except FileNotFoundError:
        raw = {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as err:
        raise Refusal(
            "invalid_config",
            with_shown_paths(
                f"{path}: cannot read the user's configuration ({why_unread(err)}); fix "
                "or remove it (reflection is not configured from anywhere else)",
                path,
            ),
        ) from None
    section = raw.get("reflection", {})
    try:
        if not isinstance(section, dict):
            raise ValueError("[reflection] must be a table")
        model = ReflectionSection.model_validate(section)
    except (ValidationError, ValueError) as err:
        problems = err.errors(include_url=False, include_input=False) if isinstance(err, ValidationError) else []
        what = "; ".join(f"`reflection.{'.'.join(str(x) for x in e['loc'])}`: {e['msg']}" for e in problems) or str(err)
        message = f"{path}: {what}; fix it (reflection runs only as the user configured it)"
        raise Refusal("invalid_config", with_shown_paths(message, path)) from None
    disabled = None if model.small_model and model.endpoint else DISABLED.format(path=shown_local_path(path))
    return ReflectionSettings(model, disabled)
