"""Words that exist or could: WordNet, Hunspell, inflection paradigms and edit rules, morphology, pseudowords."""
