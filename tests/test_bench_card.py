"""bench/card.py's pure parts: a model's forward counted once however deep the nesting, the
fits timed, and the runs read from synrob card's summary line (the bench itself runs the
sample card: minutes, not for the suite)."""

from __future__ import annotations

import time

from .bench_script import load_bench


def test_forwards_are_counted_once_at_the_top_and_fits_are_timed() -> None:
    card = load_bench("card", "bench_card")
    clocks = card.Clocks()

    def call(module: object, depth: int) -> int:
        time.sleep(0.01)
        return timed(module, depth - 1) if depth else 0

    timed = clocks.forward_call(call)
    t0 = time.perf_counter()
    timed(object(), 3)  # a model calling its inner models: one forward
    outer = time.perf_counter() - t0
    assert 0.04 <= clocks.forward <= outer
    fit = clocks.fit_call(lambda: time.sleep(0.02))
    fit()
    assert 0.02 <= clocks.fits < 0.5
    assert card._executed("synrob: card smollm2: 62 runs executed, 0 reused, 282.2 s") == 62
