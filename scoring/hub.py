"""Know where we are before any model is read: local folder, cached hub model, reachable hub, or offline.

:func:`check_models` runs once at the start of ``score``, ``study``, ``demo`` and ``evaluate``:

* a local folder must exist and hold ``config.json``; a mistyped path (``./models/bret``) gets
  one clear line instead of the hub's ``HFValidationError``;
* a hub id must be a valid repo id;
* the hub is probed **once** (one HTTP ``HEAD``, :data:`PROBE_TIMEOUT_S`), never retried. If it is
  unreachable and every hub model is in the local Hugging Face cache, the run switches to offline
  mode (as ``HF_HUB_OFFLINE=1``) and uses the cache; otherwise it stops with one message naming
  the offline form. With ``HF_HUB_OFFLINE`` set, nothing is probed.

Benchmark data never needs the network (it is bundled, see ``data/bundled/PROVENANCE.md``).
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

from stereoset_eval.foundation.errors import StereosetEvalError

PROBE_TIMEOUT_S = 3.0
OFFLINE_ENV = "HF_HUB_OFFLINE"
OFFLINE_FORM = (
    "offline, give local model folders and set HF_HUB_OFFLINE=1, e.g. "
    "`HF_HUB_OFFLINE=1 stereoset-eval demo --models ./my-models/bert-base-uncased` "
    "(make demo: DEMO_ARGS=\"--models …\"; see docs/quickstart.md); the benchmark data is bundled"
)


class ModelUnavailableError(StereosetEvalError):
    """A model cannot be read: no such folder, an invalid id, or the hub is out of reach."""


def looks_like_path(model: str) -> bool:
    """True for strings that can only mean a local folder (``./x``, ``/x``, ``~/x``, ``a/b/c``, ``x/``)."""
    return (model.startswith((".", "/", "~")) or "\\" in model or model.count("/") > 1 or model.endswith("/")
            or Path(model).expanduser().exists())


def offline() -> bool:
    """Whether hub access is switched off (``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE``)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get(OFFLINE_ENV, "").upper() in {"1", "ON", "YES", "TRUE"}


def go_offline() -> None:
    """Switch this process (and the workers it starts) to the local cache only."""
    from huggingface_hub import constants

    os.environ[OFFLINE_ENV] = "1"
    constants.HF_HUB_OFFLINE = True


@lru_cache(maxsize=None)
def probe_hub(endpoint: str | None = None, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """None when the hub answers one ``HEAD`` request (any HTTP status), else why not (one line)."""
    if endpoint is None:
        from huggingface_hub import constants

        endpoint = constants.ENDPOINT
    try:
        urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=timeout).close()
    except urllib.error.HTTPError:
        return None  # it answered
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"{endpoint}: {reason}"
    return None


def cached(model: str, revision: str | None) -> bool:
    """Whether the hub model's ``config.json`` is in the local Hugging Face cache."""
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(model, "config.json", revision=revision), str)


def _check_local(model: str) -> None:
    path = Path(model).expanduser()
    if not path.exists():
        raise ModelUnavailableError(
            f"model {model}: no such local folder ({path.resolve()} does not exist); a local model is a folder with "
            f"config.json and weights, a hub model an id like 'bert-base-uncased' or 'org/name'")
    if not path.is_dir():
        raise ModelUnavailableError(f"model {model}: {path} is a file; give the model's folder (config.json, weights)")
    if not (path / "config.json").is_file():
        raise ModelUnavailableError(f"model {model}: no config.json in {path}; is it a saved transformers model?")


def _check_id(model: str) -> None:
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(model)
    except HFValidationError as exc:
        raise ModelUnavailableError(f"model {model}: not a local folder, and not a valid hub id "
                                    f"({str(exc).splitlines()[0]})") from None


def check_models(models: Iterable[tuple[str, str | None]], *, say: Callable[[str], None] | None = None) -> None:
    """Raise :class:`ModelUnavailableError` unless every ``(model, revision)`` can be read.

    Local folders are checked on disk; hub ids need a reachable hub (one probe) or the local
    cache, and an unreachable hub with every model cached switches the process offline.
    """
    from stereoset_eval.scoring.model_info import FAKE_PREFIX

    hub: list[tuple[str, str | None]] = []
    for model, revision in models:
        if model.startswith(FAKE_PREFIX):  # the deterministic fake models need neither disk nor hub
            continue
        if looks_like_path(model):
            _check_local(model)
        else:
            _check_id(model)
            hub.append((model, revision))
    if not hub:
        return
    missing = [m for m, r in hub if not cached(m, r)]
    if offline():
        if missing:
            raise ModelUnavailableError(
                f"HF_HUB_OFFLINE is set and {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not in the "
                f"local Hugging Face cache; {OFFLINE_FORM}")
        return
    problem = probe_hub()
    if problem is None:
        return
    if missing:
        raise ModelUnavailableError(
            f"cannot reach the Hugging Face hub ({problem}) and {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not in the local cache; {OFFLINE_FORM}")
    go_offline()
    if say is not None:
        say(f"note: the Hugging Face hub is unreachable ({problem}); using the cached copies of "
            f"{', '.join(m for m, _ in hub)} (offline mode, as with HF_HUB_OFFLINE=1)")
