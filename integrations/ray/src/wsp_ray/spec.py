"""The `{"wsp": {...}}` field of a runtime env: checking it, its URI, its create request."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

BACKENDS = ("venv", "uv", "conda")
LOCK_FORMATS = ("pylock.toml", "conda-explicit")
PYTHON_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")
URI_SCHEME = "wsp://"


class SpecError(ValueError):
    """The `wsp` field is not a valid spec."""


def _string_list(spec: dict, key: str) -> list:
    value = spec.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise SpecError(f"wsp.{key} must be a list of non-empty strings, got {value!r}")
    return list(value)


def normalize(spec: Any) -> dict:
    """Checks a spec and returns it in canonical form (missing lists empty, packages sorted)."""
    if not isinstance(spec, dict):
        raise SpecError(f"the wsp field must be a dict, got {type(spec).__name__}")
    known = {"python", "packages", "backend", "find_links", "index_url", "no_index", "lock"}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise SpecError(f"unknown wsp option(s) {unknown}; known: {sorted(known)}")
    normalized: dict = {
        "packages": sorted(_string_list(spec, "packages")),
        "find_links": _string_list(spec, "find_links"),
    }
    python = spec.get("python")
    if python is not None:
        if not isinstance(python, str) or not PYTHON_VERSION.match(python):
            raise SpecError(f"wsp.python must be MAJOR.MINOR or MAJOR.MINOR.PATCH, got {python!r}")
        normalized["python"] = python
    backend = spec.get("backend", "venv")
    if backend not in BACKENDS:
        raise SpecError(f"wsp.backend must be one of {list(BACKENDS)}, got {backend!r}")
    normalized["backend"] = backend
    index_url = spec.get("index_url")
    if index_url is not None:
        if not isinstance(index_url, str) or not index_url:
            raise SpecError(f"wsp.index_url must be a non-empty string, got {index_url!r}")
        normalized["index_url"] = index_url
    no_index = spec.get("no_index", False)
    if not isinstance(no_index, bool):
        raise SpecError(f"wsp.no_index must be a bool, got {no_index!r}")
    normalized["no_index"] = no_index
    lock = spec.get("lock")
    if lock is not None:
        if normalized["packages"]:
            raise SpecError("give wsp.packages or wsp.lock, not both")
        if (
            not isinstance(lock, dict)
            or set(lock) != {"format", "text"}
            or lock["format"] not in LOCK_FORMATS
            or not isinstance(lock["text"], str)
        ):
            raise SpecError(f"wsp.lock must be {{format: one of {list(LOCK_FORMATS)}, text: str}}")
        normalized["lock"] = {"format": lock["format"], "text": lock["text"]}
    return normalized


def uri_of(spec: Any) -> str:
    """The URI naming a spec's content: equal specs (after normalizing) have equal URIs."""
    canonical = json.dumps(normalize(spec), sort_keys=True, separators=(",", ":"))
    return URI_SCHEME + hashlib.sha256(canonical.encode()).hexdigest()[:32]


def create_params(spec: Any, default_python: str, name: str) -> dict:
    """The `environment/create` params for a spec."""
    normalized = normalize(spec)
    params: dict = {
        "name": name,
        "python_version": normalized.get("python", default_python),
        "backend": normalized["backend"],
    }
    if normalized.get("lock"):
        params["lock"] = normalized["lock"]
    elif normalized["packages"]:
        params["packages"] = normalized["packages"]
    if normalized["find_links"]:
        params["find_links"] = normalized["find_links"]
    if "index_url" in normalized:
        params["index_url"] = normalized["index_url"]
    if normalized["no_index"]:
        params["no_index"] = True
    return params
