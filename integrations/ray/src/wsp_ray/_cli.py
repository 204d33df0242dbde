"""The `wsp` console script: runs the wsp binary shipped in this package."""

import os
import sys

from .server import wsp_binary


def main() -> None:
    binary = wsp_binary()
    os.execv(binary, [binary, *sys.argv[1:]])
