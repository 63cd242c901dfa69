"""GGUF files for the llama.cpp engine, written from the GGUF the default model ships in.

The shipped file keeps most weights in Q4_1, a format llama.cpp multiplies slowly on x86 (no fast kernel for
it) and only with 8-bit activations. :func:`rewrite_gguf` writes a copy whose weights are the *same values*
the transformers engine computes with (each tensor dequantized once), stored as F32 or F16 — and, for a
LoRA-tuned judge, with the adapter merged in. Metadata (tokenizer, chat template, hyper-parameters) is copied
unchanged.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Mapping

import numpy as np

__all__ = ["rewrite_gguf", "lora_deltas", "gguf_name", "GGUF_TYPES"]

GGUF_TYPES = ("f32", "f16", "q8_0")

# PEFT module names of a Llama-style model -> the GGUF tensor name of the same weight.
_GGUF_NAMES = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
               "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
               "mlp.down_proj": "ffn_down"}


def gguf_name(module: str) -> str:
    """The GGUF tensor holding a Hugging Face Llama module's weight.

    >>> gguf_name("base_model.model.model.layers.3.self_attn.q_proj")
    'blk.3.attn_q.weight'
    """
    parts = module.split(".")
    layer = parts[parts.index("layers") + 1]
    tail = ".".join(parts[parts.index("layers") + 2:])
    return f"blk.{layer}.{_GGUF_NAMES[tail]}.weight"


def _permute_rows(weights: np.ndarray, heads: int) -> np.ndarray:
    """Llama's GGUF stores q/k rows interleaved per rotary pair (as llama.cpp's converter writes them); a delta
    computed in Hugging Face's order is moved the same way.

    >>> _permute_rows(np.arange(4.0).reshape(4, 1), 1).ravel().tolist()   # one head of 4 rows: 0 2 1 3
    [0.0, 2.0, 1.0, 3.0]
    """
    return (weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def lora_deltas(adapter: str | Path, *, heads: int, kv_heads: int) -> dict[str, np.ndarray]:
    """The weight changes of a PEFT LoRA adapter (``scale * B @ A`` per adapted module), keyed by GGUF tensor
    name and already in the GGUF's row order."""
    from safetensors.numpy import load_file

    folder = Path(adapter)
    config = json.loads((folder / "adapter_config.json").read_text())
    # Variants whose weights are not scale * B @ A per module would merge silently wrong: refuse them.
    unsupported = [key for key in ("use_rslora", "use_dora", "rank_pattern", "alpha_pattern", "modules_to_save")
                   if config.get(key)]
    if unsupported:
        raise ValueError(f"{folder}: {', '.join(unsupported)} set in adapter_config.json; only plain LoRA "
                         "adapters are merged (use the transformers engine for this one)")
    scale = config["lora_alpha"] / config["r"]
    tensors = load_file(str(folder / "adapter_model.safetensors"))
    deltas = {}
    for key, lora_a in tensors.items():
        if ".lora_A." not in key:
            continue
        module = key.split(".lora_A.")[0]
        if ".layers." not in module or module.split(".layers.")[1].split(".", 1)[1] not in _GGUF_NAMES:
            raise ValueError(f"{folder}: LoRA on {module}, which has no GGUF tensor this merge knows")
        lora_b = tensors[key.replace(".lora_A.", ".lora_B.")]
        delta = scale * (lora_b.astype(np.float32) @ lora_a.astype(np.float32))
        name = gguf_name(module)
        if name.endswith("attn_q.weight"):
            delta = _permute_rows(delta, heads)
        elif name.endswith("attn_k.weight"):
            delta = _permute_rows(delta, kv_heads)
        deltas[name] = delta
    if not deltas:
        raise ValueError(f"{folder}: no LoRA weights (lora_A/lora_B) in adapter_model.safetensors")
    return deltas


def rewrite_gguf(source: str | Path, target: str | Path, *, dtype: str = "f32",
                 deltas: Mapping[str, np.ndarray] | None = None) -> Path:
    """Write ``target``: ``source``'s metadata and tensors, every quantized matrix dequantized and stored as
    ``dtype`` (``f32`` or ``f16``; vectors stay F32), with ``deltas`` (GGUF name -> array) added to their
    tensors. Written to a temporary file and renamed, so an interrupted rewrite leaves nothing behind."""
    import gguf

    if dtype not in GGUF_TYPES:
        raise ValueError(f"dtype {dtype!r}: choose one of {', '.join(GGUF_TYPES)}")
    deltas = dict(deltas or {})
    reader = gguf.GGUFReader(str(source))
    unknown = sorted(set(deltas) - {t.name for t in reader.tensors})
    if unknown:
        raise KeyError(f"{source}: no tensor named {', '.join(unknown)}")
    arch = reader.get_field(gguf.Keys.General.ARCHITECTURE).contents()
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=target.name + ".", dir=target.parent)
    os.close(handle)
    try:
        writer = gguf.GGUFWriter(staging, arch)
        for field in reader.fields.values():
            if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
                continue  # the writer adds these itself
            if field.name == gguf.Keys.General.FILE_TYPE:
                writer.add_file_type({"f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
                                      "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0}[dtype])
                continue
            value_type = field.types[0]
            sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
            writer.add_key_value(field.name, field.contents(), value_type, sub_type=sub_type)
        arrays = []
        for tensor in reader.tensors:
            values = gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
            if tensor.name in deltas:
                if deltas[tensor.name].shape != values.shape:
                    raise ValueError(f"{source}: the change for {tensor.name} has shape "
                                     f"{deltas[tensor.name].shape}, the tensor {values.shape}")
                values = values + deltas[tensor.name]
            if dtype == "f16" and values.ndim > 1:
                values = values.astype(np.float16)
            if dtype == "q8_0" and values.ndim > 1:
                kind = gguf.GGMLQuantizationType.Q8_0
                arrays.append((tensor.name, gguf.quants.quantize(values, kind), kind))
            else:
                arrays.append((tensor.name, values, None))
        for name, values, kind in arrays:
            writer.add_tensor(name, values, raw_dtype=kind)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        os.chmod(staging, 0o644)  # mkstemp makes it private; a cache may be shared
        os.replace(staging, target)
    finally:
        if os.path.exists(staging):
            os.unlink(staging)
    return target
