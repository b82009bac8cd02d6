"""Experiment results are keyed by content, never by path: data files and run ids hash each
input file's SHA-256, each perturber's name, version and full options; results.json keeps the
provenance of the execution that produced each run."""

from __future__ import annotations

import json
import os
import shutil
import time
from itertools import islice
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu, write_conllu
from synrob.perturb.io.data import sample_path
from synrob.perturb.params import Param
from synrob.perturb.plugins import get_registry
from synrob.probe.experiments import data as exp_data
from synrob.probe.experiments.base import Experiment, RunSpec
from synrob.probe.experiments.data import content_hash, content_keys, perturbed_file
from synrob.probe.experiments.runner import run_experiment


class FileChangeRate(Experiment):
    """Mean chrF-2 of perturbed files built in ``data/``: one run per (treebank, perturber).

    The key names the treebank (a path or spec) and the perturbed file (by its name in data/),
    not the perturber: what a run depends on reaches its id only through the files.
    """

    name = "test-file-change-rate"
    version = "1.0"
    params = (
        Param("kinds", str, "shuffle,flip", "perturbers"),
        Param("treebanks", str, "sample:en_ewt:dev", "treebanks (comma-separated)"),
        Param("limit", int, 40, "sentences"),
    )

    def _files(self, ctx):
        return {(i, k): perturbed_file(tb, k, {}, seed=ctx.seed, dest=ctx.data_dir, fmt="jsonl",
                                       max_sentences=self.options["limit"])
                for i, tb in enumerate(self.list("treebanks")) for k in self.list("kinds")}

    def prepare(self, ctx):
        self._files(ctx)

    def plan(self, ctx):
        tbs = self.list("treebanks")
        return [RunSpec({"treebank": tbs[i], "perturbed": path.name}, f"{k}@{i}")
                for (i, k), path in self._files(ctx).items()]

    def execute(self, spec, ctx):
        lines = (ctx.data_dir / spec.key["perturbed"]).read_text(encoding="utf-8").splitlines()
        recs = [json.loads(x) for x in lines if x.strip()]
        with (ctx.outdir / "executions.log").open("a") as fh:
            fh.write(spec.label + "\n")
        return [{"run_label": spec.label, "metric": "chrf2",
                 "value": sum(r["chrf2"] for r in recs) / len(recs)}]


def _executions(out: Path) -> list[str]:
    log = out / "executions.log"
    return log.read_text().split() if log.exists() else []


def _slice(dest: Path, src: Path, start: int, n: int) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_conllu(islice(read_conllu(src), start, start + n), dest)
    return dest


def _values(res) -> list[tuple[str, float]]:
    return sorted((r["run_label"], r["value"]) for r in res.rows)


def test_same_content_at_another_path_reuses_everything(tmp_path: Path) -> None:
    """The same treebank bytes under another directory and file name: nothing is rebuilt or
    executed again; results.json shows the current paths and the producing run's provenance."""
    a = tmp_path / "a" / "en_ewt-ud-dev.conllu"
    b = tmp_path / "elsewhere" / "renamed.conllu"
    for p in (a, b):
        p.parent.mkdir(parents=True)
        shutil.copyfile(sample_path("dev"), p)
    out = tmp_path / "res"
    first = run_experiment(FileChangeRate(treebanks=str(a)), out)
    assert (first.executed, first.reused) == (2, 0)
    built = sorted(p.name for p in (out / "data").iterdir())
    assert len(built) == 4  # two perturbed files and their provenance sidecars

    moved = run_experiment(FileChangeRate(treebanks=str(b)), out)
    assert (moved.executed, moved.reused) == (0, 2)
    assert sorted(p.name for p in (out / "data").iterdir()) == built  # no file rebuilt
    assert _executions(out) == ["shuffle@0", "flip@0"]
    assert _values(moved) == _values(first)
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert {r["key"]["treebank"] for r in runs} == {str(b)}  # the current plan's key
    assert {r["provenance"]["key"]["treebank"] for r in runs} == {str(a)}  # where it ran
    sha = content_hash(a)
    assert all(r["content_key"]["treebank"] == {"sha256": sha} for r in runs)
    # the sample specifier names the same bytes too
    spec = run_experiment(FileChangeRate(treebanks="sample:en_ewt:dev"), out)
    assert (spec.executed, spec.reused) == (0, 2)


def test_changed_treebank_at_same_path_reruns_affected_runs(tmp_path: Path) -> None:
    """Rewriting one of two treebanks in place re-executes exactly the runs that read it."""
    t0 = _slice(tmp_path / "tb" / "zero.conllu", sample_path("dev"), 0, 40)
    t1 = _slice(tmp_path / "tb" / "one.conllu", sample_path("test"), 0, 40)
    out = tmp_path / "res"
    exp = FileChangeRate(treebanks=f"{t0},{t1}")
    first = run_experiment(exp, out)
    assert first.executed == 4
    _slice(t0, sample_path("dev"), 40, 40)  # other sentences, same path
    again = run_experiment(exp, out)
    assert (again.executed, again.reused) == (2, 2)
    assert sorted(_executions(out)[4:]) == ["flip@0", "shuffle@0"]
    before = dict(_values(first))
    after = dict(_values(again))
    assert after["shuffle@1"] == before["shuffle@1"] and after["flip@1"] == before["flip@1"]
    assert after["shuffle@0"] != before["shuffle@0"]  # computed on the new sentences


def test_new_perturber_version_reruns_exactly_its_runs(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Bumping flip's version: the flip runs (on both treebanks) re-execute on new files, the
    shuffle runs are reused; the output bytes of flip did not even change."""
    t0 = _slice(tmp_path / "zero.conllu", sample_path("dev"), 0, 30)
    t1 = _slice(tmp_path / "one.conllu", sample_path("train"), 0, 30)
    out = tmp_path / "res"
    exp = FileChangeRate(treebanks=f"{t0},{t1}")
    first = run_experiment(exp, out)
    assert first.executed == 4
    flip = get_registry().get("perturber", "flip")
    old_version = flip.version
    monkeypatch.setattr(flip, "version", old_version + ".post1")
    bumped = run_experiment(exp, out)
    assert (bumped.executed, bumped.reused) == (2, 2)
    assert sorted(_executions(out)[4:]) == ["flip@0", "flip@1"]
    assert _values(bumped) == _values(first)  # same rewrites, yet new provenance
    runs = {r["label"]: r for r in json.loads((out / "results.json").read_text())["runs"]}
    assert runs["flip@0"]["provenance"]["perturbers"] == {"flip": old_version + ".post1"}
    assert runs["shuffle@0"]["provenance"]["perturbers"] == {
        "shuffle": get_registry().get("perturber", "shuffle").version}
    recipes = [exp_data.provenance_of(p)["recipe"] for p in (out / "data").glob("*.flip.*.jsonl")]
    assert sorted(r["perturber_version"] for r in recipes) == sorted(
        [old_version, old_version, old_version + ".post1", old_version + ".post1"])


def test_reused_run_keeps_its_provenance(tmp_path: Path) -> None:
    out = tmp_path / "res"
    first = run_experiment(FileChangeRate(kinds="flip", limit=20), out)
    run_id = first.runs[0]["id"]
    prov = first.runs[0]["provenance"]
    assert {"finished", "host", "versions", "perturbers", "encoders", "key", "threads",
            "gemm"} <= set(prov)
    assert prov["threads"] >= 1 and prov["gemm"] in ("strict", "no-mkl", "unknown")
    flip_version = get_registry().get("perturber", "flip").version
    assert prov["versions"]["synrob-probe"] and prov["perturbers"] == {"flip": flip_version}
    # simulate a run produced long ago by an older synrob
    run_file = out / "runs" / f"{run_id}.json"
    saved = json.loads(run_file.read_text())
    saved["provenance"]["finished"] = "2001-02-03T04:05:06Z"
    saved["provenance"]["versions"]["synrob-probe"] = "0.0.1"
    run_file.write_text(json.dumps(saved))
    time.sleep(1.1)
    again = run_experiment(FileChangeRate(kinds="flip", limit=20), out)
    assert again.executed == 0
    data = json.loads((out / "results.json").read_text())
    kept = data["runs"][0]["provenance"]
    assert kept["finished"] == "2001-02-03T04:05:06Z" and kept["versions"]["synrob-probe"] == "0.0.1"
    assert data["versions"]["synrob-probe"] != "0.0.1"  # the invocation's own versions
    forced = run_experiment(FileChangeRate(kinds="flip", limit=20), out, force=True)
    assert forced.runs[0]["provenance"]["finished"] > "2001-02-03T04:05:06Z"


def test_content_hash_memoised_by_stat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from synrob.probe.representations import cache

    calls: list[str] = []
    real = cache.corpus_hash
    monkeypatch.setattr(cache, "corpus_hash", lambda p: calls.append(str(p)) or real(p))
    f = tmp_path / "t.conllu"
    shutil.copyfile(sample_path("dev"), f)
    old = time.time() - 3600
    os.utime(f, (old, old))
    h = content_hash(f)
    assert content_hash(f) == h and content_hash(tmp_path / "." / "t.conllu") == h
    assert len(calls) == 1  # memoised by (path, inode, size, mtime, ctime)
    text = f.read_text(encoding="utf-8")
    f.write_text(text.replace("the", "THE", 1), encoding="utf-8")  # same size, new bytes
    os.utime(f, (old, old))  # even with the old mtime (the ctime moves)
    assert content_hash(f) != h and len(calls) == 2
    fresh = tmp_path / "fresh.conllu"
    shutil.copyfile(f, fresh)  # modified just now: its timestamp could hide a second write
    content_hash(fresh)
    content_hash(fresh)
    assert len(calls) == 4
    # one plan hashes each file once, however many keys name it
    calls.clear()
    keys = [{"train": str(fresh), "run": i} for i in range(20)]
    cks = content_keys(keys, tmp_path)
    assert len(calls) == 1 and cks[0]["train"] == {"sha256": content_hash(f)}


def test_content_key_components(tmp_path: Path) -> None:
    """Perturbers named in a key get their version and full options; encoders their identity;
    strings that name no file stay as they are."""
    out = content_keys([{"kind": "shuffle", "task": "pos", "rate": "0.5",
                         "cond": {"perturbation": "flip", "params": {"rho": 0.25}},
                         "encoder": "glove-6b-50d"}], tmp_path)[0]
    shuffle = get_registry().get("perturber", "shuffle")
    assert out["kind"] == {"component": "perturber", "name": "shuffle",
                           "version": shuffle.version, "options": shuffle().options}
    assert out["cond"]["perturbation"]["options"]["rho"] == 0.25
    assert out["task"] == "pos" and out["rate"] == "0.5"
    assert out["encoder"]["component"] == "encoder" and out["encoder"]["encoder"] == "static"
    assert out["encoder"]["resource"]["files"]  # the vector files' fingerprints


def test_two_runs_on_identical_inputs_are_refused(tmp_path: Path) -> None:
    """Two copies of one treebank in a grid are one set of runs by content: a clear error, not
    two runs overwriting one file."""
    from synrob.perturb.errors import ParameterError

    a, b = tmp_path / "a.conllu", tmp_path / "b.conllu"
    for p in (a, b):
        shutil.copyfile(sample_path("dev"), p)
    with pytest.raises(ParameterError, match="runs 'shuffle@0' and 'shuffle@1' of the grid have "
                                             "one content key"):
        run_experiment(FileChangeRate(kinds="shuffle", treebanks=f"{a},{b}"), tmp_path / "res")


def test_new_metric_definitions_rebuild_perturbed_files(tmp_path, monkeypatch) -> None:
    """The chrf2/lev recorded with each sentence are part of a perturbed file: a new
    synrob.perturb.metrics.METRICS_VERSION builds a new file instead of reusing stale scores."""
    import synrob.perturb.metrics as metrics

    first = perturbed_file("sample:en_ewt:dev", "shuffle", {}, seed=0, dest=tmp_path,
                           fmt="jsonl", max_sentences=5)
    assert exp_data.provenance_of(first)["recipe"]["metrics_version"] == metrics.METRICS_VERSION
    assert perturbed_file("sample:en_ewt:dev", "shuffle", {}, seed=0, dest=tmp_path,
                          fmt="jsonl", max_sentences=5) == first
    monkeypatch.setattr(metrics, "METRICS_VERSION", metrics.METRICS_VERSION + ".test")
    second = perturbed_file("sample:en_ewt:dev", "shuffle", {}, seed=0, dest=tmp_path,
                            fmt="jsonl", max_sentences=5)
    assert second != first and second.is_file()


def test_perturber_info_strict_and_lenient() -> None:
    """One resolution of a perturber's options: built (strict) for data files, parsed without
    building (lenient) for content keys, where params meant for something else are laid over
    the defaults instead of failing."""
    from synrob.perturb.errors import ParameterError
    from synrob.probe.experiments.data import _Addresser, perturber_info

    cls = get_registry().get("perturber", "shuffle")
    params = {"unit": "word", "mode": "phrase", "rho": "0.25"}
    strict = perturber_info("shuffle", params)
    assert strict == {"perturber": "shuffle", "perturber_version": cls.version,
                      "params": cls(**params).options}
    assert perturber_info("shuffle", params, lenient=True) == strict
    assert perturber_info("shuffle", None) == perturber_info("shuffle", {}, lenient=True)
    foreign = {"budget": 3, "unit": "char"}  # budget is no shuffle parameter
    with pytest.raises(ParameterError):
        perturber_info("shuffle", foreign)
    lenient = perturber_info("shuffle", foreign, lenient=True)
    assert lenient["params"] == {**{p.name: p.default for p in cls.params}, **foreign}
    assert _Addresser(None).perturber("shuffle", foreign) == {
        "component": "perturber", "name": "shuffle", "version": cls.version,
        "options": lenient["params"]}


def test_perturbed_file_recipe_holds_what_the_perturber_records(tmp_path: Path) -> None:
    """The generic Jabberwocky's output depends on the Hunspell dictionary it read: the
    recipe (and so the file's tag and every run key that names it) holds the dictionary's
    identity; an English recipe is what it was (no ``depends_on``)."""
    tr = Path(__file__).resolve().parents[1] / "data" / "ud" / "tr_boun" / "tr_boun-ud-test.conllu"
    en = exp_data.perturber_info("jabberwocky", {}, lang="en")
    assert "depends_on" not in en
    info = exp_data.perturber_info("jabberwocky", {"reference": str(tr)}, lang="tr")
    hun = info["depends_on"]["hunspell"]
    assert hun is not None and hun["dictionary"] == "tr_TR"  # dev.sh installs hunspell-tr
    src = tmp_path / "tr_boun-ud-test.conllu"
    write_conllu(islice(read_conllu(tr), 20), src)
    out = perturbed_file(src, "jabberwocky", {}, seed=0, dest=tmp_path / "d", lang="tr")
    recipe = json.loads(out.with_name(out.name + ".provenance.json").read_text())["recipe"]
    assert recipe["depends_on"]["hunspell"] == hun


def test_perturbed_files_in_processes_equal_one_by_one_and_skip_built_ones(tmp_path: Path
                                                                          ) -> None:
    jobs = [{"source": str(sample_path(s)), "kind": "jabberwocky", "params": {"rate": 1.0},
             "seed": seed, "dest": tmp_path / "par", "lang": "en"}
            for seed in (0, 1) for s in ("dev", "test")]
    alone = [perturbed_file(**{**j, "dest": tmp_path / "one"}) for j in jobs]
    # one already built: the processes build the other three, and it is left untouched
    first = perturbed_file(**jobs[0])
    stamp = first.stat().st_mtime_ns
    together = exp_data.perturbed_files(jobs, workers=2, min_bytes=0)
    assert together[0] == first and first.stat().st_mtime_ns == stamp
    assert [p.name for p in together] == [p.name for p in alone]  # in order, same recipes
    assert [p.read_bytes() for p in together] == [p.read_bytes() for p in alone]
    assert exp_data.perturbed_files(jobs, workers=2, min_bytes=0) == together  # found, not made


def test_runs_in_mkls_default_mode_warn_once(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """MKL ignores an MKL_CBWR it does not know without a word: the runs record ``gemm:
    default`` and the experiment says it once, however many runs it has."""
    import warnings

    import synrob.perturb.lm.blas as blas
    from synrob.perturb.lm.blas import ReproducibilityWarning

    monkeypatch.setattr(blas, "gemm_mode", lambda: "default")
    monkeypatch.setenv("MKL_CBWR", "nonsense")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = run_experiment(FileChangeRate(limit=20), tmp_path / "res")
    assert result.executed == 2 and {r["provenance"]["gemm"] for r in result.runs} == {"default"}
    ours = [w for w in seen if issubclass(w.category, ReproducibilityWarning)]
    assert len(ours) == 1
    assert "MKL_CBWR='nonsense'" in str(ours[0].message)
    assert "depend on the number of threads" in str(ours[0].message)


def test_strict_runs_do_not_warn(tmp_path: Path) -> None:
    import warnings

    from synrob.perturb.lm.blas import ReproducibilityWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", ReproducibilityWarning)
        run_experiment(FileChangeRate(kinds="flip", limit=20), tmp_path / "res")
