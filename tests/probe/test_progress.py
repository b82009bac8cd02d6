"""Progress of the long API calls (issue 46, section 3): ``progress=`` takes True (bars where
someone watches), False or a function of the shape of ``tqdm.tqdm``; a Jupyter kernel gets a
widget, or plain lines without ipywidgets; a piped stderr gets nothing."""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import synrob.probe as pr
from synrob.perturb.errors import ParameterError
from synrob.probe.runtime import progress as pg

T = TypeVar("T")


class Recorder:
    """A :class:`~synrob.probe.runtime.progress.Progress` that records each loop: description, total
    and the number of items it went through."""

    def __init__(self) -> None:
        self.loops: list[list[Any]] = []

    def __call__(self, items: Iterable[T], description: str, total: int | None = None
                 ) -> Iterator[T]:
        loop = [description, total, 0]
        self.loops.append(loop)
        for item in items:
            loop[2] += 1
            yield item

    def find(self, fragment: str) -> list[list[Any]]:
        return [loop for loop in self.loops if fragment in loop[0]]


def test_resolve_progress() -> None:
    rec = Recorder()
    assert pg.resolve_progress(True) is pg.auto_progress
    assert pg.resolve_progress(False) is None and pg.resolve_progress(None) is None
    assert pg.resolve_progress(rec) is rec
    with pytest.raises(ParameterError, match="progress must be True, False or a function"):
        pg.resolve_progress("yes")  # type: ignore[arg-type]


def _fake_kernel(monkeypatch: pytest.MonkeyPatch, widgets: bool) -> None:
    """Make this process look like a Jupyter kernel (with or without ipywidgets)."""
    shell = types.SimpleNamespace(config={"IPKernelApp": {}})
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    real = pg.importlib.util.find_spec
    monkeypatch.setattr(pg.importlib.util, "find_spec",
                        lambda name, *a: (real(name, *a) if widgets else None)
                        if name == "ipywidgets" else real(name, *a))


def test_display_kind_follows_the_kernel_and_ipywidgets(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    assert pg.display_kind() == "terminal"
    with monkeypatch.context() as m:
        _fake_kernel(m, widgets=False)
        assert pg.display_kind() == "lines"
    if pg.importlib.util.find_spec("ipywidgets") is not None:
        import tqdm.notebook  # noqa: F401  (imports the real IPython before it is faked)

        with monkeypatch.context() as m:
            _fake_kernel(m, widgets=True)
            assert pg.display_kind() == "widget"


def test_a_kernel_without_ipywidgets_gets_plain_lines_and_no_warning(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _fake_kernel(monkeypatch, widgets=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # TqdmWarning: IProgress not found would fail here
        assert list(pg.auto_progress(range(3), "encoding x.conllu", 3)) == [0, 1, 2]
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "synrob: encoding x.conllu: 0/3"
    assert err[-1].startswith("synrob: encoding x.conllu: 3/3 done in ")


def test_plain_lines_at_most_every_interval(capsys: pytest.CaptureFixture[str]) -> None:
    assert list(pg.plain_lines(range(5), "runs", interval=0.0)) == list(range(5))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "synrob: runs: 0" and len(lines) == 7 and "5 done in" in lines[-1]


def test_outside_a_kernel_a_piped_stderr_shows_nothing(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    assert list(pg.auto_progress(iter(range(4)), "encoding", 4)) == [0, 1, 2, 3]
    assert capsys.readouterr().err == ""


def test_counter_drives_a_progress_function_by_counts() -> None:
    rec = Recorder()
    counter = pg.Counter(rec, "scoring 10 pairs", 10)
    assert rec.loops == [["scoring 10 pairs", 10, 1]]  # started: the first item pulled
    counter.advance_to(4, 10)
    counter.advance(3)
    assert counter.done == 7 and rec.loops[0][2] == 8
    counter.close()
    assert counter.done == 10 and rec.loops[0][2] == 10  # every item went through
    silent = pg.Counter(None, "nothing", 3)
    silent.advance(5)
    assert silent.done == 3  # never past the total


def test_tqdm_is_a_progress_function(capsys: pytest.CaptureFixture[str]) -> None:
    from tqdm import tqdm

    counter = pg.Counter(tqdm, "scoring", 3)
    counter.advance(3)
    counter.close()
    assert "scoring: 100%" in capsys.readouterr().err


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory, sample_slice) -> dict[str, str]:
    d = tmp_path_factory.mktemp("progress")
    return {s: sample_slice(s, n, d) for s, n in (("train", 40), ("dev", 20), ("test", 15))}


def test_encode_and_probe_show_encoding_and_layers(small: dict[str, str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))
    rec = Recorder()
    pr.encode(small["dev"], "glove-6b-50d", progress=rec)
    assert rec.find("encoding dev-20.conllu") == [["encoding dev-20.conllu (glove-6b-50d)", 20,
                                                   20]]
    rec = Recorder()
    pr.encode(small["dev"], "glove-6b-50d", progress=rec)
    assert rec.loops == []  # cached: nothing to show
    rec = Recorder()
    pr.probe(small["test"], encoder="glove-6b-50d", layer=0, task="pos", train=small["train"],
             dev=small["dev"], control=True, params={"epochs": 2}, device="cpu",
             progress=rec)
    assert rec.find("encoding train-40.conllu") == [[
        "encoding train-40.conllu (glove-6b-50d)", 40, 40]]
    assert rec.find("encoding test-15.conllu")[0][1:] == [15, 15]
    layers = [loop for loop in rec.loops if loop[0].endswith(": layers")]
    assert [loop[1:] for loop in layers] == [[1, 1], [1, 1]]  # the probe, then its control
    assert layers[0][0] == "pos probe on glove-6b-50d, seed 0: layers"
    assert "control" in layers[1][0]


def test_erase_shows_its_steps(small: dict[str, str]) -> None:
    rec = Recorder()
    pr.erase(small["train"], small["dev"], small["test"], encoder="glove-6b-50d", layer=0,
             task="pos", bootstrap=0, device="cpu", progress=rec)
    steps = rec.find("amnesic probing")
    assert len(steps) == 1 and steps[0][1] == steps[0][2] > 3


def test_score_pairs_shows_the_pairs_scored(tiny_lms: dict[str, Path], tmp_path: Path) -> None:
    import synrob.perturb as sp

    short = [s for s in sp.read_conllu("sample:en_ewt:test") if len(s.forms) <= 12][:30]
    test = str(tmp_path / "short.conllu")
    sp.write_conllu(short, test)
    sp.perturb(test, "shuffle", seed=0).write_conllu(tmp_path / "shuffled.conllu")
    rec = Recorder()
    out = pr.score_pairs(test, tmp_path / "shuffled.conllu", lm=str(tiny_lms["causal"]),
                         bootstrap=0, limit=30, chunk=8, device="cpu", progress=rec)
    n = out.summary["pairs"]
    assert rec.loops == [[f"scoring {n} pairs ({tiny_lms['causal']})", n, n]]


def test_run_experiment_shows_its_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from synrob.probe.experiments.runner import run_experiment

    from .test_compare import Layered

    rec, stages = Recorder(), []
    run_experiment(Layered(), tmp_path / "a", progress=rec,
                   on_stage=lambda stage, seconds: stages.append(stage))
    assert rec.loops == [["test-layered: runs", 3, 3]] and "runs" in stages
    rec = Recorder()
    run_experiment(Layered(), tmp_path / "a", progress=rec)
    assert rec.loops == []  # every run reused: no bar
