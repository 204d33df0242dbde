"""Tasks pinned to each node run on the environment's interpreter with its packages; each node
has its own wsp server, and each node builds the environment once for 20 tasks in flight."""

import platform
from pathlib import Path

import ray

from support import make_wheel, on_node, server_pid, store_environments, events

TASKS_PER_NODE = 20


def test_each_node_builds_once_and_runs_tasks_in_the_environment(cluster, tmp_path):
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "wsp_ray_probe", "1.2.3")
    spec = {"python": platform.python_version(), "packages": ["wsp_ray_probe==1.2.3"],
            "find_links": [str(wheels)], "no_index": True}
    # Two CPUs a node, so that its two runtime envs (below) are set up at the same time.
    nodes = {cluster.add_node(tmp_path / f"node-{index}", num_cpus=2): tmp_path / f"node-{index}" for index in range(2)}

    # Two runtime envs per node that differ only in env_vars: Ray sets each up on its own,
    # both ask the plugin for the same wsp spec at once (Ray's URI cache only knows a URI
    # once its first create has returned), and wsp builds it once.
    pending = []
    for node_id in nodes:
        for index in range(TASKS_PER_NODE):
            runtime_env = {"wsp": spec, "env_vars": {"VARIANT": str(index % 2)}}
            pending.append((node_id, on_node(node_id, runtime_env).remote("wsp_ray_probe")))
    results = [(node_id, ray.get(ref, timeout=300)) for node_id, ref in pending]

    for node_id, info in results:
        state = nodes[node_id] / "state"
        assert info["node"] == node_id
        assert Path(info["executable"]).is_relative_to(state), info
        assert info["module_version"] == "1.2.3"
        assert info["ray_from"] != str(Path(info["executable"]).parent.parent), "Ray came from the environment"

    servers = {server_pid(node_dir) for node_dir in nodes.values()}
    assert len(servers) == len(nodes), "each node has a wsp server of its own"
    for node_id, node_dir in nodes.items():
        environments = store_environments(node_dir / "state")
        assert len(environments) == 1, environments
        lines = events(node_dir)
        assert len([line for line in lines if " built " in line]) == 1, lines
        # Whether the second setup came while the first was building (wsp answered it with the
        # same environment, reused) or after (Ray's cache answered it), nothing was built twice.
        assert len([line for line in lines if " creating " in line]) in (1, 2), lines
        used = {info["environment"] for seen_on, info in results if seen_on == node_id}
        assert used == {environments[0]["id"]}
