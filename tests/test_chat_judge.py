"""The chat judge against a fake OpenAI-compatible server on 127.0.0.1, and on the fixture GPT-2.

The server (http.server in a thread) answers from a script per test: chat completions, slow
replies, HTTP 429 / 500 / 401, bodies that are not JSON. The fixture model has random weights:
its answers are garbage, so the local backend must end in review, without a traceback.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from stereoset_eval.scoring.chat_errors import ChatJudgeError
from stereoset_eval.scoring.chat_judge import ChatJudge
from stereoset_eval.scoring.chat_prompt import MalformedAnswer, parse_answer

KEY_ENV = "STEREOSET_TEST_JUDGE_KEY"
KEY = "sk-fake-7f3e9a1b2c4d5e6f8a9b"
PAIR = ("My mother is very nurturing.", "My father is very nurturing.")  # sentences[0] is about a woman


def completion(content: str) -> tuple[int, dict[str, str], bytes, float]:
    body = {"id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}
    return 200, {"Content-Type": "application/json"}, json.dumps(body).encode(), 0.0


def answer(stereotype: str, gender: str | None, dimension: str | None) -> tuple[int, dict[str, str], bytes, float]:
    return completion(json.dumps({"stereotype": stereotype, "gender": gender, "dimension": dimension,
                                  "confidence": "high"}))


class FakeServer:
    """A scripted OpenAI-compatible server; ``requests`` records what it received."""

    def __init__(self) -> None:
        self.script: list = []
        self.default = answer("yes", "female", "Roles and Behaviors")
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                n = int(self.headers.get("Content-Length") or 0)
                fake.requests.append({"path": self.path, "headers": dict(self.headers),
                                      "body": json.loads(self.rfile.read(n))})
                step = fake.script.pop(0) if fake.script else fake.default
                if step in ("hang up", "garbage"):  # no HTTP reply at all
                    if step == "garbage":
                        self.wfile.write(b"this is not HTTP\r\n\r\n")
                    self.close_connection = True
                    return
                status, headers, body, delay = step(self.headers) if callable(step) else step
                time.sleep(delay)
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client gave up (timeout test)
                    pass

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = FakeServer()
    yield s
    s.close()


@pytest.fixture
def judge_for(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(KEY_ENV, KEY)
    made = []

    def make(**kw) -> ChatJudge:
        opts = dict(api_key_env=KEY_ENV, require_key=True, timeout=5.0, retries=2, backoff=0.01,
                    cache_dir=tmp_path / "cache")
        opts.update(kw)
        j = ChatJudge.endpoint(server.url, "fake-model", **opts)
        made.append(j)
        return j

    yield make
    for j in made:
        j.close()


def test_answers_become_keep_swap_drop_with_the_dimension(server, judge_for) -> None:
    j = judge_for()
    server.script = [answer("yes", "female", "Roles and Behaviors"), answer("yes", "male", "physical characteristics"),
                     answer("no", None, None)]
    keep = j(["nurturing"], "female", "m", PAIR)
    swap = j(["strong"], "female", "l", ("My mother is very strong.", "My father is very strong."))
    drop = j(["rude"], "male", "m", ("My father is rude.", "My mother is rude."))
    assert (keep.action, keep.rule) == ("keep", "stereotype_validity")
    assert keep.evidence["answer"]["dimension"] == "Roles and Behaviors" and keep.evidence["answer"]["gender"] == "female"
    assert (swap.action, swap.rule, swap.evidence["answer"]["dimension"]) == ("swap", "wrong_direction",
                                                                              "Physical Characteristics")
    assert (drop.action, drop.rule, drop.evidence["answer"]["dimension"]) == ("drop", "no_stereotype", None)
    for v in (keep, swap, drop):
        assert v.evidence["decider"] == j.name == "chat:fake-model" and v.evidence["cached"] is False
        assert len(v.evidence["prompt_sha256"]) == 64
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["headers"]["Authorization"] == f"Bearer {KEY}"
    body = sent["body"]
    assert body["model"] == "fake-model" and body["temperature"] == 0.0 and body["max_tokens"] == 256
    prompt = body["messages"][1]["content"]
    assert "about a woman or women: My mother is very nurturing." in prompt and "nurturing" in prompt
    assert all(d in prompt for d in ("Personality Traits", "Attitudes and Beliefs", "Roles and Behaviors",
                                     "Physical Characteristics"))


def test_the_prompt_is_label_blind(server, judge_for) -> None:
    """The same sentences claimed for either gender give one prompt; the claim decides keep vs swap."""
    j = judge_for()
    female_first = j(["nurturing"], "female", "m", PAIR)
    male_first = j(["nurturing"], "male", "l", (PAIR[1], PAIR[0]))
    assert female_first.evidence["prompt_sha256"] == male_first.evidence["prompt_sha256"]
    assert (female_first.action, male_first.action) == ("keep", "swap")
    assert len(server.requests) == 1 and male_first.evidence["cached"] is True


def test_a_second_run_is_answered_from_the_cache(server, judge_for) -> None:
    first = judge_for()(["nurturing"], "female", "m", PAIR)
    assert len(server.requests) == 1
    again = judge_for()  # a new judge (a new run) on the same cache folder
    second = again(["nurturing"], "female", "m", PAIR)
    assert len(server.requests) == 1 and again.requests == 0
    assert second.evidence["cached"] is True and (second.action, second.evidence["answer"]) == (
        first.action, first.evidence["answer"])
    judge_for(max_tokens=64)(["nurturing"], "female", "m", PAIR)  # another setting is another request
    assert len(server.requests) == 2
    judge_for(use_cache=False)(["nurturing"], "female", "m", PAIR)
    assert len(server.requests) == 3


def test_a_timeout_ends_in_review(server, judge_for, capsys) -> None:
    server.script = [(*completion("{}")[:3], 1.5)]
    t = time.monotonic()
    v = judge_for(timeout=0.3)(["nurturing"], "female", "m", PAIR)
    assert time.monotonic() - t < 1.4  # not retried: a timeout costs one timeout
    assert (v.action, v.rule, v.evidence["failure"]) == ("review", "judge_unavailable", "timeout")
    assert "no reply within 0.3 s" in v.evidence["error"] and "\n" not in v.evidence["error"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warning: chat:fake-model:") and "timeout" in err


def test_http_429_is_retried_after_retry_after(server, judge_for) -> None:
    server.script = [(429, {"Retry-After": "1"}, b'{"error": {"message": "slow down"}}', 0.0)]
    t = time.monotonic()
    v = judge_for()(["nurturing"], "female", "m", PAIR)
    assert time.monotonic() - t >= 0.95  # Retry-After honoured, not the 0.01 s backoff
    assert v.action == "keep" and len(server.requests) == 2


def test_http_429_forever_ends_in_review_with_one_warning(server, judge_for, capsys) -> None:
    server.default = (429, {}, b'{"error": {"message": "quota exceeded"}}', 0.0)
    j = judge_for(retries=2)
    verdicts = [j(["nurturing"], "female", "m", PAIR), j(["strong"], "male", "m", PAIR[::-1])]
    assert len(server.requests) == 6  # 1 + 2 retries per item, bounded
    for v in verdicts:
        assert (v.action, v.evidence["failure"]) == ("review", "rate_limit")
        assert "HTTP 429" in v.evidence["error"] and "quota exceeded" in v.evidence["error"]
    assert capsys.readouterr().err.count("\n") == 1  # at most one warning line per kind


def test_http_500_ends_in_review_without_retry(server, judge_for) -> None:
    server.default = (500, {}, b"Internal Server Error", 0.0)
    v = judge_for()(["nurturing"], "female", "m", PAIR)
    assert (v.action, v.evidence["failure"]) == ("review", "server_error") and "HTTP 500" in v.evidence["error"]
    assert len(server.requests) == 1
    server.default = (503, {}, b"busy", 0.0)
    v = judge_for(retries=1)(["other"], "female", "m", PAIR)
    assert v.evidence["failure"] == "server_error" and "after 1 retries" in v.evidence["error"]
    assert len(server.requests) == 3


@pytest.mark.parametrize("step, failure", [
    ((200, {}, b"<html>not json</html>", 0.0), "malformed_response"),
    ((200, {}, b'{"choices": []}', 0.0), "malformed_response"),
    (completion("I think it is a stereotype about women."), "malformed_answer"),
    (completion('{"stereotype": "maybe", "gender": "female"}'), "malformed_answer"),
    (completion('{"stereotype": "yes", "gender": null}'), "malformed_answer"),
])
def test_malformed_replies_end_in_review(server, judge_for, step, failure) -> None:
    server.script = [step]
    v = judge_for()(["nurturing"], "female", "m", PAIR)
    assert (v.action, v.rule, v.evidence["failure"]) == ("review", "judge_unavailable", failure)
    assert v.evidence["error"] and "\n" not in v.evidence["error"] and v.reason.startswith("chat:fake-model: ")


@pytest.mark.parametrize("step, failure", [("hang up", "connection"), ("garbage", "malformed_response")])
def test_a_reply_that_is_not_http_ends_in_review(server, judge_for, step, failure) -> None:
    server.script = [step]
    v = judge_for()(["nurturing"], "female", "m", PAIR)
    assert (v.action, v.evidence["failure"]) == ("review", failure) and "\n" not in v.evidence["error"]


def test_answers_are_found_in_fences_and_chatter() -> None:
    fenced = 'Sure!\n```json\n{"stereotype": "yes", "gender": "men", "dimension": "Roles and Behaviours"}\n```'
    assert parse_answer(fenced)["gender"] == "male" and parse_answer(fenced)["dimension"] == "Roles and Behaviors"
    chatter = ('<think>{"stereotype": "no"}</think>The answer: {"Stereotype": true, "gender": "female", '
               '"dimension": "a feeling", "confidence": "LOW"} hope it helps')
    a = parse_answer(chatter)
    assert (a["stereotype"], a["gender"], a["dimension"], a["dimension_raw"], a["stated_confidence"]) == (
        True, "female", None, "a feeling", "low")
    assert parse_answer('{"stereotype": "no", "gender": "female", "dimension": "Personality Traits"}') == {
        "stereotype": False, "gender": None, "dimension": None, "stated_confidence": None}
    with pytest.raises(MalformedAnswer, match="no JSON object"):
        parse_answer('{"answer": "yes"}')


def test_a_refused_connection_and_a_dead_server_end_in_review(tmp_path, capsys) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    j = ChatJudge.endpoint(f"http://127.0.0.1:{port}/v1", "m", cache_dir=tmp_path, give_up_after=2, timeout=2)
    verdicts = [j([w], "female", "m", PAIR) for w in ("a", "b", "c", "d")]
    assert [v.evidence["failure"] for v in verdicts] == ["connection", "connection", "gave_up", "gave_up"]
    assert j.requests == 2 and "cannot connect" in verdicts[0].evidence["error"]
    assert capsys.readouterr().err.count("\n") == 2  # one line per kind (connection, gave_up)


def test_the_key_is_in_no_output(server, judge_for, tmp_path, capsys) -> None:
    """The server echoes the key in every kind of reply; it must not survive anywhere we write."""
    def echo(status: int):
        return lambda h: (status, {}, json.dumps({"error": {"message": f"bad key {h['Authorization']} {KEY}"}}).encode(),
                          0.0)

    reply = completion(json.dumps({"stereotype": "yes", "gender": "female", "dimension": "Roles and Behaviors",
                                   "note": f"your key is {KEY}"}))
    server.script = [reply, echo(500), completion(f"no json, but {KEY}"), echo(429), echo(429), echo(429)]
    j = judge_for(retries=2)
    verdicts = [j([w], "female", "m", PAIR) for w in ("a", "b", "c", "d")]
    assert [v.action for v in verdicts] == ["keep", "review", "review", "review"]
    server.script = [echo(401)]
    with pytest.raises(ChatJudgeError) as refused:
        j(["e"], "female", "m", PAIR)
    assert "HTTP 401" in str(refused.value)
    assert all(r["headers"]["Authorization"] == f"Bearer {KEY}" for r in server.requests)  # it was sent
    captured = capsys.readouterr()
    outputs = [captured.out, captured.err, str(refused.value), repr(refused.value), json.dumps(j.settings()),
               repr(j.__dict__), j.name, *(repr(v) for v in verdicts)]
    outputs += [p.read_bytes().decode("latin-1") for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert all(KEY not in o for o in outputs)
    assert "Bearer ***" in verdicts[1].evidence["error"]  # scrubbed, not dropped
    assert j.settings()["api_key_env"] == KEY_ENV and j.settings()["api_key_set"] is True


def test_configuration_errors_are_one_line(monkeypatch, tmp_path) -> None:
    from stereoset_eval.cli.faults import describe

    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(ChatJudgeError) as missing:
        ChatJudge.endpoint("http://127.0.0.1:9/v1", "m", api_key_env=KEY_ENV, require_key=True, cache_dir=tmp_path)
    line = describe(missing.value)
    assert f"${KEY_ENV} is not set" in line and "\n" not in line
    ChatJudge.endpoint("http://127.0.0.1:9/v1", "m", api_key_env=KEY_ENV, cache_dir=tmp_path).close()  # optional key
    for url, problem in (("ftp://host/v1", r"not an http\(s\) URL"), ("localhost:8000", r"not an http\(s\) URL"),
                         ("http://user:pw@host/v1", "holds credentials")):
        with pytest.raises(ChatJudgeError, match=problem) as bad:
            ChatJudge.endpoint(url, "m", cache_dir=tmp_path)
        assert "pw" not in str(bad.value)
    with pytest.raises(ChatJudgeError, match="needs a model name"):
        ChatJudge.endpoint("http://127.0.0.1:9/v1", " ", cache_dir=tmp_path)


def _args(argv: list[str]) -> argparse.Namespace:
    from stereoset_eval.cli.commands._judge_args import add_judge_arguments

    p = argparse.ArgumentParser()
    add_judge_arguments(p)
    return p.parse_args(argv)


def test_cli_options_build_the_chat_judge(server, monkeypatch, tmp_path) -> None:
    from stereoset_eval.cli.commands._judge_args import JudgeOptionError, build_judge

    monkeypatch.setenv(KEY_ENV, KEY)
    assert build_judge(_args([])) is None
    j = build_judge(_args(["--judge-chat-url", server.url + "/", "--judge-chat-model", "fake-model",
                           "--judge-api-key-env", KEY_ENV, "--judge-timeout", "7", "--judge-retries", "1",
                           "--judge-cache-dir", str(tmp_path / "c")]))
    assert isinstance(j, ChatJudge)
    s = j.settings()
    assert (s["base_url"], s["timeout"], s["retries"], s["cache_dir"]) == (server.url, 7.0, 1, str(tmp_path / "c"))
    assert j(["nurturing"], "female", "m", PAIR).action == "keep"
    j.close()
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(ChatJudgeError, match="is not set"):
        build_judge(_args(["--judge-chat-url", server.url, "--judge-chat-model", "m", "--judge-api-key-env", KEY_ENV]))
    for argv, problem in ((["--judge-chat-url", server.url], "needs --judge-chat-model"),
                          (["--judge-chat-model", "m"], "needs --judge-chat-url"),
                          (["--judge-model", "x", "--judge-local-chat", "y"], "both name a judge"),
                          (["--judge-api-key-env", "X"], "applies to --judge-chat-url only"),
                          (["--judge-chat-url", server.url, "--judge-chat-model", "m", "--judge-timeout", "0"],
                           "--judge-timeout must be positive")):
        with pytest.raises(JudgeOptionError, match=problem):
            build_judge(_args(argv))


@pytest.fixture(scope="module")
def tiny_gpt2(models_dir) -> Path:
    path = models_dir / "tiny-gpt2"
    if not path.is_dir():
        pytest.skip(f"fixture model not found at {path}")
    return path


def test_local_backend_on_the_fixture_model_ends_in_review(tiny_gpt2, tmp_path, monkeypatch, capsys) -> None:
    import stereoset_eval.scoring.chat_prompt as chat_prompt

    j = ChatJudge.local(str(tiny_gpt2), max_tokens=24, cache_dir=tmp_path)
    assert j.settings()["chat_template"] == "plain" and j.settings()["context"] == 128
    v = j(["nurturing"], "female", "m", PAIR)  # the guidelines' prompt is longer than GPT-2's 128 positions
    assert (v.action, v.evidence["failure"]) == ("review", "context") and "128 positions" in v.evidence["error"]
    # a prompt that fits: the random model generates, and its garbage is a malformed answer
    monkeypatch.setattr(chat_prompt, "SYSTEM", "JSON.")
    monkeypatch.setattr(chat_prompt, "GUIDELINES", "{female_sentence} {male_sentence}?")
    v = j(["kind"], "female", "m", ("She is kind.", "He is."))
    assert (v.action, v.rule, v.evidence["failure"]) == ("review", "judge_unavailable", "malformed_answer")
    assert isinstance(v.evidence["reply"], str) and j.requests == 2
    again = j(["kind"], "female", "m", ("She is kind.", "He is."))
    assert again.evidence["cached"] is True and again.evidence["reply"] == v.evidence["reply"] and j.requests == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("warning: chat-local:") == 2
    j.close()


def test_judge_model_flag_builds_the_log_prob_judge_with_its_settings(tiny_gpt2) -> None:
    from stereoset_eval.cli.commands._judge_args import build_judge
    from stereoset_eval.scoring.judge import CausalLMJudge

    j = build_judge(_args(["--judge-model", str(tiny_gpt2), "--judge-min-margin", "0.3"]))
    assert isinstance(j, CausalLMJudge)
    s = json.loads(json.dumps(j.settings()))  # provenance-ready
    assert (s["judge"], s["name"], s["model"], s["min_margin"]) == ("causal-lm", j.name, str(tiny_gpt2), 0.3)
