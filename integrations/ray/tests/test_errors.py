"""A spec wsp refuses fails the task with RuntimeEnvSetupError carrying wsp's code, reason and
detail; the node's server keeps serving."""

import os

import pytest
import ray
from ray.exceptions import RuntimeEnvSetupError

from support import make_wheel, on_node, server_pid, store_environments, wsp_over_socket


def test_bad_specs_fail_with_wsps_reason_and_the_server_keeps_serving(cluster, tmp_path):
    node_dir = tmp_path / "node"
    node = cluster.add_node(node_dir)
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "wsp_ray_probe", "1.0")
    local = {"find_links": [str(wheels)], "no_index": True}

    with pytest.raises(RuntimeEnvSetupError) as unknown_package:
        ray.get(on_node(node, {"wsp": {"packages": ["wsp-ray-no-such-package==1.0"], **local}}).remote(), timeout=300)
    text = str(unknown_package.value)
    assert "wsp error -31004 (install-failed)" in text, text
    assert "wsp-ray-no-such-package" in text.split("detail:", 1)[1], text
    pid = server_pid(node_dir)

    with pytest.raises(RuntimeEnvSetupError) as no_python:
        ray.get(on_node(node, {"wsp": {"python": "3.99"}}).remote(), timeout=300)
    text = str(no_python.value)
    assert "wsp error -31003" in text and "3.99" in text, text

    os.kill(pid, 0)  # the same server, still alive
    assert server_pid(node_dir) == pid
    info = ray.get(on_node(node, {"wsp": {"packages": ["wsp_ray_probe==1.0"], **local}}).remote("wsp_ray_probe"), timeout=300)
    assert info["module_version"] == "1.0"
    assert server_pid(node_dir) == pid
    listed = wsp_over_socket(node_dir, "list").stdout
    environments = store_environments(node_dir / "state")
    assert [environment["id"] for environment in environments] == [info["environment"]]
    assert info["environment"] in listed
