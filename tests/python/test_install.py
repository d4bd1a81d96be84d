"""The README's install command: a venv over Debian's packages and pip, offline, from the
checkout (setup.py builds with CMake in build/, so only where the tests were built there)."""

import os
import subprocess
import sys

import pytest

from conftest import MODEL, PROMPT
from hadron import SamplingParams

SOURCE = os.environ.get("HADRON_SOURCE_DIR", "")


@pytest.mark.skipif(os.path.realpath(os.environ.get("HADRON_BUILD_DIR", "")) !=
                    os.path.realpath(os.path.join(SOURCE, "build")),
                    reason="setup.py builds in <checkout>/build, which is not this build")
def test_pip_install_offline(tmp_path, llm):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([venv / "bin/pip", "install", "-q", "--no-build-isolation", "--no-index",
                    SOURCE], check=True, env=env, cwd=tmp_path)
    code = ("import hadron; from hadron import SamplingParams; "
            f"llm = hadron.LLM({MODEL!r}, device='cpu', max_model_len=256); "
            "print(hadron.__file__); "
            f"print(llm.generate({PROMPT!r}, SamplingParams(temperature=0, max_tokens=12))"
            "[0].outputs[0].text, end='')")
    out = subprocess.run([venv / "bin/python", "-c", code], check=True, env=env, cwd=tmp_path,
                         capture_output=True, text=True).stdout
    where, text = out.split("\n", 1)
    assert where.startswith(str(venv))  # the installed copy, not the build tree's
    assert text == llm.generate(PROMPT, SamplingParams(temperature=0, max_tokens=12))[0].outputs[
        0].text
