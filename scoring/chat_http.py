"""An OpenAI-compatible chat endpoint (vLLM, Ollama, TGI, llama.cpp, a hosted API) for the chat judge.

``POST {base_url}/chat/completions`` with the standard library's ``urllib`` (no new
dependency), temperature 0 and a fixed ``max_tokens``. The API key is read from the environment
variable the user names (``OPENAI_API_KEY`` by default), sent only in the ``Authorization``
header, and scrubbed from every message this module writes; it is never a parameter, so it is in
no command line, settings record or cache.

HTTP 429 and 502/503/504 are retried ``retries`` times, waiting ``Retry-After`` when the server
sends one (at most ``max_wait`` seconds), else ``backoff`` · 2^attempt seconds. A timeout, a
refused connection, HTTP 500, another 4xx, or a reply that is not the OpenAI format raise
:class:`~stereoset_eval.scoring.chat_errors.ChatFailure` (that item goes to review); HTTP 401/403
(credentials) and 404 (wrong URL or model name) raise
:class:`~stereoset_eval.scoring.chat_errors.ChatJudgeError`: every item would fail the same way.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Sequence

from stereoset_eval.foundation.secrets import scrub, shorten
from stereoset_eval.scoring.chat_errors import ChatFailure, ChatJudgeError

RETRIED = (429, 502, 503, 504)
MAX_BODY = 4 * 1024 * 1024  # bytes read from one reply


def _retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), None if absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


class OpenAIChatBackend:
    """Chat completions from an OpenAI-compatible endpoint (see the module docstring)."""

    kind = "openai-http"

    def __init__(self, base_url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY", require_key: bool = False,
                 temperature: float = 0.0, max_tokens: int = 256, seed: int | None = None, timeout: float = 60.0,
                 retries: int = 3, backoff: float = 1.0, max_wait: float = 60.0, json_mode: bool = False,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not api_key_env or not api_key_env.replace("_", "").isalnum():
            raise ChatJudgeError(f"the API key variable name {api_key_env!r} is not an environment variable name")
        key = (os.environ.get(api_key_env) or "").strip()
        self._key = key
        if require_key and not key:
            raise ChatJudgeError(f"the API key variable ${api_key_env} is not set: export it (the key is read from "
                                 "the environment only), or name another variable with --judge-api-key-env")
        url = (base_url or "").strip().rstrip("/")
        if url.endswith("/chat/completions"):
            url = url[: -len("/chat/completions")]
        parts = urllib.parse.urlsplit(url)
        shown = self._scrub(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ChatJudgeError(f"the chat judge URL {shown!r} is not an http(s) URL "
                                 "(e.g. http://127.0.0.1:8000/v1 for vLLM, http://127.0.0.1:11434/v1 for Ollama)")
        if parts.username or parts.password:
            raise ChatJudgeError(f"the chat judge URL {shown!r} holds credentials: put the key in an environment "
                                 f"variable (${api_key_env}) instead")
        if not model or not model.strip():
            raise ChatJudgeError("the chat judge needs a model name (--judge-chat-model), as the endpoint knows it")
        for label, value, low in (("max_tokens", max_tokens, 1), ("timeout", timeout, 1e-9), ("retries", retries, 0),
                                  ("backoff", backoff, 0), ("max_wait", max_wait, 0)):
            if not value >= low:
                raise ChatJudgeError(f"the chat judge's {label} must be at least {low:g}, not {value!r}")
        self.base_url = url
        self.model = model.strip()
        self.api_key_env = api_key_env
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.seed = seed
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_wait = float(max_wait)
        self.json_mode = bool(json_mode)
        self._sleep = sleep
        self.name = self._scrub(f"chat:{self.model}")

    def _scrub(self, text: str) -> str:
        return scrub(text, self._key) if self._key else scrub(text)

    def generation(self) -> dict[str, Any]:
        """The settings that determine the reply (hashed with the messages for the cache key)."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed,
                "json_mode": self.json_mode}

    def settings(self) -> dict[str, Any]:
        """Every setting, for provenance: the key variable's name and whether it was set, never the key."""
        return {"backend": self.kind, "base_url": self._scrub(self.base_url), "model": self.model,
                "api_key_env": self.api_key_env, "api_key_set": bool(self._key), **self.generation(),
                "timeout": self.timeout, "retries": self.retries, "backoff": self.backoff, "max_wait": self.max_wait}

    def _line(self, text: str, limit: int = 300) -> str:
        return shorten(" ".join(self._scrub(text).split()), limit, *([self._key] if self._key else []))

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        """The reply's text for ``messages``; raises ChatFailure (this item) or ChatJudgeError (every item)."""
        body: dict[str, Any] = {"model": self.model, "messages": list(messages), "temperature": self.temperature,
                                "max_tokens": self.max_tokens, "stream": False}
        if self.seed is not None:
            body["seed"] = self.seed
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        url = f"{self.base_url}/chat/completions"
        where = self._scrub(url)
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                    raw = resp.read(MAX_BODY)
                return self._text(raw, where)
            except urllib.error.HTTPError as exc:
                detail = self._detail(exc)
                code = exc.code
                if code in (401, 403):
                    raise ChatJudgeError(f"{where}: HTTP {code}: the endpoint refused the credentials{detail}; set the "
                                         f"key in ${self.api_key_env} (or name its variable with --judge-api-key-env)"
                                         ) from None
                if code == 404:
                    raise ChatJudgeError(f"{where}: HTTP 404{detail}: check the base URL (it ends before "
                                         f"/chat/completions, often in /v1) and the model name {self.model!r}") from None
                if code in RETRIED and attempt < self.retries:
                    wait = _retry_after(exc.headers.get("Retry-After") if exc.headers else None, time.time())
                    self._sleep(min(self.max_wait, wait if wait is not None else self.backoff * 2 ** attempt))
                    continue
                if code == 429:
                    raise ChatFailure("rate_limit", self._line(f"{where}: HTTP 429 (rate limited) after "
                                                               f"{self.retries} retries{detail}")) from None
                kind = "server_error" if code >= 500 else "http_error"
                tried = f" after {self.retries} retries" if code in RETRIED else ""
                raise ChatFailure(kind, self._line(f"{where}: HTTP {code}{tried}{detail}")) from None
            except (TimeoutError, socket.timeout):
                raise ChatFailure("timeout", self._line(f"{where}: no reply within {self.timeout:g} s "
                                                        "(raise --judge-timeout for a slow model)")) from None
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                    raise ChatFailure("timeout", self._line(f"{where}: no reply within {self.timeout:g} s "
                                                            "(raise --judge-timeout for a slow model)")) from None
                raise ChatFailure("connection", self._line(f"{where}: cannot connect ({exc.reason}): is the server "
                                                           "running at that address?")) from None
            except (ConnectionError, OSError) as exc:
                raise ChatFailure("connection", self._line(f"{where}: the connection failed "
                                                           f"({type(exc).__name__}: {exc})")) from None
            except http.client.HTTPException as exc:  # a status line or body HTTP cannot read
                raise ChatFailure("malformed_response", self._line(f"{where}: the reply is not HTTP "
                                                                   f"({type(exc).__name__}: {exc})")) from None
        raise AssertionError("unreachable")  # pragma: no cover  (the loop returns or raises)

    def _detail(self, exc: urllib.error.HTTPError) -> str:
        """The server's own error message, if it sent one (scrubbed, short)."""
        try:
            text = exc.read(2000).decode("utf-8", "replace")
        except Exception:
            return ""
        try:
            obj = json.loads(text)
            err = obj.get("error", obj) if isinstance(obj, dict) else obj
            text = str(err.get("message", err)) if isinstance(err, dict) else str(err)
        except ValueError:
            pass
        text = self._line(text, 160)
        return f" ({text})" if text else ""

    def _text(self, raw: bytes, where: str) -> str:
        try:
            obj = json.loads(raw.decode("utf-8"))
            content = obj["choices"][0]["message"]["content"]
        except (ValueError, UnicodeDecodeError):
            raise ChatFailure("malformed_response", self._line(
                f"{where}: the reply is not JSON: {raw[:80].decode('utf-8', 'replace')!r}")) from None
        except (KeyError, IndexError, TypeError):
            raise ChatFailure("malformed_response", self._line(
                f"{where}: the reply is not an OpenAI chat completion (no choices[0].message.content)")) from None
        if not isinstance(content, str):
            raise ChatFailure("malformed_response", self._line(f"{where}: the reply's message has no text content"))
        return content
