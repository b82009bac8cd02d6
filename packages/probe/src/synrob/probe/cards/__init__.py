"""A model's syntactic profile across layers, languages, behaviour and causal tests (the card), and a board across models.

The wing composes what lies below it and computes nothing of its own kind: the probing runs
are :func:`synrob.probe.training.analysis.run_analysed` (controls, seeds, bootstrap), the
Jabberwocky and causal sections are the ``jabberwocky`` and ``amnesic`` studies' own runs, the
behaviour section scores the agreement pairs those studies build, and all of them run as one
resumable grid of the experiment framework (:mod:`synrob.probe.experiments.runner`, any
backend). Modules:

* :mod:`.presets` - the card presets and their map to each study's preset and layers;
* :mod:`.treebanks` - the treebank of each language (defaults, ``LANG=SPEC``, seeded splits);
* :mod:`.settings` - everything a card depends on (``card.json``'s ``settings``);
* :mod:`.grid` - the card as one experiment grid over its languages and sections;
* :mod:`.sections` - the sections' numbers from the grid's rows;
* :mod:`.headline` - the headline sentences, generated from the sections;
* :mod:`.document` - ``card.json`` (its JSON Schema in ``card.schema.json``), ``card.md``, the figures;
* :mod:`.page` - ``card.html`` and ``board.html``;
* :mod:`.make` - :func:`card` (make or resume a card) and :class:`Card`;
* :mod:`.board` - :func:`board`: cards of several models side by side.

Named ``cards`` (not ``card``) so that the function ``synrob.probe.card`` and this package are
not one attribute of :mod:`synrob.probe`.
"""
