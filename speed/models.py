"""Model folders for the benchmark: fixtures as they are, random-init models built once.

Every implementation (ours through the public API, the reference loop, minicons, the floor)
loads the model from the same local folder with ``from_pretrained``, so a random-init model
is saved to disk first. The build is deterministic (``torch.manual_seed``), cached under
``<cache>/<name>-<config hash>`` and written atomically; ``BENCH_MODEL.json`` in the folder
says what it is (random weights, timing only).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from speed.specs import ModelSpec
from stereoset_eval.foundation.atomic import atomic_directory

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
                   "vocab.json", "merges.txt")


def default_model_cache() -> Path:
    """``$STEREOSET_EVAL_BENCH_MODELS``, else ``~/.cache/stereoset-eval/bench-models``."""
    env = os.environ.get("STEREOSET_EVAL_BENCH_MODELS")
    return Path(env) if env else Path.home() / ".cache" / "stereoset-eval" / "bench-models"


def config_digest(spec: ModelSpec) -> str:
    """A short hash of everything that decides a random-init model's weights and tokenizer."""
    payload = json.dumps({"config": spec.config, "seed": spec.seed, "fixture": spec.fixture}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def model_path(spec: ModelSpec, *, fixtures_dir: Path, cache_dir: Path | None = None) -> Path:
    """The local folder of ``spec``'s model, building a random-init model if it is missing."""
    if spec.origin == "fixture":
        path = fixtures_dir / spec.fixture
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"fixture model {spec.name!r} not found at {path}")
        return path
    if spec.origin != "random-init" or spec.config is None:
        raise ValueError(f"model {spec.name!r}: unknown origin {spec.origin!r}")
    dest = (cache_dir or default_model_cache()) / f"{spec.name}-{config_digest(spec)}"
    if not (dest / "BENCH_MODEL.json").is_file():
        build_random_model(spec, dest, fixtures_dir=fixtures_dir)
    return dest


def build_random_model(spec: ModelSpec, dest: Path, *, fixtures_dir: Path) -> Path:
    """Build ``spec``'s model with random weights (seeded) and save it, with its tokenizer, to ``dest``.

    Random initialisation is used on purpose: the benchmark measures time, and a random
    BERT-base-sized model costs exactly what the pretrained one costs per token. The marker
    file records this so nobody mistakes the folder for a pretrained model.
    """
    import torch
    import transformers

    assert spec.config is not None
    config_cls, kwargs = spec.config
    config = getattr(transformers, config_cls)(**kwargs)
    model_cls = getattr(transformers, kwargs["architectures"][0])
    torch.manual_seed(spec.seed)
    model = model_cls(config).eval()
    tokenizer_dir = fixtures_dir / spec.fixture
    with atomic_directory(dest) as tmp:
        model.save_pretrained(tmp)
        for name in TOKENIZER_FILES:
            if (tokenizer_dir / name).is_file():
                shutil.copyfile(tokenizer_dir / name, tmp / name)
        marker = {
            "name": spec.name,
            "weights": "random-init (timing only; not a pretrained model, scores are not bias measurements)",
            "config_class": config_cls,
            "config": kwargs,
            "seed": spec.seed,
            "tokenizer_from": str(tokenizer_dir),
            "n_parameters": sum(p.numel() for p in model.parameters()),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        }
        (tmp / "BENCH_MODEL.json").write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return dest
