"""Results as the numbers a reader means: ``where`` keeps rows as a table, ``pivot`` lays them out
wide and refuses to put two numbers in one cell (issue 46, section 1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from synrob.perturb.errors import ParameterError
from synrob.perturb.io.table import ResultTable, Selection

pd = pytest.importorskip("pandas")


@dataclass(repr=False)
class Rows(ResultTable):
    rows: list[dict[str, Any]] = field(default_factory=list)


def _experiment_rows() -> list[dict[str, Any]]:
    """Two seeds of a toy Jabberwocky run, in the order results.json has them: the path
    baseline's dev row first (what ``pivot_table(aggfunc="first")`` kept), then the model's."""
    rows = []
    for source, model in (("seed 0", 0.456), ("seed 1", 0.451)):
        base = {"probe": "structural", "train_on": "clean", "test_on": "clean",
                "source": source}
        rows += [
            {**base, "role": "path", "encoder": "path", "layer": None, "split": "dev",
             "metric": "uuas", "value": 0.407},
            {**base, "role": "path", "encoder": "path", "layer": None, "split": "test",
             "metric": "uuas", "value": 0.402},
            {**base, "role": "model", "encoder": "minilm", "layer": 3, "split": "dev",
             "metric": "uuas", "value": model + 0.01},
            {**base, "role": "model", "encoder": "minilm", "layer": 3, "split": "test",
             "metric": "dspr", "value": model + 0.2},
            {**base, "role": "model", "encoder": "minilm", "layer": 3, "split": "test",
             "metric": "uuas", "value": model, "ci_low": model - 0.01,
             "ci_high": model + 0.01},
        ]
    return rows


def test_where_returns_a_table_of_the_rows_meant() -> None:
    table = Rows(_experiment_rows())
    picked = table.where(metric="uuas", split="test", role="model")
    assert isinstance(picked, Selection)
    assert [r["value"] for r in picked] == [0.456, 0.451]
    assert list(picked.to_pandas()["value"]) == [0.456, 0.451]
    assert "where metric=&#x27;uuas&#x27;" in picked._repr_html_()
    assert len(table.where(split=["dev", "test"], role="model", metric="uuas")) == 4
    assert len(table.where(layer=None)) == 4  # a missing layer matches None
    assert len(picked.where(source="seed 1")) == 1  # a selection is a table again


def test_where_refuses_a_column_no_row_has() -> None:
    with pytest.raises(ParameterError, match=r"no column 'metrc'.*did you mean metric"):
        Rows(_experiment_rows()).where(metrc="uuas")


def test_pivot_gives_the_models_test_values_where_pivot_table_first_did_not() -> None:
    table = Rows(_experiment_rows())
    silent = table.to_pandas().pivot_table(index=["probe", "test_on", "train_on"],
                                           columns="source", values="value", aggfunc="first")
    assert silent.iloc[0].tolist() == [0.407, 0.407]  # the baseline's dev UUAS: the trap
    wide = table.pivot(["train_on", "test_on"], metric="uuas", split="test", role="model")
    assert wide.columns.tolist() == ["seed 0", "seed 1"]
    assert wide.loc[("clean", "clean")].tolist() == [0.456, 0.451]


def test_pivot_refuses_to_aggregate_rows_that_differ_in_role_split_or_metric() -> None:
    table = Rows(_experiment_rows())
    with pytest.raises(ParameterError, match=r"differ in .*split \('dev' vs 'test'\)"):
        table.pivot(["probe", "test_on", "train_on"])
    with pytest.raises(ParameterError, match=r"differ in .*role \('path' vs 'model'\)"):
        table.pivot(["probe"], split="test", metric="uuas")
    with pytest.raises(ParameterError, match=r"differ in metric \('dspr' vs 'uuas'\)"):
        table.pivot(["role"], split="test", role="model")


def test_pivot_default_index_takes_the_key_columns_that_vary() -> None:
    wide = Rows(_experiment_rows()).pivot(split="test", values=["value", "ci_low"])
    assert wide.index.names == ["role", "encoder", "layer", "metric"]
    assert wide.loc[("model", "minilm", 3, "uuas"), ("value", "seed 1")] == 0.451
    assert wide.loc[("model", "minilm", 3, "uuas"), ("ci_low", "seed 0")] == pytest.approx(0.446)
    assert pd.isna(wide.loc[("path", "path", None, "uuas"), ("ci_low", "seed 0")])
    with pytest.raises(ParameterError, match="no column 'model'"):
        Rows(_experiment_rows()).pivot(columns="model")
