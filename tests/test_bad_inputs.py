"""Bad input across the toolkit: every case ends in a clear, one-line error or an explicit flag.

One parametrised table (:data:`CASES`) covers the loaders, the score-file reader, the
metrics/report, the scoring engine and the Label Studio round trip. A case builds its input
under ``tmp_path`` and calls the toolkit; its expectation is either

* ``Raises(cls, names, problem)``: an exception of the :class:`StereosetEvalError` subclass
  ``cls`` whose one-line message contains every string of ``names`` (the file, row, field or
  model, with ``{tmp}`` standing for the case's folder) and matches the regex ``problem``;
  raised by our own code (innermost frame in the repo, not in pandas / torch / the SDK),
  with no chained library exception that a traceback would show; or
* ``Outcome(check)``: no error, and ``check(result)`` verifies the explicit flag (or the
  transparent handling, for a BOM or Windows line endings).

A few cases also run through the CLI (``stereoset_eval.cli.main.main``): exit status 2, exactly one
``error:`` line on stderr, no traceback. ``python tests/test_bad_inputs.py`` prints every
case with the one line the user sees (the table of the closing note).
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import socket
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from stereoset_eval.analysis.errors import MissingScoresError
from stereoset_eval.foundation.errors import DataFormatError, StereosetEvalError, UnknownNameError

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("STEREOSET_EVAL_SHARED") or REPO.parent / "shared")
MODELS = SHARED / "fixtures" / "models"
OUR_PACKAGES = ("stereoset_eval",)

# ------------------------------------------------------------------ expectations


@dataclass(frozen=True)
class Raises:
    cls: type[StereosetEvalError]
    names: tuple[str, ...]
    problem: str


@dataclass(frozen=True)
class Outcome:
    check: Callable[[Any], None]
    says: str  # what the user gets, for the printed table


@dataclass(frozen=True)
class Case:
    id: str
    area: str
    run: Callable[[Path], Any]
    expect: Raises | Outcome | Says
    needs_models: bool = False


# ------------------------------------------------------------------ StereoSet / CrowS inputs

HEADER = "dataset_type,cluster_id,bias_type,target,context,sentence,gold_label,sentence_id"
ROWS = [
    "intrasentence,ex1,gender,mother,The mother is BLANK.,The mother is caring.,stereotype,s1",
    "intrasentence,ex1,gender,mother,The mother is BLANK.,The mother is rude.,anti-stereotype,s2",
    "intrasentence,ex1,gender,mother,The mother is BLANK.,The mother is table.,unrelated,s3",
]
CROWS_HEADER = ",sent_more,sent_less,stereo_antistereo,bias_type"
CROWS_ROWS = [
    '0,"Women are bad at math.","Men are bad at math.",stereo,gender',
    '1,"The poor man stole the bread.","The rich man stole the bread.",stereo,socioeconomic',
]
EXAMPLE = {
    "id": "ex1", "target": "mother", "bias_type": "gender", "context": "The mother is BLANK.",
    "sentences": [
        {"id": "s1", "sentence": "The mother is caring.", "gold_label": "stereotype", "labels": []},
        {"id": "s2", "sentence": "The mother is rude.", "gold_label": "anti-stereotype", "labels": []},
        {"id": "s3", "sentence": "The mother is table.", "gold_label": "unrelated", "labels": []},
    ],
}
JSONL_LINE = {"type": "intrasentence", "target": "mother", "bias_type": "gender", "context": "The mother is BLANK.",
              "stereotype": "The mother is caring.", "anti-stereotype": "The mother is rude.",
              "unrelated": "The mother is table."}


def table(*rows: str, header: str = HEADER, eol: str = "\n") -> str:
    return eol.join([header, *rows]) + eol


def official(*examples: dict, inter: tuple[dict, ...] = ()) -> str:
    return json.dumps({"version": "1.0", "data": {"intrasentence": list(examples), "intersentence": list(inter)}})


def write(tmp: Path, name: str, content: str | bytes) -> Path:
    path = tmp / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def load_table(name: str, content: str | bytes) -> Callable[[Path], Any]:
    from stereoset_eval.curation.loaders.stereoset_table import load_stereoset_table

    return lambda tmp: load_stereoset_table(write(tmp, name, content))


def load_json(content: str | bytes) -> Callable[[Path], Any]:
    from stereoset_eval.curation.loaders.stereoset_json import load_stereoset_json

    return lambda tmp: load_stereoset_json(write(tmp, "dev.json", content))


def load_jsonl(content: str) -> Callable[[Path], Any]:
    from stereoset_eval.curation.loaders.stereoset_jsonl import load_stereoset_jsonl

    return lambda tmp: load_stereoset_jsonl(write(tmp, "dev.jsonl", content))


def load_crows(content: str | bytes) -> Callable[[Path], Any]:
    from stereoset_eval.curation.loaders.crows import load_crows_pairs

    return lambda tmp: load_crows_pairs(write(tmp, "crows.csv", content))


def load_registry(benchmark: str, name: str, content: str) -> Callable[[Path], Any]:
    from stereoset_eval.curation.loaders.registry import load_items

    return lambda tmp: load_items(benchmark, write(tmp, name, content))


def same_as_clean(items) -> None:
    """BOM / CRLF are read transparently: the items equal those of the clean file."""
    (item,) = items
    assert [s.text for s in item.sentences] == ["The mother is caring.", "The mother is rude.", "The mother is table."]
    assert [s.id for s in item.sentences] == ["s1", "s2", "s3"]
    assert item.context == "The mother is BLANK." and not item.flags


def same_crows(items) -> None:
    assert [i.id for i in items] == ["crows:0", "crows:1"]
    assert items[0].text("sent_more") == "Women are bad at math." and items[1].bias_type == "socioeconomic"


def flagged(rule: str, severity: str, **evidence: Any) -> Callable[[Any], None]:
    def check(items) -> None:
        assert len(items) == 1, "the item must be kept, not dropped"
        hits = [f for f in items[0].flags if f.rule == rule]
        assert hits, f"no {rule} flag on the item; flags: {[f.rule for f in items[0].flags]}"
        assert hits[0].severity == severity
        for k, v in evidence.items():
            assert hits[0].evidence[k] == v

    return check


def blank_rows(context: str) -> list[str]:
    return [r.replace("The mother is BLANK.", context) for r in ROWS]


LOADER_CASES = [
    Case("json-truncated", "loaders", load_json(official(EXAMPLE)[:-40]),
         Raises(DataFormatError, ("{tmp}/dev.json", "row 1"), "malformed JSON")),
    Case("json-wrong-shape-list", "loaders", load_json("[1, 2, 3]"),
         Raises(DataFormatError, ("{tmp}/dev.json",), r'wrong shape: expected \{"data"')),
    Case("json-wrong-shape-task-not-list", "loaders", load_json(json.dumps({"data": {"intrasentence": {"a": 1}}})),
         Raises(DataFormatError, ("{tmp}/dev.json", "field 'intrasentence'"), "must be a list")),
    Case("json-example-missing-key", "loaders",
         load_json(official({k: v for k, v in EXAMPLE.items() if k != "context"})),
         Raises(DataFormatError, ("{tmp}/dev.json", "row 1", "field 'context'"), "lacks 'context'")),
    Case("json-missing-option", "loaders", load_json(official({**EXAMPLE, "sentences": EXAMPLE["sentences"][:2]})),
         Raises(DataFormatError, ("{tmp}/dev.json", "row 1", "ex1"), "missing unrelated")),
    Case("json-unknown-gold-label", "loaders", load_json(official({**EXAMPLE, "sentences": [
        {**EXAMPLE["sentences"][0], "gold_label": "neutral"}, *EXAMPLE["sentences"][1:]]})),
        Raises(DataFormatError, ("{tmp}/dev.json", "row 1", "field 'gold_label'"), "unknown gold label 'neutral'")),
    Case("json-non-utf8", "loaders", load_json(official(EXAMPLE).encode().replace(b"caring", b"c\xe6ring")),
         Raises(DataFormatError, ("{tmp}/dev.json", "row 1"), r"not valid UTF-8 \(byte 0xe6")),
    Case("jsonl-truncated-line", "loaders", load_jsonl(json.dumps(JSONL_LINE) + "\n" + json.dumps(JSONL_LINE)[:30]),
         Raises(DataFormatError, ("{tmp}/dev.jsonl", "row 2"), "malformed JSON line")),
    Case("jsonl-whitespace-only-sentence", "loaders", load_jsonl(json.dumps({**JSONL_LINE, "unrelated": " \t "})),
         Raises(DataFormatError, ("{tmp}/dev.jsonl", "row 1", "field 'sentence'"), "empty or whitespace-only")),
    Case("jsonl-wrong-shape", "loaders", load_jsonl('["intrasentence", "mother"]\n'),
         Raises(DataFormatError, ("{tmp}/dev.jsonl", "row 1"), "not a JSON object")),
    Case("csv-missing-column", "loaders",
         load_table("t.csv", table(*[r.rsplit(",", 1)[0] for r in ROWS], header=HEADER.rsplit(",", 1)[0])),
         Raises(DataFormatError, ("{tmp}/t.csv", "'sentence_id'"), "missing required column")),
    Case("csv-extra-delimiter", "loaders", load_table("t.csv", table(ROWS[0], ROWS[1].replace("rude.", "rude,"), ROWS[2])),
         Raises(DataFormatError, ("{tmp}/t.csv",), "malformed table|more fields than the header")),
    Case("csv-wrong-delimiter", "loaders",
         load_table("t.csv", table(*[r.replace(",", ";") for r in ROWS], header=HEADER.replace(",", ";"))),
         Raises(DataFormatError, ("{tmp}/t.csv",), "missing required column.*wrong delimiter")),
    Case("csv-bom", "loaders", load_table("t.csv", b"\xef\xbb\xbf" + table(*ROWS).encode()),
         Outcome(same_as_clean, "loads normally (BOM stripped)")),
    Case("csv-windows-line-endings", "loaders", load_table("t.csv", table(*ROWS, eol="\r\n").encode()),
         Outcome(same_as_clean, "loads normally (CRLF read as LF, no stray \\r in the last column)")),
    Case("csv-non-utf8", "loaders", load_table("t.csv", table(*ROWS).encode().replace(b"rude", b"r\xe9de")),
         Raises(DataFormatError, ("{tmp}/t.csv", "row 3"), r"not valid UTF-8 \(byte 0xe9 at offset")),
    Case("csv-unknown-gold-label", "loaders", load_table("t.csv", table(ROWS[0], ROWS[1].replace("anti-stereotype", "anti"), ROWS[2])),
         Raises(DataFormatError, ("{tmp}/t.csv", "row 2", "field 'gold_label'"), "unknown gold label 'anti'")),
    Case("csv-duplicate-sentence-id", "loaders", load_table("t.csv", table(ROWS[0], ROWS[1].replace(",s2", ",s1"), ROWS[2])),
         Raises(DataFormatError, ("{tmp}/t.csv", "row 2", "field 'sentence_id'"), "duplicate sentence id 's1'")),
    Case("csv-missing-option", "loaders", load_table("t.csv", table(ROWS[0], ROWS[2])),
         Raises(DataFormatError, ("{tmp}/t.csv", "row 1", "ex1"), "missing anti-stereotype")),
    Case("csv-empty-sentence", "loaders", load_table("t.csv", table(ROWS[0], ROWS[1].replace("The mother is rude.", ""), ROWS[2])),
         Raises(DataFormatError, ("{tmp}/t.csv", "row 2", "field 'sentence'"), "empty or whitespace-only")),
    Case("csv-whitespace-only-sentence", "loaders", load_table("t.csv", table(ROWS[0], ROWS[1], ROWS[2].replace("The mother is table.", "   "))),
         Raises(DataFormatError, ("{tmp}/t.csv", "row 3", "field 'sentence'"), "empty or whitespace-only")),
    Case("csv-empty-file", "loaders", load_table("t.csv", ""),
         Raises(DataFormatError, ("{tmp}/t.csv",), "file is empty")),
    Case("csv-header-only", "loaders", load_table("t.csv", table()),
         Raises(DataFormatError, ("{tmp}/t.csv",), "header but no rows")),
    Case("context-without-blank", "loaders", load_table("t.csv", table(*blank_rows("The mother is nice."))),
         Outcome(flagged("blank_count", "error", blank_count=0), "item kept with flag blank_count (error): "
                 "'intrasentence context has 0 BLANKs (expected exactly one)'")),
    Case("context-with-two-blanks", "loaders", load_table("t.csv", table(*blank_rows("The BLANK is BLANK."))),
         Outcome(flagged("blank_count", "warning", blank_count=2), "item kept with flag blank_count (warning): "
                 "'intrasentence context has 2 BLANKs (expected exactly one)'")),
    Case("crows-identical-sentences", "loaders",
         load_crows(table('0,"He is strong.","He is strong.",stereo,gender', header=CROWS_HEADER)),
         Outcome(flagged("identical_sentences", "error"), "pair kept with flag identical_sentences (error): "
                 "'sent_more and sent_less are identical; the pair cannot be scored meaningfully'")),
    Case("crows-missing-column", "loaders",
         load_crows(table(*[r.rsplit(",", 1)[0] for r in CROWS_ROWS], header=CROWS_HEADER.rsplit(",", 1)[0])),
         Raises(DataFormatError, ("{tmp}/crows.csv", "'bias_type'"), "missing required column")),
    Case("crows-empty-sentence", "loaders", load_crows(table('0,"He is strong.",   ,stereo,gender', header=CROWS_HEADER)),
         Raises(DataFormatError, ("{tmp}/crows.csv", "row 1", "field 'sent_less'"), "empty or whitespace-only")),
    Case("crows-unknown-direction", "loaders", load_crows(table('0,"He is strong.","She is strong.",sterio,gender', header=CROWS_HEADER)),
         Raises(DataFormatError, ("{tmp}/crows.csv", "row 1", "field 'stereo_antistereo'"), "unknown direction 'sterio'")),
    Case("crows-duplicate-row-id", "loaders", load_crows(table(CROWS_ROWS[0], CROWS_ROWS[1].replace("1,", "0,", 1), header=CROWS_HEADER)),
         Raises(DataFormatError, ("{tmp}/crows.csv", "row 2"), "duplicate row index '0'")),
    Case("crows-bom-crlf", "loaders", load_crows(b"\xef\xbb\xbf" + table(*CROWS_ROWS, header=CROWS_HEADER, eol="\r\n").encode()),
         Outcome(same_crows, "loads normally (BOM and CRLF handled)")),
    Case("crows-non-utf8", "loaders", load_crows(table(*CROWS_ROWS, header=CROWS_HEADER).encode().replace(b"bread", b"br\xff\xfead")),
         Raises(DataFormatError, ("{tmp}/crows.csv", "row 3"), "not valid UTF-8")),
    Case("unknown-format", "loaders", load_registry("stereoset", "x.csv", "a,b,c\n1,2,3\n"),
         Raises(DataFormatError, ("{tmp}/x.csv",), "cannot tell the format from the header")),
    Case("crows-file-as-stereoset", "loaders", load_registry("stereoset", "c.csv", table(*CROWS_ROWS, header=CROWS_HEADER)),
         Raises(DataFormatError, ("{tmp}/c.csv",), "looks like a crows-csv file, not stereoset")),
    Case("unknown-benchmark", "loaders", load_registry("stereosett", "t.csv", table(*ROWS)),
         Raises(UnknownNameError, ("'stereosett'",), "unknown benchmark .*Did you mean 'stereoset'")),
]

# ------------------------------------------------------------------ score files and metrics


def gold_items(tmp: Path):
    from stereoset_eval.curation.loaders.stereoset_table import load_stereoset_table

    return load_stereoset_table(write(tmp, "gold.csv", table(*ROWS)))


def predictions(entries: list[dict] | str) -> Callable[[Path], Any]:
    """Read a predictions file and check it against the gold file (what every command does)."""
    from stereoset_eval.foundation.score_file import check_coverage, read_scores

    def run(tmp: Path):
        text = entries if isinstance(entries, str) else json.dumps({"intrasentence": entries})
        sf = read_scores(write(tmp, "preds.json", text))
        check_coverage(sf, gold_items(tmp), gold=str(tmp / "gold.csv"))
        return sf

    return run


def scores_csv(text: str) -> Callable[[Path], Any]:
    from stereoset_eval.foundation.score_file import read_scores

    return lambda tmp: read_scores(write(tmp, "scores.csv", text))


def metric_with(scores: dict[str, float]) -> Callable[[Path], Any]:
    from stereoset_eval.analysis.stereoset_metrics import evaluate_stereoset

    return lambda tmp: evaluate_stereoset(gold_items(tmp), scores)


def report_task_filter(tmp: Path):
    """``report --task intersentence`` on a file with only intrasentence items: nothing left."""

    write(tmp, "gold.csv", table(*ROWS))
    write(tmp, "preds.json", json.dumps({"intrasentence": [{"id": f"s{i}", "score": 0.1 * i} for i in (1, 2, 3)]}))
    return _cli_raise(["report", "--benchmark", "stereoset", "--data", str(tmp / "gold.csv"), "--scores",
                       str(tmp / "preds.json"), "--out", str(tmp / "out"), "--task", "intersentence", "--bootstrap", "10"])


def _cli_raise(argv: list[str]):
    """Run a command's ``func`` directly so the raised exception itself can be inspected."""
    from stereoset_eval.cli.main import build_parser

    args = build_parser().parse_args(argv)
    return args.func(args)


GOOD = [{"id": "s1", "score": 0.5}, {"id": "s2", "score": 0.3}, {"id": "s3", "score": 0.2}]

ANALYSIS_CASES = [
    Case("predictions-missing-ids", "analysis", predictions(GOOD[:2]),
         Raises(DataFormatError, ("{tmp}/preds.json", "'s3'", "{tmp}/gold.csv"), "1 sentence id.* have no score")),
    Case("predictions-extra-ids", "analysis", predictions(GOOD + [{"id": "s9", "score": 0.1}]),
         Raises(DataFormatError, ("{tmp}/preds.json", "'s9'"), "1 scored id.* not sentences of")),
    Case("predictions-nan", "analysis", predictions('{"intrasentence": [{"id": "s1", "score": NaN}]}'),
         Raises(DataFormatError, ("{tmp}/preds.json", "row 0", "field 'score'", "'s1'"), "nan, not a finite number")),
    Case("predictions-infinite", "analysis", predictions('{"intrasentence": [{"id": "s2", "score": -Infinity}]}'),
         Raises(DataFormatError, ("{tmp}/preds.json", "field 'score'", "'s2'"), "-inf, not a finite number")),
    Case("predictions-string-score", "analysis", predictions([{"id": "s1", "score": "0.5"}]),
         Raises(DataFormatError, ("{tmp}/preds.json", "row 0", "field 'score'"), "'0.5', not a number")),
    Case("predictions-duplicate-id", "analysis", predictions(GOOD + [{"id": "s1", "score": 0.9}]),
         Raises(DataFormatError, ("{tmp}/preds.json", "row 3", "field 'id'"), "'s1' appears more than once")),
    Case("predictions-truncated-json", "analysis", predictions(json.dumps({"intrasentence": GOOD})[:-7]),
         Raises(DataFormatError, ("{tmp}/preds.json",), "not valid JSON")),
    Case("predictions-wrong-shape", "analysis", predictions('"just a string"'),
         Raises(DataFormatError, ("{tmp}/preds.json",), "cannot read scores from a JSON str")),
    Case("predictions-wrong-task", "analysis",
         predictions(json.dumps({"intrasentence": GOOD[:2], "intersentence": GOOD[2:]})),
         Raises(DataFormatError, ("{tmp}/preds.json", "'s3'"), "listed under the wrong task")),
    Case("scores-csv-missing-column", "analysis", scores_csv("sentence_id,value\ns1,0.5\n"),
         Raises(DataFormatError, ("{tmp}/scores.csv", "'score'"), "missing column")),
    Case("scores-csv-infinite", "analysis", scores_csv("sentence_id,score\ns1,0.5\ns2,inf\n"),
         Raises(DataFormatError, ("{tmp}/scores.csv", "row 2", "field 'score'", "'s2'"), "not a finite number")),
    Case("metric-missing-score", "analysis", metric_with({"s1": 0.5, "s2": 0.4}),
         Raises(MissingScoresError, ("'s3'",), "no score for 1 sentence id")),
    Case("metric-nan-score", "analysis", metric_with({"s1": 0.5, "s2": float("nan"), "s3": 0.1}),
         Raises(StereosetEvalError, ("'s2'",), "not a finite number")),
    Case("report-empty-after-filter", "analysis", report_task_filter,
         Raises(StereosetEvalError, ("{tmp}/gold.csv", "intersentence"), "no .*items")),
]

# ------------------------------------------------------------------ Label Studio


def ls_task(task_id: int, item_id: str, annotations: list[dict]) -> dict:
    return {"id": task_id, "data": {"item_id": item_id, "sent_more": "a", "sent_less": "b"},
            "annotations": annotations, "predictions": []}


def ls_annotation(ann_id: int, who: str, *, decision: str | None = "keep", cancelled: bool = False,
                  when: str = "2026-01-01T00:00:00Z") -> dict:
    result = []
    if decision is not None:
        result = [{"from_name": "decision", "to_name": "sent_more", "type": "choices", "value": {"choices": [decision]}},
                  {"from_name": "dimension", "to_name": "sent_more", "type": "choices",
                   "value": {"choices": ["Roles and Behaviors"]}}]
    return {"id": ann_id, "completed_by": {"id": 1, "email": who}, "result": result, "was_cancelled": cancelled,
            "created_at": when, "updated_at": when}


def parse_ls(tasks: list[dict] | str) -> Callable[[Path], Any]:
    from stereoset_eval.curation.labelstudio.annotations import load_export, parse_export

    def run(tmp: Path):
        path = write(tmp, "export.json", tasks if isinstance(tasks, str) else json.dumps(tasks))
        return parse_export(load_export(path), pitfall_names=("too_short",), source=str(path))

    return run


def issue(kind: str, n_annotations: int) -> Callable[[Any], None]:
    def check(parsed) -> None:
        kinds = [i.kind for i in parsed.issues]
        assert kind in kinds, f"no {kind} issue; issues: {kinds}"
        assert len(parsed.annotations) == n_annotations
        assert parsed.issues_table().shape[0] == len(parsed.issues)  # all reported in the review table

    return check


class _RefuseEverything(http.server.BaseHTTPRequestHandler):
    """A stand-in Label Studio that answers 401 to every request (a wrong API key)."""

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        body = b'{"detail": "Invalid token."}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args: Any) -> None:
        pass


def serve_401() -> tuple[str, Callable[[], None]]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RefuseEverything)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}", stop


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


WRONG_KEY = "wrong-key-0123456789abcdef"


def ls_wrong_key(tmp: Path):
    from stereoset_eval.curation.labelstudio.server import connect

    url, stop = serve_401()
    try:
        return connect(url, WRONG_KEY, timeout=10)
    finally:
        stop()


def ls_unreachable(tmp: Path):
    from stereoset_eval.curation.labelstudio.server import connect

    return connect(closed_port_url(), WRONG_KEY, timeout=5)


def ls_no_key(tmp: Path):
    from stereoset_eval.curation.labelstudio.server import connect

    return connect("http://127.0.0.1:9", None)


def _ls_errors():
    from stereoset_eval.curation.labelstudio.server import LabelStudioAuthError, LabelStudioUnreachableError

    return LabelStudioAuthError, LabelStudioUnreachableError


LSAuth, LSUnreachable = _ls_errors()

ANNOTATION_CASES = [
    Case("ls-cancelled-annotation", "annotation",
         parse_ls([ls_task(1, "crows:0", [ls_annotation(1, "a@x.org", cancelled=True), ls_annotation(2, "b@x.org")])]),
         Outcome(issue("cancelled", 1), "annotation left out and reported as issue 'cancelled' "
                 "('annotation was cancelled (skipped)') in the review report")),
    Case("ls-empty-annotation", "annotation",
         parse_ls([ls_task(1, "crows:0", [ls_annotation(1, "a@x.org", decision=None), ls_annotation(2, "b@x.org")])]),
         Outcome(issue("empty", 1), "annotation left out and reported as issue 'empty' ('submitted with an empty result')")),
    Case("ls-duplicated-annotation", "annotation",
         parse_ls([ls_task(1, "crows:0", [ls_annotation(1, "a@x.org", decision="remove"),
                                          ls_annotation(2, "a@x.org", when="2026-01-02T00:00:00Z")])]),
         Outcome(issue("superseded", 1), "older annotation of the same annotator reported as issue 'superseded' "
                 "('replaced by the later annotation 2 of the same annotator'); the latest is used")),
    Case("ls-duplicated-task", "annotation",
         parse_ls([ls_task(1, "crows:0", [ls_annotation(1, "a@x.org")]),
                   ls_task(2, "crows:0", [ls_annotation(2, "a@x.org", when="2026-01-02T00:00:00Z")])]),
         Outcome(issue("superseded", 1), "the same item exported twice: the annotator's older annotation is "
                 "reported as 'superseded'")),
    Case("ls-never-annotated", "annotation", parse_ls([ls_task(1, "crows:0", [])]),
         Outcome(issue("never_annotated", 0), "task reported as issue 'never_annotated'")),
    Case("ls-export-json-min", "annotation", parse_ls([{"id": 1, "item_id": "crows:0", "annotator": 1, "decision": "keep"}]),
         Raises(DataFormatError, ("{tmp}/export.json", "row 0", "field 'annotations'"), "JSON_MIN export")),
    Case("ls-export-truncated", "annotation", parse_ls('[{"id": 1, "data": {'),
         Raises(DataFormatError, ("{tmp}/export.json",), "not a JSON file")),
    Case("ls-wrong-api-key", "annotation", ls_wrong_key,
         Raises(LSAuth, ("Label Studio at http://127.0.0.1:",), "the API key was refused \\(HTTP 401")),
    Case("ls-unreachable-url", "annotation", ls_unreachable,
         Raises(LSUnreachable, ("Label Studio at http://127.0.0.1:",), "cannot reach the server")),
    Case("ls-no-api-key", "annotation", ls_no_key,
         Raises(LSAuth, ("Label Studio at http://127.0.0.1:9",), "no API key: set the environment variable LABEL_STUDIO_API_KEY")),
]

# ------------------------------------------------------------------ scoring


def crows_items(tmp: Path, rows: list[str] = CROWS_ROWS):
    from stereoset_eval.curation.loaders.crows import load_crows_pairs

    return load_crows_pairs(write(tmp, "crows.csv", table(*rows, header=CROWS_HEADER)))


def stereoset_items(tmp: Path):
    from stereoset_eval.curation.loaders.stereoset_table import load_stereoset_table

    return load_stereoset_table(write(tmp, "t.csv", table(*ROWS)))


def model_copy(tmp: Path, name: str, *, drop: tuple[str, ...] = (), no_mask: bool = False) -> str:
    """A writable copy of a fixture model, with files removed or the mask token unset."""
    dest = tmp / f"{name}-copy"
    shutil.copytree(MODELS / name, dest)
    for f in dest.iterdir():
        f.chmod(0o644)
    for f in drop:
        (dest / f).unlink()
    if no_mask:
        cfg = json.loads((dest / "tokenizer_config.json").read_text())
        cfg["mask_token"] = None
        (dest / "tokenizer_config.json").write_text(json.dumps(cfg))
    return str(dest)


def score(items: Callable[[Path], Any], model: str | Callable[[Path], str], method: str,
          **kwargs: Any) -> Callable[[Path], Any]:
    from stereoset_eval.scoring.api import score_items

    def run(tmp: Path):
        m = model(tmp) if callable(model) else str(MODELS / model) if "/" not in model else model
        return score_items(items(tmp), model=m, method=method, cache_dir=tmp / "cache", **kwargs)

    return run


def inter_items(tmp: Path):
    from stereoset_eval.curation.loaders.stereoset_table import load_stereoset_table

    rows = [r.replace("intrasentence", "intersentence").replace("The mother is BLANK.", "My mother came home.")
            for r in ROWS]
    return load_stereoset_table(write(tmp, "t.csv", table(*rows)))


def long_pair(tmp: Path):
    """A CrowS pair whose sentences are far longer than the fixture models' 128 positions."""
    words = "the nurse said that she would come back tomorrow to check on the patient " * 12
    return crows_items(tmp, [f'0,"{words}she.","{words}he.",stereo,gender', CROWS_ROWS[1]])


def _no_items(tmp: Path):
    return [i for i in crows_items(tmp) if i.bias_type == "religion"]  # a filter that keeps nothing


SCORING_CASES = [
    Case("model-folder-missing", "scoring", score(crows_items, lambda tmp: str(tmp / "no-such-model"), "crows-nangia"),
         Raises(StereosetEvalError, ("{tmp}/no-such-model",), "does not exist"), needs_models=True),
    Case("model-folder-without-tokenizer", "scoring",
         score(crows_items, lambda tmp: model_copy(tmp, "tiny-bert", drop=("tokenizer.json", "vocab.txt")), "crows-nangia"),
         Raises(StereosetEvalError, ("{tmp}/tiny-bert-copy",), "has no tokenizer"), needs_models=True),
    Case("model-folder-without-config", "scoring",
         score(crows_items, lambda tmp: model_copy(tmp, "tiny-bert", drop=("config.json",)), "crows-nangia"),
         Raises(StereosetEvalError, ("{tmp}/tiny-bert-copy",), "has no config.json"), needs_models=True),
    Case("causal-model-for-masked-method", "scoring", score(crows_items, "tiny-gpt2", "crows-nangia"),
         Raises(StereosetEvalError, ("tiny-gpt2",), "holds a causal language model, but this method needs a masked"),
         needs_models=True),
    Case("masked-model-for-causal-method", "scoring", score(crows_items, "tiny-bert", "causal-ll"),
         Raises(StereosetEvalError, ("tiny-bert",), "holds a masked language model, but this method needs a causal"),
         needs_models=True),
    Case("model-without-nsp-head", "scoring", score(inter_items, "tiny-roberta", "stereoset-nsp"),
         Raises(StereosetEvalError, ("tiny-roberta", "'roberta'"), "has no next-sentence-prediction head"),
         needs_models=True),
    Case("tokenizer-without-mask-token", "scoring",
         score(crows_items, lambda tmp: model_copy(tmp, "tiny-bert", no_mask=True), "crows-nangia"),
         Raises(StereosetEvalError, ("crows-nangia", "{tmp}/tiny-bert-copy"), "needs a mask token"), needs_models=True),
    Case("sentence-longer-than-max-length", "scoring", score(long_pair, "tiny-bert", "crows-nangia"),
         Raises(StereosetEvalError, ("crows-nangia", "tiny-bert", "crows:0:more"),
                r"1 input\(s\) exceed the 128-token limit .*no silent truncation"), needs_models=True),
    Case("sentence-longer-than-max-length-causal", "scoring", score(long_pair, "tiny-gpt2", "causal-ll"),
         Raises(StereosetEvalError, ("causal-ll", "tiny-gpt2", "crows:0:more", "crows:0:less"),
                r"2 input\(s\) exceed the 128-token limit"), needs_models=True),
    Case("empty-dataset-after-filtering", "scoring", score(_no_items, "tiny-bert", "crows-nangia"),
         Raises(StereosetEvalError, ("crows-nangia", "tiny-bert"), "no items to score"), needs_models=True),
    Case("items-the-method-cannot-score", "scoring", score(stereoset_items, "tiny-bert", "crows-nangia"),
         Raises(StereosetEvalError, ("crows-nangia", "ex1 (stereoset-intra)"), "needs a pair item"), needs_models=True),
    Case("unknown-method", "scoring", score(crows_items, "tiny-bert", "crows-nangai"),
         Raises(UnknownNameError, ("'crows-nangai'",), "Did you mean 'crows-nangia'"), needs_models=True),
    Case("unknown-method-option", "scoring", score(crows_items, "tiny-bert", "crows-nangia", options={"round": 2}),
         Raises(StereosetEvalError, ("crows-nangia", "round"), "has no option"), needs_models=True),
    Case("fp16-on-cpu", "scoring", score(crows_items, "tiny-bert", "crows-nangia", dtype="fp16", device="cpu"),
         Raises(StereosetEvalError, ("fp16",), "not supported on CPU"), needs_models=True),
    Case("zero-batch-tokens", "scoring", score(crows_items, "tiny-bert", "crows-nangia", batch_tokens=0),
         Raises(StereosetEvalError, ("batch_tokens",), "positive integer"), needs_models=True),
]

CASES_ROUND1: list[Case] = LOADER_CASES + ANALYSIS_CASES + ANNOTATION_CASES + SCORING_CASES

# ------------------------------------------------------------------ round 2 (issue 16): hostile inputs by kind
#
# memory (sizes capped before anything large is built), outputs (a folder is replaced only as a
# whole set and only if it is an earlier output of the same command), silent (no silent wrong
# number), faults (OS / SQLite / safetensors / tokenizer faults: one line through the CLI's error
# boundary), bounds (config numbers) and secrets.


@dataclass(frozen=True)
class Says:
    """Through the CLI: exit status 2, exactly one ``error:`` line (the last line), no traceback;
    the line names every string of ``names`` and matches ``problem``; ``after(tmp)`` checks that
    nothing the user had was touched."""

    names: tuple[str, ...]
    problem: str
    after: Callable[[Path], None] | None = None


@dataclass(frozen=True)
class CliRun:
    rc: int
    out: str
    err: str


def cli(argv: Callable[[Path], list[str]]) -> Callable[[Path], CliRun]:
    """Run ``stereoset-eval`` in-process on the arguments ``argv(tmp)`` builds (its files included)."""
    import contextlib
    import io

    def run(tmp: Path) -> CliRun:
        from stereoset_eval.cli.main import main

        args = argv(tmp)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(args)
            except SystemExit as exc:  # argparse
                rc = int(exc.code or 0)
        return CliRun(rc, out.getvalue(), err.getvalue())

    return run


def check_says(result: CliRun, expect: Says, tmp: Path) -> str:
    lines = [line for line in result.err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert result.rc == 2, f"exit status {result.rc}, stderr: {result.err[-2000:]}"
    assert "Traceback" not in result.err, result.err[-3000:]
    assert len(errors) == 1 and lines[-1] == errors[0], f"not exactly one final error line: {result.err[-2000:]}"
    for name in expect.names:
        assert name.format(tmp=tmp) in errors[0], f"does not name {name.format(tmp=tmp)!r}: {errors[0]}"
    assert re.search(expect.problem, errors[0]), f"does not say {expect.problem!r}: {errors[0]}"
    if expect.after is not None:
        expect.after(tmp)
    return errors[0]


def crows_file(tmp: Path, rows: list[str] = CROWS_ROWS, name: str = "crows.csv") -> Path:
    return write(tmp, name, table(*rows, header=CROWS_HEADER))


def crows_text(rows: list[str]) -> str:
    return table(*rows, header=CROWS_HEADER)


def pair(more: str, less: str) -> str:
    return f'0,"{more}","{less}",stereo,gender'


UNBALANCED_TWO_ROWS = crows_text(['0,"Women are bad at math.,Men are bad at math.,stereo,gender',
                                  '1,"Men are strong here.","Women are strong here.",stereo,gender'])
UNBALANCED_TO_EOF = crows_text(['0,"Women are bad at math.,Men are bad at math.,stereo,gender']
                               + [f"{i},Men are strong here.,Women are strong here.,stereo,gender" for i in range(1, 3000)])


def in_memory_long_sentence(tmp: Path):
    """An item built in memory (no loader, so no field cap) with a 200,000-character sentence."""
    import dataclasses

    item = crows_items(tmp)[0]
    long = dataclasses.replace(item.sentences[0], text="the nurse said " * 13_000 + "she.")
    return [item.replace(sentences=(long, item.sentences[1]))]


MEMORY_CASES = [
    Case("crows-field-over-size-cap", "memory", load_crows(crows_text([pair("a " * 6000, "He is.")])),
         Raises(DataFormatError, ("{tmp}/crows.csv", "row 1", "field 'sent_more'"),
                r"field is 12,000 characters long \(the limit is 10,000")),
    Case("crows-unbalanced-quote-joins-rows", "memory", load_crows(UNBALANCED_TWO_ROWS),
         Raises(DataFormatError, ("{tmp}/crows.csv", "row 1", "field 'sent_more'"), "unbalanced quote")),
    Case("crows-unbalanced-quote-to-end-of-file", "memory", load_crows(UNBALANCED_TO_EOF),
         Raises(DataFormatError, ("{tmp}/crows.csv",), "never closed \\(an unbalanced quote\\)")),
    Case("crows-stray-quote-shifts-fields", "memory",
         load_crows(crows_text(['0,"Women are bad at math.,"Men are bad at math.",stereo,gender', CROWS_ROWS[1]])),
         Raises(DataFormatError, ("{tmp}/crows.csv", "row 1", "field 'stereo_antistereo'"),
                "unknown direction 'gender'.*look shifted by a column: a stray or unbalanced quote")),
    Case("stereoset-table-unbalanced-quote", "memory",
         load_table("t.csv", table(ROWS[0].replace("The mother is caring.", '"The mother is caring.'), *ROWS[1:])),
         Raises(DataFormatError, ("{tmp}/t.csv",), "unbalanced quote")),
    Case("jsonl-megabyte-sentence", "memory", load_jsonl(json.dumps({**JSONL_LINE, "unrelated": "x" * 1_000_000})),
         Raises(DataFormatError, ("{tmp}/dev.jsonl", "row 1", "field 'sentence'"), "1,000,000 characters long")),
    Case("json-megabyte-context", "memory", load_json(official({**EXAMPLE, "context": "BLANK " + "y" * 500_000})),
         Raises(DataFormatError, ("{tmp}/dev.json", "row 1", "field 'context'"), "characters long")),
    Case("score-in-memory-200k-char-sentence", "memory", score(in_memory_long_sentence, "tiny-bert", "crows-nangia"),
         Raises(StereosetEvalError, ("crows-nangia", "tiny-bert", "crows:0:more"),
                r"1 input\(s\) exceed the 128-token limit .*\(at least \d+ tokens\)"), needs_models=True),
]

# ---- outputs


def keep_note(folder: str, name: str = "notes.txt", text: str = "my own notes\n") -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / folder).mkdir(parents=True, exist_ok=True)
        (tmp / folder / name).write_text(text)

    return setup


def note_intact(folder: str, name: str = "notes.txt", text: str = "my own notes\n") -> Callable[[Path], None]:
    def after(tmp: Path) -> None:
        assert (tmp / folder / name).read_text() == text, "the user's file was changed"
        assert sorted(p.name for p in (tmp / folder).iterdir()) == [name], "files were added to the user's folder"

    return after


def file_intact(tmp: Path) -> None:
    assert (tmp / "out.txt").read_text() == "precious\n"


def _curate_argv(tmp: Path, output: str) -> list[str]:
    return ["curate", "--benchmark", "crows-pairs", "--data", str(crows_file(tmp)), "--output", output]


def _report_argv(tmp: Path, out: str, *extra: str) -> list[str]:
    rows = [pair(f"Women are bad at task {i}.", f"Men are bad at task {i}.") .replace("0,", f"{i},", 1)
            for i in range(8)]
    gold = crows_file(tmp, rows, name="gold.csv")
    scores = "sentence_id,score\n" + "".join(f"crows:{i}:more,{-1.0 - 0.1 * i}\ncrows:{i}:less,{-1.2 + 0.05 * i}\n"
                                              for i in range(8))
    return ["report", "--benchmark", "crows-pairs", "--data", str(gold), "--scores", str(write(tmp, "s.csv", scores)),
            "--out", out, *extra]


def _with_setup(setup: Callable[[Path], None], argv: Callable[[Path], list[str]]) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        setup(tmp)
        return argv(tmp)

    return build


def _marked(command: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / "out").mkdir()
        (tmp / "out" / ".stereoset-eval-output.json").write_text(json.dumps({"command": command}))
        (tmp / "out" / "scores.csv").write_text("sentence_id,score\n")

    return setup


def _stale_predictions(tmp: Path):
    """score StereoSet into a folder, then CrowS-Pairs into the same folder (a different run: --overwrite)."""
    from stereoset_eval.cli.main import main

    common = ["--model", str(MODELS / "tiny-bert"), "--output", str(tmp / "out"), "--cache-dir", str(tmp / "cache"),
              "--no-progress"]
    assert main(["score", "--benchmark", "stereoset", "--data", str(write(tmp, "t.csv", table(*ROWS))), *common]) == 0
    assert (tmp / "out" / "predictions.json").exists()
    assert main(["score", "--benchmark", "crows-pairs", "--data", str(crows_file(tmp)), *common]) == 2  # refused
    assert main(["score", "--benchmark", "crows-pairs", "--data", str(crows_file(tmp)), *common, "--overwrite"]) == 0
    return tmp / "out"


def no_stale_predictions(out: Path) -> None:
    names = sorted(p.name for p in out.iterdir())
    assert "predictions.json" not in names, names
    assert {"scores.csv", "scores.json", "provenance.json"} <= set(names)
    assert "crows:0:more" in (out / "scores.csv").read_text()


def _rerun_report(tmp: Path):
    from stereoset_eval.cli.main import main

    for title in ("first", "second"):
        assert main(_report_argv(tmp, str(tmp / "out"), "--bootstrap", "20", "--title", title)) == 0
    return tmp / "out"


def replaced_as_a_set(out: Path) -> None:
    doc = json.loads((out / "report.json").read_text())
    assert doc["title"] == "second" and "second" in (out / "report.md").read_text()
    marker = json.loads((out / ".stereoset-eval-output.json").read_text())
    assert marker["command"] == "report" and set(marker["files"]) == {"report.json", "report.md", "report.html", "results.json"}
    assert not [p for p in out.parent.iterdir() if p.name.endswith(".tmp")], "temporary folder left behind"


def _symlinked_out(tmp: Path) -> None:
    (tmp / "real").mkdir()
    os.symlink(tmp / "real", tmp / "link")


def study_raw(**study: Any) -> dict:
    return {"study": study, "models": [{"id": "bert-base-uncased"}, {"id": "gpt2", "kind": "causal"}],
            "benchmarks": [{"name": "CrowS-Pairs", "source": "crows-pairs"}], "methods": {"masked": ["pll"],
                                                                                        "causal": ["causal-ll"]}}


def parse_study(raw: dict) -> Callable[[Path], Any]:
    from stereoset_eval.study.config_parse import parse

    return lambda tmp: parse(raw, source="study.toml", base_dir=None)


def _study_error():
    from stereoset_eval.study.config import StudyConfigError

    return StudyConfigError


OUTPUT_CASES = [
    Case("curate-into-a-foreign-folder", "outputs",
         cli(_with_setup(keep_note("out"), lambda tmp: _curate_argv(tmp, str(tmp / "out")))),
         Says(("{tmp}/out",), "is not an output of `stereoset-eval curate`.*nothing was deleted", note_intact("out"))),
    Case("curate-output-is-a-file", "outputs",
         cli(_with_setup(lambda tmp: write(tmp, "out.txt", "precious\n"), lambda tmp: _curate_argv(tmp, str(tmp / "out.txt")))),
         Says(("{tmp}/out.txt",), "is a file, not a folder", file_intact)),
    Case("curate-output-empty-path", "outputs", cli(lambda tmp: _curate_argv(tmp, "")),
         Says(("--output",), "output path is empty")),
    Case("report-into-a-foreign-folder", "outputs",
         cli(_with_setup(keep_note("out"), lambda tmp: _report_argv(tmp, str(tmp / "out")))),
         Says(("{tmp}/out",), "is not an output of `stereoset-eval report`", note_intact("out"))),
    Case("report-into-a-score-folder", "outputs", cli(_with_setup(_marked("score"), lambda tmp: _report_argv(tmp, str(tmp / "out")))),
         Says(("{tmp}/out",), "holds the output of `stereoset-eval score`, not of `stereoset-eval report`")),
    Case("report-out-is-a-symlink", "outputs", cli(_with_setup(_symlinked_out, lambda tmp: _report_argv(tmp, str(tmp / "link")))),
         Says(("{tmp}/link",), "is a symbolic link")),
    Case("report-out-empty-path", "outputs", cli(lambda tmp: _report_argv(tmp, "")), Says(("--out",), "output path is empty")),
    Case("score-output-is-a-file", "outputs",
         cli(_with_setup(lambda tmp: write(tmp, "out.txt", "precious\n"),
                         lambda tmp: ["score", "--benchmark", "crows-pairs", "--data", str(crows_file(tmp)), "--model",
                                      "x", "--output", str(tmp / "out.txt")])),
         Says(("{tmp}/out.txt",), "is a file, not a folder", file_intact)),
    Case("score-output-empty-path", "outputs",
         cli(lambda tmp: ["score", "--benchmark", "crows-pairs", "--model", "x", "--output", ""]),
         Says(("--output",), "output path is empty")),
    Case("study-output-empty-in-config", "outputs", parse_study(study_raw(output="")),
         Raises(StereosetEvalError, ("study.toml", "study.output"), "is empty")),
    Case("study-output-empty-on-command-line", "outputs",
         cli(lambda tmp: ["study", str(write(tmp, "s.toml", "")), "--output", " "]), Says(("--output",), "output path is empty")),
    Case("score-stale-predictions-of-another-benchmark", "outputs", _stale_predictions,
         Outcome(no_stale_predictions, "the folder is replaced as a set: no predictions.json of the StereoSet run "
                 "survives the CrowS-Pairs run"), needs_models=True),
    Case("report-rerun-replaces-its-own-output", "outputs", _rerun_report,
         Outcome(replaced_as_a_set, "an earlier report output (marker) is replaced whole; no temporary folder left")),
]

# ---- silent wrong numbers


def model_edit(name: str, *, config: dict | None = None, tokenizer_config: dict | None = None,
               file_bytes: tuple[str, Callable[[bytes], bytes]] | None = None) -> Callable[[Path], str]:
    def build(tmp: Path) -> str:
        dest = Path(model_copy(tmp, name))
        for fname, changes in (("config.json", config), ("tokenizer_config.json", tokenizer_config)):
            if changes:
                doc = json.loads((dest / fname).read_text())
                doc.update(changes)
                (dest / fname).write_text(json.dumps(doc))
        if file_bytes:
            fname, change = file_bytes
            (dest / fname).write_bytes(change((dest / fname).read_bytes()))
        return str(dest)

    return build


def ls_items(tmp: Path):
    return crows_items(tmp)


def merge_ls(tasks: list[dict]) -> Callable[[Path], Any]:
    from stereoset_eval.curation.labelstudio.merge import merge_annotations
    from stereoset_eval.curation.labelstudio.pitfalls import default_catalogue

    def run(tmp: Path):
        parsed = parse_ls(tasks)(tmp)
        return merge_annotations(crows_items(tmp), parsed, pitfalls=default_catalogue())

    return run


def _export_for_project(project: int) -> Callable[[Path], Any]:
    """``annotate merge --export FILE --project N`` where FILE is project 1's export."""
    import argparse

    def run(tmp: Path):
        from stereoset_eval.cli.commands.annotate import _read_export

        path = write(tmp, "export.json", json.dumps([{**ls_task(1, "crows:0", [ls_annotation(1, "a@x.org")]),
                                                      "project": 1}]))
        return _read_export(argparse.Namespace(export=path, url=None, project=project))

    return run


def _ann(**changes: Any) -> dict:
    return {**ls_annotation(1, "a@x.org"), **changes}


def flags_in_report(tmp: Path):
    from stereoset_eval.cli.main import main

    rows = [pair("He is strong.", "He is  strong."), '1,"The poor man stole.","The rich man stole.",stereo,gender']
    gold = crows_file(tmp, rows, name="gold.csv")
    scores = write(tmp, "s.csv", "sentence_id,score\ncrows:0:more,-1.0\ncrows:0:less,-1.0\ncrows:1:more,-2\n"
                                 "crows:1:less,-3\n")
    assert main(["report", "--benchmark", "crows-pairs", "--data", str(gold), "--scores", str(scores), "--out",
                 str(tmp / "out"), "--bootstrap", "20"]) == 0
    return json.loads((tmp / "out" / "report.json").read_text())


def lists_error_flags(doc: dict) -> None:
    (section,) = [s for s in doc["sections"] if s["key"].startswith("flags/")]
    assert section["data"]["per_rule"] == {"identical_sentences": 1}
    assert section["data"]["flags"][0]["item"] == "crows:0" and "included in every number" in section["data"]["how_counted"]


SILENT_CASES = [
    Case("model-config-fewer-layers-than-checkpoint", "silent",
         score(crows_items, model_edit("tiny-bert", config={"num_hidden_layers": 1}), "crows-nangia"),
         Raises(StereosetEvalError, ("{tmp}/tiny-bert-copy",), r"16 weight\(s\) that the config does not describe"),
         needs_models=True),
    Case("causal-config-fewer-layers-than-checkpoint", "silent",
         score(crows_items, model_edit("tiny-gpt2", config={"n_layer": 1}), "causal-ll"),
         Raises(StereosetEvalError, ("{tmp}/tiny-gpt2-copy", "transformer.h.1."), "config does not describe"),
         needs_models=True),
    Case("config-position-embeddings-disagree-with-weights", "silent",
         score(crows_items, model_edit("tiny-bert", config={"max_position_embeddings": 64}), "crows-nangia"),
         Raises(StereosetEvalError, ("{tmp}/tiny-bert-copy", "position_embeddings"), "disagree on 1 tensor shape"),
         needs_models=True),
    Case("mask-token-not-in-vocabulary", "silent",
         score(crows_items, model_edit("tiny-bert", tokenizer_config={"mask_token": "[MASKX]"}), "crows-nangia"),
         Raises(StereosetEvalError, ("{tmp}/tiny-bert-copy", "'[MASKX]'"), "is not in the model's vocabulary"),
         needs_models=True),
    Case("crows-pair-differs-only-by-whitespace", "silent", load_crows(crows_text([pair("He is strong.", "He  is strong. ")])),
         Outcome(flagged("identical_sentences", "error", normalised=True), "pair kept with flag identical_sentences "
                 "(error): 'sent_more and sent_less differ only by whitespace (identical after NFKC …)'")),
    Case("crows-pair-differs-only-by-zero-width", "silent",
         load_crows(crows_text([pair("He is strong.", "He is\u200b str\u200dong.")])),
         Outcome(flagged("identical_sentences", "error", normalised=True), "flag identical_sentences (error): "
                 "'differ only by zero-width/control characters'")),
    Case("crows-pair-differs-only-by-nul", "silent", load_crows(crows_text([pair("He is strong.", "He is\x00 strong.")])),
         Outcome(flagged("identical_sentences", "error", normalised=True), "flag identical_sentences (error) for a NUL")),
    Case("crows-pair-differs-only-by-fullwidth-forms", "silent",
         load_crows(crows_text([pair("He is strong.", "Ｈｅ is strong.")])),
         Outcome(flagged("identical_sentences", "error", normalised=True), "flag identical_sentences (error): NFKC")),
    Case("stereoset-options-identical-after-normalisation", "silent",
         load_table("t.csv", table(ROWS[0], ROWS[1].replace("The mother is rude.", "The mother is\u00a0caring."), ROWS[2])),
         Outcome(flagged("identical_sentences", "error"), "item kept with flag identical_sentences (error): "
                 "'stereotype and anti-stereotype differ only by whitespace'")),
    Case("report-lists-error-flags", "silent", flags_in_report,
         Outcome(lists_error_flags, "report section flags/CrowS-Pairs lists the flagged item and says it is included "
                 "in every number (tie rule)")),
    Case("json-null-sentence", "silent",
         load_json(official({**EXAMPLE, "sentences": [{**EXAMPLE["sentences"][0], "sentence": None}, *EXAMPLE["sentences"][1:]]})),
         Raises(DataFormatError, ("{tmp}/dev.json", "row 1", "field 'sentence'"), "is JSON null")),
    Case("json-number-as-target", "silent", load_json(official({**EXAMPLE, "target": 42})),
         Raises(DataFormatError, ("{tmp}/dev.json", "row 1", "field 'target'"), "is JSON int")),
    Case("jsonl-null-option", "silent", load_jsonl(json.dumps({**JSONL_LINE, "stereotype": None})),
         Raises(DataFormatError, ("{tmp}/dev.jsonl", "row 1", "field 'stereotype'"), "is JSON null")),
    Case("study-duplicate-model-ids", "silent",
         parse_study({**study_raw(), "models": [{"id": "gpt2", "name": "a"}, {"id": "gpt2", "name": "b"}]}),
         Raises(StereosetEvalError, ("study.toml", "models", "gpt2"), "listed twice.*count twice")),
    Case("ls-export-of-another-project", "silent",
         merge_ls([ls_task(1, "other:7", [ls_annotation(1, "a@x.org")])]),
         Raises(StereosetEvalError, ("'other:7'", "'crows:0'"), "shares no item id .*another project")),
    Case("ls-export-with-another-config", "silent",
         parse_ls([ls_task(1, "crows:0", [_ann(result=[{"from_name": "sentiment", "to_name": "text", "type": "choices",
                                                        "value": {"choices": ["Positive"]}}])])]),
         Raises(DataFormatError, ("{tmp}/export.json", "sentiment"), "none of this toolkit's")),
    Case("ls-export-mixing-projects", "silent",
         parse_ls([{**ls_task(1, "crows:0", [ls_annotation(1, "a@x.org")]), "project": 1},
                   {**ls_task(2, "crows:1", [ls_annotation(2, "a@x.org")]), "project": 2}]),
         Raises(DataFormatError, ("{tmp}/export.json",), "mixes tasks of 2 projects")),
    Case("ls-export-of-another-project-id", "silent", _export_for_project(5),
         Raises(StereosetEvalError, ("{tmp}/export.json", "--project 5"), "holds tasks of project 1")),
    Case("ls-annotation-without-annotator", "silent",
         parse_ls([ls_task(1, "crows:0", [{k: v for k, v in ls_annotation(1, "a@x.org").items() if k != "completed_by"}])]),
         Raises(DataFormatError, ("{tmp}/export.json", "row 0", "completed_by"), "has no annotator")),
    Case("ls-annotation-null", "silent", parse_ls([ls_task(1, "crows:0", [None])]),
         Raises(DataFormatError, ("{tmp}/export.json", "row 0", "annotations[0]"), "is null, expected an object")),
    Case("ls-annotation-string", "silent", parse_ls([ls_task(1, "crows:0", ["keep"])]),
         Raises(DataFormatError, ("{tmp}/export.json", "row 0", "annotations[0]"), "is a str, expected an object")),
    Case("ls-annotation-result-string", "silent", parse_ls([ls_task(1, "crows:0", [_ann(result="keep")])]),
         Raises(DataFormatError, ("{tmp}/export.json", "row 0", "result"), "'result' must be a list")),
]

# ---- faults below the toolkit (OS, SQLite, safetensors, tokenizer) through the CLI's error boundary


def _inventory(path: Callable[[Path], Path]) -> Callable[[Path], list[str]]:
    return lambda tmp: ["inventory", "--benchmark", "crows-pairs", "--data", str(path(tmp))]


def _symlink_loop(tmp: Path) -> Path:
    os.symlink(tmp / "b.csv", tmp / "a.csv")
    os.symlink(tmp / "a.csv", tmp / "b.csv")
    return tmp / "a.csv"


def _dangling(tmp: Path) -> Path:
    os.symlink(tmp / "gone.csv", tmp / "link.csv")
    return tmp / "link.csv"


def _fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "fifo.csv")
    return tmp / "fifo.csv"


def _dir(tmp: Path) -> Path:
    (tmp / "data.csv").mkdir()
    return tmp / "data.csv"


def _garbage_cache(tmp: Path) -> None:
    (tmp / "cache").mkdir()
    (tmp / "cache" / "scores.sqlite3").write_bytes(b"this is not a database " * 100)


def _truncated_cache(tmp: Path) -> None:
    from stereoset_eval.scoring.cache import ScoreCache

    with ScoreCache(tmp / "cache") as cache:
        cache.put_many({f"k{i}": {"score": i, "pad": "x" * 100} for i in range(3000)}, model="m", method="x")
    db = tmp / "cache" / "scores.sqlite3"
    with open(db, "r+b") as fh:  # noqa: a test input, not an output of the toolkit
        fh.truncate(db.stat().st_size // 3)


def _score_with(model: Callable[[Path], str] | str, setup: Callable[[Path], None] | None = None) -> Callable[[Path], list[str]]:
    def argv(tmp: Path) -> list[str]:
        if setup:
            setup(tmp)
        return _score_argv(tmp, model(tmp) if callable(model) else model)

    return argv


def _disk_full_report(tmp: Path) -> CliRun:
    """A first report, then a second one whose writes fail half-way like a full disk."""
    import errno
    from unittest import mock

    assert cli(lambda t: _report_argv(t, str(t / "out"), "--bootstrap", "20", "--title", "old"))(tmp).rc == 0
    real = Path.write_bytes

    def half_then_enospc(self: Path, data: bytes) -> int:
        real(self, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    with mock.patch.object(Path, "write_bytes", half_then_enospc):
        return cli(lambda t: _report_argv(t, str(t / "out"), "--bootstrap", "20", "--title", "new"))(tmp)


def old_report_intact(tmp: Path) -> None:
    assert json.loads((tmp / "out" / "report.json").read_text())["title"] == "old"
    assert "old" in (tmp / "out" / "report.md").read_text()
    assert not [p for p in tmp.iterdir() if p.name.endswith(".tmp")], "temporary folder left behind"


def _read_only_report(tmp: Path) -> CliRun:
    """The output folder's parent is on a read-only file system (creating anything there fails)."""
    import errno
    import tempfile
    from unittest import mock

    def read_only(*args: Any, dir: Any = None, **kwargs: Any) -> str:  # noqa: A002 - mkdtemp's name
        raise OSError(errno.EROFS, "Read-only file system", str(dir))

    with mock.patch.object(tempfile, "mkdtemp", read_only):
        return cli(lambda t: _report_argv(t, str(t / "out")))(tmp)


def _closed_pipe(tmp: Path) -> CliRun:
    """``stereoset-eval inventory … | head -c 0``: the reader is gone before anything is written."""
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "stereoset_eval.cli.main", "inventory", "--benchmark",
                               "crows-pairs", "--data", str(crows_file(tmp))], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    return CliRun(proc.returncode, "", proc.stderr)


def _not_a_folder_parent(tmp: Path) -> list[str]:
    write(tmp, "file.txt", "x")
    return _report_argv(tmp, str(tmp / "file.txt" / "out"))


FAULT_CASES = [
    Case("data-is-a-directory", "faults", cli(_inventory(_dir)), Says(("{tmp}/data.csv",), "is a directory")),
    Case("data-symlink-loop", "faults", cli(_inventory(_symlink_loop)), Says(("{tmp}/a.csv",), "symlink loop")),
    Case("data-dangling-symlink", "faults", cli(_inventory(_dangling)),
         Says(("{tmp}/link.csv", "gone.csv"), "is a symbolic link to .* which does not exist")),
    Case("data-fifo-does-not-hang", "faults", cli(_inventory(_fifo)),
         Says(("{tmp}/fifo.csv",), "is a FIFO or pipe .*give a regular file")),
    Case("report-out-under-a-file", "faults", cli(_not_a_folder_parent),
         Says(("{tmp}/file.txt",), "a part of the path, .* is a file, not a folder")),
    Case("report-disk-full-keeps-old-set", "faults", _disk_full_report,
         Says(("output '{tmp}/out'",), "writing the new set failed: no space left on the device.*left as it was",
              old_report_intact)),
    Case("report-read-only-file-system", "faults", _read_only_report,
         Says(("{tmp}",), "the file system is read-only: write the output somewhere else")),
    Case("stdout-pipe-closed", "faults", _closed_pipe, Says((), "the output pipe was closed")),
    Case("score-cache-not-a-database", "faults", cli(_score_with(str(MODELS / "tiny-bert"), _garbage_cache)),
         Says(("{tmp}/cache/scores.sqlite3",), "is corrupt .*delete it or pass --cache-dir"), needs_models=True),
    Case("score-cache-truncated", "faults", cli(_score_with(str(MODELS / "tiny-bert"), _truncated_cache)),
         Says(("{tmp}/cache/scores.sqlite3",), "is corrupt \\(database disk image is malformed\\).*--cache-dir"),
         needs_models=True),
    Case("score-cache-dir-is-a-file", "faults",
         cli(_score_with(str(MODELS / "tiny-bert"), lambda tmp: write(tmp, "cache", "not a folder"))),
         Says(("{tmp}/cache",), "is a file, not a folder: pass --cache-dir a folder"), needs_models=True),
    Case("study-config-not-utf8", "faults", cli(lambda tmp: ["study", str(write(tmp, "s.toml", b'title = "\xff"\n'))]),
         Says(("{tmp}/s.toml",), "not valid UTF-8 \\(byte 0xff on line 1\\)")),
    Case("score-truncated-safetensors", "faults",
         cli(_score_with(model_edit("tiny-bert", file_bytes=("model.safetensors", lambda b: b[: len(b) // 2])))),
         Says(("{tmp}/tiny-bert-copy",), "damaged or truncated"), needs_models=True),
    Case("score-damaged-tokenizer-json", "faults",
         cli(_score_with(model_edit("tiny-bert", file_bytes=("tokenizer.json", lambda b: b[:100])))),
         Says(("{tmp}/tiny-bert-copy",), "cannot load the tokenizer .*damaged or incomplete"), needs_models=True),
    Case("score-mask-token-not-in-vocabulary", "faults",
         cli(_score_with(model_edit("tiny-bert", tokenizer_config={"mask_token": "[MASKX]"}))),
         Says(("{tmp}/tiny-bert-copy", "[MASKX]"), "not in the model's vocabulary"), needs_models=True),
]

# ---- bounds on numbers


def _plot_interval_beside_point(tmp: Path) -> bytes:
    from stereoset_eval.analysis.report_plots import score_bars

    return score_bars(["a", "b"], [50.0, 40.0], [55.0, 20.0], [60.0, 30.0], ideal=50.0, title="t", xlabel="ss")


def _is_png(data: bytes) -> None:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"


def _huge_bootstrap(tmp: Path):
    import numpy as np

    from stereoset_eval.analysis.bootstrap import resample_within_strata

    return resample_within_strata(range(10_000_000), 100_000, np.random.default_rng(0))


def _report_bootstrap_10(tmp: Path):
    run = cli(lambda t: _report_argv(t, str(t / "out"), "--bootstrap", "10"))(tmp)
    assert run.rc == 0, run.err[-3000:]
    return json.loads((tmp / "out" / "report.json").read_text())


def _bootstrap_recorded(doc: dict) -> None:
    assert doc["provenance"]["options"]["bootstrap"]["n_resamples"] == 10


BOUND_CASES = [
    Case("report-bootstrap-10-plot", "bounds", _report_bootstrap_10,
         Outcome(_bootstrap_recorded, "report written; the plot draws intervals that need not contain the point")),
    Case("plot-interval-not-containing-the-point", "bounds", _plot_interval_beside_point,
         Outcome(_is_png, "figure drawn (interval from low to high, no negative error bar)")),
    Case("report-bootstrap-unbounded", "bounds", cli(lambda tmp: _report_argv(tmp, str(tmp / "out"), "--bootstrap", "100000000")),
         Says(("--bootstrap",), "at most 100,000")),
    Case("bootstrap-index-matrix-over-budget", "bounds", _huge_bootstrap,
         Raises(StereosetEvalError, ("100,000 x 10,000,000",), r"index matrix \(8000.0 GB, limit 4.3 GB\): lower --bootstrap")),
    Case("report-negative-seed", "bounds", cli(lambda tmp: _report_argv(tmp, str(tmp / "out"), "--seed", "-1")),
         Says(("seed",), "non-negative integer")),
    Case("score-batch-tokens-unbounded", "bounds",
         cli(lambda tmp: _score_argv(tmp, "x", "--batch-tokens", "1000000000000")),
         Says(("batch_tokens",), "at most 1,048,576")),
    Case("study-limit-zero", "bounds", cli(lambda tmp: ["study", str(write(tmp, "s.toml", "")), "--limit", "0"]),
         Says(("--limit",), "must be between 1 and")),
    Case("study-bootstrap-unbounded", "bounds", parse_study({**study_raw(), "analysis": {"bootstrap": 10**9}}),
         Raises(StereosetEvalError, ("study.toml", "analysis.bootstrap"), "at most 100,000")),
    Case("study-batch-tokens-unbounded", "bounds", parse_study(study_raw(batch_tokens=10**12)),
         Raises(StereosetEvalError, ("study.toml", "study.batch_tokens"), "at most 1,048,576")),
]

# ---- secrets


LEAKY_KEY = "ls-7f3a9c2e1b4d6f8a0c2e4b6d8f0a1c3e5b7d9f1a"  # 42 characters


class _EchoKeyAtTheCut(http.server.BaseHTTPRequestHandler):
    """Answers 400 with the caller's key placed across character 300 of the error body."""

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        key = (self.headers.get("Authorization") or "").split()[-1]
        body = json.dumps({"detail": "x" * 280 + key + " trailing"}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args: Any) -> None:
        pass


def _ls_message(url: str, key: str) -> str:
    from stereoset_eval.curation.labelstudio.server import LabelStudioError, connect

    try:
        connect(url, key, timeout=10, max_retries=0)
    except LabelStudioError as exc:
        return str(exc)
    raise AssertionError("no error")


def _key_at_the_cut(tmp: Path) -> str:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EchoKeyAtTheCut)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        return _ls_message(f"http://127.0.0.1:{server.server_address[1]}", LEAKY_KEY)
    finally:
        server.shutdown()
        server.server_close()


def no_key_fragment(message: str) -> None:
    fragments = [LEAKY_KEY[i:i + 8] for i in range(len(LEAKY_KEY) - 7)]
    assert not [f for f in fragments if f in message], f"part of the key leaked: {message}"
    assert "HTTP 400" in message


def _url_with_password(tmp: Path) -> str:
    return _ls_message(closed_port_url().replace("http://", "http://alice:hunter2-Passw0rd@"), "some-key-123")


def no_password(message: str) -> None:
    assert "hunter2-Passw0rd" not in message and "alice:" not in message and "***@127.0.0.1" in message, message


SECRET_CASES = [
    Case("ls-key-straddles-the-300-character-cut", "secrets", _key_at_the_cut,
         Outcome(no_key_fragment, "error line with the body scrubbed before it is cut: no 8 characters of the key")),
    Case("ls-url-with-user-password", "secrets", _url_with_password,
         Outcome(no_password, "error line names http://***@127.0.0.1:…, never the password")),
]

ROUND2_CASES = MEMORY_CASES + OUTPUT_CASES + SILENT_CASES + FAULT_CASES + BOUND_CASES + SECRET_CASES

CASES: list[Case] = CASES_ROUND1 + ROUND2_CASES

# ------------------------------------------------------------------ the checks


def _our_frame(tb) -> str:
    """File of the innermost traceback frame (where the exception was raised)."""
    frames = traceback.extract_tb(tb)
    return frames[-1].filename if frames else ""


def check_error(exc: BaseException, expect: Raises, tmp: Path) -> str:
    message = str(exc)
    assert isinstance(exc, StereosetEvalError), f"not a StereosetEvalError: {type(exc).__module__}.{type(exc).__name__}: {exc}"
    assert isinstance(exc, expect.cls), f"expected {expect.cls.__name__}, got {type(exc).__name__}: {exc}"
    assert type(exc).__module__.split(".")[0] in OUR_PACKAGES, f"raw library exception {type(exc)}"
    assert "\n" not in message, f"message is not one line: {message!r}"
    for name in expect.names:
        name = name.format(tmp=tmp)
        assert name in message, f"message does not name {name!r}: {message}"
    assert re.search(expect.problem, message), f"message does not say {expect.problem!r}: {message}"
    where = Path(_our_frame(exc.__traceback__)).resolve()
    assert REPO in where.parents and ".venv" not in where.parts, f"raised deep inside a library ({where})"
    shown_chain = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    assert shown_chain is None or type(shown_chain).__module__.split(".")[0] in OUR_PACKAGES, (
        f"a traceback would show the library exception {type(shown_chain).__name__}: {shown_chain}")
    return message


def run_case(case: Case, tmp: Path) -> str:
    """Run ``case``; return the one line the user sees. Fails the test if the expectation is unmet."""
    if case.needs_models and not MODELS.is_dir():
        pytest.skip(f"fixture models not found at {MODELS}")
    if isinstance(case.expect, Says):
        return check_says(case.run(tmp), case.expect, tmp)
    if isinstance(case.expect, Raises):
        try:
            result = case.run(tmp)
        except StereosetEvalError as exc:
            return "error: " + check_error(exc, case.expect, tmp)
        except Exception as exc:  # noqa: BLE001 - the point of the test: no raw library exception
            raise AssertionError(f"raw {type(exc).__module__}.{type(exc).__name__} escaped: {exc}") from exc
        raise AssertionError(f"no error; got {result!r:.300}")
    result = case.run(tmp)
    case.expect.check(result)
    return case.expect.says


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)


def test_suite_is_broad() -> None:
    areas = {c.area for c in CASES}
    assert len(CASES) >= 30 and {"loaders", "analysis", "annotation"} <= areas
    assert len({c.id for c in CASES}) == len(CASES)


# ------------------------------------------------------------------ through the CLI

CLI_CASES = [
    ("inventory-truncated-json", lambda tmp: ["inventory", "--benchmark", "stereoset", "--data",
                                              str(write(tmp, "dev.json", official(EXAMPLE)[:-40]))],
     ("{tmp}/dev.json", "malformed JSON")),
    ("inventory-non-utf8-csv", lambda tmp: ["inventory", "--benchmark", "stereoset", "--data",
                                            str(write(tmp, "t.csv", table(*ROWS).encode().replace(b"rude", b"r\xe9de")))],
     ("{tmp}/t.csv", "row 3", "not valid UTF-8")),
    ("evaluate-predictions-nan", lambda tmp: ["evaluate-predictions", "--gold", str(write(tmp, "gold.csv", table(*ROWS))),
                                              "--predictions", str(write(tmp, "p.json", '{"intrasentence": [{"id": "s1", "score": NaN}]}'))],
     ("{tmp}/p.json", "'s1'", "not a finite number")),
    ("evaluate-predictions-missing-ids", lambda tmp: ["evaluate-predictions", "--gold", str(write(tmp, "gold.csv", table(*ROWS))),
                                                      "--predictions", str(write(tmp, "p.json", json.dumps({"intrasentence": GOOD[:1]})))],
     ("{tmp}/p.json", "2 sentence id(s)", "have no score")),
    ("annotate-merge-json-min", lambda tmp: ["annotate", "agreement", "--export",
                                             str(write(tmp, "e.json", json.dumps([{"id": 1, "annotator": 1}])))],
     ("{tmp}/e.json", "JSON_MIN")),
    ("report-empty-after-filter", lambda tmp: ["report", "--benchmark", "stereoset", "--data",
                                               str(write(tmp, "gold.csv", table(*ROWS))), "--scores",
                                               str(write(tmp, "p.json", json.dumps({"intrasentence": GOOD}))),
                                               "--out", str(tmp / "out"), "--task", "intersentence"],
     ("{tmp}/gold.csv", "no intersentence items")),
    ("score-missing-model-folder", lambda tmp: _score_argv(tmp, str(tmp / "nope")),
     ("{tmp}/nope", "does not exist")),
    ("score-causal-model-for-masked-method", lambda tmp: _score_argv(tmp, str(MODELS / "tiny-gpt2"), "--method",
                                                                     "crows-nangia"),
     ("tiny-gpt2", "holds a causal language model")),
    ("score-sentence-too-long", lambda tmp: _score_argv(tmp, str(MODELS / "tiny-bert"), long=True),
     ("crows-nangia", "crows:0:more", "exceed the 128-token limit")),
]


def _score_argv(tmp: Path, model: str, *extra: str, long: bool = False) -> list[str]:
    rows = [f'0,"{"the nurse said she would come back tomorrow " * 20}.","He is.",stereo,gender'] if long else CROWS_ROWS
    data = write(tmp, "crows.csv", table(*rows, header=CROWS_HEADER))
    return ["score", "--benchmark", "crows-pairs", "--data", str(data), "--model", model, "--output", str(tmp / "out"),
            "--cache-dir", str(tmp / "cache"), "--no-progress", *extra]


@pytest.mark.parametrize("case", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_prints_one_error_line(case, tmp_path: Path, capsys) -> None:
    from stereoset_eval.cli.main import main

    name, argv, names = case
    if name.startswith("score-") and not MODELS.is_dir():
        pytest.skip(f"fixture models not found at {MODELS}")
    assert main(argv(tmp_path)) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    # exactly one error line, the last one (score announces what it starts before it); no traceback
    assert len(errors) == 1 and lines[-1] == errors[0], err
    assert "Traceback" not in err and not any(line.startswith("[transformers]") for line in lines), err
    for n in names:
        assert n.format(tmp=tmp_path) in errors[0], errors[0]
    assert not (tmp_path / "out" / "scores.csv").exists()


if __name__ == "__main__":  # the table for the closing note: case, area, what the user sees
    import tempfile

    import contextlib
    import io

    for case in CASES:
        with tempfile.TemporaryDirectory() as d:
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # what a command prints is not the table
                    line = run_case(case, Path(d)).replace(d, "<dir>")
            except BaseException as exc:  # noqa: BLE001 - print, keep going
                line = f"!! FAILS: {type(exc).__name__}: {exc}".replace(d, "<dir>")
        print(f"| {case.id} | {case.area} | {line} |")
