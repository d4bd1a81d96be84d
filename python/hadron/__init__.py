"""hadron for Python: vLLM's offline interface (LLM, SamplingParams, RequestOutput) and an
AsyncLLM, over hadron's C API. Scripts written for vLLM change one import:

    from hadron import LLM, SamplingParams
    llm = LLM(model="models/default", max_model_len=1024)
    outputs = llm.generate(["And God said"], SamplingParams(temperature=0, max_tokens=32))
    print(outputs[0].outputs[0].text)

Errors: bad arguments raise ValueError (a bad value) or TypeError (an unknown keyword or a
wrong type); engine failures raise HadronError. Reference: docs/library.md.
"""

from ._outputs import CompletionOutput, Logprob, RequestOutput
from ._sampling import SamplingParams
from ._llm import LLM
from ._async import AsyncLLM
from ._hadron import HadronError, QueueFullError, version as _version

__version__ = _version()

__all__ = [
    "LLM",
    "AsyncLLM",
    "SamplingParams",
    "RequestOutput",
    "CompletionOutput",
    "Logprob",
    "HadronError",
    "QueueFullError",
    "__version__",
]
