"""Property-based fuzzing of the CLI on corrupted real EWT sentences (bench/fuzz.py, CI budget).

Every command gets files mixing intact and corrupted EWT dev sentences, or damaged as a whole
(CRLF/CR line ends, BOM, random bytes around, truncation, empty, random bytes or text); see
``bench/fuzz.py`` for the corruptions and the expected outcomes, which are computed by
validating each block of the file on its own. Properties: exit 0 or 1 only (never a traceback,
never 70), one ``synrob: error:`` line on exit 1; with ``--skip-invalid`` every valid sentence
comes out, in order, and the skipped count is exact. The examples are fixed by a seed per
target, so a CI failure reproduces. The longer run is ``bench/fuzz.py --examples 20000``.

``coco`` is not fuzzed: it runs a language model on every sentence (minutes for a handful of
sentences on a shared CPU); its input handling is the pipeline every other kind shares.

The regression tests at the end pin the bugs the fuzzing found.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .bench_script import load_bench

ROOT = Path(__file__).resolve().parents[1]


fuzz = load_bench("fuzz", "synrob_bench_fuzz")


def _fuzz(name: str, check, examples: int, tmp_path: Path) -> None:
    tally = fuzz.Tally()
    fuzz.fuzz_target(name, check, examples, tmp_path, tally, raise_on_failure=True)
    assert tally.examples >= examples // 2, tally.examples  # hypothesis ran them
    assert not any(tally.counts.values()), tally.failures


@pytest.fixture(autouse=True)
def _needs_ewt(ewt_dir: Path) -> None:
    """The fuzzed sentences are EWT dev's: fail with conftest's message when it is missing."""


def test_the_corruptions_make_both_valid_and_invalid_sentences(tmp_path: Path) -> None:
    """The strategy is not degenerate: over a fixed sample of files, some sentences are valid
    and intact, some invalid, and every kind of corruption and whole-file damage occurs."""
    from hypothesis import HealthCheck, given, seed, settings

    seen = {"valid": 0, "invalid": 0, "intact": 0, "empty": 0, "crlf": 0, "bom": 0, "cut": 0}

    @seed(1)
    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(fuzz.fuzz_files())
    def sample(fz) -> None:
        exp = fuzz.expect(fz.data, "f.conllu", fz.intact)
        assert not fuzz.check_intact(exp)
        seen["valid"] += len(exp.valid)
        seen["invalid"] += len(exp.invalid)
        seen["intact"] += len(exp.intact_ids)
        seen["empty"] += not exp.blocks
        seen["crlf"] += b"\r\n" in fz.data
        seen["bom"] += fz.data.startswith(b"\xef\xbb\xbf")
        seen["cut"] += "cut None" not in fz.how

    sample()
    assert all(n > 0 for n in seen.values()), seen
    assert seen["invalid"] > 50 and seen["valid"] > 100, seen


def test_expected_blocks_follow_conllu_line_ends(tmp_path: Path) -> None:
    """The independent oracle: CR, LF and CRLF end lines; whitespace-only lines end blocks;
    only a leading BOM is dropped; each block is judged on its own."""
    pool = fuzz.pool()
    good = "\n".join(pool[0])
    data = ("\ufeff" + good + "\r\n \r\n" + good.replace("\n", "\r") + "\r\r1\tx\n\n").encode()
    exp = fuzz.expect(data, "f.conllu", [pool[0]])
    assert len(exp.valid) == 2 and len(exp.invalid) == 1
    assert exp.invalid[0].lines[0][1] == "1\tx"
    assert not fuzz.check_intact(exp)


def test_the_checks_catch_a_lost_sentence_and_a_crash(tmp_path: Path) -> None:
    """The properties are not vacuous: a sentence missing from the output, a wrong skipped
    count and an exit 70 are each reported."""
    pool = fuzz.pool()
    two = ("\n".join(pool[0]) + "\n\n" + "\n".join(pool[1]) + "\n\n").encode()
    exp = fuzz.expect(two, "f.conllu", [pool[0], pool[1]])
    path = tmp_path / "one.conllu"
    path.write_text("\n".join(pool[0]) + "\n\n", encoding="utf-8")  # pool[1] is "lost"
    for check in (fuzz.target_perturb("shuffle-word"), fuzz.target_perturb("flip-char"),
                  fuzz.target_stats):
        assert fuzz.LOST in {kind for kind, _ in check(path, exp)}
    crash = fuzz.CliResult(70, "", "synrob: internal error: KeyError: 'x' (a bug: ...)\n")
    assert fuzz.check_boundary(crash)
    two_errors = fuzz.CliResult(1, "", "synrob: error: a\nsynrob: error: b\n")
    assert fuzz.check_boundary(two_errors)
    assert not fuzz.check_boundary(fuzz.CliResult(1, "", "synrob: warning: w\nsynrob: error: a\n"))


def test_fuzz_conllu_validate(tmp_path: Path) -> None:
    _fuzz("validate", fuzz.target_validate, 200, tmp_path)


def test_fuzz_conllu_stats_skip_invalid(tmp_path: Path) -> None:
    _fuzz("stats", fuzz.target_stats, 120, tmp_path)


@pytest.mark.parametrize("config", sorted(fuzz.PERTURB_CONFIGS))
def test_fuzz_perturb_skip_invalid(config: str, tmp_path: Path) -> None:
    """Every registered perturber but coco (see the module docstring), each unit of shuffle
    and flip: nothing valid is lost, the skipped count is exact, never exit 70."""
    _fuzz(f"perturb-{config}", fuzz.target_perturb(config), 25, tmp_path)


def test_fuzz_perturb_text_input(tmp_path: Path) -> None:
    """The same bytes as a .txt file (one sentence per line, parsed with spaCy): a sentence
    per non-blank line, or one error naming the first line that is not UTF-8."""
    _fuzz("perturb-text", fuzz.target_perturb_text, 30, tmp_path)


def test_every_offline_perturber_is_fuzzed() -> None:
    from synrob.perturb.plugins import get_registry

    fuzzed = {args[1] for args in fuzz.PERTURB_CONFIGS.values()}
    assert set(get_registry().names("perturber")) - fuzzed == {"coco"}


@pytest.mark.parametrize("suffix,examples", [(".conllu", 100), (".txt", 40), ("", 40)])
def test_fuzz_metrics(suffix: str, examples: int, tmp_path: Path) -> None:
    _fuzz(f"metrics{suffix or '-nosuffix'}", fuzz.target_metrics(suffix), examples, tmp_path)


def test_fuzz_encode_static(tmp_path: Path) -> None:
    _fuzz("encode", fuzz.target_encode, 100, tmp_path)


def test_fuzz_probe_load_test(tmp_path: Path) -> None:
    """A probe trained once on clean EWT and saved; --load'ed to score fuzzed --test files."""
    train_dir = tmp_path / "train"
    train_dir.mkdir()
    saved = fuzz.train_probe(train_dir)
    _fuzz("probe", fuzz.target_probe(saved), 100, tmp_path)


# --------------------------------------------------------------------------- regressions


_SENT = """# sent_id = a
# text = the dog runs
1\tthe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tdog\tdog\tNOUN\tNN\tNumber=Sing\t3\tnsubj\t_\t_
3\truns\trun\tVERB\tVBZ\t_\t0\troot\t_\t_

"""
_BAD_FEATS = """# sent_id = b
1\tthe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\tNN\tgarbage\t3\tnsubj\t_\t_
3\truns\trun\tVERB\tVBZ\t_\t0\troot\t_\t_

"""


def _one_error(r, text: str) -> None:
    assert r.exit_code == 1, r.stderr
    lines = [line for line in r.stderr.strip().split("\n")
             if not line.startswith("synrob: warning:")]
    assert lines == [f"synrob: error: {text}"]


def test_metrics_text_file_not_utf8_is_a_user_error(cli, tmp_path: Path) -> None:
    """Was exit 70 (UnicodeDecodeError) for a text file, and for a file whose format is sniffed."""
    txt = tmp_path / "a.txt"
    txt.write_bytes(b"a fine line\nx\xffy\n")
    _one_error(cli(["metrics", txt, txt]), f"{txt}:2: not UTF-8: byte 0xff")
    sniffed = tmp_path / "b"
    sniffed.write_bytes(b"\xc3(\n")
    _one_error(cli(["metrics", sniffed, sniffed]), f"{sniffed}:1: not UTF-8: byte 0xc3")


def test_perturb_text_input_not_utf8_is_a_user_error(cli, tmp_path: Path) -> None:
    """Was exit 70 (UnicodeDecodeError): a text input is decoded with its line numbers kept."""
    txt = tmp_path / "in.txt"
    txt.write_bytes(b"The dog runs.\r\nIt was x\xe9y.\n")
    _one_error(cli(["perturb", "--kind", "shuffle", txt]), f"{txt}:2: not UTF-8: byte 0xe9")


def test_somo_skip_invalid_ignores_invalid_reference_sentences(cli, tmp_path: Path) -> None:
    """somo's reference defaults to the input: an invalid sentence there (a malformed FEATS)
    reached the bigram table and crashed the substitution (exit 70); now it is left out."""
    path = tmp_path / "in.conllu"
    path.write_text(_SENT + _BAD_FEATS, encoding="utf-8")
    for seed in range(4):
        r = cli(["perturb", "--kind", "somo", "--skip-invalid", "--format", "jsonl",
                 "--seed", seed, path])
        assert r.exit_code == 0, r.stderr
        assert [json.loads(line)["source"] for line in r.stdout.splitlines()] == ["a"]
        assert "skipped 1 invalid sentences" in r.stderr


def test_somo_skip_invalid_with_a_byte_that_is_not_utf8(cli, tmp_path: Path) -> None:
    """Reading the reference decoded strictly: exit 70 (UnicodeDecodeError) for any bad byte."""
    path = tmp_path / "in.conllu"
    path.write_bytes(_SENT.encode() + b"# sent_id = c\n1\tx\xff\tx\tX\tX\t_\t0\troot\t_\t_\n\n")
    r = cli(["perturb", "--kind", "somo", "--skip-invalid", "--format", "jsonl", path])
    assert r.exit_code == 0, r.stderr
    assert [json.loads(line)["source"] for line in r.stdout.splitlines()] == ["a"]
    assert f"{path}:8: not UTF-8: byte 0xff at byte 4 of the line" in r.stderr
    r = cli(["perturb", "--kind", "somo", "--format", "jsonl", path])
    _one_error(r, f"{path}:8: not UTF-8: byte 0xff at byte 4 of the line")


def test_somo_reference_warns_once_about_a_repeated_sent_id(cli, tmp_path: Path) -> None:
    path = tmp_path / "in.conllu"
    path.write_text(_SENT + _SENT, encoding="utf-8")
    r = cli(["perturb", "--kind", "somo", "--format", "jsonl", path])
    assert r.exit_code == 0, r.stderr
    assert r.stderr.count("duplicate sent_id 'a'") == 1, r.stderr


def test_somo_reference_counts_only_valid_sentences(tmp_path: Path) -> None:
    from synrob.perturb.perturbers.senteval import BigramTable

    path = tmp_path / "ref.conllu"
    path.write_text(_SENT + _BAD_FEATS, encoding="utf-8")
    table = BigramTable.from_conllu([path])
    assert table.sentences == 1
    assert table.count("the", "dog") == 1 and table.count("the", "cat") == 0
