"""``stereoset-eval annotate`` offline: files in, files out; connection errors without a server."""

from __future__ import annotations

import json
import secrets
import socket
import traceback
from pathlib import Path

import pandas as pd
import pytest

from stereoset_eval.cli.main import main
from stereoset_eval.curation.labelstudio.server import (
    LabelStudioAuthError, LabelStudioError, LabelStudioUnreachableError, connect,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ITEMS = FIXTURES / "labelstudio_items.jsonl"
EXPORT = FIXTURES / "labelstudio_export.json"


def run(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_push_writes_tasks_and_config_for_a_manual_import(tmp_path, capsys):
    pytest.importorskip("label_studio_sdk")
    code, out, _ = run(["annotate", "push", "--items", str(ITEMS), "--tasks-out", str(tmp_path / "tasks.json"),
                        "--config-out", str(tmp_path / "config.xml")], capsys)
    assert code == 0 and out.startswith("22 tasks, model_version stereoset-eval-")
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    assert len(tasks) == 22 and all(t["predictions"] for t in tasks)
    assert (tmp_path / "config.xml").read_text().startswith("<View>")


def test_push_without_destination(capsys):
    code, _, err = run(["annotate", "push", "--items", str(ITEMS)], capsys)
    assert code == 2 and "nothing to do" in err


def test_merge_from_export_file(tmp_path, capsys):
    code, out, _ = run(["annotate", "merge", "--items", str(ITEMS), "--export", str(EXPORT),
                        "--out", str(tmp_path / "reviewed")], capsys)
    assert code == 0
    assert out.splitlines()[0] == ("kept 17 (2 edited), removed 5 (4 by reviewers, 1 automatic: unreviewed items "
                                   "follow --unreviewed automatic), human decisions 20, issues 8")
    report = json.loads((tmp_path / "reviewed" / "review" / "review_report.json").read_text())
    assert report["provenance"]["adjudication"] == "majority"
    assert report["source"] == str(EXPORT)
    run_prov = report["run"]
    assert [f["path"] for f in run_prov["data_files"]] == [str(ITEMS), str(EXPORT)]
    assert all(len(f["sha256"]) == 64 for f in run_prov["data_files"])
    assert run_prov["options"]["adjudication"] == "majority" and run_prov["tool"]["name"] == "stereoset-eval"


def test_merge_primary(tmp_path, capsys):
    meta = json.loads((FIXTURES / "labelstudio_meta.json").read_text())
    code, out, _ = run(["annotate", "merge", "--items", str(ITEMS), "--export", str(EXPORT), "--out",
                        str(tmp_path / "r"), "--adjudication", "primary", "--primary-annotator",
                        meta["annotators"]["A"]], capsys)
    assert code == 0 and out.startswith("kept 19 (3 edited), removed 3")
    assert "primary annotator: " + meta["annotators"]["A"] in (tmp_path / "r" / "README.md").read_text()


@pytest.mark.parametrize("extra, message", [
    (["--adjudication", "vote"], "unknown adjudication rule 'vote'"),
    (["--adjudication", "primary"], "needs primary_annotator"),
    (["--url", "http://127.0.0.1:9"], "either --export or --url"),
])
def test_merge_option_errors(tmp_path, capsys, extra, message):
    code, _, err = run(["annotate", "merge", "--items", str(ITEMS), "--export", str(EXPORT), "--out",
                        str(tmp_path / "r"), *extra], capsys)
    assert code == 2 and err.startswith("error: ") and message in err


def test_agreement_from_export_file(tmp_path, capsys):
    code, out, _ = run(["annotate", "agreement", "--export", str(EXPORT), "--out", str(tmp_path / "k.csv")], capsys)
    assert code == 0
    decision = next(line for line in out.splitlines() if line.strip().startswith("decision"))
    # n 18, observed 15/18, expected 170/324, kappa 50/77 (see test_labelstudio_agreement.py)
    assert decision.split()[-4:] == ["18", "0.833", "0.525", "0.649"]
    assert (tmp_path / "k.csv").read_text().startswith("field,annotator_a,annotator_b,n,observed,expected,kappa")


def test_agreement_needs_a_source(capsys):
    code, _, err = run(["annotate", "agreement"], capsys)
    assert code == 2 and "give --export FILE, or --url and --project" in err


def test_unreachable_server(capsys, monkeypatch):
    pytest.importorskip("label_studio_sdk")
    key = secrets.token_hex(20)
    url = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(LabelStudioUnreachableError) as info:
        connect(url, key, timeout=5, max_retries=0)
    assert str(info.value).startswith(f"Label Studio at {url}: checking the API key: cannot reach the server")
    assert key not in "".join(traceback.format_exception(info.value))
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", key)
    code, out, err = run(["annotate", "pull", "--url", url, "--project", "3", "--out", "x.json"], capsys)
    assert code == 2 and "cannot reach the server" in err and key not in out + err


@pytest.mark.parametrize("url, key, error, message", [
    ("http://127.0.0.1:9", None, LabelStudioAuthError, "no API key: set the environment variable LABEL_STUDIO_API_KEY"),
    ("http://127.0.0.1:9", "  ", LabelStudioAuthError, "no API key"),
    ("localhost:8080", "k" * 40, LabelStudioError, "must start with http"),
    ("http://127.0.0.1:9", "bad\nkey" + "k" * 30, LabelStudioAuthError, "not a valid HTTP header value"),
])
def test_connect_refuses_before_any_request(url, key, error, message):
    pytest.importorskip("label_studio_sdk")
    with pytest.raises(error, match=message) as info:
        connect(url, key, timeout=5)
    if key and key.strip():
        assert key not in "".join(traceback.format_exception(info.value))


# ---------------------------------------------------------------- curated files in, curated version out


def _version_folder(root: Path) -> Path:
    """The fixture's 22 items as `stereoset-eval curate` writes pairs (same frame and writers)."""
    from stereoset_eval.curation.export import pairs_frame, write_csv, write_parquet
    from stereoset_eval.curation.labelstudio.items_io import read_items_jsonl

    folder = root / "v1"
    frame = pairs_frame(read_items_jsonl(ITEMS))
    write_csv(frame, folder / "pairs.csv")
    write_parquet(frame, folder / "pairs.parquet")
    return folder


@pytest.mark.parametrize("which", ["pairs.csv", "pairs.parquet", "", "jsonl"])
def test_push_reads_curated_files(tmp_path, capsys, which):
    """Folder, pairs CSV, pairs parquet and items JSON lines give the same tasks."""
    pytest.importorskip("label_studio_sdk")
    folder = _version_folder(tmp_path)
    items = ITEMS if which == "jsonl" else folder / which
    code, out, err = run(["annotate", "push", "--items", str(items), "--tasks-out", str(tmp_path / "t.json")], capsys)
    assert code == 0, err
    tasks = json.loads((tmp_path / "t.json").read_text())
    run(["annotate", "push", "--items", str(ITEMS), "--tasks-out", str(tmp_path / "ref.json")], capsys)
    assert tasks == json.loads((tmp_path / "ref.json").read_text())


@pytest.mark.parametrize("name, content, message", [
    ("items.txt", "x", "cannot read items from a .txt file"),
    ("empty", None, "not a version written by `stereoset-eval curate`"),
    ("pairs.csv", "sent_more,sent_less\na,b\n", "missing required column(s)"),
])
def test_push_refuses_other_files(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    if content is None:
        path.mkdir()
    else:
        path.write_text(content)
    code, _, err = run(["annotate", "push", "--items", str(path), "--tasks-out", str(tmp_path / "t.json")], capsys)
    assert code == 2 and err.startswith("error: ") and message in err


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    """`annotate merge` of the committed export into a version folder made like `curate`'s."""
    root = tmp_path_factory.mktemp("reviewed")
    folder = _version_folder(root)
    out = root / "v1-reviewed"
    code = main(["annotate", "merge", "--items", str(folder), "--export", str(EXPORT), "--out", str(out)])
    assert code == 0
    return out


def test_merge_writes_the_curate_layout(reviewed):
    from stereoset_eval.curation.export import BMNE_COLUMNS

    for name in ("README.md", "pairs.csv", "pairs.parquet", "hf_dataset/train/state.json", "rules_summary.csv",
                 "rules_summary_curated.csv", "removed.csv", "provenance.json", "statistics/counts.csv",
                 "statistics/jaccard.csv", "statistics/lengths.csv", "statistics/categories.png",
                 "review/review_report.json", "review/review_report.md", "review/decisions.csv",
                 "review/disagreements.csv", "review/agreement.csv", "review/issues.csv",
                 "review/curated_items.jsonl"):
        assert (reviewed / name).is_file(), name
    assert not [p for p in reviewed.parent.iterdir() if p.name.startswith(".")]  # no temporary leftovers
    pairs = pd.read_csv(reviewed / "pairs.csv", dtype=str, keep_default_na=False)
    assert list(pairs.columns[:5]) == list(BMNE_COLUMNS) and len(pairs) == 17
    from stereoset_eval.curation.export_schema import read_export_table

    typed = read_export_table(reviewed / "pairs.csv")
    pd.testing.assert_frame_equal(read_export_table(reviewed / "pairs.parquet"), typed)
    datasets = pytest.importorskip("datasets")
    hf = datasets.load_from_disk(str(reviewed / "hf_dataset"))["train"].to_pandas()
    assert list(hf.columns) == list(typed.columns) and len(hf) == len(typed)
    assert hf["sent_more"].tolist() == typed["sent_more"].tolist()


def test_merged_pairs_carry_the_review(reviewed):
    from stereoset_eval.curation.dimensions import tag_of
    from stereoset_eval.curation.labelstudio.items_io import read_items_jsonl
    from stereoset_eval.curation.labelstudio.merge import REVIEW_FLAG
    from stereoset_eval.curation.loaders.pairs_csv import load_pairs

    before = read_items_jsonl(ITEMS)
    back = {it.id: it for it in load_pairs(reviewed / "pairs.csv")}
    assert back.keys() == {it.id for it in read_items_jsonl(reviewed / "review" / "curated_items.jsonl")}
    assert sum(1 for it in back.values() if any(f.rule == REVIEW_FLAG for f in it.flags)) == 16  # items 0-19 kept
    seven = back[before[7].id]  # both annotators tagged Roles and Behaviors over the lexicon's Personality Traits
    assert (seven.dimension, tag_of(seven).source) == ("Roles and Behaviors", "human")
    pairs = pd.read_csv(reviewed / "pairs.csv", dtype=str, keep_default_na=False).set_index("id")
    assert pairs.loc[before[7].id, ["category", "tag_source"]].tolist() == ["Roles and Behaviors", "human"]
    assert pairs.loc[before[13].id, "sent_less"].endswith("(B-13).")


def test_merged_removed_table_and_counts(reviewed):
    removed = pd.read_csv(reviewed / "removed.csv", dtype=str, keep_default_na=False)
    assert list(removed.columns[:5]) == ["item_id", "source_id", "status", "rule", "reason"]
    assert len(removed) == 5 and set(removed["stage"]) == {"review"} and set(removed["status"]) == {"removed"}
    by_rule = removed["rule"].value_counts().to_dict()
    assert by_rule == {"human_review": 4, "unreviewed:automatic": 1}
    counts = pd.read_csv(reviewed / "statistics" / "counts.csv").set_index("source")
    assert counts["input_items"].sum() == 22 and counts["curated"].sum() == 17
    assert counts["removed_in_review"].sum() == 5 and counts["edited_by_person"].sum() == 2


def test_card_has_the_review_section(reviewed):
    card = (reviewed / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\nlicense: cc-by-sa-4.0") and "v1-reviewed-majority" in card
    review = card[card.index("## Human review (Label Studio)"):card.index("## Provenance")]
    assert "Adjudication: **majority**" in review and "### Agreement (Cohen's kappa)" in review
    decision = next(line for line in review.splitlines() if line.startswith("| decision |"))
    assert decision.endswith("| 18 | 0.833 | 0.649 |")
    assert "### Disagreements" in review and "11 (item, field) pairs" in review
    assert "applied here: see the human review below" in card
    prov = json.loads((reviewed / "provenance.json").read_text())
    assert [i["benchmark"] for i in prov["inputs"]] == ["curated items", "Label Studio export"]
    assert prov["inputs"][0]["file"] == "pairs.parquet" and prov["curation"] is None
    assert prov["review"]["adjudication"] == "majority" and prov["review"]["n_removed"] == 5


def test_merge_is_deterministic(reviewed, tmp_path):
    again = tmp_path / "again"
    assert main(["annotate", "merge", "--items", str(reviewed.parent / "v1"), "--export", str(EXPORT),
                 "--out", str(again), "--version-name", "v1-reviewed-majority"]) == 0
    for name in ("pairs.csv", "README.md", "removed.csv", "provenance.json", "statistics/statistics.json"):
        assert (again / name).read_bytes() == (reviewed / name).read_bytes(), name


def test_merge_of_a_real_curate_folder(tmp_path, ids_csv, crows_csv, capsys):
    """Review a sample of a full `curate` version: the rest follows the automatic proposal,
    curation's removed rows are carried over next to the review's."""
    # every suggestion accepted (the draft): a version with all the pairs the rules propose
    assert main(["curate", "--benchmark", "stereoset", "--data", str(ids_csv), "--benchmark", "crows-pairs",
                 "--data", str(crows_csv), "--output", str(tmp_path / "v1"), "--min-precision", "0",
                 "--unmeasured", "decide"]) == 0
    curated = pd.read_csv(tmp_path / "v1" / "pairs.csv", dtype=str, keep_default_na=False)
    before = pd.read_csv(tmp_path / "v1" / "removed.csv", dtype=str, keep_default_na=False)
    capsys.readouterr()
    code, out, err = run(["annotate", "merge", "--items", str(tmp_path / "v1" / "pairs.csv"), "--export", str(EXPORT),
                          "--out", str(tmp_path / "v2")], capsys)
    assert code == 0, err
    removed = pd.read_csv(tmp_path / "v2" / "removed.csv", dtype=str, keep_default_na=False)
    carried, review = removed[removed["stage"] == "curation"], removed[removed["stage"] == "review"]
    assert carried[list(before.columns)].reset_index(drop=True).equals(before)
    pairs = pd.read_csv(tmp_path / "v2" / "pairs.csv", dtype=str, keep_default_na=False)
    assert len(pairs) + len(review) == len(curated)
    assert set(pairs["id"]) | set(review["item_id"]) == set(curated["id"])
    # the 5 review removals, plus unreviewed items whose rules proposed removal (error severity)
    # rules 2.0 send crows:148/341/788 (name and pronoun disagree) to review in curation already,
    # as the reviewers of the fixture decided: their human removals have no pair left to remove
    gone = {"crows-pairs/crows:148", "crows-pairs/crows:341", "crows-pairs/crows:788"} - set(curated["id"])
    assert (review["rule"] == "human_review").sum() == 4 - len(gone)
    auto = review[review["rule"] == "unreviewed:automatic"]
    assert len(auto) >= 1 and auto["reason"].str.startswith("automatic: ").all()
    prov = json.loads((tmp_path / "v2" / "provenance.json").read_text())
    assert prov["curation"] == json.loads((tmp_path / "v1" / "provenance.json").read_text())
    assert prov["config"] == prov["curation"]["config"]
    assert "v1-reviewed-majority" in (tmp_path / "v2" / "README.md").read_text()


def test_agreement_with_one_annotator_says_why(tmp_path, capsys):
    tasks = json.loads(EXPORT.read_text())
    first = next(a["completed_by"] for t in tasks for a in (t.get("annotations") or []))
    for t in tasks:
        t["annotations"] = [a for a in (t.get("annotations") or []) if a.get("completed_by") == first]
    one = tmp_path / "one.json"
    one.write_text(json.dumps(tasks))
    code, out, _ = run(["annotate", "agreement", "--export", str(one)], capsys)
    assert code == 0
    assert out.startswith("no agreement to compute: Cohen's kappa needs two annotators") and "1 annotator(s)" in out
    assert "Empty DataFrame" not in out
