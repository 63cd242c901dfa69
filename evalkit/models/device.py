"""Where torch runs and in which precision: one setting for every model the kit loads or trains.

``device`` is ``"auto"`` (CUDA, then Apple's MPS, then the CPU), ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or
``"mps"``; ``dtype`` is ``"auto"`` (fp32 on the CPU; bf16 on CUDA where the card has it, else fp16; fp16 on
MPS), ``"fp32"``, ``"bf16"`` or ``"fp16"`` (torch's names ``float32``, ``bfloat16``, ``float16`` are accepted
too). :class:`Placement` holds the resolved pair: it gives the autocast context a training or scoring step
runs under, and the fields a cache key gains — none on the CPU in fp32, so results computed there before keep
their keys.

This module imports nothing but the standard library at load time (torch only inside its functions), so a
script can load it by path without the rest of the kit (``scripts/accelerator_check.py``).
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["resolve_device", "resolve_dtype", "Placement", "DEVICES", "DTYPES"]

DEVICES = ("auto", "cpu", "cuda", "cuda:N", "mps")
"""The device names :func:`resolve_device` accepts (``N`` a card's number)."""

DTYPES = {"auto": "auto", "fp32": "float32", "float32": "float32", "bf16": "bfloat16", "bfloat16": "bfloat16",
          "fp16": "float16", "float16": "float16"}
"""The precision names :func:`resolve_dtype` accepts, and torch's name of each."""


def _device_name(device: str) -> str:
    """``device`` checked for its form only (not whether this machine has it).

    >>> _device_name("CUDA:1"), _device_name(" cpu ")
    ('cuda:1', 'cpu')
    >>> _device_name("tpu")
    Traceback (most recent call last):
    ...
    ValueError: unknown device 'tpu': one of auto, cpu, cuda, cuda:N, mps
    """
    name = str(device).strip().lower()
    if name in ("auto", "cpu", "cuda", "mps") or re.fullmatch(r"cuda:\d+", name):
        return name
    raise ValueError(f"unknown device {device!r}: one of {', '.join(DEVICES)}")


def resolve_device(device: str = "auto") -> str:
    """The torch device to use: ``auto`` is CUDA when torch sees a card, else MPS when present, else the CPU.
    A named accelerator this machine does not have is refused, naming it.

    >>> resolve_device("cpu")
    'cpu'
    >>> import torch
    >>> resolve_device("auto") == ("cuda" if torch.cuda.is_available() else
    ...                            "mps" if torch.backends.mps.is_available() else "cpu")
    True
    >>> resolve_device("gpu")
    Traceback (most recent call last):
    ...
    ValueError: unknown device 'gpu': one of auto, cpu, cuda, cuda:N, mps
    """
    name = _device_name(device)
    if name == "cpu":
        return name
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "mps" if _mps_available() else "cpu"
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r}: torch sees no CUDA device on this machine "
                             f"(torch {torch.__version__}; a CPU-only wheel has none)")
        if ":" in name and int(name.split(":")[1]) >= torch.cuda.device_count():
            raise ValueError(f"device {device!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    if name == "mps" and not _mps_available():
        raise ValueError(f"device {device!r}: torch sees no MPS device on this machine")
    return name


def _mps_available() -> bool:
    import torch

    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def resolve_dtype(dtype: str = "auto", device: str = "cpu") -> str:
    """torch's name of the precision to use on ``device`` (a resolved device): ``auto`` is fp32 on the CPU,
    bf16 on CUDA where the card supports it (else fp16) and fp16 on MPS; a named precision is kept.

    >>> resolve_dtype("auto", "cpu"), resolve_dtype("bf16", "cpu"), resolve_dtype("float16", "cuda:0")
    ('float32', 'bfloat16', 'float16')
    >>> resolve_dtype("auto", "mps")
    'float16'
    >>> resolve_dtype("fp8", "cpu")
    Traceback (most recent call last):
    ...
    ValueError: unknown dtype 'fp8': one of auto, fp32, float32, bf16, bfloat16, fp16, float16
    """
    name = DTYPES.get(str(dtype).strip().lower())
    if name is None:
        raise ValueError(f"unknown dtype {dtype!r}: one of {', '.join(DTYPES)}")
    if name != "auto":
        return name
    kind = _device_name(device).split(":")[0]
    if kind == "cuda":
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return "float16" if kind == "mps" else "float32"


@dataclass(frozen=True)
class Placement:
    """A resolved device and precision (torch's dtype name), built by :meth:`of`.

    >>> cpu = Placement.of("cpu", "auto")
    >>> cpu, cpu.is_default, cpu.key_fields(), cpu.tag
    (Placement(device='cpu', dtype='float32'), True, {}, '')
    >>> mixed = Placement.of("cpu", "bf16")
    >>> mixed.key_fields(), mixed.tag
    ({'device': 'cpu', 'dtype': 'bfloat16'}, 'cpu-bfloat16')
    """

    device: str = "cpu"
    dtype: str = "float32"

    @classmethod
    def of(cls, device: str = "cpu", dtype: str = "auto") -> "Placement":
        """The placement ``device`` and ``dtype`` name on this machine (see :func:`resolve_device`)."""
        resolved = resolve_device(device)
        return cls(resolved, resolve_dtype(dtype, resolved))

    @property
    def kind(self) -> str:
        """The device's kind without a card number: ``cpu``, ``cuda`` or ``mps``."""
        return self.device.split(":")[0]

    @property
    def is_default(self) -> bool:
        """The CPU in fp32: what every result of the kit was computed with before accelerators."""
        return self.kind == "cpu" and self.dtype == "float32"

    def key_fields(self) -> dict[str, str]:
        """What a cache key gains: nothing on the CPU in fp32 (earlier results keep their keys), else the
        device's kind and the precision (which card of a kind does not change a result)."""
        return {} if self.is_default else {"device": self.kind, "dtype": self.dtype}

    @property
    def tag(self) -> str:
        """The same as a short suffix for names (``""`` on the CPU in fp32)."""
        return "" if self.is_default else f"{self.kind}-{self.dtype}"

    @property
    def torch_dtype(self) -> Any:
        import torch

        return getattr(torch, self.dtype)

    def autocast(self) -> Any:
        """The context a forward pass runs in: nothing in fp32, else torch's autocast to this precision (matrix
        products in bf16/fp16, reductions and the weights' master copies in fp32)."""
        if self.dtype == "float32":
            return contextlib.nullcontext()
        import torch

        return torch.autocast(self.kind, dtype=self.torch_dtype)

    def grad_scaler(self) -> Any:
        """A gradient scaler for fp16 training on CUDA (fp16's small range underflows gradients), else None."""
        if self.dtype != "float16" or self.kind != "cuda":
            return None
        import torch

        return torch.amp.GradScaler("cuda")
