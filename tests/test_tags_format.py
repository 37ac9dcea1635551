from __future__ import annotations

import pytest

from treehop import tags as t
from treehop.errors import InvalidTagError


def test_parse_string_and_list_forms() -> None:
    assert t.parse_tags("Machine Learning; user:model-training ;auto:PyTorch") == [
        "user:machine-learning",
        "user:model-training",
        "auto:pytorch",
    ]
    assert t.parse_tags(["a", "A", " a "]) == ["user:a"]
    assert t.render(["user:a", "auto:b"]) == "user:a;auto:b"


@pytest.mark.parametrize("bad", ["", "   ", "x:y", "a;b:c", "bad,comma", "x" * 65, "a\x00b"])
def test_invalid_tags(bad: str) -> None:
    with pytest.raises(InvalidTagError):
        t.parse_tags([bad])


def test_merge_prefers_user_source() -> None:
    merged = t.merge(["auto:ml", "inherit:ops"], ["user:ml"], ["auto:ops"])
    assert merged == ["user:ml", "auto:ops"]


def test_filter_labels_ignore_source() -> None:
    assert t.normalize_filter_labels("user:ML;Feature Store") == ("ml", "feature-store")
    assert t.labels(["auto:x", "inherit:y"]) == {"x", "y"}
