"""Text corpora: the one checked reader (:mod:`.reader`) and training's token stream (:mod:`.corpus`).

``embdebias train`` and ``embdebias cda`` read a corpus through :class:`CorpusFile`, so
both accept and refuse the same files, with the same messages.
"""

from .corpus import MAX_SENTENCE_WORDS, TOKEN_PATTERN, LineCorpus, compile_token_pattern, tokenize
from .reader import BLOCK_BYTES, CorpusFile, check_corpus_path

__all__ = ["BLOCK_BYTES", "CorpusFile", "LineCorpus", "MAX_SENTENCE_WORDS", "TOKEN_PATTERN", "check_corpus_path",
           "compile_token_pattern", "tokenize"]
