"""A model that cannot be loaded as it is ends in one ``error:`` line, never torch's or transformers' text.

Each case is a copy of the tiny GPT-2 fixture, broken one way, given to ``stereoset-eval score``:

* pickle-only weights (``pytorch_model.bin``, a plain state dict or a whole pickled module):
  refused before anything is unpickled, with the conversion to safetensors in the line; the
  same rule holds where transformers itself is asked (``use_safetensors=True``, a hub model);
* no tokenizer files;
* a config.json that does not match the weights (fewer layers, a different position table).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stereoset_eval.cli.main import main

TOKENIZER = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt")


@pytest.fixture()
def gpt2_copy(models_dir: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "tiny-gpt2-copy"
    shutil.copytree(models_dir / "tiny-gpt2", folder)
    return folder


def _pickle_only(folder: Path, *, whole_module: bool) -> None:
    import torch
    from safetensors.torch import load_file

    state = load_file(str(folder / "model.safetensors"))
    torch.save(torch.nn.Linear(2, 2) if whole_module else state, folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()


def _config(folder: Path, **changes: int) -> None:
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}), encoding="utf-8")


def _one_error_line(folder: Path, crows_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    rc = main(["score", "--benchmark", "crows-pairs", "--data", str(crows_csv), "--model", str(folder),
               "--method", "causal-ll", "--limit", "2", "--no-cache", "--no-progress",
               "--output", str(tmp_path / "scores")])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert rc == 2 and len(errors) == 1, err
    assert "Traceback" not in err and "weights_only" not in err and "UnpicklingError" not in err, err
    assert not (tmp_path / "scores").exists()
    return errors[0]


@pytest.mark.parametrize("whole_module", [False, True], ids=["state-dict", "pickled-module"])
def test_pickle_only_folder_is_refused_in_one_line(gpt2_copy, crows_csv, tmp_path, capsys, whole_module):
    _pickle_only(gpt2_copy, whole_module=whole_module)
    line = _one_error_line(gpt2_copy, crows_csv, tmp_path, capsys)
    assert f"'{gpt2_copy}' holds only a pickle checkpoint (pytorch_model.bin)" in line
    assert "are not loaded" in line and "unpickling runs code" in line
    assert (f"t.AutoModelForCausalLM.from_pretrained('{gpt2_copy}').save_pretrained('{gpt2_copy}')" in line
            and "model.safetensors" in line)


def test_safetensors_beside_training_pickles_is_not_refused(gpt2_copy):
    from stereoset_eval.scoring.model_checks import check_weights_format

    (gpt2_copy / "training_args.bin").write_bytes(b"\x80\x04N.")  # a pickle, but not the weights
    check_weights_format(str(gpt2_copy), "causal")  # model.safetensors is there: nothing to refuse
    (gpt2_copy / "model.safetensors").unlink()
    check_weights_format(str(gpt2_copy), "causal")  # no weights at all: transformers' own message, not ours


def test_transformers_is_never_asked_to_unpickle(gpt2_copy):
    """Past the folder check (a hub model), from_pretrained runs with use_safetensors=True and its
    refusal is the same one line."""
    import torch

    from stereoset_eval.scoring.backends import _load
    from stereoset_eval.scoring.records import ScoringError

    _pickle_only(gpt2_copy, whole_module=False)
    with pytest.raises(ScoringError) as caught:
        _load(str(gpt2_copy), "causal", torch.device("cpu"), torch.float32, None)
    text = str(caught.value)
    assert "\n" not in text and "has no .safetensors weights" in text and "are not loaded" in text


def test_missing_tokenizer_is_one_line(gpt2_copy, crows_csv, tmp_path, capsys):
    for name in TOKENIZER:
        (gpt2_copy / name).unlink()
    line = _one_error_line(gpt2_copy, crows_csv, tmp_path, capsys)
    assert f"'{gpt2_copy}' has no tokenizer" in line and "save the tokenizer with the model" in line


@pytest.mark.parametrize(("changes", "says"), [
    ({"n_layer": 1}, "weight(s) that the config does not describe"),
    ({"n_positions": 64}, "disagree on 1 tensor shape(s) (transformer.wpe.weight: checkpoint (128, 64) vs config (64, 64))"),
], ids=["fewer-layers", "position-table"])
def test_mismatched_config_is_one_line(gpt2_copy, crows_csv, tmp_path, capsys, changes, says):
    _config(gpt2_copy, **changes)
    line = _one_error_line(gpt2_copy, crows_csv, tmp_path, capsys)
    assert f"'{gpt2_copy}'" in line and says in line and "fix config.json" in line
