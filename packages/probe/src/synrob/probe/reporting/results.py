"""A results directory as a table: :func:`load_results` reads what ``synrob run`` wrote.

``results.json`` holds every row of an experiment (one number each under ``value``, with
``ci_low``/``ci_high``/``p_value`` where computed) and its provenance; :class:`ExperimentResults`
adds the provenance a reader needs to each row (experiment version, language, the model and its
identity, the source directory) so that rows of several directories can be joined
(:mod:`.compare`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the lazy package: `_public.Figure` (a return type) imports matplotlib only when read
import synrob.probe as _public
from synrob.perturb.errors import MissingFileError, ResourceError
from synrob.perturb.io.table import ResultTable

__all__ = ["ExperimentResults", "load_results"]


@dataclass(repr=False)
class ExperimentResults(ResultTable):
    """One experiment's results directory: ``rows`` (every row of ``results.json``, plus
    ``experiment_version``, ``lang``, ``model``, ``synrob_version`` and ``source``: what a
    row needs to be cited alone), ``meta`` (the rest of
    ``results.json``: options, seed, versions, runs, stages, files) and ``path``."""

    path: Path
    meta: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: What the :func:`~synrob.probe.api.run_experiment` call that returned this did: runs
    #: ``executed`` and ``reused``, ``seconds``, ``stages``, ``files`` (empty when loaded).
    invocation: dict[str, Any] = field(default_factory=dict)

    @property
    def experiment(self) -> str:
        return str(self.meta["experiment"])

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.meta.get("options", {}))

    @property
    def lang(self) -> str:
        return str(self.meta.get("lang", {}).get("code", ""))

    @property
    def label(self) -> str:
        """A short name for this directory in a comparison: model, language, seed."""
        model = self.options.get("model", "")
        return " ".join(str(x) for x in (model, self.lang, f"seed {self.meta.get('seed', 0)}")
                        if x)

    @property
    def report_md(self) -> str:
        """The experiment's ``report.md`` ('' when it wrote none)."""
        p = self.path / "report.md"
        return p.read_text(encoding="utf-8") if p.exists() else ""

    @property
    def report_html(self) -> Path | None:
        """``report.html`` of the directory, if written."""
        p = self.path / "report.html"
        return p if p.exists() else None

    def test_keys(self) -> dict[str, str]:
        """The SHA-256 of every test file the runs read that synrob did not derive (the
        treebank's own test data), by file role: what two comparable directories must share."""
        out: dict[str, str] = {}
        for run in self.meta.get("runs", []):
            tests = (run.get("content_key") or {}).get("tests") or {}
            for role, key in (tests.items() if isinstance(tests, dict) else ()):
                if isinstance(key, dict) and "sha256" in key and "made_by" not in key:
                    out[role] = key["sha256"]
        return out

    def plot(self) -> _public.Figure:
        """The experiment's main figure, the one its report shows (the Jabberwocky bars, the
        amnesic panels against the layer, ...), drawn again from the rows: a
        :class:`synrob.probe.render.figures.Figure`, shown inline in a notebook, outside pyplot."""
        from synrob.perturb.errors import ParameterError
        from synrob.perturb.plugins import get_registry

        experiment = get_registry().get("experiment", self.experiment)(**self.options)
        fig = experiment.figure([r for r in self.rows if not r.get("derived")])
        if fig is None:
            raise ParameterError(f"{self.path}: experiment {self.experiment} draws no figure "
                                 "from these rows")
        return fig


def load_results(path: str | os.PathLike[str]) -> ExperimentResults:
    """Read an experiment's results directory (``synrob run ... -o DIR``); a directory without
    ``results.json`` (or a file that is not one) is a :class:`ResourceError`."""
    base = Path(path)
    target = base / "results.json" if base.is_dir() else base
    try:
        meta = json.loads(target.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MissingFileError(f"{path}: no results.json (not a finished synrob run -o DIR)") from None
    except (OSError, ValueError) as exc:
        raise ResourceError(f"{target}: not readable as results.json: {exc}") from None
    if not isinstance(meta, dict) or "experiment" not in meta or "rows" not in meta:
        raise ResourceError(f"{target}: not a synrob results.json (no experiment and rows)")
    res = ExperimentResults(target.parent, {k: v for k, v in meta.items() if k != "rows"})
    extra = {"experiment_version": meta.get("version"), "lang": res.lang,
             "model": res.options.get("model"),
             "synrob_version": meta.get("versions", {}).get("synrob-probe")}
    res.rows = [{**r, **{k: v for k, v in extra.items() if k not in r},
                 "source": res.label} for r in meta["rows"]]
    res.title = f"{res.experiment} {meta.get('version', '')} ({res.label}): {target.parent}"
    return res
