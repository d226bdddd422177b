"""``stereoset-eval tables``: Tables 4 and 6 from a CSV of per-model scores (wide or long)."""

from __future__ import annotations

import json

import pytest

from stereoset_eval.cli.main import main


def test_paper_table6_file_renders_the_papers_rho(data_dir, tmp_path, capsys):
    out_json = tmp_path / "t.json"
    rc = main(["tables", "--scores", str(data_dir / "bmne" / "bmne_paper_table6.csv"), "--json", str(out_json)])
    text = capsys.readouterr().out
    assert rc == 0
    assert "Table 4" in text and "Table 6 — crows vs stereoset" in text and "BERT-large ADELE" in text
    assert "| - | crows vs stereoset | 19 | 0.604 | 0.0062 |" in text and "| 0.783 | 7.4e-05 |" in text
    assert "Monte Carlo, 10000, seed 0" in text  # 19! > 10000: the permutation p cannot be exact
    doc = json.loads(out_json.read_text(encoding="utf-8"))
    cell = doc["protocols"]["-"]["crows vs stereoset"]
    assert round(cell["pre"]["rho"], 3) == 0.604 and cell["post"]["p_value"] == pytest.approx(7.4e-5, abs=5e-7)
    assert cell["pre"]["permutation_exact"] is False and len(cell["table6"]["rows"]) == 19


def test_long_file_with_protocols_gets_exact_permutation_p(tmp_path, capsys):
    # x = 1..5, y = (2,1,4,3,5): rho 0.8, exact permutation p = 16/120 (tests/test_correlation.py)
    rows = ["protocol,model,benchmark,stage,category,value"]
    for proto in ("pll", "pll-word-l2r"):
        for i, (a, b) in enumerate(zip([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])):
            rows += [f"{proto},m{i},A,pre,all,{50 + a}", f"{proto},m{i},B,pre,all,{50 + b}",
                     f"{proto},m{i},A,post,all,{60 + a}", f"{proto},m{i},B,post,all,{70 - b}",
                     f"{proto},m{i},A,pre,Roles and Behaviors,{a}"]
    path = tmp_path / "study_scores.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out_json = tmp_path / "t.json"
    assert main(["tables", "--scores", str(path), "--json", str(out_json)]) == 0
    text = capsys.readouterr().out
    assert "| pll | A vs B | 5 | 0.800 | 0.1 | 0.13 (exact) | -0.800 |" in text
    assert "Table 6 — A vs B, pre/post balance per model (protocol pll-word-l2r)" in text
    cell = json.loads(out_json.read_text(encoding="utf-8"))["protocols"]["pll"]["A vs B"]
    assert cell["pre"]["permutation_p_value"] == pytest.approx(16 / 120) and cell["pre"]["permutation_exact"]


def test_pre_only_scores_give_table4_without_table6(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("model,x_pre,y_pre\na,1,2\nb,2,1\nc,3,3\nd,4,4\n", encoding="utf-8")
    assert main(["tables", "--scores", str(path)]) == 0
    text = capsys.readouterr().out
    assert "| x vs y | 4 | 0.800 |" in text  # sum d^2 = 2: 1 - 12/60 and "Table 6" not in text


@pytest.mark.parametrize("content, message", [
    ("name,x_pre\na,1\n", "needs a 'model' column"),
    ("model,foo\na,1\n", "neither long"),
    ("model,x_pre,y_pre\na,1,2\nb,oops,1\nc,3,3\n", "value is not a number"),
    ("model,benchmark,value\na,X,1\na,X,2\n", "more than one pre value for model 'a'"),
])
def test_bad_scores_file_is_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    assert main(["tables", "--scores", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err and "Traceback" not in err


def test_unknown_compare_pair_is_named(data_dir, capsys):
    rc = main(["tables", "--scores", str(data_dir / "bmne" / "bmne_paper_table6.csv"), "--compare", "crows", "nope"])
    err = capsys.readouterr().err
    assert rc == 2 and "['nope']" in err and "bmne_paper_table6.csv" in err
