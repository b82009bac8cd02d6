"""docs/python.md runs top to bottom (every ```python block, in order, in one namespace, in a
fresh directory), so the walk-through cannot go stale."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "python.md"

pytestmark = [pytest.mark.slow, pytest.mark.model]


def blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)


def test_the_walk_through_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = blocks()
    assert len(code) >= 6
    monkeypatch.chdir(tmp_path)
    ns: dict[str, object] = {"__name__": "walkthrough"}
    t0 = time.perf_counter()
    for i, block in enumerate(code):
        exec(compile(block, f"{DOC}:block{i + 1}", "exec"), ns)  # noqa: S102
    print(f"walk-through: {time.perf_counter() - t0:.1f} s")
    for name in ("jabberwocky.conllu", "agreement.conllu", "number.safetensors",
                 "number.random.safetensors", "jab-seed0/report.html",
                 "jab-compare/report.html", "jab-compare/results.csv"):
        assert (tmp_path / name).is_file(), name
    cmp = ns["cmp"]
    assert len(cmp.rows) == len(ns["a"].rows) + len(ns["b"].rows)  # type: ignore[attr-defined]
    assert cmp.metrics() and list((tmp_path / "jab-compare").glob("compare-*.png"))
    assert {r["source"] for r in cmp.rows} == {"minilm en seed 0", "minilm en seed 1"}
