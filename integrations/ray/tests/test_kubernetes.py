"""deploy/kubernetes/: every manifest passes the Kubernetes OpenAPI schema (kubernetes-validate's
bundled schemas, strict: unknown fields fail), offline. No cluster runs them here."""

import copy
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

DEPLOY = Path(__file__).resolve().parents[3] / "deploy" / "kubernetes"
VERSIONS = ("1.30", kubernetes_validate.utils.latest_version())
SOCKET = "/var/run/wsp/wsp.sock"


def manifests():
    documents = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        documents.extend((path.name, document) for document in yaml.safe_load_all(path.read_text()) if document)
    return documents


def pod_spec(document):
    return document["spec"]["template"]["spec"] if document["kind"] == "DaemonSet" else document["spec"]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_manifest_passes_the_schema(version):
    documents = manifests()
    assert {document["kind"] for _, document in documents} == {"DaemonSet", "Pod"}
    for name, document in documents:
        kubernetes_validate.validate(document, version, strict=True)


def test_the_validator_refuses_a_broken_manifest():
    _, daemonset = next((n, d) for n, d in manifests() if d["kind"] == "DaemonSet")
    broken = copy.deepcopy(daemonset)
    pod_spec(broken)["containers"][0]["volumeMount"] = pod_spec(broken)["containers"][0].pop("volumeMounts")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, VERSIONS[-1], strict=True)


def test_the_server_and_the_pod_meet_on_one_host_socket_and_store():
    documents = {document["kind"]: document for _, document in manifests()}
    server = pod_spec(documents["DaemonSet"])
    command = server["containers"][0]["command"]
    assert command[:4] == ["wsp", "serve", "--listen", f"unix:{SOCKET}"]
    state_dir = command[command.index("--state-dir") + 1]
    pod = pod_spec(documents["Pod"])
    env = {item["name"]: item["value"] for item in pod["containers"][0]["env"]}
    assert env["WSP_RAY_SOCKET"] == SOCKET
    assert env["RAY_RUNTIME_ENV_PLUGINS"] == '[{"class": "wsp_ray.WspPlugin"}]'

    def host_paths(spec, container):
        volumes = {volume["name"]: volume["hostPath"]["path"] for volume in spec["volumes"]}
        return {mount["mountPath"]: volumes[mount["name"]] for mount in container["volumeMounts"]}

    server_mounts = host_paths(server, server["containers"][0])
    pod_mounts = host_paths(pod, pod["containers"][0])
    for path in (str(Path(SOCKET).parent), state_dir):
        assert server_mounts[path] == pod_mounts[path] == path
    assert server["containers"][0]["securityContext"]["runAsUser"] == pod["containers"][0]["securityContext"]["runAsUser"]
