"""The chat judge's two kinds of failure: a configuration error (the run stops) and an item failure (review).

:class:`ChatJudgeError` is a mistake the user must fix before anything can be judged (no API
key where one is required, a URL that is not http(s), credentials the server refuses, a model
it does not know): one ``error:`` line. :class:`ChatFailure` is one request that got no usable
reply (a timeout, a rate limit that outlasted the retries, a server error, a refused
connection, a reply that is not the OpenAI format): that item goes to review. Both messages are
one line and scrubbed of the API key by whoever raises them.
"""

from __future__ import annotations

from stereoset_eval.foundation.errors import StereosetEvalError

# the kinds of item failure, each warned about once per judge
FAILURE_KINDS = ("timeout", "rate_limit", "server_error", "http_error", "connection", "malformed_response",
                 "context", "local_error", "malformed_answer", "gave_up")


class ChatJudgeError(StereosetEvalError):
    """The chat judge is misconfigured (see the module docstring)."""


class ChatFailure(Exception):
    """One request without a usable reply; ``kind`` is one of :data:`FAILURE_KINDS`."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
