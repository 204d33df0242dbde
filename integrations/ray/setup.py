"""A wheel that carries `src/wsp_ray/bin/wsp` is tagged for this platform (py3-none-<platform>),
since the binary is native code; one without it is pure (py3-none-any)."""

from pathlib import Path

from setuptools import setup

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

BINARY = Path(__file__).parent / "src" / "wsp_ray" / "bin" / "wsp"


class PlatformWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        if BINARY.is_file():
            self.root_is_pure = False

    def get_tag(self):
        python, abi, platform = super().get_tag()
        if BINARY.is_file():
            return "py3", "none", platform
        return python, abi, platform


setup(cmdclass={"bdist_wheel": PlatformWheel})
