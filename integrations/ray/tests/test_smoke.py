import ray

from support import on_node


def test_smoke(cluster, tmp_path):
    node = cluster.add_node(tmp_path / "n1")
    info = ray.get(on_node(node, {"wsp": {}}).remote())
    print(info)
    assert info["executable"].startswith(str(tmp_path / "n1" / "state"))
