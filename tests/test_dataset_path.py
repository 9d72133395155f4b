"""The bundled evaluation files are found where gensim keeps them, without importing gensim."""

import subprocess
import sys

import pytest
from gensim.test.utils import datapath

from embdebias.errors import WordListError
from embdebias.metrics import quality
from embdebias.metrics.quality import DATASETS, dataset_path


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_known_names_are_gensims_files(name):
    assert dataset_path(name) == type(dataset_path(name))(datapath(DATASETS[name]))
    assert dataset_path(name).is_file()


def test_finding_them_does_not_import_gensim():
    code = ("import sys; from embdebias.metrics.quality import dataset_path; dataset_path('wordsim353'); "
            "print('gensim' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_gensim_the_error_says_what_to_do(monkeypatch):
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(WordListError, match="install gensim, or give the path"):
        quality.dataset_path("simlex999")


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(WordListError, match="nope.txt: evaluation file not found"):
        dataset_path(tmp_path / "nope.txt")
