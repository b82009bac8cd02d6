"""``synrob perturb``: the CLI contract of issue 3 (determinism, workers, comments, errors)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu, sentences_from_string

_COMMENTS = ("synrob.source", "synrob.kind", "synrob.params", "synrob.seed", "synrob.variant",
             "synrob.chrf2", "synrob.lev")


@pytest.fixture(scope="module")
def dev_head(ewt_dev, tmp_path_factory) -> str:
    """The first 200 sentences of EWT dev as a CoNLL-U file."""
    text = "".join(s.serialize() for s in itertools.islice(read_conllu(ewt_dev), 200))
    path = tmp_path_factory.mktemp("perturb") / "dev200.conllu"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_same_seed_byte_identical_other_seed_differs(cli, dev_head) -> None:
    a = cli(["perturb", "--kind", "bshift", "--seed", "4", dev_head])
    b = cli(["perturb", "--kind", "bshift", "--seed", "4", dev_head])
    c = cli(["perturb", "--kind", "bshift", "--seed", "5", dev_head])
    assert a.exit_code == 0, a.stderr
    assert a.stdout == b.stdout
    assert a.stdout != c.stdout


def test_workers_identical_to_single_process(cli, dev_head) -> None:
    one = cli(["perturb", "--kind", "bshift", "--variants", "2", dev_head])
    two = cli(["perturb", "--kind", "bshift", "--variants", "2", "--workers", "2",
               "--batch-size", "8", dev_head])
    assert two.exit_code == 0, two.stderr
    assert two.stdout == one.stdout
    assert two.stderr == one.stderr


def _shiftable(s) -> bool:
    """Whether bshift (default: no pair holding punctuation) can swap two words of ``s``."""
    w = s.words()
    return any(a.upos != "PUNCT" and b.upos != "PUNCT" for a, b in zip(w, w[1:], strict=False))


def test_conllu_comments_and_summary(cli, dev_head) -> None:
    res = cli(["perturb", "--kind", "bshift", "--seed", "9", "--variants", "2", dev_head])
    assert res.exit_code == 0
    out = sentences_from_string(res.stdout)
    originals = list(read_conllu(dev_head))
    assert len(out) == 2 * len(originals)
    ids = [s.sent_id for s in out]
    assert len(set(ids)) == len(ids)
    lines = res.stdout.splitlines()
    assert sum(line.startswith("# synrob.changed") for line in lines) == len(out)
    for k, s in enumerate(out):
        orig = originals[k // 2]
        meta = s.metadata
        for key in _COMMENTS:
            assert key in meta
        assert meta["synrob.source"] == orig.sent_id
        assert meta["synrob.kind"] == "bshift"
        assert meta["synrob.seed"] == "9" and meta["synrob.variant"] == str(k % 2)
        assert s.sent_id == f"{orig.sent_id}.synrob-bshift-v{k % 2}"
        changed = meta.get("synrob.changed")
        if _shiftable(orig):
            i, j = map(int, changed.split(","))
            assert (s.forms[i - 1], s.forms[j - 1]) == (orig.forms[j - 1], orig.forms[i - 1])
            assert sorted(s.forms) == sorted(orig.forms)
            assert 0.0 <= float(meta["synrob.chrf2"]) <= 1.0
    unchanged = sum(1 for s in originals if not _shiftable(s))
    assert f"perturbed {len(out) - 2 * unchanged}/{len(out)} outputs ({2 * unchanged} unchanged)" \
        in res.stderr


def test_unknown_kind_and_param_are_one_line(cli, dev_head) -> None:
    res = cli(["perturb", "--kind", "nope", dev_head])
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr.count("\n") == 1
    assert "unknown perturber 'nope'" in res.stderr and "bshift" in res.stderr
    res = cli(["perturb", "--kind", "shuffle", "-p", "speed=3", dev_head])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1
    assert "unknown parameter 'speed'" in res.stderr and "unit" in res.stderr
    res = cli(["perturb", "--kind", "shuffle", "-p", "unit=letter", dev_head])
    assert res.exit_code == 1 and "word, subword, char" in res.stderr
    res = cli(["perturb", "--kind", "bshift", "--budget", "2", dev_head])
    assert res.exit_code == 1 and "unknown parameter 'budget'" in res.stderr


def test_text_only_kind_refuses_conllu(cli, dev_head) -> None:
    res = cli(["perturb", "--kind", "shuffle", "-p", "unit=char", "--format", "conllu", dev_head])
    assert res.exit_code == 1 and res.stdout == ""
    assert "text only" in res.stderr and res.stderr.count("\n") == 1
    res = cli(["perturb", "--kind", "shuffle", "-p", "unit=char", dev_head])  # default: text
    assert res.exit_code == 0
    originals = list(read_conllu(dev_head))
    lines = res.stdout.splitlines()
    assert len(lines) == len(originals)
    for orig, line in zip(originals, lines, strict=True):
        assert sorted(line) == sorted(orig.text)  # a character permutation


def test_describe(cli) -> None:
    res = cli(["perturb", "--describe", "shuffle"])
    assert res.exit_code == 0
    assert "Clouatre" in res.stdout
    for name in ("unit", "rho", "mode"):
        assert name in res.stdout
    res = cli(["perturb", "--describe", "shuffle", "--json"])
    info = json.loads(res.stdout)
    assert info["kind"] == "shuffle"
    params = {p["name"]: p for p in info["params"]}
    assert params["unit"]["default"] == "word" and params["unit"]["type"] == "str"
    res = cli(["perturb", "--describe", "nope"])
    assert res.exit_code == 1 and "available:" in res.stderr


def test_jsonl_fields_and_labels(cli, dev_head) -> None:
    res = cli(["perturb", "--kind", "bshift", "--format", "jsonl", "--seed", "2", dev_head])
    assert res.exit_code == 0
    records = [json.loads(line) for line in res.stdout.splitlines()]
    originals = list(read_conllu(dev_head))
    assert len(records) == len(originals)
    for rec, orig in zip(records, originals, strict=True):
        assert {"sent_id", "source", "kind", "params", "seed", "variant", "changed", "chrf2",
                "lev", "original", "perturbed", "label"} <= set(rec)
        assert rec["source"] == orig.sent_id and rec["original"] == orig.text
        assert rec["seed"] == 2 and rec["variant"] == 0 and rec["params"] == {"punct": False}
        assert rec["label"] == ("I" if _shiftable(orig) else "O")
        assert (rec["perturbed"] != rec["original"]) == bool(rec["changed"]) or \
            len(set(orig.forms)) < len(orig.forms)


def test_stdin_and_output_file(cli, dev_head, tmp_path) -> None:
    text = Path(dev_head).read_text(encoding="utf-8")
    from_stdin = cli(["perturb", "--kind", "flip", "--seed", "1"], stdin=text)
    from_dash = cli(["perturb", "--kind", "flip", "--seed", "1", "-"], stdin=text)
    from_file = cli(["perturb", "--kind", "flip", "--seed", "1", dev_head])
    assert from_stdin.exit_code == 0, from_stdin.stderr
    assert from_stdin.stdout == from_dash.stdout == from_file.stdout
    out = tmp_path / "out.conllu"
    res = cli(["perturb", "--kind", "flip", "--seed", "1", "-o", str(out), dev_head])
    assert res.exit_code == 0 and res.stdout == ""
    assert out.read_text(encoding="utf-8") == from_file.stdout


def test_skip_invalid(cli, dev_head, tmp_path) -> None:
    bad = "# sent_id = broken\n1\tHi\thi\tINTJ\tUH\t_\t5\troot\t_\t_\n\n"
    good = Path(dev_head).read_text(encoding="utf-8")
    path = tmp_path / "mixed.conllu"
    path.write_text(bad + good, encoding="utf-8")
    res = cli(["perturb", "--kind", "bshift", str(path)])
    assert res.exit_code == 1 and "mixed.conllu:2" in res.stderr
    res = cli(["perturb", "--kind", "bshift", "--skip-invalid", str(path)])
    assert res.exit_code == 0
    assert "skipped invalid sentence" in res.stderr and "skipped 1 invalid" in res.stderr
    assert len(sentences_from_string(res.stdout)) == 200


@pytest.mark.slow
def test_ewt_dev_bshift_integration(cli, ewt_dev) -> None:
    res = cli(["perturb", "--kind", "bshift", "--seed", "0", ewt_dev])
    assert res.exit_code == 0
    out = sentences_from_string(res.stdout)
    originals = list(read_conllu(ewt_dev))
    assert len(out) == len(originals) == 2001
    single = sum(1 for s in originals if not _shiftable(s))
    # plus the sentences whose drawn pair holds two identical words (labelled O since 1.2)
    same = sum(1 for s in out if s.metadata.get("synrob.note", "").startswith("the drawn pair"))
    assert same == 1 and all(s.text == o.text for s, o in zip(out, originals, strict=True)
                             if s.metadata.get("synrob.label") == "O")
    unchanged = single + same
    assert f"perturbed {2001 - unchanged}/2001 sentences ({unchanged} unchanged)" in res.stderr
    for orig, new in zip(originals, out, strict=True):
        # the tree travels with its words: same undirected edges between the same word forms
        def labelled(s):
            f = s.forms
            return sorted(tuple(sorted((f[i], f[j]))) for i, j in s.edges())

        assert labelled(new) == labelled(orig)
        assert sorted(new.forms) == sorted(orig.forms)


@pytest.mark.slow
def test_sample_spec_input(cli) -> None:
    res = cli(["perturb", "--kind", "bshift", "--format", "text", "sample:en_ewt:dev"])
    assert res.exit_code == 0 and len(res.stdout.splitlines()) > 100


def test_somo_reference_defaults_to_the_inputs(cli) -> None:
    import json as _json

    res = cli(["perturb", "--kind", "somo", "--format", "jsonl", "sample:en_ewt:dev"])
    assert res.exit_code == 0, res.stderr
    rows = [_json.loads(line) for line in res.stdout.splitlines()]
    assert len(rows) == 250
    changed = [r for r in rows if r["changed"]]
    assert len(changed) > 200 and all(r["label"] == "I" for r in changed)
    assert all(len(r["changed"]) == 1 for r in changed)
    one = "# sent_id = a\n1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_\n\n"
    res = cli(["perturb", "--kind", "somo"], stdin=one)
    assert res.exit_code == 1 and "reference" in res.stderr


def test_raw_text_input_is_parsed_then_perturbed(cli, tmp_path) -> None:
    from synrob.perturb.corpus import sentences_from_string

    src = tmp_path / "in.txt"
    src.write_text("She quickly sold three old cars yesterday.\nDogs bark.\n", encoding="utf-8")
    res = cli(["perturb", "--kind", "jabberwocky", "--seed", "1", "--format", "conllu", src])
    assert res.exit_code == 0, res.stderr
    assert res.stderr.startswith("synrob: warning: parsing raw text with spaCy")
    sents = sentences_from_string(res.stdout)
    assert len(sents) == 2
    assert sents[0].metadata["synrob.source"] == "text-1"
    assert "not UD" in sents[0].metadata["synrob.parser"]
    assert sents[0].metadata["synrob.changed"]  # some content word was replaced
    text = cli(["perturb", "--kind", "bshift", "--format-in", "text"],
               stdin="Dogs bark loudly.\n")
    assert text.exit_code == 0 and text.stdout.count("\n") == 1


def test_output_that_is_the_input_is_refused_and_the_input_kept(cli, sample_slice, tmp_path) -> None:
    src = sample_slice("dev", 5, tmp_path)
    before = Path(src).read_text(encoding="utf-8")
    for out in (src, str(tmp_path / "." / "dev-5.conllu")):
        res = cli(["perturb", "--kind", "shuffle", src, "-o", out])
        assert res.exit_code == 1
        assert res.stderr.count("\n") == 1 and "refusing to overwrite an input" in res.stderr
        assert Path(src).read_text(encoding="utf-8") == before  # the input is intact


def test_failed_run_leaves_no_partial_output(cli, tmp_path) -> None:
    good = "# text = a b\n1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n2\tb\tb\tX\tX\t_\t1\tdep\t_\t_\n\n"
    bad = "1\ta\ta\tX\tX\t_\t0\troot\t_\n\n"  # 9 columns: invalid, the run stops here
    src = tmp_path / "in.conllu"
    src.write_text(good * 200 + bad, encoding="utf-8")
    out = tmp_path / "out.conllu"
    out.write_text("previous result\n", encoding="utf-8")
    res = cli(["perturb", "--kind", "shuffle", str(src), "-o", str(out)])
    assert res.exit_code == 1 and "synrob: error:" in res.stderr
    assert out.read_text(encoding="utf-8") == "previous result\n"  # old file, not a truncated one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.conllu", "out.conllu"]
    res = cli(["perturb", "--kind", "shuffle", str(src), "-o", str(out), "--skip-invalid"])
    assert res.exit_code == 0
    assert out.read_text(encoding="utf-8").count("# synrob.source") == 200
