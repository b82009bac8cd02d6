"""Fitting and storing erasers (:mod:`synrob.probe.causal.erasure.fit`, ``.store``, ``.softmax``) on
synthetic data: LEACE's guarantee (equal training class means; a linear probe fitted to
convergence scores the majority rate), the random control (an orthogonal projection of the same
rank), the displacement-matched control (a random oblique projection of the same rank and
LEACE's mean displacement), the L-BFGS fit's own iterations, bit-exact save/load and the --load
provenance checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.errors import ParameterError, ResourceError, SynrobError, SynrobWarning

torch = pytest.importorskip("torch")
pytest.importorskip("concept_erasure")

from synrob.probe.causal.erasure import (  # noqa: E402
    Eraser,
    check_eraser,
    fit_leace,
    load_eraser,
    matched_control,
    mean_displacement,
    random_control,
    random_eraser,
    save_eraser,
)
from synrob.probe.causal.erasure.fit import (  # noqa: E402
    apply_rows,
    class_mean_gap,
    class_means,
    labelled_rows,
)
from synrob.probe.causal.erasure.softmax import L2_GRID, _lbfgs, fit_softmax  # noqa: E402

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
    x = fitted[1]
    for e in (eraser, random_control(eraser, seed=1), matched_control(eraser, x, seed=1)):
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


def test_matched_control_moves_the_vectors_as_far_as_leace(fitted) -> None:
    """Issue 43: the rank-matched control moves the training vectors 2-3x less than LEACE;
    the matched one is a random oblique projection of the same rank whose mean displacement
    is LEACE's (within 5 %, the issue's criterion; it is solved to ~1e-7 here)."""
    eraser, x, y = fitted
    rank_matched, matched = random_control(eraser, seed=3), matched_control(eraser, x, seed=3)
    leace = mean_displacement(eraser, x)
    assert mean_displacement(rank_matched, x) < 0.5 * leace
    assert abs(mean_displacement(matched, x) - leace) <= 0.05 * leace
    assert matched.meta["displacement"] == pytest.approx(leace, rel=1e-6)
    assert matched.meta["displacement_target"] == pytest.approx(leace)
    assert matched.meta["displacement_rank_matched"] == pytest.approx(
        mean_displacement(rank_matched, x), rel=1e-6)
    assert matched.kind == "random_matched" and matched.rank == eraser.rank == 3
    assert matched.meta["construction"] == "oblique" and matched.meta["oblique"] > 1
    assert matched.meta["seed"] == 3 and matched.meta["control_of"] == "leace"
    # a projection (idempotent) of rank k along a random subspace, keeping the training mean
    left, right = matched.proj_left.double(), matched.proj_right.double()
    assert torch.allclose(right @ left, torch.eye(3, dtype=torch.float64), atol=1e-5)
    assert torch.equal(matched.proj_right, rank_matched.proj_right)  # the same Q, seeded
    xs = torch.from_numpy(x[:200]).double()
    once = matched(xs)
    torch.testing.assert_close(matched(once), once, atol=1e-3, rtol=1e-5)
    np.testing.assert_allclose(apply_rows(matched, x).mean(axis=0), x.mean(axis=0), atol=1e-3)
    torch.testing.assert_close(matched.bias, eraser.bias)
    # it removes a random subspace, not the labels: class means stay apart, a probe reads them
    assert class_mean_gap(apply_rows(matched, x), y, 4) > 0.5
    xt, yt = _data(3000, seed=1)
    tr, dv, te = _standardize(apply_rows(matched, x), apply_rows(matched, x),
                              apply_rows(matched, xt))
    assert (fit_softmax(tr, y, 4, (dv, y)).predict(te) == yt).mean() > 0.8
    again = matched_control(eraser, x, seed=3)
    assert torch.equal(again.proj_left, matched.proj_left)
    assert not torch.equal(matched_control(eraser, x, seed=4).proj_left, matched.proj_left)


def test_matched_control_with_rank_above_half_the_dimension(fitted) -> None:
    """``2k > d``: the second basis cannot be orthonormal and orthogonal to ``Q``; the
    displacement is still matched (bisection on unit columns)."""
    x, y = _data(3000, d=5)
    eraser = fit_leace(x, y, LABELS)
    assert 2 * eraser.rank > eraser.dim
    matched = matched_control(eraser, x, seed=0)
    assert mean_displacement(matched, x) == pytest.approx(mean_displacement(eraser, x), rel=1e-6)
    right, left = matched.proj_right.double(), matched.proj_left.double()
    assert torch.allclose(right @ left, torch.eye(3, dtype=torch.float64), atol=1e-5)


def test_matched_control_shrinks_when_leace_moves_less(fitted) -> None:
    """No oblique projection moves the vectors less than the orthogonal one: a LEACE that
    moves them less gets the shrunk projection ``x - s Q c``, with a warning and its
    construction recorded."""
    eraser, x, _ = fitted
    small = Eraser("leace", eraser.proj_left * 0.05, eraser.proj_right, eraser.bias,
                   eraser.class_means, eraser.labels, dict(eraser.meta))
    target = mean_displacement(small, x)
    assert target < mean_displacement(random_control(small, seed=0), x)
    with pytest.warns(SynrobWarning, match="shrinks a random subspace"):
        matched = matched_control(small, x, seed=0)
    assert matched.meta["construction"] == "shrunk" and 0 < matched.meta["scale"] < 1
    assert mean_displacement(matched, x) == pytest.approx(target, rel=1e-6)


def test_lbfgs_reports_the_chosen_fits_iterations_only(fitted) -> None:
    """``iterations`` are the L-BFGS iterations of the fit kept (at the chosen L2), not the
    sum over every penalty tried (issue 43); replayed here fit by fit."""
    eraser, x, y = fitted
    tr, dv = _standardize(x, _data(2000, seed=2)[0])
    yd = _data(2000, seed=2)[1]
    model = fit_softmax(tr, y, 4, (dv, yd))
    w = torch.zeros(24, 4, requires_grad=True)
    b = torch.zeros(4, requires_grad=True)
    xt, yt = torch.from_numpy(tr), torch.from_numpy(y)
    xd, ydt = torch.from_numpy(dv), torch.from_numpy(yd)
    per_fit, losses = [], []
    for l2 in L2_GRID:
        per_fit.append(_lbfgs(xt, yt, w, b, l2))
        with torch.no_grad():
            losses.append(float(torch.nn.functional.cross_entropy(xd @ w + b, ydt)))
    chosen = L2_GRID.index(model.l2)
    assert model.iterations == per_fit[chosen]
    assert len(per_fit) > 1 and sum(per_fit[:chosen + 1]) > model.iterations
