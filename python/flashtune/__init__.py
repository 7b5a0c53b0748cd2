"""flashtune for PyTorch: autotuned FlashAttention kernels through libflashtune (loaded with
ctypes; nothing to compile at install beyond the wheel's own build). ``flashtune.attention`` is a drop-in for
``torch.nn.functional.scaled_dot_product_attention`` (what its kernels cannot run, SDPA runs), and
custom operators under torch.compile and torch.export (``flashtune::attention_forward``,
``flashtune::attention_backward``: registered on import when PyTorch is installed);
``flashtune.attention_varlen`` takes a variable-length batch packed as FlashAttention's is.

Environment: FLASHTUNE_LIBRARY names libflashtune.so when it is not found by itself;
FLASHTUNE_DB names a tuning database (default: the winners shipped inside the library);
FLASHTUNE_STRICT=1 makes a call the kernels cannot run an error instead of SDPA's;
FLASHTUNE_HOTPATH=0 keeps the plain forward and the backward's library call off their C hot path
(_hotpath.c; the Python path gives the same results, in more host time a call)."""
from ._attention import attention, describe_choice
from ._varlen import attention_varlen
from ._library import FlashtuneError, LibraryNotFound, candidate_paths

__all__ = ["attention", "attention_varlen", "describe_choice", "FlashtuneError", "LibraryNotFound", "candidate_paths", "version"]
__version__ = "0.2.0"


def version():
    """The version of the loaded libflashtune (loads it)."""
    from ._library import library
    return library().ft_version().decode()
