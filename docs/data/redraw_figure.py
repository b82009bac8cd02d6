"""Redraw an experiment's main figure from its saved ``results.json``, without re-running it.

    python docs/data/redraw_figure.py docs/data/amnesic-en-ewt-demo.json \\
        docs/img/amnesic-en-ewt-demo.png

reads the rows with :func:`synrob.probe.load_results` and writes what
``ExperimentResults.plot()`` draws (the experiment's own figure, the one its report shows) as
a 150-dpi PNG. The numbers are the saved rows'; only the drawing is today's.
"""

from __future__ import annotations

import sys


def main(src: str, dest: str) -> None:
    from synrob.probe import load_results
    from synrob.probe.render.figures import save_png

    save_png(load_results(src).plot(), dest)


if __name__ == "__main__":
    main(*sys.argv[1:3])
