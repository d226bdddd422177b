"""The Label Studio round trip carries the validity suggestions and confidences (issue 14 item 7)."""

from __future__ import annotations

import pytest

from stereoset_eval.curation.labelstudio.items_io import load_review_items
from stereoset_eval.curation.labelstudio.pitfalls import default_catalogue
from stereoset_eval.curation.labelstudio.tasks import build_tasks, validate_tasks
from stereoset_eval.curation.validity import confidence_of


@pytest.fixture(scope="module")
def curated(data_dir, tmp_path_factory):
    from stereoset_eval.curation.card import dataset_card
    from stereoset_eval.curation.export import write_curation
    from stereoset_eval.curation.pipeline import curate_files

    from stereoset_eval.curation.pipeline import CurationConfig
    from stereoset_eval.curation.reliability import ReliabilityConfig

    # every suggestion accepted (the draft): the exported pairs carry the validity suggestions read here;
    # what the rules hold goes to the review queue
    draft = CurationConfig(reliability=ReliabilityConfig(min_precision=0.0, unmeasured="decide"))
    result = curate_files([("stereoset", data_dir / "stereoset" / "stereoset_dev_ids_ptbr_llm.csv")], config=draft)
    out = tmp_path_factory.mktemp("ls") / "v"
    write_curation(result, out, card=dataset_card(result, version="t"))
    return result, out


def test_tasks_carry_suggestion_and_score(curated) -> None:
    result, out = curated
    items = load_review_items(out)  # pairs.csv -> items, flags restored
    judged = [it for it in items if confidence_of(it) is not None]
    assert judged and len(judged) >= len(items) // 2
    tasks = build_tasks(judged[:20])
    for it, task in zip(judged[:20], tasks):
        assert task["predictions"][0]["score"] == pytest.approx(confidence_of(it))
        assert task["data"]["auto_confidence"] == f"{confidence_of(it):.2f}"
        assert task["data"]["auto_suggestion"] != "none"
    pytest.importorskip("label_studio_sdk")
    from stereoset_eval.curation.labelstudio.config import labeling_config

    validate_tasks(tasks, labeling_config(default_catalogue()))


def test_review_items_travel_with_their_suggestion(curated) -> None:
    result, out = curated
    review = load_review_items(out / "review_items.jsonl")
    assert len(review) == len(result.review_items()) > 0
    # a validity hold (rules 3.1 retired conflicting_association, the rule this test read before: weak_consensus)
    weak = {d.item_id for d in result.decisions if d.status == "review" and d.rule == "weak_consensus"}
    assert weak
    for it in review:
        if it.id in weak:
            flag = next(f for f in it.flags if f.rule == "stereotype_validity" and f.severity == "warning")
            assert flag.message.startswith("needs review:") and confidence_of(it) is not None
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "automatic curation until the reviews of every waiting item are merged" in card
    assert f"{result.decided_counts()['review']} need a person" in card
    assert all(any(f.rule == "review_suggestion" for f in it.flags) for it in review)
