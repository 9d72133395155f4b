"""``embdebias.wordlists`` is :mod:`embdebias.data.wordlists`, under its older, documented name.

The name stays importable for users and callers (``from embdebias.wordlists import
load_words``): importing it binds the very module object of ``embdebias.data.wordlists``,
so the two names share their functions, caches and monkeypatches. New code in the package
imports :mod:`embdebias.data`.
"""

import sys

from ..data import wordlists as _wordlists

sys.modules[__name__] = _wordlists
