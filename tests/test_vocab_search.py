"""The native vocabulary's binary search compares many keys at once as padded byte strings;
it finds exactly what the word-by-word comparison (Python's bytes order) finds."""

import numpy as np

from embdebias.embedding import Embedding
from embdebias.io.native import read_native, write_native
from embdebias.vocab import _PADDED_WIDTH, _padded_keys, _utf8


def test_padded_search_is_the_word_by_word_search(tmp_path):
    # prefixes of each other, a stored word with NUL bytes (inside and trailing), the empty word,
    # multibyte words, a word longer than any key, and keys the padding must not confuse
    words = ["ab", "abc", "ab\x00", "a\x00c", "", "naïve", "日本", "Zürich", "b" * 80, "abd", "aa", "zz",
             "a" * (_PADDED_WIDTH + 3)] + [f"w{i}" for i in range(3000)]
    write_native(Embedding(words, np.zeros((len(words), 2), np.float32)), tmp_path / "v.embd")
    vocab = read_native(tmp_path / "v.embd").words
    query = words + ["a", "ab\x00\x00", "abcd", "b" * 79, "b" * 81, "absent", "w30000", "\ud800", "", "w1",
                     "a" * (_PADDED_WIDTH + 3), "日"]
    keys = [_utf8(w) for w in query]
    expected = vocab._binary_search(keys, None)                   # word by word
    assert vocab._search(query).tolist() == expected.tolist()     # padded where the key allows
    short = [k for k in keys if k is not None and len(k) < _PADDED_WIDTH and b"\0" not in k]
    assert vocab._binary_search(short, _padded_keys(short)).tolist() == vocab._binary_search(short, None).tolist()
    truth = {w: i for i, w in enumerate(words)}
    assert expected.tolist() == [truth.get(w, -1) for w in query]
