"""Fitting and storing erasers (:mod:`synrob.probe.erasure.fit`, ``.store``, ``.softmax``) on
synthetic data: LEACE's guarantee (equal training class means; a linear probe fitted to
convergence scores the majority rate), the random control (an orthogonal projection of the same
rank), bit-exact save/load and the --load provenance checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.errors import ParameterError, ResourceError, SynrobError

torch = pytest.importorskip("torch")
pytest.importorskip("concept_erasure")

from synrob.probe.erasure import (  # noqa: E402
    Eraser,
    check_eraser,
    fit_leace,
    load_eraser,
    random_control,
    random_eraser,
    save_eraser,
)
from synrob.probe.erasure.fit import (  # noqa: E402
    apply_rows,
    class_mean_gap,
    class_means,
    labelled_rows,
)
from synrob.probe.erasure.softmax import fit_softmax  # noqa: E402

LABELS = ["a", "b", "c", "d"]


def _data(n: int = 6000, d: int = 24, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` words of four classes (40/30/20/10 %) with separated means and different spreads
    (``seed`` draws the words, the means are fixed): a linear probe reads them at > 0.9."""
    means = np.random.default_rng(99).normal(size=(4, d)) * 3.0  # the same in every draw
    rng = np.random.default_rng(seed)
    y = rng.choice(4, size=n, p=[0.4, 0.3, 0.2, 0.1])
    scale = np.array([1.0, 0.5, 2.0, 1.5])[y][:, None]
    x = rng.normal(size=(n, d)) * scale + means[y] + 5.0
    return x.astype(np.float32), y.astype(np.int64)


@pytest.fixture(scope="module")
def fitted() -> tuple[Eraser, np.ndarray, np.ndarray]:
    x, y = _data()
    return fit_leace(x, y, LABELS, meta={"task": "pos"}), x, y


def _standardize(*xs: np.ndarray) -> list[np.ndarray]:
    mean, std = xs[0].mean(axis=0), xs[0].std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return [(x - mean) / std for x in xs]


def test_leace_equalises_the_training_class_means(fitted) -> None:
    eraser, x, y = fitted
    assert eraser.kind == "leace" and eraser.labels == LABELS
    assert eraser.meta["rank"] == 3 == eraser.rank  # C - 1 for one-hot labels
    assert tuple(eraser.proj_left.shape) == (24, 3) and tuple(eraser.proj_right.shape) == (3, 24)
    assert eraser.meta["train_words"] == 6000 and eraser.meta["task"] == "pos"
    erased = apply_rows(eraser, x)
    assert class_mean_gap(x, y, 4) > 0.5
    assert class_mean_gap(erased, y, 4) < 1e-5
    means = class_means(erased, y, 4).numpy()
    np.testing.assert_allclose(means, np.broadcast_to(erased.mean(axis=0), means.shape),
                               atol=1e-4)
    # the eraser keeps the training mean (affine LEACE) and stores the raw class means
    np.testing.assert_allclose(erased.mean(axis=0), x.mean(axis=0), atol=1e-4)
    np.testing.assert_allclose(eraser.class_means.numpy(), class_means(x, y, 4).numpy())


def test_a_converged_linear_probe_scores_the_majority_rate_after_leace(fitted) -> None:
    eraser, x, y = fitted
    xt, yt = _data(3000, seed=1)  # held-out words of the same distribution
    majority = float(np.bincount(yt).max() / yt.size)
    tr, te = _standardize(x, xt)
    before = fit_softmax(tr, y, 4, (tr, y))
    assert (before.predict(te) == yt).mean() > 0.9
    tr, dv, te = _standardize(apply_rows(eraser, x), apply_rows(eraser, x), apply_rows(eraser, xt))
    after = fit_softmax(tr, y, 4, (dv, y))
    assert float(torch.abs(after.weight).max()) < 1e-3  # W stays at 0: the gradient is 0
    assert (after.predict(te) == yt).mean() <= majority + 0.01
    assert (after.predict(tr) == y).mean() <= float(np.bincount(y).max() / y.size) + 0.01
    control = random_control(eraser, seed=0)
    tr, dv, te = _standardize(apply_rows(control, x), apply_rows(control, x),
                              apply_rows(control, xt))
    assert (fit_softmax(tr, y, 4, (dv, y)).predict(te) == yt).mean() > 0.8


def test_random_eraser_is_an_orthogonal_projection_of_the_same_rank(fitted) -> None:
    eraser, x, _ = fitted
    control = random_control(eraser, seed=3)
    assert control.kind == "random" and control.rank == eraser.rank == control.meta["rank"]
    assert control.meta["seed"] == 3 and control.meta["control_of"] == "leace"
    q = control.proj_left.double()
    assert torch.allclose(control.proj_right.double(), q.T)
    assert torch.allclose(q.T @ q, torch.eye(3, dtype=torch.float64), atol=1e-6)
    p = torch.eye(24, dtype=torch.float64) - q @ q.T
    assert torch.allclose(p @ p, p, atol=1e-6) and torch.allclose(p, p.T)
    assert int(torch.linalg.matrix_rank(p, atol=1e-4)) == 21  # float32 Q: 1e-7 round-off
    torch.testing.assert_close(control.bias, eraser.bias)  # keeps the training mean, as LEACE
    torch.testing.assert_close(control.class_means, eraser.class_means)
    again = random_control(eraser, seed=3)
    assert torch.equal(again.proj_left, control.proj_left)  # seeded
    assert not torch.equal(random_control(eraser, seed=4).proj_left, control.proj_left)
    # erasing along the removed subspace only: E(x) - bias is orthogonal to Q
    e = control(torch.from_numpy(x[:50]).double())
    assert torch.allclose((e - control.bias.double()) @ q, torch.zeros(50, 3, dtype=torch.float64),
                          atol=1e-4)
    with pytest.raises(SynrobError, match="rank 30 in dimension 24"):
        random_eraser(24, 30, seed=0, bias=torch.zeros(24), class_means=torch.zeros(4, 24),
                      labels=LABELS)


def test_labelled_rows_leave_out_excluded_and_unseen_words() -> None:
    m = np.arange(12, dtype=np.float32).reshape(6, 2)
    x, y = labelled_rows(m, [np.array([0, -2, 1]), np.array([-1, 2, -2])])
    np.testing.assert_array_equal(y, [0, 1, 2])
    np.testing.assert_array_equal(x, m[[0, 2, 4]])
    with pytest.raises(SynrobError):
        labelled_rows(m, [np.array([0])])


def test_leace_needs_two_classes() -> None:
    with pytest.raises(SynrobError, match="at least two classes"):
        fit_leace(np.ones((10, 3), np.float32), np.zeros(10, np.int64), ["a", "b"])


def test_save_load_round_trip_is_bit_exact(fitted, tmp_path: Path) -> None:
    eraser, _, _ = fitted
    for e in (eraser, random_control(eraser, seed=1)):
        path = save_eraser(tmp_path / f"{e.kind}.safetensors", e)
        back = load_eraser(path)
        assert back.kind == e.kind and back.labels == e.labels and back.meta == e.meta
        for k in ("proj_left", "proj_right", "bias", "class_means"):
            a, b = getattr(e, k), getattr(back, k)
            assert a.dtype == b.dtype == torch.float32 and torch.equal(a, b), k
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temporary file


def test_rank_one_eraser_whose_projections_share_memory_saves(tmp_path: Path) -> None:
    """A rank-1 random control's (1, d) right projection is a view of its (d, 1) left one;
    safetensors refuses shared tensors, so save_eraser must copy (found by docs/python.md:
    `synrob erase -o` of a two-class Number eraser failed on its random control)."""
    gen = torch.Generator().manual_seed(0)
    u = torch.nn.functional.normalize(torch.randn(8, 1, generator=gen), dim=0)
    e = Eraser("random", u, u.T, torch.zeros(8), torch.zeros(2, 8), ["Plur", "Sing"])
    assert e.proj_right.is_contiguous() and e.proj_right.data_ptr() == u.data_ptr()
    back = load_eraser(save_eraser(tmp_path / "r.safetensors", e))
    assert torch.equal(back.proj_left, u) and torch.equal(back.proj_right, u.T)


def test_load_refuses_what_is_not_an_eraser(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    with pytest.raises(ResourceError, match="no such eraser file"):
        load_eraser(tmp_path / "missing.safetensors")
    (tmp_path / "junk.safetensors").write_bytes(b"not safetensors at all")
    with pytest.raises(ResourceError, match="not a safetensors file"):
        load_eraser(tmp_path / "junk.safetensors")
    save_file({"weight": torch.zeros(2, 2)}, str(tmp_path / "probe.safetensors"))
    with pytest.raises(ResourceError, match="not a synrob eraser"):
        load_eraser(tmp_path / "probe.safetensors")


def _meta(**over) -> dict:
    meta = {"encoder": "minilm", "encoder_identity": {"encoder": "transformer", "version": "1",
                                                      "options": {"pooling": "mean"}},
            "layer": 3, "task": "feats", "task_params": {"feature": "Number",
                                                         "missing": "exclude"},
            "control": False}
    return {**meta, **over}


@pytest.mark.parametrize(("given", "message"), [
    ({"layer": 4}, "fitted on layer 3, not layer 4"),
    ({"dim": 576}, "fitted on vectors of dimension 24, not dimension 576"),
    ({"task": "pos"}, "fitted on task 'feats', not task 'pos'"),
    ({"task_params": {"feature": "Person"}}, "fitted on task parameter feature='Number', not "
                                             "feature='Person'"),
    ({"encoder": "smollm2", "identity": {"encoder": "transformer", "version": "1",
                                         "options": {"pooling": "mean", "model": "x"}}},
     "fitted on encoder 'minilm', not encoder 'smollm2'"),
    ({"identity": {"encoder": "transformer", "version": "1", "options": {"pooling": "first"}}},
     "fitted on encoder 'minilm' with pooling='mean', not pooling='first'"),
    ({"control": True}, "fitted on the task's labels, not its control labels"),
])
def test_check_eraser_mismatch_is_one_line(fitted, given: dict, message: str) -> None:
    eraser, _, _ = fitted
    e = Eraser(eraser.kind, eraser.proj_left, eraser.proj_right, eraser.bias,
               eraser.class_means, eraser.labels, _meta())
    kw = {"encoder": "minilm", "identity": _meta()["encoder_identity"], "layer": 3, "dim": 24,
          "task": "feats", "task_params": {"feature": "Number"}, "control": False, **given}
    with pytest.raises(ParameterError) as info:
        check_eraser(e, "E.safetensors", **kw)
    text = str(info.value)
    assert text.startswith("eraser in E.safetensors was ") and message in text
    assert "\n" not in text


def test_check_eraser_accepts_its_own_setup(fitted) -> None:
    eraser, _, _ = fitted
    e = Eraser(eraser.kind, eraser.proj_left, eraser.proj_right, eraser.bias,
               eraser.class_means, eraser.labels, _meta())
    check_eraser(e, "E", encoder="minilm", identity=_meta()["encoder_identity"], layer=3,
                 dim=24, task="feats", task_params={"feature": "Number"}, control=False)
    check_eraser(e, "E", encoder="minilm", identity=None, layer=3, dim=None, task="feats",
                 task_params={}, control=False)
