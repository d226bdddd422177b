"""Talk to a Label Studio server with label-studio-sdk 2.x: push tasks, pull an export.

Every failure becomes a :class:`LabelStudioError` naming the URL (and the project) and
the problem in words. The API key never appears in a message: it is only handed to the
SDK client, and any text that could echo it (an HTTP library error about an illegal
header, say) is scrubbed before it is raised. Errors are raised outside the ``except``
block that caught the SDK's exception, so no traceback chains back to it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.secrets import scrub, shorten
from stereoset_eval.curation.labelstudio import config as cfg

API_KEY_ENV = "LABEL_STUDIO_API_KEY"
IMPORT_BATCH = 500


class LabelStudioError(StereosetEvalError):
    """A Label Studio server refused or failed a request; names URL and project."""

    def __init__(self, url: str, problem: str, *, project: int | None = None) -> None:
        url = scrub(url)  # http://user:password@host never reaches a message
        self.url, self.project, self.problem = url, project, problem
        where = f"Label Studio at {url}" + (f", project {project}" if project is not None else "")
        super().__init__(scrub(f"{where}: {problem}"))


class LabelStudioAuthError(LabelStudioError):
    """Missing, malformed or refused API key."""


class LabelStudioUnreachableError(LabelStudioError):
    """No answer from the server (connection refused, DNS, timeout)."""


class LabelStudioNotFoundError(LabelStudioError):
    """The project (or export) does not exist on that server."""


class LabelStudioConfigMismatchError(LabelStudioError):
    """The project's labeling config is not the one this toolkit generates."""


@dataclass
class Connection:
    """An authenticated SDK client and the URL it talks to (the key is not kept here)."""

    url: str
    client: Any = field(repr=False)
    user: str = ""
    _secret: str = field(default="", repr=False)

    def call(self, action: str, fn: Callable[..., Any], *args: Any, project: int | None = None, **kwargs: Any) -> Any:
        """Run one SDK call; translate its failure into a :class:`LabelStudioError`."""
        error: LabelStudioError | None = None
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # the SDK raises ApiError and httpx errors; translate all
            error = _translate(exc, self.url, action, project, self._secret)
        raise error


def _scrub(text: str, secret: str) -> str:
    return scrub(text, secret)


def _detail(body: Any, secret: str) -> str:
    """The useful part of an error body, scrubbed *before* it is cut to 300 characters."""
    if isinstance(body, Mapping):
        parts = [str(body.get("detail") or "")]
        if body.get("validation_errors"):
            parts.append(json.dumps(body["validation_errors"], sort_keys=True))
        text = " ".join(p for p in parts if p) or json.dumps(body, sort_keys=True, default=str)
    else:
        text = str(body)
    return shorten(text, 300, secret)


def _translate(exc: Exception, url: str, action: str, project: int | None, secret: str) -> LabelStudioError:
    import httpx
    from label_studio_sdk.core.api_error import ApiError

    if isinstance(exc, ApiError):
        status, detail = exc.status_code, _detail(exc.body, secret)
        if status in (401, 403):
            return LabelStudioAuthError(url, f"{action}: the API key was refused (HTTP {status}: {detail})", project=project)
        if status == 404:
            return LabelStudioNotFoundError(url, f"{action}: not found (HTTP 404: {detail})", project=project)
        return LabelStudioError(url, f"{action} failed (HTTP {status}: {detail})", project=project)
    if isinstance(exc, httpx.LocalProtocolError):
        return LabelStudioAuthError(url, f"{action}: the API key is not a valid HTTP header value", project=project)
    if isinstance(exc, httpx.TimeoutException):
        return LabelStudioUnreachableError(url, f"{action}: the server did not answer in time", project=project)
    if isinstance(exc, (httpx.TransportError, httpx.InvalidURL, httpx.UnsupportedProtocol)):
        problem = _scrub(str(exc), secret) or type(exc).__name__
        return LabelStudioUnreachableError(url, f"{action}: cannot reach the server ({problem})", project=project)
    return LabelStudioError(url, f"{action} failed: {type(exc).__name__}: {shorten(str(exc), 300, secret)}", project=project)


def connect(url: str, api_key: str | None, *, timeout: float = 30.0, max_retries: int = 2) -> Connection:
    """An SDK client for ``url`` whose key was accepted (checked with ``whoami``).

    ``timeout`` (seconds per request) and ``max_retries`` (SDK retries with back-off on
    connection errors and 5xx answers) go to the SDK client unchanged.

    Raises:
        LabelStudioAuthError: no key, or the server refused it.
        LabelStudioUnreachableError: nothing answers at ``url``.
    """
    if not url or not url.startswith(("http://", "https://")):
        raise LabelStudioError(str(url), "the URL must start with http:// or https://")
    url = url.rstrip("/")
    if not api_key or not api_key.strip():
        raise LabelStudioAuthError(url, f"no API key: set the environment variable {API_KEY_ENV}")
    api_key = api_key.strip()
    if not (api_key.isascii() and api_key.isprintable()) or any(c.isspace() for c in api_key):
        raise LabelStudioAuthError(url, "the API key is not a valid HTTP header value "
                                        "(it has spaces, control or non-ASCII characters)")
    try:
        from label_studio_sdk import LabelStudio
    except ImportError:
        raise StereosetEvalError("label-studio-sdk is not installed: pip install 'stereoset-eval[labelstudio]'") from None
    conn = Connection(url=url, client=None, _secret=api_key)
    conn.client = conn.call("creating the client", LabelStudio, base_url=url, api_key=api_key, timeout=timeout,
                            max_retries=max_retries)
    me = conn.call("checking the API key", conn.client.users.whoami)
    conn.user = str(getattr(me, "email", "") or f"user:{getattr(me, 'id', '?')}")
    return conn


def project_schema(conn: Connection, project_id: int) -> tuple[str, cfg.ConfigSchema]:
    """The project's labeling config XML and what it asks."""
    project = conn.call("reading the project", conn.client.projects.get, id=project_id, project=project_id)
    xml = getattr(project, "label_config", None) or ""
    return xml, cfg.read_schema(xml) if xml.strip() else cfg.ConfigSchema(False, {})


def check_project(conn: Connection, project_id: int, expected_xml: str, *, compare_pitfalls: bool) -> cfg.ConfigSchema:
    """Raise LabelStudioConfigMismatchError unless the project asks what we expect."""
    _, found = project_schema(conn, project_id)
    problems = cfg.schema_problems(found, cfg.read_schema(expected_xml), compare_pitfalls=compare_pitfalls)
    if problems:
        raise LabelStudioConfigMismatchError(
            conn.url, "the project's labeling config differs from stereoset-eval's: " + "; ".join(problems),
            project=project_id,
        )
    return found


@dataclass(frozen=True)
class PushResult:
    project_id: int
    n_tasks: int
    task_ids: tuple[int, ...]


def push_tasks(
    conn: Connection,
    tasks: Sequence[Mapping[str, Any]],
    *,
    config_xml: str,
    title: str | None = None,
    project_id: int | None = None,
    annotators_per_task: int = 2,
) -> PushResult:
    """Create a project from ``config_xml`` (or reuse ``project_id``) and import ``tasks``.

    The config and every prediction are validated offline first, so a bad task never
    reaches the server. A reused project must have exactly our controls and pitfalls.
    ``annotators_per_task`` sets the project's overlap (Label Studio
    ``maximum_annotations``) so agreement can be measured.
    """
    from stereoset_eval.curation.labelstudio.tasks import validate_tasks

    cfg.validate_config(config_xml)
    validate_tasks(tasks, config_xml)
    if project_id is None:
        project = conn.call(
            "creating the project", conn.client.projects.create,
            title=title or "stereoset-eval review", label_config=config_xml,
            description="Review of curated pairs prepared by stereoset-eval",
            maximum_annotations=annotators_per_task, overlap_cohort_percentage=100,
        )
        project_id = int(project.id)
    else:
        check_project(conn, project_id, config_xml, compare_pitfalls=True)
    task_ids: list[int] = []
    for start in range(0, len(tasks), IMPORT_BATCH):
        batch = [dict(t) for t in tasks[start:start + IMPORT_BATCH]]
        resp = conn.call("importing tasks", conn.client.projects.import_tasks, id=project_id, request=batch,
                         return_task_ids=True, project=project_id)
        task_ids += list(getattr(resp, "task_ids", None) or [])
    return PushResult(project_id, len(tasks), tuple(task_ids))


def pull_export(conn: Connection, project_id: int, *, timeout: float = 120.0) -> tuple[list[dict[str, Any]], cfg.ConfigSchema]:
    """A full JSON export snapshot of the project (all tasks, full predictions, annotators).

    Uses ``projects.exports.create`` with serialization options that keep full
    predictions and annotator objects, waits until it is completed, then downloads it.
    Returns the tasks and the project's config schema (its pitfall list parses them).
    """
    found = check_project(conn, project_id, _reference_xml(), compare_pitfalls=False)
    exports = conn.client.projects.exports
    snapshot = conn.call(
        "creating an export snapshot", exports.create, id=project_id, title="stereoset-eval pull",
        serialization_options={"predictions": {"only_id": False}, "annotations__completed_by": {"only_id": False}},
        project=project_id,
    )
    deadline = time.monotonic() + timeout
    status = getattr(snapshot, "status", None)
    while status != "completed":
        if status == "failed":
            raise LabelStudioError(conn.url, f"export snapshot {snapshot.id} failed on the server", project=project_id)
        if time.monotonic() > deadline:
            raise LabelStudioError(conn.url, f"export snapshot {snapshot.id} not ready after {timeout:.0f} s "
                                   f"(status {status})", project=project_id)
        time.sleep(0.5)
        status = getattr(conn.call("polling the export", exports.get, id=project_id, export_pk=snapshot.id,
                                   project=project_id), "status", None)
    chunks = conn.call("downloading the export", lambda: b"".join(
        exports.download(id=project_id, export_pk=snapshot.id, export_type="JSON")), project=project_id)
    try:
        data = json.loads(chunks)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabelStudioError(conn.url, f"the export is not JSON: {exc}", project=project_id) from None
    return data, found


def _reference_xml() -> str:
    """A config with our controls (pitfall list irrelevant: pitfalls are not compared)."""
    from stereoset_eval.curation.labelstudio.pitfalls import Pitfall

    return cfg.labeling_config([Pitfall("any", "", True)])
