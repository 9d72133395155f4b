"""The grammatical intervention's rules: ``her`` -> ``him`` or ``his``, and proper nouns.

No part-of-speech tagger that installs offline is available here (NLTK's tagger and
spaCy's models are separate downloads), so both rules look at the neighbouring words
only, through the closed word classes below.

**her.** ``her`` is an object pronoun (-> ``him``) or a possessive determiner
(-> ``his``). A possessive is followed by its noun phrase; an object by anything else.
The rule reads the next token of the line:

1. nothing, or punctuation first (``her.``, ``her,``, ``her'``, end of line): ``him``;
2. a word of :data:`OBJECT_FOLLOWERS` (prepositions, determiners, conjunctions,
   pronouns, adverbs and particles, adjectives that never precede a noun, auxiliaries,
   and verbs in the base form that are rarely nouns: ``gave her the``, ``told her
   that``, ``let her go``, ``found her asleep``): ``him``;
3. a lower-case word ending in ``-ly`` that is not in :data:`LY_NOT_ADVERBS`
   (``held her tightly``; but ``her lovely``, ``her family``): ``him``;
4. anything else (a noun, an adjective, a number, a capitalised word): ``his``.

Its accuracy on a hand-labelled sample of sentences is measured in
``tests/test_cda.py`` (``HER_SAMPLE``).

**Proper nouns.** A gendered noun beside a proper noun names a particular person and
is kept (Lu et al. do not flip "Queen Elizabeth"). A proper noun is a neighbouring
word, separated by spaces or tabs only, that starts with an ASCII capital followed by
a lower-case letter and is not a closed-class word (:data:`FUNCTION_WORDS`); the word
before counts only if it does not start a sentence (it is not the first word of the
line, and no ``.``, ``!``, ``?``, ``:`` or ``;`` stands between it and the word before
it). ``X of Y`` with such a Y counts too ("the Duke of Wellington"), and so does the
word before when it is an abbreviation of :data:`ABBREVIATIONS` with its dot ("Mr.
King": King is a surname). Pronouns are never kept this way ("ask him Mary said"),
and honorifics are swapped anyway: they stand before surnames, which carry no gender
("Mr. Smith" -> "Mrs. Smith"). A neighbour that is a first name being swapped
(``names=True``) does not keep its title: "King John" -> "Queen Mary". Text in
capitals gives no signal ("KING GEORGE" -> "QUEEN GEORGE").

The engine (:mod:`._engine`) evaluates these rules on arrays; :func:`her_target`
states the ``her`` rule for one word.
"""

from __future__ import annotations

_PREPOSITIONS = """about above across after against along amid among around at before behind below
beneath beside besides between beyond by despite down during except for from in inside into like near of
off on onto out outside over past since than through throughout till to toward towards under underneath
until unto up upon via with within without"""
_DETERMINERS = """a an the this that these those some any no every each all both either neither another
such what which whose several enough much"""
_CONJUNCTIONS = "and or but nor so yet because although though while when whenever unless if once whereas whether as"
_PRONOUNS = """i me you he him she her it we us they them his hers its our ours their theirs myself yourself
himself herself itself ourselves themselves who whom whoever whatever how why where something nothing
anything everything someone anyone everyone nobody somebody anybody everybody"""
_ADVERBS = """not never always often again also too now then there here today tonight tomorrow yesterday
later soon twice anyway alone together ago even just still already away well forward aside instead
either ever quite rather almost"""
# Adjectives that never stand before a noun ("found her asleep").
_PREDICATIVE = "asleep awake alive afraid aware ashamed alike aboard abroad ahead apart"
_AUXILIARIES = "is are was were be been being am do does did have has had would could should might must shall can"
# Base forms after "let her", "made her", "saw her", ... that are rarely nouns after a
# possessive "her" (work, look, walk, cry, smile, turn, stay, ... are left out).
_VERBS = """go know feel come get see think say leave speak eat die sit stand wait tell give find
believe become seem want understand try keep hear forget remember marry meet make take let help ask
sing write read lose buy bring send explain decide learn choose sleep"""

#: Words after which ``her`` is an object pronoun (lower case).
OBJECT_FOLLOWERS = frozenset(" ".join((_PREPOSITIONS, _DETERMINERS, _CONJUNCTIONS, _PRONOUNS, _ADVERBS,
                                       _PREDICATIVE, _AUXILIARIES, _VERBS)).split())

#: Words ending in ``-ly`` that are adjectives or nouns, not adverbs (``her lovely``).
LY_NOT_ADVERBS = frozenset("""family only lovely lonely early friendly elderly ugly holy silly lively curly
daily weekly monthly yearly nightly hourly belly ally bully lily reply supply assembly rally jelly folly
melancholy homely costly deadly kindly manly womanly motherly fatherly sisterly brotherly worldly orderly
heavenly ghostly comely stately lowly unlikely likely unruly surly burly chilly hilly smelly wobbly bubbly
bodily beastly cowardly scholarly timely untimely leisurely saintly queenly princely courtly goodly godly
ungodly shapely sickly slovenly steely sly wily jolly holly gravelly prickly""".split())

#: Closed-class words: never a proper noun, even when capitalised (a title, a heading).
FUNCTION_WORDS = frozenset(" ".join((_PREPOSITIONS, _DETERMINERS, _CONJUNCTIONS, _PRONOUNS, _ADVERBS,
                                     _AUXILIARIES)).split())

#: Abbreviations whose dot does not end a sentence: "Mr. King" keeps "King" (a surname).
ABBREVIATIONS = frozenset("mr mrs ms dr st prof sen rep gen col capt lt sgt rev gov hon messrs mme mlle".split())

#: Bytes that end a sentence before a capitalised word (which is then no proper-noun signal).
SENTENCE_END = b".!?:;"


def her_target(next_word: str | None) -> str:
    """``"him"`` or ``"his"`` for ``her`` followed by ``next_word``.

    Parameters
    ----------
    next_word : str or None
        The next word of the line when only spaces or tabs separate it from ``her``;
        None at the end of the line or before punctuation.

    Returns
    -------
    str
    """
    if next_word is None:
        return "him"
    low = next_word.lower()
    plain = low == next_word or next_word.isupper()  # not a capitalised word (a name, a title)
    if low in FUNCTION_WORDS or (plain and low in OBJECT_FOLLOWERS):
        return "him"
    if plain and low.endswith("ly") and low not in LY_NOT_ADVERBS:
        return "him"
    return "his"
