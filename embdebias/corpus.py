"""``embdebias.corpus`` is :mod:`embdebias.text.corpus`, under its older name (kept for callers).

Importing it binds the very module object of ``embdebias.text.corpus``. New code imports
:mod:`embdebias.text`.
"""

import sys

from .text import corpus as _corpus

sys.modules[__name__] = _corpus
