"""kill -9 of a node's wsp server while tasks start: their setup starts it again and they
succeed, and the store stays consistent."""

import json
import os
import signal
from pathlib import Path

import ray

from support import make_wheel, on_node, server_pid, store_environments, uri_for, wait_for_event, wsp_over_socket


def test_a_killed_server_is_started_again_and_the_store_is_consistent(cluster, tmp_path):
    node_dir = tmp_path / "node"
    node = cluster.add_node(node_dir)
    wheels = tmp_path / "wheels"
    for version in ("1.0", "2.0", "3.0"):
        make_wheel(wheels, "wsp_ray_probe", version)

    def spec(version):
        return {"packages": [f"wsp_ray_probe=={version}"], "find_links": [str(wheels)], "no_index": True}

    assert ray.get(on_node(node, {"wsp": spec("1.0")}).remote("wsp_ray_probe"), timeout=300)["module_version"] == "1.0"
    first_pid = server_pid(node_dir)

    # Killed while the plugin's create is on its way to the server.
    pending = [on_node(node, {"wsp": spec("2.0")}).remote("wsp_ray_probe") for _ in range(5)]
    wait_for_event(node_dir, f"creating {uri_for(spec('2.0'))}")
    os.kill(first_pid, signal.SIGKILL)
    assert {info["module_version"] for info in ray.get(pending, timeout=300)} == {"2.0"}
    second_pid = server_pid(node_dir)
    assert second_pid != first_pid
    os.kill(second_pid, 0)

    # Killed while idle: the next task's setup starts it again.
    os.kill(second_pid, signal.SIGKILL)
    assert ray.get(on_node(node, {"wsp": spec("3.0")}).remote("wsp_ray_probe"), timeout=300)["module_version"] == "3.0"
    assert server_pid(node_dir) not in (first_pid, second_pid)

    environments = store_environments(node_dir / "state")
    assert len(environments) >= 3
    for environment in environments:
        details = json.loads(wsp_over_socket(node_dir, "--json", "get", environment["id"]).stdout)
        assert Path(details["interpreter_path"]).is_file() and os.access(details["interpreter_path"], os.X_OK)
