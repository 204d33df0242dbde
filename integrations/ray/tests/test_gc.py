"""wsp gc under the plugin: environments Ray uses are kept, and past the size bound the least
recently used of the others is evicted first."""

import json
import platform

import ray

from support import Holder, make_wheel, server_pid, store_environments, uri_for, wait_for_event, wsp
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

NAMES = ("held", "old", "newer", "newest")


def environment_size(tmp_path, wheels) -> int:
    """The disk size of one environment of the shape used here, measured in a store of its own."""
    state = tmp_path / "measure"
    wsp("--state-dir", str(state), "create", "m", "--python", platform.python_version(),
        "-p", "wsp_ray_gc_held==1.0", "--find-links", str(wheels), "--no-index")
    return json.loads(wsp("--state-dir", str(state), "--json", "get", "m").stdout)["extra"]["disk_bytes"]


def test_gc_keeps_environments_in_use_and_evicts_the_least_recently_used(cluster, tmp_path):
    wheels = tmp_path / "wheels"
    for name in NAMES:
        make_wheel(wheels, f"wsp_ray_gc_{name}", "1.0")
    size = environment_size(tmp_path, wheels)
    # Room for three environments and a half: the fourth one pushes the store past it.
    node_dir = tmp_path / "node"
    node = cluster.add_node(node_dir, WSP_RAY_KEEP_BYTES=str(int(size * 3.5)))
    specs = {
        name: {"packages": [f"wsp_ray_gc_{name}==1.0"], "find_links": [str(wheels)], "no_index": True}
        for name in NAMES
    }

    def hold(name):
        strategy = NodeAffinitySchedulingStrategy(node, soft=False)
        holder = Holder.options(runtime_env={"wsp": specs[name]}, scheduling_strategy=strategy).remote()
        ray.get(holder.where.remote(), timeout=300)
        return holder

    held = hold("held")
    for name in ("old", "newer"):
        holder = hold(name)
        ray.kill(holder)
        wait_for_event(node_dir, f"released {uri_for(specs[name])}")
    ids = {line.split()[-1]: line.split()[-2] for line in open(node_dir / "wsp-ray.log") if " built " in line}
    by_name = {name: next(i for i, u in ids.items() if u == uri_for(specs[name])) for name in ("held", "old", "newer")}
    assert {e["id"] for e in store_environments(node_dir / "state")} == set(by_name.values())

    newest = hold("newest")
    deleted = wait_for_event(node_dir, "gc deleted")
    assert deleted.split("gc deleted ")[1].split(",")[0].split() == [by_name["old"]], deleted
    remaining = {e["id"] for e in store_environments(node_dir / "state")}
    assert by_name["held"] in remaining and by_name["newer"] in remaining and by_name["old"] not in remaining
    assert len(remaining) == 3
    # What Ray holds still runs.
    assert ray.get(held.where.remote(), timeout=60).startswith(str(node_dir / "state"))
    assert ray.get(newest.where.remote(), timeout=60).startswith(str(node_dir / "state"))
    assert server_pid(node_dir)
