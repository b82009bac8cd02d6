"""The field's pair formats through the CLI: ``synrob perturb -k agreement --format
multiblimp|blimp -o FILE`` (atomic, agreement only) and ``synrob score --pairs FILE`` (the same
accuracy, intervals and breakdowns as the CoNLL-U pairs; one-line errors)."""

from __future__ import annotations

import io
from contextlib import redirect_stderr
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.io.pairs import read_pairs


def _one_error(res, message: str) -> None:
    errors = [x for x in res.stderr.splitlines() if x.startswith("synrob: error:")]
    assert res.exit_code == 1 and len(errors) == 1 and message in errors[0], res.stderr
    assert "Traceback" not in res.stderr


@pytest.fixture(scope="module")
def pair_files(tmp_path_factory, sample_slice):
    """Agreement pairs of 60 sentences of the EWT sample's test split as CoNLL-U, MultiBLiMP
    and BLiMP files written by ``synrob perturb``, and the original slice."""
    from synrob.cli.app import run

    root = tmp_path_factory.mktemp("pair_files")
    out = {"original": Path(sample_slice("test", 60, root))}
    for fmt, name in (("conllu", "pairs.conllu"), ("multiblimp", "pairs.tsv"),
                      ("blimp", "pairs.jsonl")):
        with redirect_stderr(io.StringIO()) as err:
            code = run(["perturb", "-k", "agreement", str(out["original"]), "--format", fmt,
                        "-o", str(root / name)])
        assert code == 0, err.getvalue()
        out[fmt] = root / name
    return out


def test_perturb_writes_pair_files_with_the_conllu_ids(pair_files):
    ids = [s.sent_id for s in read_conllu(pair_files["conllu"])]
    assert len(ids) >= 15
    for fmt in ("multiblimp", "blimp"):
        read = read_pairs(pair_files[fmt])
        assert read.format == fmt and [i.id for i in read.items] == ids


def test_perturb_pair_format_of_another_kind_is_one_line(cli, tmp_path, sample_slice):
    orig = sample_slice("test", 5, tmp_path)
    dest = tmp_path / "bshift.tsv"
    res = cli(["perturb", "-k", "bshift", orig, "--format", "multiblimp", "-o", str(dest)])
    _one_error(res, "--format multiblimp writes agreement minimal pairs: use it with --kind "
                    "agreement, not 'bshift'")
    assert not dest.exists()


def test_perturb_pair_format_refuses_to_overwrite_its_input(cli, tmp_path, sample_slice):
    orig = sample_slice("test", 5, tmp_path)
    before = Path(orig).read_text(encoding="utf-8")
    res = cli(["perturb", "-k", "agreement", orig, "--format", "blimp", "-o", orig])
    assert res.exit_code == 1 and Path(orig).read_text(encoding="utf-8") == before
