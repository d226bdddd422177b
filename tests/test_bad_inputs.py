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
    expect: Raises | Outcome
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

CASES: list[Case] = LOADER_CASES + ANALYSIS_CASES + ANNOTATION_CASES + SCORING_CASES

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

    for case in CASES:
        with tempfile.TemporaryDirectory() as d:
            try:
                line = run_case(case, Path(d)).replace(d, "<dir>")
            except BaseException as exc:  # noqa: BLE001 - print, keep going
                line = f"!! FAILS: {type(exc).__name__}: {exc}".replace(d, "<dir>")
        print(f"| {case.id} | {case.area} | {line} |")
