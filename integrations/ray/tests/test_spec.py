"""The `wsp` field: checked at submission, and one URI per content."""

import pytest

from wsp_ray.spec import SpecError, create_params, normalize, uri_of


def test_equal_content_has_one_uri_and_different_content_another():
    assert uri_of({"packages": ["b", "a"]}) == uri_of({"packages": ["a", "b"], "backend": "venv"})
    assert uri_of({"packages": ["a"]}) != uri_of({"packages": ["a"], "backend": "uv"})
    assert uri_of({}) != uri_of({"python": "3.12"})
    assert uri_of({}).startswith("wsp://")


@pytest.mark.parametrize(
    "spec",
    [
        [],
        {"packages": "numpy"},
        {"packages": [""]},
        {"python": "three"},
        {"backend": "pip"},
        {"no_index": "yes"},
        {"index_url": ""},
        {"pakages": ["a"]},
        {"packages": ["a"], "lock": {"format": "pylock.toml", "text": ""}},
        {"lock": {"format": "requirements.txt", "text": ""}},
    ],
)
def test_a_bad_spec_is_refused(spec):
    with pytest.raises(SpecError):
        normalize(spec)


def test_create_params_carry_the_spec_and_default_python():
    params = create_params(
        {"packages": ["b", "a"], "find_links": ["/w"], "index_url": "http://i", "no_index": True, "backend": "uv"},
        default_python="3.12.1",
        name="n",
    )
    assert params == {
        "name": "n", "python_version": "3.12.1", "backend": "uv", "packages": ["a", "b"],
        "find_links": ["/w"], "index_url": "http://i", "no_index": True,
    }
    lock = {"format": "pylock.toml", "text": "lock-version = '1.0'\n"}
    assert create_params({"lock": lock, "python": "3.12"}, "3.12.1", "n")["lock"] == lock
