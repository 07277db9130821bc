"""SB3's ``common.save_util`` in the facade: paths, dotted attributes, pickles of plain data only."""

from __future__ import annotations

import collections
import io
import pickle
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from lit_sb3.common.save_util import (
    data_to_json,
    json_to_data,
    load_from_pkl,
    open_path,
    recursive_getattr,
    recursive_setattr,
    save_to_pkl,
)
from lit_sb3_core.errors import LitSb3Error


@pytest.mark.parametrize("kind", [str, Path])
def test_pickles_of_plain_data_round_trip_with_suffix(tmp_path: Path, kind: type) -> None:
    data = {"obs": np.arange(6, dtype=np.float32).reshape(2, 3), "names": ["a", "b"], "n": 3}
    save_to_pkl(kind(tmp_path / "data"), data)  # no suffix: .pkl is added
    assert (tmp_path / "data.pkl").is_file()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        loaded = load_from_pkl(kind(tmp_path / "data"))  # falls back to data.pkl, silently
    assert not record
    np.testing.assert_array_equal(loaded["obs"], data["obs"])
    assert loaded["obs"].dtype == np.float32 and loaded["names"] == ["a", "b"] and loaded["n"] == 3


def test_a_pickle_naming_a_class_is_refused_unimported(tmp_path: Path) -> None:
    path = tmp_path / "counter.pkl"
    path.write_bytes(pickle.dumps(collections.Counter("aab")))
    with pytest.raises(LitSb3Error, match=r"collections\.Counter"):
        load_from_pkl(path)
    with pytest.raises(ValueError):  # SB3 users' except clauses still catch it
        load_from_pkl(path)


def test_open_path_writes_into_new_folders_and_beside_folders(tmp_path: Path) -> None:
    with pytest.warns(UserWarning, match="does not exist"):
        open_path(tmp_path / "new" / "file", "w", suffix="zip").close()
    assert (tmp_path / "new" / "file.zip").is_file()
    (tmp_path / "folder").mkdir()
    with pytest.warns(UserWarning, match="is a folder"):
        open_path(str(tmp_path / "folder"), "write").close()
    assert (tmp_path / "folder_2").is_file()


def test_open_path_checks_streams_and_modes(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        open_path(123, "w")
    stream = (tmp_path / "f").open("wb")
    assert open_path(stream, "w") is stream
    with pytest.raises(ValueError, match="readable"):
        open_path(stream, "r")
    with pytest.raises(ValueError, match="mode"):
        open_path(stream, "append")
    stream.close()
    with pytest.raises(ValueError, match="closed"):
        open_path(stream, "w")
    assert load_from_pkl(io.BytesIO(pickle.dumps([1, 2]))) == [1, 2]


def test_dotted_attributes_and_json() -> None:
    obj = SimpleNamespace(policy=SimpleNamespace(lr=0.1))
    assert recursive_getattr(obj, "policy.lr") == 0.1
    assert recursive_getattr(obj, "policy.missing", None) is None
    recursive_setattr(obj, "policy.lr", 0.5)
    assert obj.policy.lr == 0.5
    text = data_to_json({"gamma": 0.99, "fn": len})
    data = json_to_data(text, custom_objects={"fn": "replaced"})
    assert data == {"gamma": 0.99, "fn": "replaced"}
    assert json_to_data(text)["fn"]["__repr__"] == repr(len)
