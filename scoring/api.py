"""``score_items``: benchmark items in, a :class:`~stereoset_eval.scoring.records.ScoreSet` out.

Ties the parts together: validate the method and its options, check every item can be scored
by it, load the model, resolve ``auto`` options from the tokenizer, build units and requests,
look the units up in the cache, run the rest in batches, and assemble records and provenance.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from stereoset_eval import __version__
from stereoset_eval.foundation.items import Item
from stereoset_eval.foundation.provenance import ToolInfo
from stereoset_eval.scoring.cache import ScoreCache, cache_keys, default_cache_dir
from stereoset_eval.scoring.engine import RunStats
from stereoset_eval.scoring.methods import get_method
from stereoset_eval.scoring.methods.base import Method, Prepared, UnitSpec
from stereoset_eval.scoring.length_check import precheck_lengths
from stereoset_eval.scoring.model_info import is_fake_model
from stereoset_eval.scoring.records import ScoreSet, ScoringError, SentenceResult, SentenceScore
from stereoset_eval.scoring.requests import batch_overhead_tokens
from stereoset_eval.scoring.settings import DEFAULT_BATCH_TOKENS, RunSettings  # noqa: F401 - re-exported
from stereoset_eval.scoring.shared_work import SharedWork

_GIVEN = object()  # a keyword left out: the value of ``settings`` applies


def score_items(
    items: Iterable[Item],
    *,
    model: str,
    method: str,
    options: Mapping[str, Any] | None = None,
    settings: RunSettings | None = None,
    revision: str | None = None,
    device: Any = _GIVEN,
    dtype: Any = _GIVEN,
    batch_tokens: Any = _GIVEN,
    last_layer: Any = _GIVEN,
    allocator: Any = _GIVEN,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    progress: bool = False,
    load_from: str | None = None,
    shared: SharedWork | None = None,
) -> ScoreSet:
    """Score every sentence of ``items`` with ``method`` under ``model``.

    Args:
        items: items the method accepts (e.g. StereoSet intrasentence items for
            ``stereoset-mlm``, pair items for ``crows-nangia``); any other item is an error.
        model: hub id or local folder of a pretrained model; ``fake:masked`` / ``fake:causal``: the
            deterministic fake model of :mod:`stereoset_eval.scoring.fake` (tests, no network).
        method: a name in :data:`stereoset_eval.scoring.methods.METHODS`.
        options: the method's options (see its module); defaults are the faithful ones.
        settings: the run's :class:`~stereoset_eval.scoring.settings.RunSettings` (device, dtype,
            batch_tokens, last_layer, allocator); None = the defaults. Recorded as
            ``run.settings`` in the provenance.
        revision: hub revision (branch, tag or commit).
        device / dtype / batch_tokens / last_layer / allocator: one field of ``settings`` each,
            given as a keyword instead (it replaces that field). ``last_layer="scored"`` (default):
            where the model allows it (BERT-family masked LMs, verified by a probe at load time),
            the last encoder layer runs at the scored positions only, ~7 % less compute for
            BERT-base; ``all``: at every position. Numbers differ by float32 rounding only; the
            provenance records which ran (``run.last_layer``).
        cache_dir: result cache folder (default ``$STEREOSET_EVAL_CACHE`` or
            ``~/.cache/stereoset-eval/scores``).
        use_cache: read and write the cache; False computes everything and stores nothing.
        progress: show a progress bar (sentences/s).
        load_from: a local folder to read ``model``'s files from (a cluster node's own copy, see
            docs/ray.md); cache keys and the provenance's model id stay ``model``'s, and the
            weights' sha256 is that of the files read. None: load ``model`` itself.
        shared: work shared with the other calls of a run
            (:class:`~stereoset_eval.scoring.shared_work.SharedWork`): each distinct text is encoded
            once; with the setting ``share_masked_inputs="on"`` a masked input another method
            already ran on this model (same scorer path) is also read instead of run again
            (numbers equal the method run alone up to float32 batch noise). None: texts are
            memoized within this call only and no values are kept. ``run.execution`` in the
            provenance counts the rows run and reused.

    Raises:
        ScoringError: an unknown option, an item the method cannot score, an empty ``items``, a
            model of the wrong kind or without tokenizer, or any input longer than the model's
            maximum length: such inputs are refused (listed and counted), never truncated.

    Returns:
        A :class:`ScoreSet`: ``scores`` (sentence id -> number), ``records``, ``provenance``,
        ``cache_stats``.
    """
    from stereoset_eval.scoring.engine import collector_paused
    from stereoset_eval.scoring.settings import execution

    with collector_paused(), execution(settings or RunSettings()):  # deterministic="on": one thread, fixed algorithms
        return _score_items(items, model=model, method=method, options=options, settings=settings,
                            revision=revision, cache_dir=cache_dir, use_cache=use_cache, progress=progress,
                            shared=shared, load_from=load_from, keywords={"device": device, "dtype": dtype, "batch_tokens": batch_tokens,
                                                     "last_layer": last_layer, "allocator": allocator})


def _score_items(items: Iterable[Item], *, model: str, method: str, options: Mapping[str, Any] | None,
                 settings: RunSettings | None, revision: str | None, cache_dir: str | os.PathLike[str] | None,
                 use_cache: bool, progress: bool, shared: SharedWork | None, load_from: str | None,
                 keywords: dict[str, Any]) -> ScoreSet:
    started = time.perf_counter()
    items = list(items)
    spec = get_method(method)
    if not items:
        raise ScoringError(f"no items to score with {spec.name} ({model}): the dataset is empty (after filtering?)")
    given = spec.validate_options(options)
    _check_items(spec, items)
    if keywords["device"] is None:  # the old signature's None meant auto
        keywords["device"] = "auto"
    settings = (settings or RunSettings()).replace(**{k: v for k, v in keywords.items() if v is not _GIVEN})
    settings = settings.run_settings().validate()
    from stereoset_eval.scoring.backends import load_backend
    from stereoset_eval.scoring.scorers import Scorer

    from stereoset_eval.scoring.memory import limit_onednn_cache, release_free_memory

    cache = ScoreCache(cache_dir) if use_cache else None
    onednn_cache = limit_onednn_cache()  # before the model loads (load_backend does it too): see scoring.memory
    try:
        if is_fake_model(model):  # stereoset_eval.scoring.fake: hashed log-probabilities, no network
            from stereoset_eval.scoring.fake import FakeScorer, load_fake_backend

            backend = load_fake_backend(model, kind=spec.model_kind, dtype=settings.dtype)
        else:
            backend = load_backend(model, kind=spec.model_kind, device=settings.device, dtype=settings.dtype,
                                   revision=revision, memo=cache, load_from=load_from,
                                   device_map=settings.device_map)
        resolved = spec.resolve(backend.tokenizer, given)
        units = spec.units(items, resolved)
        # masked-input values are kept only for a caller's later calls, and only when asked for
        sharing = shared is not None and settings.share_masked_inputs == "on"
        shared = shared if shared is not None else SharedWork()
        identity = backend.identity()
        from stereoset_eval.scoring.model_info import quiet_transformers

        # each distinct text encoded once: for the length check and every method of the run
        with backend.tokenizer.memoized(shared.encodings(identity["tokenizer_sha256"] or identity["model"])):
            precheck_lengths(spec.name, units, backend.tokenizer, model)  # before prepare builds masked copies
            as_table = spec.prepare_table is not None  # one request table for the run: the engine runs it as arrays
            if spec.warm is not None and spec.prepare_many is None and not as_table:  # what prepare encodes, batched
                spec.warm(units, backend.tokenizer, resolved)
            with quiet_transformers():  # its "sequence longer than ..." warning: _check_lengths says it better
                if as_table:
                    prepared = spec.prepare_table(units, backend.tokenizer, resolved)  # type: ignore[misc]
                elif spec.prepare_many is not None:
                    prepared = spec.prepare_many(units, backend.tokenizer, resolved)
                else:
                    prepared = [spec.prepare(u, backend.tokenizer, resolved) for u in units]
        _check_lengths(spec, units, prepared, backend.tokenizer.max_length, model)
        key_options = spec.key_options(resolved)
        # without a cache a unit's key only has to be unique within the run: no sha256 of every unit's inputs
        keys = cache_keys(identity, spec.name, spec.version, key_options, (u.inputs for u in units)) \
            if cache is not None else [f"unit:{i}" for i in range(len(units))]
        cached = cache.get_many(keys) if cache is not None else {}

        from stereoset_eval.scoring.memory import tune_allocator

        def commit(fresh: dict[str, list[SentenceResult]]) -> None:
            assert cache is not None  # passed to execute only with a cache
            cache.put_many({k: [r.to_json() for r in rs] for k, rs in fresh.items()},
                           model=identity["model"], method=spec.name)

        from stereoset_eval.scoring.engine import execute

        allocator_in_effect = tune_allocator(settings.allocator)  # fast: freed buffers reused, trimmed at the end

        from stereoset_eval.scoring.backends import exact_float32

        scorer = FakeScorer(backend) if is_fake_model(model) else \
            Scorer(backend, last_layer_at_scored=settings.last_layer == "scored")
        run_stats = RunStats()
        overhead_tokens = batch_overhead_tokens(backend.device.type, model_width(backend))
        model_key = (json.dumps(identity, sort_keys=True), backend.kind, scorer.last_layer)
        positions = shared.positions(model_key) if sharing else None
        with exact_float32(backend):  # fp32 means IEEE float32 on CUDA too (no TF32), as the references ran
            results = execute(spec, units, prepared, keys, resolved, scorer.launch, batch_tokens=settings.batch_tokens,
                              cached=cached, commit=commit if cache is not None else None, progress=progress,
                              overhead_tokens=overhead_tokens,
                              shared=positions, stats=run_stats,
                              overlap=scorer.asynchronous,  # CUDA: host work runs while the device computes
                              copy_table=shared.copy_table(model_key) if sharing else None)
        shared.rows_computed += run_stats.rows_computed
        shared.rows_reused += run_stats.rows_reused
    finally:
        if cache is not None:
            cache.close()
        release_free_memory()  # fast: the heap's free pages go back to the OS once the run is over
    records = _records(items, units, results)
    hits = sum(len(u.sentence_ids) for u, k in zip(units, keys) if k in cached) if cached else 0
    stats = {"hits": hits, "computed": len(records) - hits}
    provenance = _provenance(spec, given, resolved, backend, items, records, stats, settings=settings,
                             last_layer=scorer.last_layer, allocator=allocator_in_effect, onednn_cache=onednn_cache,
                             overhead_tokens=overhead_tokens, run_stats=run_stats,
                             cache_dir=(Path(cache_dir) if cache_dir else default_cache_dir()) if use_cache else None,
                             wall_time_s=time.perf_counter() - started)
    return ScoreSet(spec.name, records, provenance, stats)


def model_width(backend: Any) -> int | None:
    """The model's hidden size (``config.hidden_size``; GPT-2's ``n_embd`` maps to it), None if unknown."""
    width = getattr(getattr(getattr(backend, "model", None), "config", None), "hidden_size", None)
    return width if isinstance(width, int) and not isinstance(width, bool) else None


def _check_items(spec: Method, items: list[Item]) -> None:
    bad = [(item, reason) for item in items if (reason := spec.accepts(item)) is not None]
    if bad:
        shown = ", ".join(f"{item.id} ({item.source})" for item, _ in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise ScoringError(f"method {spec.name} {bad[0][1]}; {len(bad)} item(s) cannot be scored: {shown}{more}")


def _check_lengths(spec: Method, units: list[UnitSpec], prepared: Sequence[Prepared], max_length: int, model: str) -> None:
    from stereoset_eval.scoring.engine_rows import CopyRows, TableRows

    if TableRows.applies(prepared) and int(prepared[0].table.unit_longest().max(initial=0)) <= max_length:  # type: ignore[union-attr]
        return  # one request table for the run: its longest input at once
    if CopyRows.applies(prepared) and max(map(len, map(operator.attrgetter("input_ids"), itertools.chain.from_iterable(
            p.copies or () for p in prepared))), default=0) <= max_length:
        return  # masked copies: the run's longest sentence at once
    too_long = [(u, p.longest) for u, p in zip(units, prepared) if p.longest > max_length]
    if too_long:
        shown = ", ".join(f"{', '.join(u.sentence_ids)} ({n} tokens)" for u, n in too_long[:5])
        raise ScoringError(f"method {spec.name}: {len(too_long)} input(s) exceed the {max_length}-token limit of "
                           f"{model} (no silent truncation): {shown}")


def _records(items: list[Item], units: list[UnitSpec], results: list[list[SentenceResult]]) -> list[SentenceScore]:
    """One record per scored sentence, in item order (the units' order where it is that order, as
    every method's units are: no lookup by id then)."""
    of, nan = SentenceScore.of, float("nan")
    made = [of(unit.item_id, sid, role, float(res.score) if res.score is not None else nan, int(res.n_tokens),
               res.token_ids, res.token_logprobs, dict(res.extra))
            for unit, unit_results in zip(units, results)
            for sid, role, res in zip(unit.sentence_ids, unit.roles, unit_results)]
    order = [s.id for item in items for s in item.sentences]
    if len(set(order)) == len(order) and list(map(operator.attrgetter("sentence_id"), made)) == order:
        return made
    by_id = {r.sentence_id: r for r in made}  # a later record of a sentence id replaces an earlier one
    return [by_id[sid] for sid in order if sid in by_id]


@functools.lru_cache(maxsize=1)  # fixed for the process; was ~50 ms per call (speed/ profile)
def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": platform.python_version(), "stereoset-eval": __version__}
    for pkg in ("torch", "transformers", "tokenizers", "safetensors", "huggingface-hub", "numpy"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


def _provenance(spec: Method, given: Mapping[str, Any], resolved: Mapping[str, Any], backend: Any, items: list[Item],
                records: list[SentenceScore], stats: Mapping[str, int], *, settings: RunSettings, last_layer: str,
                allocator: str, cache_dir: Path | None, wall_time_s: float, overhead_tokens: int,
                run_stats: RunStats | None = None, onednn_cache: str | None = None) -> dict[str, Any]:
    import torch

    data = sorted({(it.provenance.source_file, it.provenance.sha256) for it in items})
    info = backend.info
    return {
        "tool": ToolInfo.current().to_dict(),
        "model": {
            "id": backend.model_id, "revision": info.get("revision"), "weights_sha256": info.get("weights_sha256"),
            "weight_files": info.get("weight_files"), "weights_hash_of": info.get("weights_hash_of"),
            "tokenizer_sha256": info.get("tokenizer_sha256"), "config_sha256": info.get("config_sha256"),
            "class": info["model_class"], "kind": backend.kind, "n_parameters": info["n_parameters"],
            "dtype": str(backend.dtype).replace("torch.", ""), "device": str(backend.device),
            "head_split": info["head_split"],
            "dtype_choice": info.get("dtype_choice"), "device_map": info.get("device_map"),
            "last_layer_at_scored_positions": info.get("last_layer_at_scored_positions", False),
            "load_report": info["load_report"],
        },
        "tokenizer": backend.tokenizer.describe(),
        "method": {"name": spec.name, "version": spec.version, "reference": spec.reference,
                   "options_given": dict(given), "options": dict(resolved)},
        "data": [{"file": f, "sha256": h} for f, h in data],
        "n_items": len(items),
        "n_sentences": len(records),
        # "run" is the one block that differs between identical runs (time, cache use, threads)
        "run": {"created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "settings": settings.to_dict(),  # as requested; the keys below say what ran
                "batch_tokens": settings.batch_tokens,
                "batch_overhead_tokens": overhead_tokens,  # what the batches were planned with
                "last_layer": last_layer, "allocator": allocator,
                "onednn_primitive_cache": onednn_cache,  # "0": off (scoring.memory), else the user's capacity
                "execution": run_stats.to_dict() if run_stats is not None else None,  # rows run / reused, OOM halvings
                "cache_dir": str(cache_dir) if cache_dir else None,
                "use_cache": cache_dir is not None, "cache_hits": stats["hits"], "computed": stats["computed"],
                "wall_time_s": round(wall_time_s, 3), "torch_threads": torch.get_num_threads()},
        "versions": dict(_versions()),  # a copy: the cached dict must not be shared with callers
    }
