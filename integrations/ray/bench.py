"""wsp-ray against Ray's own `pip` and `uv` runtime envs, on one local Ray cluster, with the same
packages from a local mirror: the time from submitting 100 tasks to the first result and to all
100, cold (a spec this cluster has never built) and warm (the same spec again, in a new job).
`--modes none` adds the floor: no runtime env at all, the packages already installed in the
Python that runs this (what no environment layer can beat: a worker's start and its imports).

    pip download --dest MIRROR pandas==2.3.3          # the mirror, made once
    python integrations/ray/bench.py --mirror MIRROR --packages pandas==2.3.3 --reps 3

Needs ray and wsp-ray in the Python that runs it; virtualenv there too for Ray's own pip and uv
runtime envs, and pip for its pip runtime env (a venv made by `uv venv` has neither: `uv pip
install pip virtualenv`); and uv on PATH for Ray's own uv runtime env. The run checks them
before it starts a cluster. Each cold spec is made distinct by a tiny salt wheel of its own,
added to the mirror's copy here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import ray
from ray.cluster_utils import Cluster

sys.path.insert(0, str(Path(__file__).parent / "tests"))
from support import make_wheel  # noqa: E402

MODES = ("wsp", "pip", "uv")
FLOOR = "none"


@ray.remote(num_cpus=1)
def use(module: str) -> str:
    import importlib
    import sys

    importlib.import_module(module)
    return sys.executable


def runtime_env(mode: str, packages: list, mirror: Path, backend: str) -> dict:
    local = ["--no-index", "--find-links", str(mirror)]
    if mode == "wsp":
        return {"wsp": {"packages": packages, "find_links": [str(mirror)], "no_index": True, "backend": backend}}
    if mode == FLOOR:
        return {}
    if mode == "pip":
        return {"pip": {"packages": packages, "pip_install_options": local}}
    # Ray's default uv options are ["--no-cache"]; giving options replaces them, so it is kept.
    return {"uv": {"packages": packages, "uv_pip_install_options": ["--no-cache", *local]}}


def one_job(address: str, env: dict, module: str, tasks: int) -> dict:
    """A new job (a new driver connection) that submits `tasks` tasks at once."""
    ray.init(address=address, logging_level="error", log_to_driver=False)
    try:
        start = time.perf_counter()
        refs = [use.options(runtime_env=env).remote(module) for _ in range(tasks)]
        ready, _ = ray.wait(refs, num_returns=1, timeout=1800)
        ray.get(ready)
        first = time.perf_counter() - start
        executables = set(ray.get(refs, timeout=1800))
        every = time.perf_counter() - start
    finally:
        ray.shutdown()
    return {"first_s": round(first, 3), "all_s": round(every, 3), "executables": sorted(executables)}


def setup_times(agent_log: Path) -> list:
    """Each runtime env setup in a runtime env agent's log: its field (wsp, pip, uv) and the
    seconds from "Creating runtime env" to "Successfully created runtime env" (the setup alone,
    without the worker's start)."""
    import datetime

    def parse(line):
        stamp = datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
        env = line.split(" runtime env: ", 1)[1].split(", context:")[0].split(" with timeout")[0].strip()
        return stamp, env

    started, durations = {}, []
    for line in agent_log.read_text(errors="replace").splitlines():
        if "Creating runtime env: " in line:
            stamp, env = parse(line)
            started[env] = stamp
        elif "Successfully created runtime env: " in line:
            stamp, env = parse(line)
            if env in started:
                field = next((m for m in MODES if f'"{m}": {{' in env), "?")
                durations.append((field, round((stamp - started.pop(env)).total_seconds(), 3)))
    return durations


def missing_tools(modes: list, module: str, packages: list) -> list:
    """What the runtime envs of `modes` need and this Python or PATH lacks."""
    import importlib.util

    missing = []
    if FLOOR in modes and importlib.util.find_spec(module) is None:
        missing.append(
            f"the floor needs {module} in {sys.executable} (`uv pip install --python "
            f"{sys.executable} --no-index --find-links MIRROR {' '.join(packages)}`)"
        )
    # Ray makes the virtualenv of its pip and uv runtime envs with virtualenv, and pip's with pip.
    needs = {"pip": ("pip", "virtualenv"), "uv": ("virtualenv",)}
    for mode in ("pip", "uv"):
        for module in needs[mode] if mode in modes else ():
            if importlib.util.find_spec(module) is None:
                missing.append(
                    f"Ray's {mode} runtime env needs {module} in {sys.executable} "
                    f"(`uv pip install --python {sys.executable} {module}`)"
                )
    if "uv" in modes and shutil.which("uv") is None:
        missing.append("Ray's uv runtime env needs uv on PATH")
    return missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", type=Path, help="a directory of wheels (pip download)")
    parser.add_argument("--packages", nargs="+")
    parser.add_argument("--module", default=None, help="what the tasks import (default: the first package)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--backend", default="venv", help="wsp's backend: venv, uv or conda")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=[*MODES, FLOOR])
    parser.add_argument("--out", type=Path, default=None, help="write every measurement here (JSON)")
    parser.add_argument("--agent-log", type=Path, default=None,
                        help="only print the setup times in this runtime_env_agent.log")
    args = parser.parse_args()
    if args.agent_log:
        for field, seconds in setup_times(args.agent_log):
            print(f"{field}\t{seconds:.3f} s")
        return
    if not args.mirror or not args.packages:
        parser.error("--mirror and --packages are needed for a run")
    module = args.module or args.packages[0].split("==")[0].split("[")[0].replace("-", "_")
    missing = missing_tools(args.modes, module, args.packages)
    if missing:
        parser.error("; ".join(missing))

    work = Path(tempfile.mkdtemp(prefix="wsp-ray-bench-"))
    mirror = work / "mirror"
    shutil.copytree(args.mirror, mirror)
    os.environ["RAY_RUNTIME_ENV_PLUGINS"] = json.dumps([{"class": "wsp_ray.WspPlugin"}])
    os.environ["WSP_RAY_DIR"] = str(work / "wsp")
    # A cache of uv's own for this run (wsp's installer is uv, with uv's cache): the first cold
    # build starts from nothing; the later cold ones (new specs) find the mirror's wheels in it.
    # Ray's uv runtime env runs uv with --no-cache, and its pip installs from the mirror.
    os.environ["UV_CACHE_DIR"] = str(work / "uv-cache")
    # Workers write bytecode as on any node (a shell that turned it off would make every worker
    # compile what it imports again).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": args.cpus, "include_dashboard": False})
    results = []
    try:
        for rep in range(args.reps):
            # Each rep starts with another mode, so that none is always the first on the cluster.
            for mode in args.modes[rep % len(args.modes):] + args.modes[: rep % len(args.modes)]:
                salt = f"wsp_ray_bench_salt_{mode}_{rep}"
                make_wheel(mirror, salt, "1.0")
                env = runtime_env(mode, [*args.packages, f"{salt}==1.0"], mirror, args.backend)
                for temperature in ("cold", "warm"):
                    measured = one_job(cluster.address, env, module, args.tasks)
                    measured.update(mode=mode, rep=rep, temperature=temperature)
                    print(json.dumps(measured), flush=True)
                    results.append(measured)
        agent_log = Path(cluster.head_node.get_session_dir_path()) / "logs" / "runtime_env_agent.log"
        print("\nsetups, in order (runtime_env_agent.log):", setup_times(agent_log))
    finally:
        cluster.shutdown()
        shutil.rmtree(work, ignore_errors=True)

    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    print(f"\nmedians of {args.reps} runs, {args.tasks} tasks, packages {' '.join(args.packages)}:")
    n = args.tasks
    print(f"| runtime env | cold: first result | cold: {n} results | warm: first result | warm: {n} results |")
    print("| --- | --- | --- | --- | --- |")
    for mode in args.modes:
        cells = []
        for temperature in ("cold", "warm"):
            runs = [r for r in results if r["mode"] == mode and r["temperature"] == temperature]
            cells += [f"{statistics.median(r[key] for r in runs):.2f} s" for key in ("first_s", "all_s")]
        print(f"| `{mode}` | " + " | ".join(cells) + " |")
    print("\nthe first cold run of each (rep 0: nothing cached anywhere):")
    for mode in args.modes:
        first = next(r for r in results if r["mode"] == mode and r["temperature"] == "cold" and r["rep"] == 0)
        print(f"- `{mode}`: first result {first['first_s']:.2f} s, {args.tasks} results {first['all_s']:.2f} s")


if __name__ == "__main__":
    main()
