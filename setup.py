"""Installs the Python package `hadron` from this checkout, offline:

    python3 -m venv --system-site-packages .venv && .venv/bin/pip install --no-build-isolation .

It builds the package with CMake in build/ (the release preset, as scripts/setup.sh does; run
that first on a fresh machine for the Debian packages) and installs build/python/hadron, which
holds the extension and libhadron. See docs/library.md."""

import importlib.machinery
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildWithCMake(build_py):
    def run(self):
        build = os.path.join(ROOT, "build")
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "--preset", "release"], cwd=ROOT)
        subprocess.check_call(["cmake", "--build", build, "--target", "hadron_python"], cwd=ROOT)
        package = os.path.join(build, "python", "hadron")
        suffixes = importlib.machinery.EXTENSION_SUFFIXES
        if not any(name.startswith("_hadron") and name.endswith(tuple(suffixes))
                   for name in os.listdir(package)):
            raise SystemExit(f"{package} holds no _hadron for this Python ({suffixes[0]}); "
                             "configure build/ with -DPython_EXECUTABLE=<this python>")
        super().run()  # the .py files
        shutil.copytree(package, os.path.join(self.build_lib, "hadron"), dirs_exist_ok=True)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True  # a platform wheel: the package holds compiled code


setup(
    name="hadron",
    version="0.1.0",
    description="hadron: an LLM inference engine, with vLLM's offline Python interface",
    python_requires=">=3.9",
    packages=["hadron"],
    package_dir={"hadron": "python/hadron"},
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
    options={"build": {"build_base": "build/setuptools"}},  # beside CMake's files, not in them
)
