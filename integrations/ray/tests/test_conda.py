"""conda packages from a local channel reach Ray tasks on a node with no conda installed."""

import platform
import shutil
from pathlib import Path

import ray

from conda_channel import build_channel
from support import on_node, store_environments


def test_conda_packages_from_a_local_channel_reach_tasks_without_conda(cluster, tmp_path):
    assert shutil.which("conda") is None, "this test wants a machine without conda"
    channel = build_channel(tmp_path / "channel", platform.python_version(), "wsp-ray-conda-probe", "4.5.6")
    node_dir = tmp_path / "node"
    node = cluster.add_node(node_dir, WSP_RAY_SERVE_ARGS=f"--channel {channel}")

    spec = {"backend": "conda", "packages": ["wsp-ray-conda-probe==4.5.6"]}
    results = ray.get([on_node(node, {"wsp": spec}).remote("wsp_ray_conda_probe") for _ in range(4)], timeout=300)

    environments = store_environments(node_dir / "state")
    assert len(environments) == 1
    for info in results:
        assert info["module_version"] == "4.5.6"
        assert info["conda_on_path"] is None
        assert info["version"] == platform.python_version()
        assert Path(info["executable"]).is_relative_to(node_dir / "state"), info
        assert info["environment"] == environments[0]["id"]
