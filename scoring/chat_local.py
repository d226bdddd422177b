"""A local transformers chat model (a folder or a hub id already in the local cache) for the chat judge.

The messages become one prompt through the tokenizer's own chat template
(``tokenizer.apply_chat_template``, with the generation prompt) when the tokenizer has one; a
tokenizer without a template gets the documented plain form :data:`PLAIN_TEMPLATE` when
``plain_fallback`` is on (recorded in the settings as ``chat_template: "plain"``), else a
:class:`~stereoset_eval.scoring.chat_errors.ChatJudgeError`. Decoding is greedy (temperature 0)
for at most ``max_tokens`` new tokens, fewer where the model's context ends sooner; a prompt that
leaves no room in the context is a ``context`` failure (that item goes to review). torch and
transformers are imported only here, when the backend is built.
"""

from __future__ import annotations

from typing import Any, Sequence

from stereoset_eval.foundation.secrets import shorten
from stereoset_eval.scoring.chat_errors import ChatFailure, ChatJudgeError

PLAIN_TEMPLATE = "{system}\n\nUser: {user}\n\nAssistant:"


class LocalChatBackend:
    """Greedy chat completions from a local transformers causal LM (see the module docstring)."""

    kind = "transformers-local"

    def __init__(self, path: str, *, max_tokens: int = 256, device: str = "cpu", plain_fallback: bool = True) -> None:
        if not max_tokens >= 1:
            raise ChatJudgeError(f"the chat judge's max_tokens must be at least 1, not {max_tokens!r}")
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(path)
            self.model = AutoModelForCausalLM.from_pretrained(path).to(device).eval()  # type: ignore[arg-type]  # transformers types .to oddly
        except (OSError, ValueError, ImportError, RuntimeError) as exc:
            raise ChatJudgeError(f"the local chat model {path!r} cannot be loaded: "
                                 f"{shorten(' '.join(str(exc).split()), 300)}") from None
        self._torch = torch
        self.path = path
        self.device = device
        self.max_tokens = int(max_tokens)
        self.template = "tokenizer" if getattr(self.tokenizer, "chat_template", None) else "plain"
        if self.template == "plain" and not plain_fallback:
            raise ChatJudgeError(f"the tokenizer of {path!r} has no chat template: use an instruction-tuned chat "
                                 "model, or allow the plain fallback")
        self.context = getattr(self.model.config, "max_position_embeddings", None)
        self.name = f"chat-local:{path}"

    def generation(self) -> dict[str, Any]:
        """The settings that determine the reply (hashed with the messages for the cache key)."""
        return {"temperature": 0.0, "decoding": "greedy", "max_tokens": self.max_tokens, "chat_template": self.template}

    def settings(self) -> dict[str, Any]:
        return {"backend": self.kind, "model": self.path, "device": self.device, "context": self.context,
                **self.generation()}

    def prompt(self, messages: Sequence[dict[str, str]]) -> str:
        """The prompt text the model continues (chat template, or :data:`PLAIN_TEMPLATE`)."""
        if self.template == "tokenizer":
            return str(self.tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False))
        by_role = {m["role"]: m["content"] for m in messages}
        return PLAIN_TEMPLATE.format(system=by_role.get("system", ""), user=by_role.get("user", ""))

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        """The greedy continuation of the prompt, decoded without special tokens."""
        torch = self._torch
        enc = self.tokenizer(self.prompt(messages), return_tensors="pt", add_special_tokens=self.template == "plain",
                             verbose=False)  # the context check below says it in one line
        n = int(enc["input_ids"].shape[1])
        room = self.max_tokens if self.context is None else min(self.max_tokens, int(self.context) - n)
        if room < 1:
            raise ChatFailure("context", f"the prompt ({n} tokens) leaves no room in the model's context "
                                         f"({self.context} positions): use a model with a longer context")
        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos
        try:
            with torch.no_grad():
                out = self.model.generate(input_ids=enc["input_ids"].to(self.device),
                                          attention_mask=enc["attention_mask"].to(self.device),
                                          max_new_tokens=room, do_sample=False, pad_token_id=pad)
        except (RuntimeError, ValueError, IndexError) as exc:
            raise ChatFailure("local_error", shorten(f"generation failed: {type(exc).__name__}: "
                                                     f"{' '.join(str(exc).split())}", 300)) from None
        return str(self.tokenizer.decode(out[0, n:], skip_special_tokens=True))
