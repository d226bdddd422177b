"""Round trip against a real Label Studio server (label-studio 1.23.2 in its own venv).

The session fixture starts the server on a free port with a fresh data folder and waits
for ``/health``; it skips when Label Studio is not installed, except when
``STEREOSET_EVAL_REQUIRE_LABEL_STUDIO=1`` (CI), where a missing server fails. A second
annotator signs up through the web sign-up form and reads its own API token, so the two
annotators' annotations are made with two different tokens.

The scenario (``fixtures/labelstudio_plan.json``) annotates 22 curated gender pairs taken
from the real stereoset_eval.curation pipeline's output (``stereoset_eval.curation.pipeline.curate_files`` on StereoSet
dev and CrowS-Pairs: edits, rule flags and dimensions are the pipeline's own); the test
pulls the export, merges it and checks agreement against hand-computed kappas. It
writes ``fixtures/labelstudio_export.json`` (+ items and meta) when they are missing or
``STEREOSET_EVAL_UPDATE_FIXTURES=1``; otherwise it checks that the server reproduces
the committed export (same annotations and issues, ids and times aside).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

from stereoset_eval.foundation.items import Item

pytestmark = pytest.mark.labelstudio

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXPORT_FIXTURE = FIXTURES / "labelstudio_export.json"
ITEMS_FIXTURE = FIXTURES / "labelstudio_items.jsonl"
META_FIXTURE = FIXTURES / "labelstudio_meta.json"
PLAN = json.loads((FIXTURES / "labelstudio_plan.json").read_text(encoding="utf-8"))
EXPERT, CHECKER = "expert@stereoset-eval.example.org", "checker@stereoset-eval.example.org"
START_TIMEOUT_S = 180


# ---------------------------------------------------------------- the review items


def _catalogue_rules(item: Item, names: set[str]) -> set[str]:
    return {f.rule for f in item.flags if f.rule in names}


def slot_fits(item: Item, slot: dict[str, str], names: set[str]) -> bool:
    """Whether a curated item fits a slot of the plan (``source`` + ``select``).

    ``plain``: no automatic edit, no rule flag, a dimension; ``edited``: automatic edits
    (gender-swap normalisation), no rule flag, a dimension; ``needs_annotation``: no
    dimension cue, no rule flag; any other value names the rule flag the item must carry.
    """
    from stereoset_eval.curation.dimensions import NEEDS_ANNOTATION
    from stereoset_eval.curation.pairs import origin_source

    if origin_source(item) != slot["source"]:
        return False
    rules, kind = _catalogue_rules(item, names), slot["select"]
    if kind == "plain":
        return not item.provenance.edits and not rules and item.dimension is not None
    if kind == "edited":
        return bool(item.provenance.edits) and not rules and item.dimension is not None
    if kind == NEEDS_ANNOTATION:
        return item.dimension is None and not rules
    return kind in rules


def select_review_items(curated: list[Item], slots: list[dict[str, str]], pitfalls) -> list[Item]:
    """For each slot of the plan, the first curated item (pipeline order) that fits it.

    At most one item per source pair (``provenance.derived_from``), so the two instances
    of one normalised pair are never both reviewed.
    """
    names = {p.name for p in pitfalls}
    used: set[str] = set()
    out = []
    for slot in slots:
        item = next((it for it in curated if it.provenance.derived_from not in used and slot_fits(it, slot, names)),
                    None)
        assert item is not None, f"no curated item fits slot {slot} any more: revise the plan"
        used.add(item.provenance.derived_from)
        out.append(item)
    return out


def build_review_items(ids_csv: Path, crows_csv: Path, pitfalls) -> list[Item]:
    """The plan's 22 items from the real curation pipeline (``stereoset_eval.curation.pipeline.curate_files``).

    StereoSet dev (ids CSV) and CrowS-Pairs gender items curated together exactly as
    ``stereoset-eval curate`` does; flags, dimensions and edits are the pipeline's own.
    The scenario's annotations name words of these items, so once the fixture is committed the
    round trip reviews the committed items (made by the pipeline of rules 1.x) and the pipeline
    runs only to regenerate them (``STEREOSET_EVAL_UPDATE_FIXTURES=1`` with a plan revised for the
    current rules). That the current pipeline's output reaches Label Studio with its suggestions
    is tested in test_labelstudio_cli.py and test_labelstudio_suggestions.py.
    """
    from stereoset_eval.curation.labelstudio.items_io import read_items_jsonl

    if ITEMS_FIXTURE.exists() and os.environ.get("STEREOSET_EVAL_UPDATE_FIXTURES") != "1":
        return read_items_jsonl(ITEMS_FIXTURE)
    from stereoset_eval.curation.pipeline import curate_files

    result = curate_files([("stereoset", ids_csv), ("crows-pairs", crows_csv)])
    return select_review_items(result.items, PLAN["items"], pitfalls)


def catalogue():
    from stereoset_eval.curation.labelstudio.pitfalls import default_catalogue

    return default_catalogue()


def plan_names(pitfalls) -> dict[str, str]:
    """The plan's pitfall letters -> catalogue names (each must be in the catalogue)."""
    names = {p.name for p in pitfalls}
    missing = sorted(set(PLAN["pitfalls"].values()) - names)
    assert not missing, f"pitfalls of the plan not in the catalogue: {missing}"
    return dict(PLAN["pitfalls"])


def edited_text(proposed: str, change: str | list[str]) -> str:
    """The planned edit: ``" (<tag>)"`` inserted before the final full stop, or a whole-word replacement."""
    if isinstance(change, list):
        old, new = change
        text, n = re.subn(rf"\b{re.escape(old)}\b", new, proposed)
        assert n == 1, f"planned replacement {old!r} occurs {n} times in {proposed!r}"
        return text
    body = proposed.rstrip()
    return f"{body[:-1]} ({change})." if body.endswith(".") else f"{body} ({change})"


def plan_result(spec: dict[str, Any], item: Item, names: dict[str, str]) -> list[dict[str, Any]]:
    """Label Studio result list of one planned annotation."""
    from stereoset_eval.curation.labelstudio import config as cfg

    def choices(name, values):
        return {"from_name": name, "to_name": cfg.ANCHOR, "type": "choices", "value": {"choices": values}}

    result = [choices(cfg.DECISION, [spec["decision"]])]
    if "dimension" in spec:
        result.append(choices(cfg.DIMENSION, [PLAN["dimensions"][spec["dimension"]]]))
    if spec.get("pitfalls"):
        result.append(choices(cfg.PITFALLS, [names[p] for p in spec["pitfalls"]]))
    if spec["decision"] == "edit" and not spec.get("no_text"):
        for role in ("sent_more", "sent_less"):
            change = spec["edit"].get(role)
            text = edited_text(item.text(role), change) if change else item.text(role)
            result.append({"from_name": cfg.EDITED[role], "to_name": role, "type": "textarea",
                           "value": {"text": [text]}})
    if spec.get("comment"):
        result.append({"from_name": cfg.COMMENT, "to_name": cfg.ANCHOR, "type": "textarea",
                       "value": {"text": [spec["comment"]]}})
    return result


# ---------------------------------------------------------------- the server


@dataclasses.dataclass
class Server:
    url: str
    token: str  # the expert's (admin) token
    log: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _label_studio_binary() -> Path | None:
    env = os.environ.get("LABEL_STUDIO_BIN")
    path = Path(env) if env else REPO / ".venv-labelstudio" / "bin" / "label-studio"
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _get(url: str, timeout: float = 2.0):
    import httpx

    return httpx.get(url, timeout=timeout)


def _server_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LABEL_STUDIO_")}
    env.update(LABEL_STUDIO_LATEST_VERSION_CHECK="false", LABEL_STUDIO_COLLECT_ANALYTICS="false", SENTRY_DSN="",
               XDG_CONFIG_HOME=str(home / "config"), HOME=str(home))  # nothing written to the real home
    return env


def _label_studio_version(binary: Path) -> str:
    found = sorted(binary.parent.parent.glob("lib/python*/site-packages/label_studio-*.dist-info"))
    return found[-1].name.removesuffix(".dist-info") if found else "label_studio-unknown"


def migrated_template(binary: Path, tmp_home: Path) -> Path:
    """An empty, migrated Label Studio data folder, built once per Label Studio version.

    A cold start spends ~45 s of CPU on database migrations; later sessions copy this
    folder (no users in it) and start in seconds. Cached under the repo's ignored
    ``.cache/`` (override with ``STEREOSET_EVAL_LS_TEMPLATE``).
    """
    from stereoset_eval.foundation.atomic import atomic_directory

    root = Path(os.environ.get("STEREOSET_EVAL_LS_TEMPLATE") or REPO / ".cache" / "labelstudio-template")
    template = root / _label_studio_version(binary)
    if (template / "label_studio.sqlite3").is_file():
        return template
    with atomic_directory(template) as building:
        # `init` without a user only migrates; --quiet keeps it from prompting
        done = subprocess.run([str(binary), "init", "--quiet", "--data-dir", str(building)],
                              env=_server_env(tmp_home), capture_output=True, timeout=START_TIMEOUT_S)
        if done.returncode != 0 or not (building / "label_studio.sqlite3").is_file():
            pytest.fail(f"label-studio init failed ({done.returncode}):\n{done.stdout.decode(errors='replace')[-3000:]}")
    return template


def no_server() -> None:
    """Skip (a user's machine) or fail (CI sets STEREOSET_EVAL_REQUIRE_LABEL_STUDIO=1)."""
    reason = ("Label Studio is not installed (run `make labelstudio`, or set LABEL_STUDIO_BIN to the "
              "label-studio executable)")
    if os.environ.get("STEREOSET_EVAL_REQUIRE_LABEL_STUDIO") == "1":
        pytest.fail(f"STEREOSET_EVAL_REQUIRE_LABEL_STUDIO=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def label_studio(tmp_path_factory) -> Server:
    binary = _label_studio_binary()
    if binary is None:
        no_server()
    home = tmp_path_factory.mktemp("label-studio")
    shutil.copytree(migrated_template(binary, home), home / "data")
    port, token = _free_port(), secrets.token_hex(20)
    log = home / "server.log"
    cmd = [str(binary), "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port),
           "--data-dir", str(home / "data"), "--username", EXPERT, "--password", secrets.token_hex(8),
           "--user-token", token, "--enable-legacy-api-token"]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=_server_env(home),
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"label-studio exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
            try:
                if _get(f"{url}/health").status_code == 200:
                    break
            except Exception:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"label-studio did not answer /health on {url} within {START_TIMEOUT_S} s")
            time.sleep(0.5)
        # /health answers for any server: make sure it is ours (the busy-port fallback)
        me = _get_json(url, "/api/current-user/whoami", token)
        assert me["email"] == EXPERT, f"another server answers on {url}"
        yield Server(url, token, log)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


def _get_json(url: str, path: str, token: str) -> dict:
    import httpx

    r = httpx.get(f"{url}{path}", headers={"Authorization": f"Token {token}"}, timeout=10)
    r.raise_for_status()
    return r.json()


def sign_up(url: str, email: str) -> str:
    """Create a user through the web sign-up form; return its API token."""
    import httpx

    with httpx.Client(base_url=url, timeout=20) as web:
        web.get("/user/signup/")
        r = web.post("/user/signup/", data={"email": email, "password": secrets.token_hex(8),
                                             "csrfmiddlewaretoken": web.cookies["csrftoken"]},
                     headers={"Referer": f"{url}/user/signup/"})
        assert r.status_code == 302, f"sign-up failed: HTTP {r.status_code}"
        return web.get("/api/current-user/token").json()["token"]


@pytest.mark.parametrize("required, outcome", [("1", pytest.fail.Exception), ("", pytest.skip.Exception)])
def test_missing_server_fails_only_when_required(monkeypatch, required, outcome):
    monkeypatch.setenv("STEREOSET_EVAL_REQUIRE_LABEL_STUDIO", required)
    monkeypatch.setenv("LABEL_STUDIO_BIN", "/nonexistent/label-studio")
    assert _label_studio_binary() is None
    with pytest.raises(outcome, match="Label Studio is not installed"):
        no_server()


# ---------------------------------------------------------------- the round trip


@pytest.fixture(scope="session")
def round_trip(label_studio: Server, ids_csv, crows_csv):
    """Push the items, annotate per plan as two users, pull the export."""
    from stereoset_eval.curation.labelstudio.config import labeling_config
    from stereoset_eval.curation.labelstudio.server import connect, pull_export, push_tasks
    from stereoset_eval.curation.labelstudio.tasks import build_tasks

    pitfalls = catalogue()
    names = plan_names(pitfalls)
    items = build_review_items(ids_csv, crows_csv, pitfalls)
    xml = labeling_config(pitfalls)
    expert = connect(label_studio.url, label_studio.token)
    pushed = push_tasks(expert, build_tasks(items, pitfalls=pitfalls), config_xml=xml, title="gender pairs review")
    checker_token = sign_up(label_studio.url, CHECKER)
    checker = connect(label_studio.url, checker_token)
    tasks = {t.data["item_id"]: t.id for t in expert.client.tasks.list(project=pushed.project_id)}
    made = []
    for spec in PLAN["annotations"]:
        item = items[spec["item"]]
        client = (expert if spec["by"] == "A" else checker).client
        if spec.get("cancelled"):
            ann = client.annotations.create(id=tasks[item.id], result=[], was_cancelled=True)
        elif spec.get("empty"):
            ann = client.annotations.create(id=tasks[item.id], result=[])
        else:
            ann = client.annotations.create(id=tasks[item.id], result=plan_result(spec, item, names))
        made.append((spec["by"], ann.completed_by))
    export, schema = pull_export(expert, pushed.project_id)
    return {"items": items, "pitfalls": pitfalls, "names": names, "xml": xml, "project": pushed.project_id,
            "pushed": pushed, "export": export, "schema": schema, "made": made, "expert": expert,
            "checker": checker, "checker_token": checker_token, "server": label_studio}


def test_project_matches_generated_config_and_tasks(round_trip):
    rt = round_trip
    project = rt["expert"].client.projects.get(id=rt["project"])
    assert project.label_config.strip() == rt["xml"].strip()
    assert project.maximum_annotations == 2  # overlap: both annotators see every task
    assert rt["pushed"].n_tasks == 22 == len(rt["export"])
    from stereoset_eval.curation.labelstudio.pitfalls import model_version

    versions = {p["model_version"] for t in rt["export"] for p in t["predictions"]}
    assert versions == {model_version(rt["pitfalls"])}
    assert all(isinstance(p["result"], list) and p["result"] for t in rt["export"] for p in t["predictions"])
    assert set(rt["schema"].pitfall_names) == {p.name for p in rt["pitfalls"]}


def test_annotations_belong_to_two_users(round_trip):
    ids = {by: {cb for b, cb in round_trip["made"] if b == by} for by in ("A", "B")}
    assert len(ids["A"]) == 1 and len(ids["B"]) == 1 and ids["A"] != ids["B"]
    annotators = {a["completed_by"]["email"] for t in round_trip["export"] for a in t["annotations"]}
    assert annotators == {EXPERT, CHECKER}


def _semantic(parsed) -> tuple[list, list]:
    anns = sorted((a.item_id, a.annotator, a.decision, a.dimension, tuple(sorted(a.pitfalls)),
                   tuple(sorted(a.edited.items())), a.comment) for a in parsed.annotations)
    issues = sorted((i.kind, i.item_id or "", i.annotator or "", i.detail.split(" annotation ")[0]) for i in parsed.issues)
    return anns, issues


def test_pulled_export_parses_merges_and_matches_fixture(round_trip, tmp_path):
    from stereoset_eval.curation.labelstudio.annotations import load_export, parse_export
    from stereoset_eval.curation.labelstudio.items_io import write_items_jsonl
    from stereoset_eval.foundation.atomic import atomic_write_json

    rt = round_trip
    parsed = parse_export(rt["export"], pitfall_names=rt["schema"].pitfall_names)
    counts = parsed.issue_counts()
    assert counts == {"never_annotated": 2, "cancelled": 1, "empty": 1, "superseded": 1, "missing_field": 3,
                      "unknown_value": 0, "unknown_item": 0}
    if os.environ.get("STEREOSET_EVAL_UPDATE_FIXTURES") == "1" or not EXPORT_FIXTURE.exists():
        atomic_write_json(EXPORT_FIXTURE, rt["export"])
        write_items_jsonl(ITEMS_FIXTURE, rt["items"])
        atomic_write_json(META_FIXTURE, {
            "label_studio": "1.23.2", "annotators": {"A": EXPERT, "B": CHECKER}, "pitfalls": rt["names"],
            "pitfall_names": list(rt["schema"].pitfall_names), "project_config": rt["xml"],
        })
    from stereoset_eval.curation.labelstudio.items_io import read_items_jsonl

    committed_items = [(it.id, it.text("sent_more"), it.text("sent_less")) for it in read_items_jsonl(ITEMS_FIXTURE)]
    assert committed_items == [(it.id, it.text("sent_more"), it.text("sent_less")) for it in rt["items"]], (
        "the curation pipeline now makes other items than the committed fixture: regenerate it with "
        "STEREOSET_EVAL_UPDATE_FIXTURES=1")
    committed = parse_export(load_export(EXPORT_FIXTURE), pitfall_names=rt["schema"].pitfall_names)
    assert _semantic(committed) == _semantic(parsed), "the server no longer reproduces the committed fixture"


def test_agreement_and_merge_from_server(round_trip):
    from stereoset_eval.curation.labelstudio.agreement import pairwise_agreement
    from stereoset_eval.curation.labelstudio.annotations import parse_export
    from stereoset_eval.curation.labelstudio.merge import merge_annotations

    rt = round_trip
    parsed = parse_export(rt["export"], pitfall_names=rt["schema"].pitfall_names)
    table = pairwise_agreement(parsed.annotations, pitfall_names=rt["schema"].pitfall_names).set_index("field")
    names = rt["names"]
    # hand-computed in tests/test_labelstudio_agreement.py (same plan)
    expected = {"decision": (18, 50 / 77), "dimension": (17, 71 / 88), f"pitfall:{names['X']}": (18, 3 / 5),
                f"pitfall:{names['Y']}": (18, 16 / 25), f"pitfall:{names['W']}": (18, 0.0)}
    for field, (n, kappa) in expected.items():
        assert (table.loc[field, "n"], table.loc[field, "kappa"]) == (n, pytest.approx(kappa)), field
    others = [f"pitfall:{p}" for p in rt["schema"].pitfall_names if p not in names.values()]
    assert all(math.isnan(table.loc[f, "kappa"]) for f in others)

    result = merge_annotations(rt["items"], parsed, pitfalls=rt["pitfalls"])
    ids = [it.id for it in rt["items"]]
    assert sorted(result.removed["item_id"]) == sorted(ids[i] for i in (5, 14, 15, 17, 21))
    assert len(result.items) == 17
    decisions = result.decisions.set_index("item_id")
    # the rules proposed removing item 6 (attribute is a gender term); both annotators kept it
    assert decisions.loc[ids[6], "decision"] == "keep" and decisions.loc[ids[6], "decision_source"] == "human"
    assert decisions.loc[ids[6], "pitfalls_rejected"] == "attribute_is_gender_term"
    curated = {it.id: it for it in result.items}
    assert curated[ids[13]].text("sent_less") == edited_text(rt["items"][13].text("sent_less"), "B-13")
    review = [f for f in curated[ids[13]].flags if f.rule == "human_review"][0]
    assert review.evidence["annotator"] == CHECKER and review.evidence["annotation_id"]


# ---------------------------------------------------------------- CLI, errors, the key


def _run_cli(argv: list[str], capsys) -> tuple[int, str]:
    from stereoset_eval.cli.main import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out + out.err


def test_cli_round_trip_never_shows_the_key(round_trip, tmp_path, capsys, caplog, monkeypatch):
    from stereoset_eval.curation.export import pairs_frame, write_csv
    from stereoset_eval.curation.labelstudio.items_io import write_items_jsonl

    rt = round_trip
    url, key = rt["server"].url, rt["server"].token
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", key)
    caplog.set_level(logging.DEBUG)
    pairs_file = tmp_path / "v1" / "pairs.csv"  # as `stereoset-eval curate` writes it
    write_csv(pairs_frame(rt["items"][:3]), pairs_file)
    texts = []
    code, text = _run_cli(["annotate", "push", "--items", str(pairs_file), "--url", url, "--title", "cli push",
                           "--tasks-out", str(tmp_path / "tasks.json")], capsys)
    texts.append(text)
    assert code == 0 and "pushed 3 tasks" in text
    pushed = json.loads((tmp_path / "tasks.json").read_text(encoding="utf-8"))
    assert [t["data"]["item_id"] for t in pushed] == [it.id for it in rt["items"][:3]]
    code, text = _run_cli(["annotate", "pull", "--url", url, "--project", str(rt["project"]),
                           "--out", str(tmp_path / "export.json")], capsys)
    texts.append(text)
    assert code == 0 and "22 tasks" in text
    all_items = write_items_jsonl(tmp_path / "all.jsonl", rt["items"])
    code, text = _run_cli(["annotate", "merge", "--items", str(all_items), "--url", url, "--project",
                           str(rt["project"]), "--out", str(tmp_path / "merged"), "--adjudication", "primary",
                           "--primary-annotator", EXPERT], capsys)
    texts.append(text)
    assert code == 0 and "removed 3" in text and (tmp_path / "merged" / "hf_dataset").is_dir()
    code, text = _run_cli(["annotate", "agreement", "--url", url, "--project", str(rt["project"])], capsys)
    texts.append(text)
    assert code == 0 and "0.649" in text  # decision kappa 50/77
    written = [p.read_text(encoding="utf-8", errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    for text in texts + written + [caplog.text, json.dumps(rt["export"])]:
        assert key not in text and rt["checker_token"] not in text


def _assert_clean(exc: BaseException, key: str) -> None:
    full = "".join(traceback.format_exception(exc))
    assert key not in str(exc) and key not in full


def test_bad_or_missing_key(round_trip, capsys, monkeypatch):
    from stereoset_eval.curation.labelstudio.server import LabelStudioAuthError, connect

    url = round_trip["server"].url
    bad = secrets.token_hex(20)
    with pytest.raises(LabelStudioAuthError) as info:
        connect(url, bad)
    assert url in str(info.value) and "refused" in str(info.value)
    _assert_clean(info.value, bad)
    with pytest.raises(LabelStudioAuthError, match="LABEL_STUDIO_API_KEY"):
        connect(url, "")
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    code, text = _run_cli(["annotate", "pull", "--url", url, "--project", "1", "--out", "x.json"], capsys)
    assert code == 2 and text.startswith("error: Label Studio at") and "LABEL_STUDIO_API_KEY" in text
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", bad)
    code, text = _run_cli(["annotate", "agreement", "--url", url, "--project", "1"], capsys)
    assert code == 2 and url in text and bad not in text


def test_project_with_another_config_or_absent(round_trip):
    from stereoset_eval.curation.labelstudio.server import (
        LabelStudioConfigMismatchError, LabelStudioNotFoundError, pull_export, push_tasks,
    )
    from stereoset_eval.curation.labelstudio.tasks import build_tasks

    rt = round_trip
    conn = rt["expert"]
    other = conn.client.projects.create(
        title="sentiment", label_config='<View><Text name="text" value="$text"/><Choices name="sentiment" '
                                        'toName="text"><Choice value="positive"/></Choices></View>')
    with pytest.raises(LabelStudioConfigMismatchError) as info:
        pull_export(conn, other.id)
    msg = str(info.value)
    assert rt["server"].url in msg and f"project {other.id}" in msg and "missing control 'decision'" in msg
    _assert_clean(info.value, rt["server"].token)
    with pytest.raises(LabelStudioConfigMismatchError):
        push_tasks(conn, build_tasks(rt["items"][:1], pitfalls=rt["pitfalls"]), config_xml=rt["xml"],
                   project_id=other.id)
    with pytest.raises(LabelStudioNotFoundError, match="project 999999"):
        pull_export(conn, 999999)
    # a project made by the toolkit accepts more tasks
    tasks = build_tasks(rt["items"][:2], pitfalls=rt["pitfalls"])
    first = push_tasks(conn, tasks[:1], config_xml=rt["xml"], title="two steps")
    second = push_tasks(conn, tasks[1:], config_xml=rt["xml"], project_id=first.project_id)
    assert second.project_id == first.project_id
    assert len(list(conn.client.tasks.list(project=first.project_id))) == 2


# ---------------------------------------------------------------- tokens: personal access (1.23 default) and legacy


def test_personal_access_token_connects_and_pushes(label_studio: Server):
    """Label Studio 1.23's default token kind: a personal access token (a JWT refresh token).

    Created through the API as the web page "Account & Settings → Personal Access Token" does;
    the SDK trades it for short-lived access tokens. The legacy token (``Token …``) is what the
    round trip above uses.
    """
    import httpx

    from stereoset_eval.curation.labelstudio.config import labeling_config
    from stereoset_eval.curation.labelstudio.server import connect, push_tasks
    from stereoset_eval.curation.labelstudio.tasks import build_tasks

    r = httpx.post(f"{label_studio.url}/api/token/", headers={"Authorization": f"Token {label_studio.token}"},
                   timeout=10)
    assert r.status_code in (200, 201), r.text[:300]
    pat = r.json()["token"]
    assert pat.count(".") == 2 and pat != label_studio.token  # a JWT, not the legacy token
    conn = connect(label_studio.url, pat)
    assert conn.user == EXPERT
    pitfalls = catalogue()
    items = build_review_items_small(pitfalls)
    pushed = push_tasks(conn, build_tasks(items, pitfalls=pitfalls), config_xml=labeling_config(pitfalls),
                        title="pushed with a personal access token")
    assert pushed.n_tasks == len(items) > 0


def build_review_items_small(pitfalls):
    """Two curated pairs from the fixture items file (no server-side state needed)."""
    from stereoset_eval.curation.labelstudio.items_io import load_review_items

    return load_review_items(Path(__file__).parent / "fixtures" / "labelstudio_items.jsonl")[:2]
