"""A fitted-parameter file is a format, not a container: each class of hostile file is refused
with one ParamsFileError naming the file, and nothing it holds reaches the estimator."""

import io
import json
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest
from debiaser_data import gendered_embedding

from embdebias.debias import load_fitted, make_debiaser
from embdebias.debias.hsr import HalfSiblingRegression
from embdebias.debias.oscar import OSCaR
from embdebias.debias.ran import RANDebias
from embdebias.debias import _params
from embdebias.errors import DimensionError, ParamsFileError


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding()


@pytest.fixture(scope="module")
def saved(emb, tmp_path_factory):
    """``{method: path}`` of an HSR and an OSCaR parameter file."""
    d = tmp_path_factory.mktemp("params")
    return {name: make_debiaser(name).fit(emb).save_params(d / f"{name}.npz") for name in ("hsr", "oscar")}


def npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def members_of(path) -> dict:
    with zipfile.ZipFile(path) as z:
        return {i.filename[:-4]: z.read(i) for i in z.infolist()}


def meta_of(path) -> dict:
    return json.loads(np.load(io.BytesIO(members_of(path)["__meta__"])).tobytes())


def write(path, members: dict, *, meta=None, compress=zipfile.ZIP_STORED):
    """A zip of ``members`` (name -> npy bytes), ``meta`` replacing ``__meta__`` if given."""
    members = dict(members)
    if meta is not None:
        members["__meta__"] = npy(np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    with zipfile.ZipFile(path, "w", compression=compress) as z:
        for name, data in members.items():
            z.writestr(f"{name}.npy", data)
    return path


def refused(path, match, cls=HalfSiblingRegression):
    est = cls()
    with pytest.raises(ParamsFileError, match=match) as info:
        est.load_params(path)
    assert str(path) in str(info.value)
    assert not hasattr(est, "n_features_in_") and not hasattr(est, "map_")  # nothing reached it
    return est


def test_a_member_the_schema_does_not_name_is_refused(saved, tmp_path):
    m = members_of(saved["hsr"])
    # an attribute of another method, and one transform would use if it were set
    for name in ("transform_matrix_", "n_features_in_", "kept_words__"):
        refused(write(tmp_path / f"{name}.npz", {**m, name: npy(np.zeros((16, 16)))}),
                f"members the schema does not name: {name}")
    # a directory or any other member name
    path = tmp_path / "dir.npz"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in m.items():
            z.writestr(f"{name}.npy", data)
        z.writestr("x/map_.npy", m["map_"])
    refused(path, "is not an npy array of a parameter file")


def test_an_attribute_or_key_the_schema_does_not_name_is_refused(saved, tmp_path):
    m, meta = members_of(saved["hsr"]), meta_of(saved["hsr"])
    refused(write(tmp_path / "a.npz", m, meta={**meta, "attributes": {**meta["attributes"], "map_": [1]}}),
            "attributes the schema does not name: map_")
    refused(write(tmp_path / "b.npz", m, meta={**meta, "extra": 1}), "keys the format does not define: extra")
    refused(write(tmp_path / "c.npz", m, meta={**meta, "params": {**meta["params"], "chunk_size": 3}}),
            "constructor parameters HalfSiblingRegression does not take: chunk_size")
    refused(write(tmp_path / "d.npz", m, meta={**meta, "params": {**meta["params"], "alpha": "sixty"}}),
            "alpha")


def test_missing_members_and_attributes_are_refused(saved, tmp_path):
    m, meta = members_of(saved["hsr"]), meta_of(saved["hsr"])
    refused(write(tmp_path / "a.npz", {k: v for k, v in m.items() if k != "map_"}), "members missing: map_")
    attrs = {k: v for k, v in meta["attributes"].items() if k != "kept_words_"}
    refused(write(tmp_path / "b.npz", m, meta={**meta, "attributes": attrs}), "attribute kept_words_ is missing")
    refused(write(tmp_path / "c.npz", {k: v for k, v in m.items() if k != "__meta__"}), "no __meta__ member")


@pytest.mark.parametrize("value, says", [
    ("16", "'n_features_in' must be a positive integer, got '16'"),
    (0, "must be a positive integer, got 0"),
    (True, "must be a positive integer, got True"),
    (None, "must be a positive integer, got None"),
])
def test_a_dimension_of_the_wrong_type_is_refused(saved, tmp_path, value, says):
    meta = meta_of(saved["hsr"])
    refused(write(tmp_path / "p.npz", members_of(saved["hsr"]), meta={**meta, "n_features_in": value}), says)


@pytest.mark.parametrize("name, value, says", [
    ("kept_words_", "he she", "kept_words_ must be a list of strings, got str"),
    ("kept_words_", [1, 2], "kept_words_ must be a list of strings, got list"),
    ("missing_words_", {"a": 1}, "missing_words_ must be a list of strings, got dict"),
])
def test_an_attribute_of_the_wrong_type_is_refused(saved, tmp_path, name, value, says):
    meta = meta_of(saved["hsr"])
    meta["attributes"][name] = value
    refused(write(tmp_path / "p.npz", members_of(saved["hsr"]), meta=meta), says)


def test_a_word_set_of_one_word_or_mixed_sizes_is_refused(emb, tmp_path):
    path = make_debiaser("double-hard", n_words=100, n_candidates=3).fit(emb).save_params(tmp_path / "dh.npz")
    meta = meta_of(path)
    for sets in ([["he"]], [["he", "she"], ["a", "b", "c"]]):
        meta["attributes"]["equalize_pairs_"] = sets
        with pytest.raises(ParamsFileError, match="equalize_pairs_ must be a list of word sets"):
            type(make_debiaser("double-hard"))().load_params(write(tmp_path / "p.npz", members_of(path), meta=meta))


@pytest.mark.parametrize("array, says", [
    (np.zeros((16, 16), dtype=np.int64), "dtype <i8, expected float64 or float32"),
    (np.zeros((16, 16), dtype=">f8"), "dtype >f8"),
    (np.zeros((16, 16), dtype=np.complex128), "dtype <c16"),
    (np.zeros((16, 15)), r"shape \(16, 15\), expected \(16, 16\)"),
    (np.zeros((16, 16, 1)), "shape"),
    (np.zeros(256), "shape"),
    (np.full((16, 16), np.nan), "non-finite"),
])
def test_an_array_of_the_wrong_dtype_shape_or_values_is_refused(saved, tmp_path, array, says):
    refused(write(tmp_path / "p.npz", {**members_of(saved["hsr"]), "map_": npy(array)}), says)


def test_a_structured_or_object_dtype_is_refused_before_reading(saved, tmp_path):
    m = members_of(saved["hsr"])
    head = npy(np.zeros((16, 16)))
    obj = head.replace(b"'<f8'", b"'|O' ")  # same header length: an object array's header
    refused(write(tmp_path / "o.npz", {**m, "map_": obj}), "dtype")
    structured = npy(np.zeros((16, 16), dtype=[("a", "<f4"), ("b", "<f4")]))
    refused(write(tmp_path / "s.npz", {**m, "map_": structured}), "dtype")


def npy_header_claiming(shape, dtype="<f8") -> bytes:
    """An npy header (format 1.0) claiming ``shape``, without its data."""
    header = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': {shape!r}, }}".encode()
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header


def test_a_header_claiming_a_trillion_rows_is_refused_without_allocating(emb, tmp_path):
    """RAN's vectors_ have one row per debiased word: a header claiming 10^12 rows
    contradicts the word list; INLP's classifiers_ may have any number of rows, and the
    claim contradicts the member's size. Nothing is allocated for either."""
    path = make_debiaser("ran", n_epochs=5, n_words=50).fit(emb).save_params(tmp_path / "ran.npz")
    inlp = make_debiaser("inlp", n_iterations=2).fit(emb).save_params(tmp_path / "inlp.npz")
    huge = npy_header_claiming((10 ** 12, 16), "<f4") + b"\0" * 64
    tracemalloc.start()  # the loads only: the fits above allocate what fitting needs
    with pytest.raises(ParamsFileError, match=r"vectors_ has shape \(1000000000000, 16\), expected \(100, 16\)"):
        RANDebias().load_params(write(tmp_path / "huge.npz", {**members_of(path), "vectors_": huge}))
    huge = npy_header_claiming((10 ** 12, 16)) + b"\0" * 64
    with pytest.raises(ParamsFileError, match="its header says 128000000000000 bytes of data, the archive 64"):
        make_debiaser("inlp").load_params(write(tmp_path / "h.npz", {**members_of(inlp), "classifiers_": huge}))
    assert tracemalloc.get_traced_memory()[1] < 20 << 20
    tracemalloc.stop()


def central_entry(data: bytes, name: str) -> int:
    """Where the central directory entry of member ``name`` starts."""
    return data.find(name.encode(), data.find(b"PK\x01\x02")) - 46


def test_a_deflated_bomb_is_never_inflated_past_its_declared_size(emb, tmp_path):
    """A deflated member of 64 MB of zeros (64 kB compressed) under a header that does not
    fit the schema is refused from its header; one whose directory entry declares 128
    bytes of data while the stream inflates to 32 MB is read no further than that."""
    ok = members_of(make_debiaser("inlp", n_iterations=2).fit(emb).save_params(tmp_path / "inlp.npz"))
    path = write(tmp_path / "bomb.npz", {**ok, "map_": npy(np.zeros((1 << 22, 2)))}, compress=zipfile.ZIP_DEFLATED)
    assert path.stat().st_size < 1 << 20
    tracemalloc.start()
    with pytest.raises(ParamsFileError, match=r"map_ has shape \(4194304, 2\), expected \(16, 16\)"):
        make_debiaser("inlp").load_params(path)
    header = npy_header_claiming((1, 16))
    path = write(tmp_path / "bomb2.npz", {**ok, "classifiers_": header + bytes(32 << 20)},
                 compress=zipfile.ZIP_DEFLATED)
    lying = bytearray(path.read_bytes())
    struct.pack_into("<L", lying, central_entry(lying, "classifiers_.npy") + 24, len(header) + 128)
    (tmp_path / "lying.npz").write_bytes(bytes(lying))
    del lying
    tracemalloc.reset_peak()
    with pytest.raises(ParamsFileError, match="classifiers_.npy'.*damaged.*Bad CRC"):
        make_debiaser("inlp").load_params(tmp_path / "lying.npz")
    assert tracemalloc.get_traced_memory()[1] < 20 << 20
    tracemalloc.stop()


def test_an_uncompressed_size_past_the_limit_is_refused_unread(saved, tmp_path, monkeypatch):
    monkeypatch.setattr(_params, "MAX_PARAMS_BYTES", 1000)
    refused(saved["hsr"], "more than 1000 bytes of arrays")


def test_deep_metadata_is_refused(saved, tmp_path):
    m, meta = members_of(saved["hsr"]), meta_of(saved["hsr"])
    deep = json.loads("[" * 20 + "]" * 20)
    refused(write(tmp_path / "a.npz", m, meta={**meta, "kinds": {"x": deep}}), "nests deeper than 8 levels")
    raw = ('{"format": "embdebias-debiaser-params", "version": 1, "kinds": ' + "[" * 100_000 + "]" * 100_000 + "}")
    members = {**m, "__meta__": npy(np.frombuffer(raw.encode(), dtype=np.uint8))}
    refused(write(tmp_path / "b.npz", members), "is not JSON|nests deeper")


def test_a_zip_that_is_also_another_format_is_refused(saved, tmp_path):
    data = open(saved["hsr"], "rb").read()
    cases = {
        "npy-first": npy(np.zeros(3)) + data,        # np.load would read it as an npy array
        "text-first": b"the 0.1 0.2\n" + data,
        "trailing": data + b"\0" * 10,
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        refused(tmp_path / name, "not a parameter file")
    with zipfile.ZipFile(tmp_path / "comment.npz", "w") as z:
        for member, blob in members_of(saved["hsr"]).items():
            z.writestr(f"{member}.npy", blob)
        z.comment = b"GIF89a"
    refused(tmp_path / "comment.npz", "comment")


def test_duplicate_and_too_many_members_are_refused(saved, tmp_path):
    m = members_of(saved["hsr"])
    path = tmp_path / "dup.npz"
    with zipfile.ZipFile(path, "w") as z, pytest.warns(UserWarning, match="Duplicate name"):
        for name, data in [*m.items(), ("map_", m["map_"])]:
            z.writestr(f"{name}.npy", data)
    refused(path, "appears twice")
    many = {**m, **{f"x{i}_": npy(np.zeros(1)) for i in range(20)}}
    refused(write(tmp_path / "many.npz", many), "zip members, a parameter file holds at most 16")


def test_overlapping_members_are_refused(saved, tmp_path):
    """Two directory entries pointing at one member's bytes (the overlapping zip bomb)."""
    data = bytearray(open(saved["hsr"], "rb").read())
    first = data.find(b"PK\x01\x02")
    second = data.find(b"PK\x01\x02", first + 4)
    offset = struct.unpack_from("<L", data, first + 42)[0]
    struct.pack_into("<L", data, second + 42, offset)
    (tmp_path / "overlap.npz").write_bytes(bytes(data))
    refused(tmp_path / "overlap.npz", "overlaps another|no local header|damaged")


def test_method_and_dimension_must_match(saved, tmp_path):
    with pytest.raises(ParamsFileError, match="not of 'embdebias.debias.hsr:HalfSiblingRegression'"):
        HalfSiblingRegression().load_params(saved["oscar"])
    with pytest.raises(DimensionError, match="16-d vectors, expected 8-d"):
        OSCaR().load_params(saved["oscar"], dim=8)
    assert load_fitted(saved["oscar"])[0] == "oscar"


def test_a_special_file_or_directory_is_refused(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo")
    refused(tmp_path / "fifo", "not a regular file")
    refused(tmp_path, "not a regular file")
    refused(tmp_path / "absent.npz", "no such parameter file")


def test_describe_reads_headers_only(saved):
    described = _params.describe(saved["hsr"])
    assert described["arrays"] == {"map_": [16, 16]} and described["estimator"].endswith("HalfSiblingRegression")


def test_save_refuses_an_attribute_its_schema_does_not_name(emb, tmp_path):
    est = make_debiaser("hsr").fit(emb)
    est.extra_ = np.zeros(3)
    with pytest.raises(ParamsFileError, match="extra_ are not in its parameter file schema"):
        est.save_params(tmp_path / "p.npz")
    assert not (tmp_path / "p.npz").exists()


def test_every_debiaser_declares_a_schema_that_covers_its_fit():
    from embdebias.debias import DEBIASERS

    for name, spec in DEBIASERS.items():
        schema = spec.estimator_class()._params_schema
        assert schema and all(isinstance(s, (_params.Array, _params.Value)) for s in schema.values()), name


@pytest.mark.parametrize("name", ["soft", "hard", "hsr", "oscar"])
def test_a_constructor_parameter_is_checked_by_the_estimators_rules(emb, tmp_path, name):
    path = make_debiaser(name).fit(emb).save_params(tmp_path / f"{name}.npz")
    meta = meta_of(path)
    for value in ("x", -3, 2.5):
        meta["params"]["chunk_rows"] = value
        with pytest.raises(ParamsFileError, match="'chunk_rows' parameter"):
            load_fitted(write(tmp_path / "bad.npz", members_of(path), meta=meta))
