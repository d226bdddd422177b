"""A chat-model judge of stereotype validity, direction and dimension for curation.

:class:`ChatJudge` asks a chat model the annotation guidelines' questions about one attribute
instance (:mod:`stereoset_eval.scoring.chat_prompt`: is it a common gender stereotype, of
which gender, which of the four dimensions) and turns the JSON answer into a
:class:`~stereoset_eval.curation.validity.Verdict`:

* ``keep`` (rule ``stereotype_validity``): a stereotype of the claimed gender (``sentences[0]``'s);
* ``swap`` (rule ``wrong_direction``): a stereotype of the other gender;
* ``drop`` (rule ``no_stereotype``): no common stereotype of either gender;
* ``review`` (rule ``judge_unavailable``): no usable answer (a timeout, a rate limit, a server
  error, a refused connection, a malformed reply), the one-line reason in ``evidence["error"]``.

The model is either an OpenAI-compatible endpoint (:class:`~stereoset_eval.scoring.chat_http.OpenAIChatBackend`:
vLLM, Ollama, TGI, a hosted API) or a local transformers chat model
(:class:`~stereoset_eval.scoring.chat_local.LocalChatBackend`). Replies are cached by (judge
name, sha256 of the messages and generation settings) in :mod:`stereoset_eval.scoring.chat_cache`:
a second run makes no request. After ``give_up_after`` consecutive request failures the judge
stops asking and sends the remaining items to review (a dead server would otherwise cost one
timeout per item). Each kind of failure is warned about once on stderr.

``Verdict.confidence`` is the fixed :data:`CONFIDENCE` for every answer: the model's own stated
confidence is in the evidence only. How far the judge is trusted is not this number but its
reliability measured on items a person reviewed; its quality depends entirely on the model the
user brings (docs/judges.md).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Protocol, Sequence, TextIO

from stereoset_eval.foundation.secrets import scrub, shorten
from stereoset_eval.scoring.chat_cache import ReplyCache, default_judge_cache_dir
from stereoset_eval.scoring.chat_errors import ChatFailure
from stereoset_eval.scoring.chat_prompt import (DIMENSIONS, PROMPT_VERSION, MalformedAnswer, build_messages,
                                                parse_answer, request_sha256)

__all__ = ["ChatJudge", "CONFIDENCE", "DIMENSIONS"]

CONFIDENCE = 0.5  # the same for every answer (see the module docstring)
OTHER = {"female": "male", "male": "female"}


class ChatBackend(Protocol):
    """What the judge needs of a backend (HTTP endpoint or local model)."""

    kind: str
    name: str

    def generation(self) -> dict[str, Any]: ...

    def settings(self) -> dict[str, Any]: ...

    def complete(self, messages: Sequence[dict[str, str]]) -> str: ...


class ChatJudge:
    """Validity/direction/dimension decider backed by a chat model (see the module docstring)."""

    def __init__(self, backend: ChatBackend, *, cache_dir: str | Path | None = None, use_cache: bool = True,
                 give_up_after: int = 5, stream: TextIO | None = None) -> None:
        self.backend = backend
        self.name = backend.name
        self.use_cache = bool(use_cache)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_judge_cache_dir()
        self.cache = ReplyCache(self.cache_dir) if self.use_cache else None
        self.give_up_after = int(give_up_after)
        self._stream = stream
        self._warned: set[str] = set()
        self._failures_in_a_row = 0
        self.requests = 0  # requests sent (cached answers are not)

    @classmethod
    def endpoint(cls, base_url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY", require_key: bool = False,
                 temperature: float = 0.0, max_tokens: int = 256, seed: int | None = None, timeout: float = 60.0,
                 retries: int = 3, backoff: float = 1.0, max_wait: float = 60.0, json_mode: bool = False,
                 cache_dir: str | Path | None = None, use_cache: bool = True, give_up_after: int = 5,
                 stream: TextIO | None = None) -> "ChatJudge":
        """A judge on an OpenAI-compatible endpoint (``POST {base_url}/chat/completions``)."""
        from stereoset_eval.scoring.chat_http import OpenAIChatBackend

        backend = OpenAIChatBackend(base_url, model, api_key_env=api_key_env, require_key=require_key,
                                    temperature=temperature, max_tokens=max_tokens, seed=seed, timeout=timeout,
                                    retries=retries, backoff=backoff, max_wait=max_wait, json_mode=json_mode)
        return cls(backend, cache_dir=cache_dir, use_cache=use_cache, give_up_after=give_up_after, stream=stream)

    @classmethod
    def local(cls, path: str, *, max_tokens: int = 256, device: str = "cpu", plain_fallback: bool = True,
              cache_dir: str | Path | None = None, use_cache: bool = True, give_up_after: int = 5,
              stream: TextIO | None = None) -> "ChatJudge":
        """A judge on a local transformers chat model (torch is imported here, not before)."""
        from stereoset_eval.scoring.chat_local import LocalChatBackend

        backend = LocalChatBackend(path, max_tokens=max_tokens, device=device, plain_fallback=plain_fallback)
        return cls(backend, cache_dir=cache_dir, use_cache=use_cache, give_up_after=give_up_after, stream=stream)

    def settings(self) -> dict[str, Any]:
        """Every setting that can change a verdict, for provenance (never the API key)."""
        return {"judge": "chat", "name": self.name, "prompt_version": PROMPT_VERSION, "confidence": CONFIDENCE,
                **self.backend.settings(), "cache_dir": str(self.cache_dir) if self.use_cache else None,
                "give_up_after": self.give_up_after}

    def _scrub(self, text: str) -> str:
        key = getattr(self.backend, "_key", "")
        return scrub(text, key) if key else scrub(text)

    def _warn(self, kind: str, line: str) -> None:
        if kind in self._warned:
            return
        self._warned.add(kind)
        stream = self._stream if self._stream is not None else sys.stderr
        print(self._scrub(f"warning: {self.name}: {line} (items with a {kind} failure go to review; the "
                          "error is in each one's evidence)"), file=stream)

    def _review(self, kind: str, error: str, evidence: dict[str, Any]):
        from stereoset_eval.curation.validity import Verdict

        error = self._scrub(" ".join(error.split()))
        self._warn(kind, error)
        evidence.update(error=error, failure=kind)
        return Verdict("review", "judge_unavailable", 0.0, f"{self.name}: no usable answer: {error}", evidence)

    def __call__(self, words: Sequence[str], claimed: str, side: str, sentences: tuple[str, str]):
        """The verdict for one instance (see the module docstring); never raises for a failed request."""
        from stereoset_eval.curation.validity import Verdict

        messages = build_messages(words, claimed, sentences)
        sha = request_sha256(messages, self.backend.generation())
        evidence: dict[str, Any] = {"decider": self.name, "words": list(words), "claimed": claimed, "side": side,
                                    "prompt_sha256": sha, "cached": False}
        reply = self.cache.get(self.name, sha) if self.cache is not None else None
        if reply is not None:
            evidence["cached"] = True
        else:
            if self.give_up_after > 0 and self._failures_in_a_row >= self.give_up_after:
                return self._review("gave_up", f"not asked: the last {self._failures_in_a_row} requests failed",
                                    evidence)
            self.requests += 1
            try:
                reply = self._scrub(self.backend.complete(messages))
            except ChatFailure as failure:
                self._failures_in_a_row += 1
                return self._review(failure.kind, failure.message, evidence)
            self._failures_in_a_row = 0
            if self.cache is not None:
                self.cache.put(self.name, sha, reply)
        try:
            answer = parse_answer(reply)
        except MalformedAnswer as exc:
            evidence["reply"] = shorten(" ".join(reply.split()), 200)
            return self._review("malformed_answer", f"malformed answer: {exc}", evidence)
        evidence["answer"] = answer
        if answer["stated_confidence"] is not None:
            evidence["stated_confidence"] = answer["stated_confidence"]
        if not answer["stereotype"]:
            return Verdict("drop", "no_stereotype", CONFIDENCE, f"{self.name}: no common gender stereotype", evidence)
        dim = f" ({answer['dimension']})" if answer["dimension"] else ""
        if answer["gender"] == claimed:
            return Verdict("keep", "stereotype_validity", CONFIDENCE,
                           f"{self.name}: a stereotype of {claimed}{dim}", evidence)
        return Verdict("swap", "wrong_direction", CONFIDENCE,
                       f"{self.name}: a stereotype of {OTHER[claimed]}, not {claimed}{dim}: labels swapped", evidence)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
