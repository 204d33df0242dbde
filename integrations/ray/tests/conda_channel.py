"""A local conda channel for the tests: Python itself packaged by wsp's `local_channel`
example (from pyenv's interpreter), plus a `noarch: python` package written here."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tarfile
import time
from pathlib import Path


def local_channel_example() -> Path:
    """The `local_channel` example binary the workspace's build made (`WSP_LOCAL_CHANNEL`, else
    beside the wsp binary under `examples/`)."""
    configured = os.environ.get("WSP_LOCAL_CHANNEL")
    if configured:
        return Path(configured)
    from wsp_ray.server import wsp_binary

    return Path(wsp_binary()).resolve().parent / "examples" / "local_channel"


def build_channel(directory: Path, python_version: str, package: str, version: str) -> str:
    """Builds the channel in `directory` and returns its `file://` URL."""
    result = subprocess.run(
        [str(local_channel_example()), str(directory), python_version],
        capture_output=True, text=True, timeout=300, check=True,
    )
    url = result.stdout.strip()
    _add_noarch_package(directory, package, version)
    return url


def _add_noarch_package(channel: Path, name: str, version: str) -> None:
    module = name.replace("-", "_")
    contents = f"VERSION = {version!r}\n".encode()
    relative = f"site-packages/{module}.py"
    index = {
        "name": name, "version": version, "build": "0", "build_number": 0,
        "depends": ["python"], "noarch": "python", "subdir": "noarch",
        "arch": None, "platform": None, "license": "MIT", "timestamp": int(time.time() * 1000),
    }
    paths = {"paths_version": 1, "paths": [{
        "_path": relative, "path_type": "hardlink",
        "sha256": hashlib.sha256(contents).hexdigest(), "size_in_bytes": len(contents),
    }]}
    members = {
        relative: contents,
        "info/index.json": json.dumps(index).encode(),
        "info/paths.json": json.dumps(paths).encode(),
        "info/link.json": json.dumps({"noarch": {"type": "python"}, "package_metadata_version": 1}).encode(),
        "info/files": f"{relative}\n".encode(),
    }
    noarch = channel / "noarch"
    noarch.mkdir(parents=True, exist_ok=True)
    file_name = f"{name}-{version}-0.tar.bz2"
    archive = noarch / file_name
    with tarfile.open(archive, "w:bz2") as tar:
        for path, data in members.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    data = archive.read_bytes()
    record = dict(index, md5=hashlib.md5(data).hexdigest(), sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    repodata_path = noarch / "repodata.json"
    repodata = (
        json.loads(repodata_path.read_text())
        if repodata_path.exists()
        else {"info": {"subdir": "noarch"}, "packages": {}, "packages.conda": {}, "removed": [], "repodata_version": 1}
    )
    repodata["packages"][file_name] = record
    repodata_path.write_text(json.dumps(repodata))
