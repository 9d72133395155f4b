"""
gensim in and out
=================

Train word2vec with gensim (on the Lee news corpus gensim ships), debias the
``KeyedVectors`` with embdebias, and hand gensim back a ``KeyedVectors``.
"""

from gensim.models import Word2Vec
from gensim.test.utils import datapath
from gensim.utils import simple_preprocess

from embdebias import Embedding, SoftDebias

with open(datapath("lee_background.cor"), encoding="utf-8") as f:
    sentences = [simple_preprocess(line) for line in f]
model = Word2Vec(sentences, vector_size=50, min_count=3, epochs=20, seed=0, workers=1)

emb = Embedding.from_gensim(model.wv, name="lee-word2vec")
print(emb)

# %%
# A small corpus holds few of the published definitional pairs; soft debias on the
# pairs it has (a warning names the missing words), then back to gensim.
debiased = SoftDebias(lam=0.2).fit_transform(emb)
kv = debiased.to_gensim()
print(type(kv).__name__, len(kv.index_to_key), "words")
print("nearest to 'police' after debiasing:", [w for w, _ in kv.most_similar("police", topn=5)])
