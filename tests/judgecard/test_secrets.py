"""No credential in what a card or a board writes, and judges on different endpoints named apart: cards are made
from spec files whose endpoint carries a password, a query secret or a key copied from the environment, then
ranked; every file written is searched for every secret."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from evalkit.judgecard import Card, judge_card, parse_spec
from evalkit.judgecard.cli import main
from evalkit.models import CachedBackend
from evalkit.paireval.schema import write_meta_eval

from tests.fakes import ScriptedBackend

PASSWORD, API_KEY, TOKEN, ENV_KEY = "pw-Secret-77x", "QSapi9d8e7f6a", "QStok1a2b3c4d", "envkey-7f3a9c1d2e"
SECRETS = (PASSWORD, API_KEY, TOKEN, ENV_KEY)
# One endpoint per form of secret, each on its own host (the names must tell them apart).
ENDPOINTS = {"userinfo": f"http://alice:{PASSWORD}@10.0.0.1:8000/v1",
             "api_key": f"http://10.0.0.2:8000/v1?api_key={API_KEY}",
             "token": f"https://judge.example.org/v1?token={TOKEN}&x=1",
             "environment": f"http://10.0.0.4:8000/{ENV_KEY}/v1"}


@pytest.fixture
def door(monkeypatch):
    """The model door answers from a script (no server); the environment holds a key."""
    monkeypatch.setenv("MYCORP_API_KEY", ENV_KEY)
    monkeypatch.setattr("evalkit.models.open_backend", lambda kind, model, **options: CachedBackend(
        ScriptedBackend(lambda text: "4" if "context 1" in text or "context 3" in text else "2", "openai:fake-model")))


def _spec(tmp_path: Path, form: str, url: str, **extra: str) -> Path:
    path = tmp_path / f"{form}.yml"
    fields = {"kind": "lm", "prompt": "likert", "backend": "openai", "model": "fake-model", "base_url": url, **extra}
    path.write_text("".join(f"{key}: {json.dumps(value)}\n" for key, value in fields.items()))
    return path


def _own_set(tmp_path: Path) -> Path:
    rows = [{"context": [f"context {c // 2} of the talk"], "response": f"reply {c} " + "w " * (c % 4), "score": c % 5}
            for c in range(16)]
    return write_meta_eval(pd.DataFrame(rows), tmp_path / "mine.jsonl")


def _leaks(folder: Path) -> list[tuple[str, str]]:
    return [(str(path), secret) for path in folder.rglob("*") if path.is_file()
            for secret in SECRETS if secret in path.read_text(errors="replace") or secret in str(path)]


def test_no_secret_in_any_card_or_board_file(door, tmp_path, capsys):
    own = _own_set(tmp_path)
    for form, url in ENDPOINTS.items():
        assert main(["card", "--judge", str(_spec(tmp_path, form, url)), "--set", str(own), "--half", "all",
                     "--bootstrap", "20", "--out", str(tmp_path / "cards" / form)]) == 0
    # A label of one's own that holds a secret is masked too.
    assert main(["card", "--judge", str(_spec(tmp_path, "label", ENDPOINTS["api_key"], name=f"mine {ENV_KEY}")),
                 "--set", str(own), "--half", "all", "--bootstrap", "20", "--out", str(tmp_path / "cards" / "label")]) == 0
    # A model named after the endpoint's password (a deployment named by its maker) is masked in the judge's name.
    assert main(["card", "--judge", str(_spec(tmp_path, "model", ENDPOINTS["userinfo"], model=f"deploy-{PASSWORD}")),
                 "--set", str(own), "--half", "all", "--bootstrap", "20", "--out", str(tmp_path / "cards" / "model")]) == 0
    # The endpoints cannot be reached: those cards scored nothing, and the board leaves them out, listed.
    assert main(["card", "--judge", "length", "--set", str(own), "--half", "all", "--bootstrap", "20",
                 "--out", str(tmp_path / "cards" / "length")]) == 0
    assert main(["leaderboard", "--cards", str(tmp_path / "cards"), "--bootstrap", "20", "--add", str(own),
                 "--out", str(tmp_path / "board")]) == 0
    printed = capsys.readouterr()
    assert "1 judges from 1 cards (6 left out" in printed.out
    assert not [s for s in SECRETS if s in printed.out + printed.err]
    refused = json.loads((tmp_path / "board" / "leaderboard.json").read_text())["refused_cards"]
    assert len(refused) == 6 and all(r["reason"] == "no row on a set this board holds" for r in refused)
    assert len(list((tmp_path / "board" / "cards").rglob("card.html"))) == 1
    assert not _leaks(tmp_path / "cards") and not _leaks(tmp_path / "board")
    record = json.loads((tmp_path / "cards" / "userinfo" / "card.json").read_text())
    assert record["spec"]["base_url"] == "http://***@10.0.0.1:8000/v1"
    assert record["judge"] == "lm:likert (openai fake-model at 10.0.0.1:8000/v1)"
    assert json.loads((tmp_path / "cards" / "model" / "card.json").read_text())["judge"] == \
        "lm:likert (openai deploy-*** at 10.0.0.1:8000/v1)"
    token = json.loads((tmp_path / "cards" / "token" / "card.json").read_text())
    assert token["spec"]["base_url"] == "https://judge.example.org/v1?token=***&x=***"


def test_a_card_read_back_or_made_by_hand_keeps_no_secret(monkeypatch):
    """However a card is made (from a record, by hand, merged), its judge, spec, notes and skipped reasons are
    masked: a card.json written by an older kit is masked when a board rewrites it."""
    monkeypatch.setenv("MYCORP_API_KEY", ENV_KEY)
    spec = {"kind": "lm", "base_url": ENDPOINTS["userinfo"], "source": f"http://x/?token={TOKEN}"}
    card = Card(f"judge {ENV_KEY}", spec, "all", 0, 0, (), (), (), (("set", f"cannot reach {ENDPOINTS['userinfo']}"),),
                (f"note with {PASSWORD}",))
    text = card.to_json()
    assert not [s for s in SECRETS if s in text]
    assert not [s for s in SECRETS if s in Card.from_record(json.loads(text)).to_json()]


def test_judges_on_different_endpoints_have_different_names(door, tmp_path, capsys):
    """The same model and prompt served from two endpoints are two judges (a board refused their cards as one
    judge's "sets scored twice"); a name of one's own is kept as given."""
    first = parse_spec(str(_spec(tmp_path, "a", "http://10.0.0.1:8000/v1")))
    second = parse_spec(str(_spec(tmp_path, "b", "http://10.0.0.2:8000/v1")))
    assert first.title == "lm:likert (openai fake-model at 10.0.0.1:8000/v1)" and first.title != second.title
    assert parse_spec(str(_spec(tmp_path, "c", "http://10.0.0.1:8000/v1", name="ours"))).title == "ours"
    own = _own_set(tmp_path)
    for name, spec in (("a", first), ("b", second)):
        card = judge_card(spec, [str(own)], half="all", bootstrap=0)
        from evalkit.judgecard import write_card

        write_card(card, tmp_path / "cards" / name)
    # Unreachable, they scored nothing: each is left out for that, never refused as one judge's sets scored twice.
    assert main(["leaderboard", "--cards", str(tmp_path / "cards"), "--bootstrap", "10", "--add", str(own),
                 "--merge", "--out", str(tmp_path / "board")]) == 2
    err = capsys.readouterr().err
    assert all(f"{tmp_path / 'cards' / name / 'card.json'}: no row on a set this board holds" in err
               for name in ("a", "b")) and "scored twice" not in err
    titles = {json.loads((tmp_path / "cards" / name / "card.json").read_text())["judge"] for name in ("a", "b")}
    assert titles == {first.title, second.title}


# Held by the environment only, in no shape a pattern knows: nothing but the environment's credentials can mask them.
SERVER_KEY, PATH_TOKEN = "Zq7envKEYw4x9y2", "Vb3pathTOKj8k6m5"


def test_the_environment_keys_are_in_no_output_of_the_evalkit_command(tmp_path, monkeypatch, capsys):
    """``evalkit judge card`` then ``evalkit judge leaderboard``, in process, against a chat server: the key the
    openai backend sends is read from $OPENAI_API_KEY and the server echoes it (whole and cut) in replies the judge
    cannot parse; a token copied from $MYCORP_TOKEN is in the spec's endpoint path and its name. Neither is in the
    commands' stdout or stderr, nor in any file they write (card.json, card.html, leaderboard.md and .json, the
    board's card pages)."""
    from evalkit.cli import main as evalkit

    from tests.fakes import FakeChatServer, chat_reply

    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("MYCORP_TOKEN", PATH_TOKEN)
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))

    def answer(body, count):
        text = body["messages"][-1]["content"]
        if "context 2 " in text:
            return 200, chat_reply(f"cannot rate: key {SERVER_KEY} / {SERVER_KEY[:9]} / {PATH_TOKEN[3:]} refused")
        if "strictly" in text and "context 0 " in text:  # the named judge scores otherwise: a result of its own
            return 200, chat_reply("5")
        return 200, chat_reply("4" if "context 1 " in text or "context 3 " in text else "2")

    server = FakeChatServer(answer)
    try:
        own = _own_set(tmp_path)
        specs = {}
        for label, name in (("plain", None), ("named", f"ours {PATH_TOKEN}")):
            strictly = " strictly" if name else ""
            fields = {"kind": "lm", "backend": "openai", "model": "fake-model",
                      "base_url": f"{server.base_url}/{PATH_TOKEN}", "labels": ["1", "2", "3", "4", "5"],
                      "template": f"Conversation: {{history}}\nReply: {{candidate}}\nRate the reply from 1 to 5{strictly}.",
                      **({"name": name} if name else {})}
            specs[label] = tmp_path / f"{label}.yml"
            specs[label].write_text("".join(f"{key}: {json.dumps(value)}\n" for key, value in fields.items()))
        for label, spec in specs.items():
            assert evalkit(["judge", "card", "--judge", str(spec), "--set", str(own), "--half", "all",
                            "--bootstrap", "20", "--print-summary", "--out", str(tmp_path / "cards" / label)]) == 0
        card_output = capsys.readouterr()
        assert evalkit(["judge", "leaderboard", "--cards", str(tmp_path / "cards"), "--bootstrap", "20",
                        "--add", str(own), "--out", str(tmp_path / "board")]) == 0
        board_output = capsys.readouterr()
    finally:
        server.close()
    # The key was sent (so it was there to leak), and the judge scored what it could parse.
    assert any(headers.get("Authorization") == f"Bearer {SERVER_KEY}" for headers in server.headers)
    assert card_output.out.count('"judge": ') == 2 and "2 judges from 2 cards" in board_output.out
    record = json.loads((tmp_path / "cards" / "plain" / "card.json").read_text())
    assert len(record["rows"]) == 1 and record["rows"][0]["n"] == 14
    assert record["costs"][0]["abstained"] == 2 and "***" in record["costs"][0]["examples"][0][1]
    assert record["judge"].endswith("/v1/***)") and "***" in record["spec"]["base_url"]
    shown = {"card stdout": card_output.out, "card stderr": card_output.err, "board stdout": board_output.out,
             "board stderr": board_output.err}
    shown.update({str(path): path.read_text(errors="replace") for folder in ("cards", "board")
                  for path in (tmp_path / folder).rglob("*") if path.is_file()})
    assert {"card.json", "card.html", "leaderboard.md", "leaderboard.json"} <= {Path(name).name for name in shown}
    pieces = [secret[i:i + 8] for secret in (SERVER_KEY, PATH_TOKEN) for i in range(len(secret) - 7)]
    leaks = [(where, piece) for where, text in shown.items() for piece in pieces if piece in text or piece in where]
    assert not leaks, leaks


def test_pieces_of_an_endpoints_own_credentials_echoed_in_its_replies_are_in_no_card_or_cache(tmp_path, monkeypatch,
                                                                                             capsys):
    """An endpoint that echoed a cut piece of its URL's password, query value or
    of the environment's key in a 200 reply left the piece in the card's examples and the call cache."""
    from tests.fakes import FakeChatServer, chat_reply

    password, sig, env_key = "S3cretPassw0rd99x", "QsigVal12345abc", "Qx7envKEY-0a1b2c3d"
    monkeypatch.setenv("MYCORP_API_KEY", env_key)
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    pieces = [password[:9], sig[:8], password[-8:], env_key[:9]]

    def answer(body, count):
        text = body["messages"][-1]["content"]
        which = next((i for i in range(len(pieces)) if f"context {i} " in text), None)
        return 200, chat_reply("3" if which is None else f"cannot rate; echo: {pieces[which]} done")

    server = FakeChatServer(answer)
    try:
        url = server.base_url.replace("http://", f"http://alice:{password}@") + f"?sig={sig}"
        spec = _spec(tmp_path, "echo", url, labels=["1", "2", "3", "4", "5"],
                     template="Conversation: {history}\nReply: {candidate}\nRate 1 to 5.")
        spec.write_text(spec.read_text().replace('prompt: "likert"\n', ""))
        assert main(["card", "--judge", str(spec), "--set", str(_own_set(tmp_path)), "--half", "all",
                     "--bootstrap", "10", "--out", str(tmp_path / "card")]) == 0
    finally:
        server.close()
    examples = [text for cost in json.loads((tmp_path / "card" / "card.json").read_text())["costs"]
                for _, text in cost["examples"]]
    assert any("echo: *** done" in text for text in examples), examples  # the replies are kept, masked
    written = [path for path in tmp_path.rglob("*") if path.is_file() and path.suffix not in (".yml", ".jsonl")]
    assert any(path.name.startswith("calls.sqlite") for path in written)
    leaks = [(path.name, piece) for path in written for piece in pieces if piece.encode() in path.read_bytes()]
    assert leaks == [] and not any(piece in capsys.readouterr().out for piece in pieces)


def test_a_key_from_the_environment_in_a_card_path_a_card_field_or_a_judge_spec_is_in_no_message_or_file(
        tmp_path, monkeypatch, capsys):
    """A cards folder named after a token, a card whose score field holds it, and ``judge card`` given it as a judge
    kind or a spec's ``kind``: the board's stdout, stderr, leaderboard.md and .json, its card pages and each
    command's error message hold no piece of it."""
    from evalkit.cli import main as evalkit

    token, key = "Wm3nBv8Xc2Lk9Pq", "Kq8Zr3Lp5Wn7Xv"
    monkeypatch.setenv("MY_API_TOKEN", token)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    own = _own_set(tmp_path)
    cards = tmp_path / "cards"
    assert evalkit(["judge", "card", "--judge", "length", "--set", str(own), "--half", "all", "--bootstrap", "20",
                    "--out", str(cards / f"dir_{token}")]) == 0
    record = json.loads((cards / f"dir_{token}" / "card.json").read_text())
    record["rows"][0]["pearson"] = f"x{token}"
    (cards / "evil").mkdir()
    (cards / "evil" / "card.json").write_text(json.dumps(record))
    capsys.readouterr()
    assert evalkit(["judge", "leaderboard", "--cards", str(cards), "--bootstrap", "20", "--add", str(own),
                    "--out", str(tmp_path / "board")]) == 0
    board = capsys.readouterr()
    spec = tmp_path / "spec.yml"
    spec.write_text(f"kind: {key}\n")
    for judge in (f"lm:{key}", str(spec)):
        assert evalkit(["judge", "card", "--judge", judge, "--set", str(own), "--out", str(tmp_path / "c")]) == 2
    errors = capsys.readouterr().err
    scores = tmp_path / f"scores_{token}.csv"
    pd.DataFrame({"item_id": ["a"], "context": ['["c"]'], "response": ["r"], "score_judge": [1.0]}).to_csv(
        scores, index=False)
    from evalkit.judgecard.score_files import ScoresJudge

    assert ScoresJudge(str(scores), "score_judge").name == "scores:scores_***.csv#score_judge"
    assert "evil" in board.err and errors.count("evalkit: ") == 2
    shown = {"board stdout": board.out, "board stderr": board.err, "card errors": errors}
    shown.update({str(path.relative_to(tmp_path)): path.read_text(errors="replace")
                  for path in (tmp_path / "board").rglob("*") if path.is_file()})
    # (the refusal's reason is masked before the board escapes it for Markdown: its mask reads "\*\*\*")
    assert "\\*\\*\\*" in shown["board/leaderboard.md"] and "dir_***" in shown["board/leaderboard.json"]
    pieces = [secret[i:i + 6] for secret in (token, key) for i in range(len(secret) - 5)]
    leaks = [(where, piece) for where, text in shown.items() for piece in pieces if piece in text]
    assert not leaks, leaks


def test_a_url_password_pasted_into_another_field_of_a_spec_is_not_in_its_error_or_in_the_cache_name(tmp_path):
    """A spec's ``base_url`` password written also into ``price_per_1k_tokens``, a template placeholder or the
    model's name: the spec's error names the field without it, and the backend's name (the call cache's
    ``backend`` column) masks it in the model too."""
    from evalkit.data.specfile import SpecError
    from evalkit.models.openai_compatible import OpenAICompatibleBackend

    password = "Wm4Tz8Qx2Lp6Nv"
    url = f"http://svc:{password}@127.0.0.1:9/v1"
    for field, value in (("price_per_1k_tokens", password), ("template", f'"{{history}} {{{password}}} rate"')):
        spec = tmp_path / f"{field}.yml"
        fields = {"kind": "lm", "backend": "openai", "model": "m", "base_url": url, "template": '"{history} rate"',
                  "labels": '["1", "2"]', field: value}
        spec.write_text("".join(f"{key}: {text}\n" for key, text in fields.items()))
        with pytest.raises(SpecError) as error:
            parse_spec(str(spec))
        assert field in str(error.value) and password[:6] not in str(error.value), str(error.value)
    name = OpenAICompatibleBackend(f"m-{password}", url, api_key_env=None).name
    assert password[:6] not in name and name.endswith(":m-***"), name


def test_the_signing_key_is_masked_in_what_the_board_prints_and_writes_whatever_its_variable_is_named(
        tmp_path, monkeypatch, capsys):
    """``--merge-key-env CARDSIG``: a variable not named like a credential, so the environment's credentials did
    not hold its value; a card whose judge name carries the key had it printed and written on the board."""
    from evalkit.cli import main as evalkit

    key = "Kx7Pm2Qv9Rt4Wz8Ys3"
    monkeypatch.setenv("CARDSIG", key)
    own = _own_set(tmp_path)
    assert evalkit(["judge", "card", "--judge", "length", "--set", str(own), "--half", "all", "--bootstrap", "20",
                    "--out", str(tmp_path / "cards" / "one")]) == 0
    record = json.loads((tmp_path / "cards" / "one" / "card.json").read_text())
    record["judge"] = f"length {key}"
    (tmp_path / "cards" / "one" / "card.json").write_text(json.dumps(record))
    capsys.readouterr()
    evalkit(["judge", "leaderboard", "--cards", str(tmp_path / "cards"), "--bootstrap", "20", "--add", str(own),
             "--merge", "--merge-key-env", "CARDSIG", "--out", str(tmp_path / "board")])
    printed = capsys.readouterr()
    texts = [printed.out, printed.err, *(path.read_text(errors="replace") for path in (tmp_path / "board").rglob("*")
                                         if path.is_file())]
    assert "length" in printed.out + printed.err and not any(key[:8] in text for text in texts)


def test_keys_a_hostile_card_or_scores_file_holds_are_masked_where_the_board_quotes_them(tmp_path, capsys):
    """A refused card's reason quotes the field it refuses, a card folder's name is shown as its file, and a scores
    file's bad value is quoted in the error: a key of a known shape there (``sk-proj-...``, ``AKIA...``,
    ``hf_...``, ``password=...``) is masked in what is printed and in every file the board writes, before the
    board escapes it for Markdown; a text ``seed``, a negative ``bootstrap`` and an integer of 5,000 digits are
    refused naming their file and field."""
    from evalkit.cli import main as evalkit

    keys = {"openai": "sk-proj-AbCdEfGhIjKlMnOpQrStUv1234567890", "aws": "AKIAIOSFODNN7EXAMPLE",
            "hf": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678", "password": "hunter2hunter2pw"}
    own = _own_set(tmp_path)
    assert evalkit(["judge", "card", "--judge", "length", "--set", str(own), "--half", "all", "--bootstrap", "20",
                    "--out", str(tmp_path / "made")]) == 0
    honest = json.loads((tmp_path / "made" / "card.json").read_text())
    edits = {"a": ("half", keys["openai"]), "b": ("seed", f"password={keys['password']}"), "c": ("seed", "0"),
             "d": ("bootstrap", -5), "e": ("judge", ["a list", keys["aws"]])}
    for folder, (field, value) in edits.items():
        (tmp_path / "cards" / folder).mkdir(parents=True)
        (tmp_path / "cards" / folder / "card.json").write_text(json.dumps({**honest, field: value}))
    (tmp_path / "cards" / keys["hf"]).mkdir()
    (tmp_path / "cards" / keys["hf"] / "card.json").write_text(json.dumps(honest))
    capsys.readouterr()
    evalkit(["judge", "leaderboard", "--cards", str(tmp_path / "cards"), "--bootstrap", "20", "--add", str(own),
             "--out", str(tmp_path / "board")])
    printed = capsys.readouterr()
    assert "field 'seed' is '0', not a whole number" in printed.err and "field 'bootstrap' is -5" in printed.err
    texts = [printed.out, printed.err, *(path.read_text(errors="replace") for path in (tmp_path / "board").rglob("*")
                                         if path.is_file())]
    for key in keys.values():
        assert not any(key[5:15] in text for text in texts), key
    scores = tmp_path / "scores.jsonl"
    rows = [json.loads(line) for line in own.read_text().splitlines()]
    scores.write_text("".join(json.dumps({**row, "score_judge": keys["openai"] if number == 2 else 1.0}) + "\n"
                              for number, row in enumerate(rows)))
    assert evalkit(["judge", "card", "--scores", str(scores), "--set", str(own), "--half", "all",
                    "--out", str(tmp_path / "s")]) == 2
    error = capsys.readouterr().err
    assert "line 3, field 'score_judge'" in error and keys["openai"][5:15] not in error
    scores.write_text(scores.read_text().replace(f'"{keys["openai"]}"', "1" * 5000))
    assert evalkit(["judge", "card", "--scores", str(scores), "--set", str(own), "--half", "all",
                    "--out", str(tmp_path / "s")]) == 2
    assert f"{scores}, line 3: not JSON" in capsys.readouterr().err


def test_a_judge_named_like_a_key_is_masked_before_the_board_escapes_it():
    """A judge's name is the card file's text: a key of a known shape in it is masked before Markdown escaping
    (escaped, ``hf\\_...`` no longer reads as a key to a later redaction)."""
    from evalkit.judgecard.board_pages import _cell

    shown = _cell("mine hf_AbCdEfGhIjKlMnOpQrStUvWxYz12 and ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789")
    assert "AbCdEfGh" not in shown and shown.startswith("mine hf\\_")


def test_keys_glued_to_a_name_or_cut_by_shortening_are_masked(tmp_path):
    """A key glued to a file or folder name by ``_`` (``run_hf_<key>.jsonl``, ``f_AKIA<id>``) is masked in its
    strict form, and a long name is masked before it is shortened (a cut key no longer has a key's shape); a
    model folder such as ``bert_hf_checkpoint_final`` stays."""
    from evalkit.judgecard._names import shortened
    from evalkit.judgecard.score_files import ScoresJudge
    from evalkit.models import redact

    key = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678"
    scores = tmp_path / f"run_{key}.csv"
    pd.DataFrame({"item_id": ["a"], "context": ['["c"]'], "response": ["r"], "score_judge": [1.0]}).to_csv(
        scores, index=False)
    assert key[3:] not in ScoresJudge(str(scores), "score_judge").name
    assert redact("cards/f_AKIAIOSFODNN7EXAMPLE/card.json") == "cards/f_AKIA***/card.json"
    for ordinary in ("bert_hf_checkpoint_final_2024", "REGION_ASIAPACIFICNORTHEAST",
                     "results_sk-learn-logistic-regression-v2.csv"):
        assert redact(ordinary) == ordinary
    long = "judge " + "x" * 100 + " sk-proj-AbCdEfGhIjKlMnOpQrStUv1234567890 ?token=Qm7vT2xR9kL4zzA"
    assert not any(piece in shortened(long, 60) for piece in ("AbCdEf", "567890", "R9kL4zz"))
