"""Shared fixtures: models/default loaded once per session, and the CLI and C example paths
the test command passes in the environment (tests/python/CMakeLists.txt)."""

import os
import subprocess

import pytest

import hadron

MODEL = os.environ.get("HADRON_MODEL", os.path.join(os.path.dirname(__file__),
                                                    "../../models/default"))
PROMPT = "And God said"


@pytest.fixture(scope="session")
def llm():
    engine = hadron.LLM(model=MODEL, device="cpu", max_model_len=1024, max_num_seqs=16)
    yield engine
    engine.close()


def cli_generate(*args: str) -> subprocess.CompletedProcess:
    """`hadron generate` on the test model, greedy."""
    command = [os.environ["HADRON_CLI"], "generate", "--model", MODEL, "--device", "cpu",
               "--temperature", "0", *args]
    return subprocess.run(command, capture_output=True, text=True, check=True)
