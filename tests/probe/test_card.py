"""``synrob card`` and ``synrob board`` end to end (issue 55), on real models and treebanks.

SmolLM2's card with the ``test`` preset (2 layers: 2 and 4, whose blocks alone are run for
the probes; at most 50 sentences per split) on the bundled EWT sample, Czech PUD and Turkish
BOUN (tests/data/ud, one file each, split 80/10/10): made for en and cs, then made again
with tr added (only tr's runs execute), then again (none does). MiniLM's card (no LM head:
probing sections only, and why the others are absent). The schema, every section, the
attractor breakdown recomputed from the pairs file, the headline's numbers against the
tables, a killed card resumed on a local dask cluster of 2 workers (equal to the local card,
number for number), bad input in one line, and both pages and the board in headless chromium.
"""

from __future__ import annotations

import html
import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from tests.chromium import PHONE, needs_chromium, page_values

pytestmark = [pytest.mark.slow, pytest.mark.model]

ROOT = Path(__file__).resolve().parents[2]
CS = ROOT / "tests" / "data" / "ud" / "cs_pud" / "cs_pud-ud-test.conllu"
TR = ROOT / "tests" / "data" / "ud" / "tr_boun" / "tr_boun-ud-test.conllu"
COMMON = dict(preset="test", layers="2,4", progress=False)
SECTIONS = ("structure", "morphosyntax", "jabberwocky", "behaviour", "causal")


def _cli(args: list[str]) -> tuple[int, str, str]:
    from synrob.cli.app import run

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = run(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def smol(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """SmolLM2's card: en and cs, then tr added, then made again; the runs each executed."""
    import synrob.probe as pr

    out = tmp_path_factory.mktemp("card") / "smollm2"
    executed: dict[str, list[str]] = {"first": [], "added": [], "again": []}
    made = {}
    for name, langs in (("first", "en,cs"), ("added", "en,cs,tr"), ("again", "en,cs,tr")):
        tbs = {"cs": str(CS), "tr": str(TR)}
        made[name] = pr.card("smollm2", out, languages=langs, **COMMON,
                             treebanks={k: v for k, v in tbs.items() if k in langs},
                             on_run=lambda i, spec, s, n=name: executed[n].append(spec.label))
    return {"dir": out, "card": made["again"], "made": made, "executed": executed,
            "data": json.loads((out / "card.json").read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MiniLM's card, made through the command line."""
    out = tmp_path_factory.mktemp("card") / "minilm"
    code, stdout, err = _cli(["card", "minilm", "--preset", "test", "--layers", "2,4",
                              "-o", str(out)])
    assert code == 0, err
    assert stdout.strip().endswith("card.html") and "en: " in stdout
    return out


def test_card_json_follows_its_schema(smol: dict[str, Any], mini: Path) -> None:
    import jsonschema
    from synrob.probe.cards.document import schema_path

    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    for data in (smol["data"], json.loads((mini / "card.json").read_text())):
        jsonschema.Draft202012Validator(schema).validate(data)
    broken = json.loads(json.dumps(smol["data"]))
    broken["languages"]["en"]["sections"]["structure"] = {"status": "ok"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_every_section_of_every_language(smol: dict[str, Any]) -> None:
    data = smol["data"]
    assert list(data["languages"]) == ["en", "cs", "tr"]
    assert data["model"]["lm_head"] == "causal" and data["settings"]["layers"] == [2, 4]
    for lang, entry in data["languages"].items():
        sec = entry["sections"]
        assert set(sec) == set(SECTIONS)
        for name in SECTIONS:
            assert sec[name]["status"] in ("ok", "absent"), (lang, name)
            if sec[name]["status"] == "absent":
                assert sec[name]["reason"], (lang, name)
        for name in ("structure", "morphosyntax", "jabberwocky"):
            assert sec[name]["status"] == "ok", (lang, name, sec[name].get("reason"))
        task = sec["structure"]["tasks"]["distance"]
        assert [e["layer"] for e in task["layers"]] == [2, 4] and task["best_layer"] in (2, 4)
        for e in task["layers"]:
            for m in ("uuas", "dspr", "control_uuas", "selectivity_uuas", "random_init_uuas",
                      "lead_path_uuas"):
                n = e["measures"][m]
                assert n["value"] is not None and n["ci95"][0] <= n["ci95"][1], (lang, m)
                assert n["settings"] in data["settings"]["sections"]
        assert {"pos", "deprel"} <= set(sec["morphosyntax"]["tasks"])
        assert sec["jabberwocky"]["layer"] == task["best_layer"]
    en = data["languages"]["en"]["sections"]
    assert en["behaviour"]["status"] == "ok" and "Number" in en["behaviour"]["features"]
    assert en["causal"]["status"] == "ok"
    assert "Gender" in en["behaviour"]["absent"]  # English verbs do not agree in Gender
    layer = en["causal"]["features"]["Number"]["layers"][0]
    assert {"accuracy_clean", "accuracy_erased", "accuracy_random_matched",
            "nll_increase_erased", "flip_rate"} <= set(layer["measures"])


def test_the_breakdown_is_recomputed_from_the_pairs_file(smol: dict[str, Any]) -> None:
    from synrob.perturb.corpus import read_conllu

    for lang, entry in smol["data"]["languages"].items():
        for feature, b in entry["sections"]["behaviour"].get("features", {}).items():
            meta = {s.sent_id: json.loads(s.metadata["synrob.agreement"])
                    for s in read_conllu(smol["dir"] / b["pairs_file"]["path"])}
            scores = [json.loads(x) for x in (smol["dir"] / b["scores_file"]).read_text(
                encoding="utf-8").splitlines()]
            assert len(scores) == b["pairs"]
            buckets: dict[tuple[str, str], list[bool]] = {}
            for s in scores:
                m = meta[s["sentence"]]
                assert (m["distance"], m["attractors"]) == (s["distance"], s["attractors"])
                d = m["distance"]
                buckets.setdefault(("distance", "1" if d == 1 else "2-3" if d <= 3 else "4+"),
                                   []).append(s["prefers_original"])
                buckets.setdefault(("attractors", "0" if m["attractors"] == 0 else "1+"),
                                   []).append(s["prefers_original"])
            for axis in ("distance", "attractors"):
                for key, got in b[axis].items():
                    mine = buckets.get((axis, key), [])
                    assert got["n"] == len(mine), (lang, feature, axis, key)
                    if mine:
                        assert got["value"] == pytest.approx(sum(mine) / len(mine))
                    else:
                        assert got["value"] is None


def _pointer(data: dict[str, Any], pointer: str) -> Any:
    node: Any = data
    for part in pointer.strip("/").split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def test_the_headline_shows_the_tables_numbers(smol: dict[str, Any]) -> None:
    from synrob.probe.cards.headline import fmt2, fmt_percent
    from synrob.probe.cards.probing import DECODABLE_MARGIN

    data = smol["data"]
    for lang, entry in data["languages"].items():
        assert 3 <= len(entry["headline"]) <= 5, lang
        for claim in entry["headline"]:
            if claim["rule"] == "absent":  # the absent sections and why: no number
                absent = [k for k, v in entry["sections"].items() if v["status"] == "absent"]
                assert absent and all(entry["sections"][k]["reason"] in claim["text"]
                                      for k in absent)
                continue
            assert claim["numbers"]
            for n in claim["numbers"]:
                number = _pointer(data, n["pointer"])
                show = fmt_percent if n["format"] == "percent" else fmt2
                assert (n["format"] == "percent") == (claim["rule"] == "jabberwocky"
                                                      and n["pointer"].endswith("lead_lost"))
                assert number["value"] == n["value"] and n["shown"] == show(number["value"])
                assert n["shown"] in claim["text"]
                if n["ci95"] is not None and number["ci95"][0] is not None:
                    lo, hi = number["ci95"]
                    assert f"{n['shown']} [{show(lo)}, {show(hi)}]" in claim["text"]
            if claim["rule"] == "structure":
                best = entry["sections"]["structure"]["tasks"]["distance"]["best_layer"]
                assert f"at layer {best}:" in claim["text"]
            if claim["rule"] == "decodable":
                for label, layer in re.findall(r"(\w+) is decodable from layer (\d+) on",
                                               claim["text"]):
                    key = "pos" if label == "POS" else f"feats:{label}"
                    task = entry["sections"]["morphosyntax"]["tasks"][key]
                    for e in task["layers"]:
                        if e["layer"] >= int(layer):
                            assert e["measures"]["selectivity_acc"]["ci95"][0] > DECODABLE_MARGIN


def test_adding_a_language_computes_only_it_and_nothing_new_computes_nothing(
        smol: dict[str, Any]) -> None:
    ex = smol["executed"]
    assert ex["first"] and {x.split("/")[0] for x in ex["first"]} == {"en", "cs"}
    assert ex["added"] and all(x.startswith("tr/") for x in ex["added"])
    assert ex["again"] == [] and smol["made"]["again"].invocation["executed"] == 0
    first = smol["made"]["first"].data["languages"]
    for lang in ("en", "cs"):  # the same numbers, from the same runs
        assert first[lang]["sections"] == smol["data"]["languages"][lang]["sections"]


def test_the_card_object_is_a_table_with_a_figure(smol: dict[str, Any]) -> None:
    import synrob.probe as pr

    card = pr.load_card(smol["dir"])
    assert card.rows == smol["card"].rows and len(card.rows) > 100
    frame = card.to_pandas()
    assert {"lang", "section", "measure", "value", "ci_low", "ci_high"} <= set(frame.columns)
    assert isinstance(card.plot("cs"), pr.Figure)
    assert html.escape(card.headline["tr"][0]) in card._repr_html_()


def test_minilm_has_the_probing_sections_and_says_why_not_the_others(mini: Path) -> None:
    data = json.loads((mini / "card.json").read_text(encoding="utf-8"))
    sec = data["languages"]["en"]["sections"]
    assert data["model"]["lm_head"] is None
    assert sec["structure"]["status"] == sec["morphosyntax"]["status"] == "ok"
    assert data["languages"]["en"]["headline"][-1]["text"].startswith(
        "No behaviour and causal sections: minilm has no LM head")
    for name in ("behaviour", "causal"):
        assert sec[name]["status"] == "absent" and "no LM head" in sec[name]["reason"]
        assert f"*Absent: {sec[name]['reason']}.*" in (mini / "card.md").read_text()
    code, _, err = _cli(["card", "--from", str(mini / "card.json")])
    assert code == 0, err
    assert "0 runs executed" in err  # the recorded settings are the same runs


def test_a_killed_card_resumes_on_a_dask_cluster_equal_to_the_local_card(
        mini: Path, tmp_path: Path) -> None:
    import synrob.probe as pr

    out = tmp_path / "killed"
    done: list[str] = []

    def kill(run_id: str, spec: Any, seconds: float) -> None:
        done.append(run_id)
        if len(done) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pr.card("minilm", out, on_run=kill, **COMMON)
    assert not (out / "card.json").exists() and len(list((out / "work" / "runs").iterdir())) == 2
    resumed = pr.card("minilm", out, backend="dask", workers=2, **COMMON)
    local = pr.load_card(mini)
    assert resumed.invocation["executed"] == _runs(resumed) - 2  # the 2 saved were reused
    assert _numbers(resumed) == _numbers(local)


def test_a_card_on_a_local_ray_cluster_equals_the_local_card(mini: Path, tmp_path: Path
                                                             ) -> None:
    """``--backend ray`` (its local mode, 2 workers) from an empty card directory: every
    number equals the local card's (the caches are shared, so the runs are the same runs)."""
    pytest.importorskip("ray")
    import synrob.probe as pr

    on_ray = pr.card("minilm", tmp_path / "ray", backend="ray", workers=2, **COMMON)
    local = pr.load_card(mini)
    assert _numbers(on_ray) == _numbers(local)
    assert on_ray.invocation["executed"] + on_ray.invocation.get("reused", 0) == _runs(on_ray)


def _numbers(card: Any) -> list[dict[str, Any]]:
    """The card's rows without the settings that name where they were made."""
    return [{k: r[k] for k in r if k != "settings"} for r in card.rows]


def _runs(card: Any) -> int:
    return int(card.data["grid"]["runs"])


def test_bad_input_is_one_line_and_loses_nothing(smol: dict[str, Any], tmp_path: Path) -> None:
    card_json = (smol["dir"] / "card.json").read_bytes()
    cases = [
        (["card", "smollm2", "--languages", "xx"], "unknown language 'xx'"),
        (["card", "smollm2", "--languages", "cs", "--treebank", f"cs={tmp_path}/none.conllu"],
         "none.conllu"),
        (["card", "smollm2", "-p", "quantization=int8"], "fidelity check"),
        (["card", "minilm", "--preset", "test", "-o", str(smol["dir"])],
         "holds the card of 'smollm2'"),
        (["board", "-o", str(tmp_path / "b")], "no card given"),
        (["board", str(tmp_path), "-o", str(tmp_path / "b")], "no such card"),
    ]
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "card.json").write_text("{not json", encoding="utf-8")
    cases.append((["board", str(tmp_path / "broken"), "-o", str(tmp_path / "b")],
                  "not a readable card.json"))
    for args, words in cases:
        code, out, err = _cli(args)
        assert code == 1 and out == "", (args, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("synrob: error:") and words in lines[0], \
            (args, err)
    assert (smol["dir"] / "card.json").read_bytes() == card_json
    assert not (tmp_path / "b").exists()


def test_the_board_marks_cards_that_are_not_comparable(smol: dict[str, Any], mini: Path,
                                                       tmp_path: Path) -> None:
    import csv

    import synrob.probe as pr

    b = pr.board([smol["dir"], mini], tmp_path / "board")
    assert [e["comparable"] for e in b.entries] == ["yes", "yes"]  # same preset, same en files
    for entry, where in zip(b.entries, (smol["dir"], mini), strict=True):
        href = entry["cells"]["en UUAS"]["href"]
        assert not Path(href).is_absolute() and href == entry["href"]
        assert (tmp_path / "board" / href).resolve() == (where / "card.html").resolve()
    rows = list(csv.DictReader((tmp_path / "board" / "board.csv").open(encoding="utf-8")))
    assert [r["model"] for r in rows] == ["smollm2", "minilm"]
    best = smol["data"]["languages"]["cs"]["sections"]["structure"]["tasks"]["distance"]
    uuas = next(e for e in best["layers"] if e["layer"] == best["best_layer"])["measures"]
    assert float(rows[0]["cs UUAS"]) == uuas["uuas"]["value"] and rows[1]["cs UUAS"] == ""
    other = tmp_path / "other"
    other.mkdir()
    data = json.loads((mini / "card.json").read_text(encoding="utf-8"))
    data["settings"]["preset"]["name"] = "sample"
    (other / "card.json").write_text(json.dumps(data), encoding="utf-8")
    marked = pr.board([smol["dir"], other], tmp_path / "board2")
    assert marked.entries[1]["comparable"] == "no: preset sample, not test"
    code, _, err = _cli(["board", str(smol["dir"]), str(other), "--strict", "-o",
                         str(tmp_path / "board3")])
    assert code == 1 and "not comparable" in err and not (tmp_path / "board3").exists()


LAYOUT = ("JSON.stringify({scrollWidth: document.documentElement.scrollWidth, "
          "width: window.innerWidth, images: document.images.length, "
          "decoded: Array.from(document.images).every(i => i.complete && i.naturalWidth > 0), "
          "links: Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute("
          "'href'))})")
SORT = ("(() => { const t = document.getElementById('board-table'); "
        "const col = Array.from(t.tHead.rows[0].cells).findIndex(c => c.textContent === "
        "'en UUAS'); const key = () => Array.from(t.tBodies[0].rows).map(r => "
        "r.cells[col].getAttribute('data-value')); const before = key(); "
        "t.tHead.rows[0].cells[col].querySelector('button').click(); const up = key(); "
        "t.tHead.rows[0].cells[col].querySelector('button').click(); "
        "return JSON.stringify({before, up, down: key()}); })()")


@needs_chromium
def test_card_pages_and_the_board_in_chromium(smol: dict[str, Any], mini: Path,
                                              tmp_path: Path) -> None:
    import synrob.probe as pr

    pr.board([smol["dir"], mini], tmp_path / "board")
    for page in (smol["dir"] / "card.html", mini / "card.html"):
        text = page.read_text(encoding="utf-8")
        assert "<script" not in text and "default-src 'none'" in text
        for width, height, mobile in ((1400, 900, False), (*PHONE, True)):
            errors, (info,) = page_values(page.as_uri(), [LAYOUT], width=width, height=height,
                                          mobile=mobile)
            assert errors == [], (page, width, errors)
            assert info["scrollWidth"] <= info["width"], (page, width, info)
            assert info["images"] >= 1 and info["decoded"]
            assert all(h.startswith("#") for h in info["links"]), info["links"]
    board = tmp_path / "board" / "board.html"
    for width, height, mobile in ((1400, 900, False), (*PHONE, True)):
        errors, (info, sort) = page_values(board.as_uri(), [LAYOUT, SORT], width=width,
                                           height=height, mobile=mobile)
        assert errors == [] and info["scrollWidth"] <= info["width"], (width, errors, info)
        cards = [h for h in info["links"] if not h.startswith("#")]
        assert cards and all(h.endswith("card.html") and not h.startswith(("http", "/"))
                             for h in cards)
        assert all((board.parent / h).resolve().is_file() for h in cards)
        up = [float(v) for v in sort["up"]]
        assert len(up) == 2 and up == sorted(up) and sorted(map(float, sort["before"])) == up
        assert [float(v) for v in sort["down"]] == sorted(up, reverse=True)
