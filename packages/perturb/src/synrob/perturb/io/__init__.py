"""Files and formats under the corpus model: atomic writes, inputs by name, tables, FEATS, trees, CoNLL-U validation, languages."""
