#!/usr/bin/env python3
"""A local PEP 503 package index of real distributions, for the install benchmark.

    python3 bench/pep503_mirror.py download DIR PKG...   # pip download into DIR/files
    python3 bench/pep503_mirror.py build DIR             # DIR/simple/<project>/index.html
    python3 bench/pep503_mirror.py serve DIR [--port P]  # http://127.0.0.1:P/simple/

`download` runs the given Python's pip (`--python`, default this one) with
`--only-binary=:all:`, so every distribution is a wheel for that interpreter. `build` writes the
simple repository pages: one per project, each link with its `#sha256=` fragment and, where the
wheel's metadata says it, `data-requires-python`. `serve` builds, then serves DIR on loopback
(every answer to be revalidated before reuse) and prints the index URL on a line of its own once
it listens; it runs until killed.

The benchmark (`benches/install.rs`, group "install from a local mirror") takes the URL as
`WSP_BENCH_INDEX_URL`.
"""

import argparse
import hashlib
import html
import http.server
import os
import re
import subprocess
import sys
import zipfile
from email.parser import HeaderParser
from functools import partial
from pathlib import Path


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def project_of(filename):
    """The project a wheel's file name is for (PEP 427: the first `-`-separated part)."""
    return normalize(filename.split("-", 1)[0])


def requires_python(wheel):
    """The `Requires-Python` of a wheel's METADATA, or None."""
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
        if not names:
            return None
        text = archive.read(names[0]).decode("utf-8", "replace")
    return HeaderParser().parsestr(text).get("Requires-Python")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build(root):
    files = root / "files"
    wheels = sorted(p for p in files.iterdir() if p.suffix == ".whl")
    if not wheels:
        sys.exit(f"no wheels in {files}: run `download` first")
    projects = {}
    for wheel in wheels:
        projects.setdefault(project_of(wheel.name), []).append(wheel)
    simple = root / "simple"
    simple.mkdir(exist_ok=True)
    for project, dists in projects.items():
        links = []
        for wheel in dists:
            attributes = f'href="../../files/{html.escape(wheel.name)}#sha256={sha256(wheel)}"'
            python = requires_python(wheel)
            if python:
                attributes += f' data-requires-python="{html.escape(python)}"'
            links.append(f"<a {attributes}>{html.escape(wheel.name)}</a><br/>")
        page = simple / project
        page.mkdir(exist_ok=True)
        (page / "index.html").write_text(
            "<!DOCTYPE html>\n<html><body>\n" + "\n".join(links) + "\n</body></html>\n"
        )
    index = "\n".join(f'<a href="{p}/">{p}</a><br/>' for p in sorted(projects))
    (simple / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{index}\n</body></html>\n")
    print(f"{len(wheels)} wheels of {len(projects)} projects indexed under {simple}", file=sys.stderr)


class MirrorHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the mirror quietly, keeping connections open. Every answer may be cached but must be revalidated
    (`If-Modified-Since` gets a 304), so each install asks for every page it needs, whenever it
    runs: an installer's cache never serves a page unasked for some minutes and not for others.
    """

    protocol_version = "HTTP/1.1"

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=0, must-revalidate")
        super().end_headers()

    def log_message(self, *args):
        pass


def serve(root, port):
    build(root)
    handler = partial(MirrorHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    print(f"http://127.0.0.1:{server.server_address[1]}/simple/", flush=True)
    server.serve_forever()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    download = commands.add_parser("download")
    download.add_argument("dir", type=Path)
    download.add_argument("packages", nargs="+")
    download.add_argument("--python", default=sys.executable)
    commands.add_parser("build").add_argument("dir", type=Path)
    serving = commands.add_parser("serve")
    serving.add_argument("dir", type=Path)
    serving.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    root = args.dir.resolve()
    if args.command == "download":
        (root / "files").mkdir(parents=True, exist_ok=True)
        command = [args.python, "-m", "pip", "download", "--only-binary=:all:", "--dest", str(root / "files")]
        subprocess.run(command + args.packages, check=True)
        build(root)
    elif args.command == "build":
        build(root)
    else:
        serve(root, args.port)


if __name__ == "__main__":
    main()
