"""The model-judge options of ``curate`` (and any command that curates): flags and the judge they build.

Three judges, at most one per run:

* ``--judge-model PATH_OR_ID`` — :class:`~stereoset_eval.scoring.judge.CausalLMJudge` (log-prob
  of " women" / " men"; ``--judge-min-margin``);
* ``--judge-chat-url URL --judge-chat-model NAME`` — :class:`~stereoset_eval.scoring.chat_judge.ChatJudge`
  on an OpenAI-compatible endpoint (vLLM, Ollama, TGI, a hosted API); the API key is read from
  the environment variable ``--judge-api-key-env`` names (default ``OPENAI_API_KEY``, optional;
  naming one makes it required), never from the command line;
* ``--judge-local-chat PATH`` — the same chat judge on a local transformers chat model.

``--judge-timeout``, ``--judge-retries``, ``--judge-max-tokens``, ``--judge-seed``,
``--judge-json-mode``, ``--judge-device``, ``--judge-cache-dir`` and ``--judge-no-cache`` set
the chat judge (docs/judges.md). Every misuse is one ``error:`` line (:class:`JudgeOptionError`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from stereoset_eval.foundation.errors import StereosetEvalError

if TYPE_CHECKING:
    from stereoset_eval.curation.validity import Judge

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
CHAT_ONLY = ("judge_api_key_env", "judge_seed")  # options that mean nothing without --judge-chat-url


class JudgeOptionError(StereosetEvalError, ValueError):
    """The judge options contradict each other or are out of range."""


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the model-judge options (see the module docstring) to ``parser``."""
    g = parser.add_argument_group("model judge (optional; the evidence rules decide without one)")
    g.add_argument("--judge-model", metavar="PATH_OR_ID",
                   help="causal LM deciding validity/direction by log-probability (recorded in provenance as the decider)")
    g.add_argument("--judge-min-margin", type=float, default=0.1,
                   help="--judge-model: log-prob margin (nats) under which the evidence rules decide (default 0.1)")
    g.add_argument("--judge-chat-url", metavar="URL",
                   help="OpenAI-compatible endpoint base URL, e.g. http://127.0.0.1:8000/v1 (vLLM), "
                        "http://127.0.0.1:11434/v1 (Ollama); POST URL/chat/completions")
    g.add_argument("--judge-chat-model", metavar="NAME", help="model name at --judge-chat-url (required with it)")
    g.add_argument("--judge-api-key-env", metavar="VAR",
                   help=f"environment variable holding the API key (default {DEFAULT_KEY_ENV}, used when set; "
                        "naming a variable makes it required). The key itself is never a flag")
    g.add_argument("--judge-local-chat", metavar="PATH", help="local transformers chat model (folder) as the chat judge")
    g.add_argument("--judge-timeout", type=float, default=60.0, help="chat judge: seconds per request (default 60)")
    g.add_argument("--judge-retries", type=int, default=3,
                   help="chat judge: retries after HTTP 429/502/503/504, honouring Retry-After (default 3)")
    g.add_argument("--judge-max-tokens", type=int, default=256, help="chat judge: reply length limit (default 256)")
    g.add_argument("--judge-seed", type=int, default=None, help="chat judge: sampling seed sent to the endpoint")
    g.add_argument("--judge-json-mode", action="store_true",
                   help="chat judge: ask the endpoint for JSON output (response_format json_object)")
    g.add_argument("--judge-device", default="cpu", help="--judge-model / --judge-local-chat: torch device (default cpu)")
    g.add_argument("--judge-cache-dir", type=Path, default=None,
                   help="chat judge reply cache folder (default $STEREOSET_EVAL_CACHE/judge or "
                        "~/.cache/stereoset-eval/judge)")
    g.add_argument("--judge-no-cache", action="store_true", help="chat judge: ask again, store nothing")


def _get(args: argparse.Namespace, name: str, default=None):
    return getattr(args, name, default)


def build_judge(args: argparse.Namespace) -> "Judge | None":
    """The judge the options ask for, or None (the evidence rules decide); raises JudgeOptionError."""
    model, url, local = _get(args, "judge_model"), _get(args, "judge_chat_url"), _get(args, "judge_local_chat")
    chosen = [flag for flag, value in (("--judge-model", model), ("--judge-chat-url", url),
                                       ("--judge-local-chat", local)) if value]
    if len(chosen) > 1:
        raise JudgeOptionError(f"{' and '.join(chosen)} both name a judge: give one")
    if _get(args, "judge_chat_model") and not url:
        raise JudgeOptionError("--judge-chat-model needs --judge-chat-url (the endpoint that serves it)")
    for name in CHAT_ONLY:
        if _get(args, name) is not None and not url:
            raise JudgeOptionError(f"--{name.replace('_', '-')} applies to --judge-chat-url only")
    if url and not _get(args, "judge_chat_model"):
        raise JudgeOptionError("--judge-chat-url needs --judge-chat-model (the model name the endpoint serves)")
    timeout, retries, max_tokens = _get(args, "judge_timeout", 60.0), _get(args, "judge_retries", 3), \
        _get(args, "judge_max_tokens", 256)
    if url or local:
        if not timeout > 0:
            raise JudgeOptionError(f"--judge-timeout must be positive, not {timeout}")
        if retries < 0:
            raise JudgeOptionError(f"--judge-retries must be 0 or more, not {retries}")
        if max_tokens < 1:
            raise JudgeOptionError(f"--judge-max-tokens must be at least 1, not {max_tokens}")
    cache = {"cache_dir": _get(args, "judge_cache_dir"), "use_cache": not _get(args, "judge_no_cache", False)}
    if model:
        from stereoset_eval.scoring.judge import CausalLMJudge

        return CausalLMJudge(model, min_margin=_get(args, "judge_min_margin", 0.1),
                             device=_get(args, "judge_device", "cpu"))
    from stereoset_eval.scoring.chat_judge import ChatJudge

    if url:
        key_env = _get(args, "judge_api_key_env")
        return ChatJudge.endpoint(url, _get(args, "judge_chat_model"), api_key_env=key_env or DEFAULT_KEY_ENV,
                                  require_key=key_env is not None, timeout=timeout, retries=retries,
                                  max_tokens=max_tokens, seed=_get(args, "judge_seed"),
                                  json_mode=_get(args, "judge_json_mode", False), **cache)
    if local:
        return ChatJudge.local(local, max_tokens=max_tokens, device=_get(args, "judge_device", "cpu"), **cache)
    return None
