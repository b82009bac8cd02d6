"""The word lists of the notional-agreement filter (English): collective nouns, the nouns that
make a name an organisation's, and the nouns that look collective but take one verb number.

**Source.** A hand-made list, not a copy of any one published list. Its classes follow the
collective nouns that take "notional concord" (a plural verb with a singular form, chiefly in
British English: *the government have decided*) in Quirk, Greenbaum, Leech & Svartvik (1985),
*A Comprehensive Grammar of the English Language*, and Huddleston & Pullum (2002), *The
Cambridge Grammar of the English Language*, and the nouns Levin (2001), *Agreement with
Collective Nouns in English* (Lund Studies in English 103), found with plural verbs in British
and American corpora: groups of people (*audience, crew, family, staff, team*), bodies and
institutions (*board, committee, council, government, parliament*) and organisations acting as
one (*company, firm, airline, agency*). The organisation nouns and the name heads were added
for synrob (2026-12-05) after an audit of UD English GUM test (issue 54). WordNet's
``noun.group`` first senses and the reference treebank's own subjects add to it
(:mod:`~synrob.perturb.agreement.notional`).
"""

from __future__ import annotations

__all__ = ["COLLECTIVE_NOUNS", "ORGANISATION_HEADS", "NOT_NOTIONAL", "QUANTITY_NOUNS",
           "COMPOUND_ORGANISATIONS"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Singular-form nouns for groups of people and organisations that may take a plural verb.
COLLECTIVE_NOUNS: frozenset[str] = _words("""
academy administration agency airline alliance army assembly association audience authority
band bank board brigade bureau cabinet cast chain charity choir chorus clan class club
coalition college commission committee community company conglomerate congregation congress
consortium constituency contingent cooperative corporation council crew crowd delegation
department directorate electorate enemy establishment faculty family federation firm fleet
foundation franchise gang generation government group guild headquarters herd household
industry
institute jury kitchen label leadership league legislature management media military militia
ministry mob movement navy newspaper opposition orchestra organisation organization outfit
panel parliament partnership party personnel platoon population press public publisher
regime regiment retailer secretariat sector senate squad squadron staff startup syndicate
team tribe troop troupe union university workforce
""")

#: Nouns that name an organisation when a ``compound`` says which (*our public health service
#: is working*, *the civil service*, *my pool service found*), and an activity without one
#: (*the service was slow*).
COMPOUND_ORGANISATIONS: frozenset[str] = _words("service")

#: Nouns that make a proper name an organisation's when the name is built on them (the name's
#: head, or a ``flat``/``compound`` part of it: *the Museum of Flight*, *Farrell Electric*,
#: *Britt's Pizza*, *Korean Air*, *the United Nations headquarters*).
ORGANISATION_HEADS: frozenset[str] = COLLECTIVE_NOUNS | _words("""
air airlines airways assoc association bagels bakery bancorp bistro brewery cafe café center
centre church clinic co commission corp corps court deli diner electric enterprises forces
foundation fund grill guard headquarters holdings hospital hotel inc inc. industries inn
institute institution insurance karate labs llc llp ltd ltd. motors museum news
pharmaceuticals pizza plc police post realty records restaurant salon school services
society solutions spa studios systems technologies times trust
""")

#: Nouns that WordNet files under ``noun.group`` (first sense) but that take one verb number
#: only, or are no group of people: plural-only nouns (*people are*, *police are*), plural and
#: mass nouns (*data*), and nouns whose form never shows its number (*series*, *species*, left
#: to the treebank evidence).
NOT_NOTIONAL: frozenset[str] = _words("""
cattle country couple data folk folks livestock pair people police poultry series species
state vermin
""")

#: Quantity and partitive nouns: as a subject's head with an ``of``-phrase, the verb agrees
#: with the phrase (*a number of people are*, *the majority of voters want*).
QUANTITY_NOUNS: frozenset[str] = _words("""
billion bunch couple dozen fraction group half handful hundred hundreds kind lot lots
majority million millions minority most number part per_cent percent percentage plenty
portion proportion quarter range remainder rest score series set share sort third thousand
thousands total type variety
""")
