"""The local transformers engine: any causal LM folder or Hugging Face id, fp32 on CPU by default.

The module is named ``hf`` (not ``transformers``) so that it can never shadow the transformers library.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence

from evalkit.models.base import GenerationResult, LabelResult, Messages, _reusable_prefix
from evalkit.models.device import DTYPES, Placement

__all__ = ["TransformersBackend", "RowSeededDraw", "row_seed"]


def _label_result(probabilities: Any, token_ids: Mapping[str, list[int]], tokenizer: Any,
                  prompt_tokens: int) -> LabelResult:
    """One prompt's next-token distribution (a torch or numpy vector) as label probabilities: each label's
    mass (its token variants summed), renormalised over the labels, with the top token's text."""
    mass = {label: float(probabilities[tokens].sum()) for label, tokens in token_ids.items()}
    total = sum(mass.values())
    top = tokenizer.decode([int(probabilities.argmax())])
    probs = {label: value / total for label, value in mass.items()} if total > 0 else None
    return LabelResult(probs, top, "logprobs", total, prompt_tokens, 1)


def _folder_fingerprint(folder: Path) -> str:
    """Hash of a model folder's file names, sizes and (small files') contents — changes when weights do."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}:{stat.st_size}".encode())
        if stat.st_size < 5_000_000:
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def row_seed(seed: int, sample: int, prompt_ids: Sequence[int]) -> int:
    """The seed of one sampled answer: a function of the call's seed, the sample's number and the prompt's
    tokens, so two prompts (or two samples of one) never share a random stream.

    >>> row_seed(13, 0, [1, 2]) == row_seed(13, 0, [1, 2]) != row_seed(13, 1, [1, 2]) != row_seed(13, 0, [1, 3])
    True
    """
    text = f"{seed}:{sample}:{','.join(map(str, prompt_ids))}"
    return int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)


class RowSeededDraw:
    """A logits processor that turns greedy decoding into sampling, one random stream per row: the Gumbel-max
    draw (argmax of the log-probabilities plus Gumbel noise is a sample of their softmax), with each row's
    noise from its own generator. Rows are the batch's sequences (a prompt's ``n`` samples in a row)."""

    def __init__(self, seeds: Sequence[int]):
        import torch

        self.generators = [torch.Generator().manual_seed(seed) for seed in seeds]

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        uniform = torch.stack([torch.rand(scores.shape[-1], generator=g) for g in self.generators])
        gumbel = -torch.log(-torch.log(uniform.clamp(min=1e-20, max=1 - 1e-7)))
        return scores + gumbel.to(scores.device, scores.dtype)


class TransformersBackend:
    """A local causal LM through transformers: fp32 on CPU by default, chat template applied.

    ``model`` is a folder or a Hugging Face id (None: the default SmolLM2-135M-Instruct); ``adapter`` an
    optional PEFT/LoRA folder. ``device`` and ``dtype`` are resolved by :mod:`evalkit.models.device`
    (``"auto"``: CUDA, then MPS, then the CPU; bf16 or fp16 on an accelerator, fp32 on the CPU); the weights are
    loaded in that precision, and a precision or device other than the CPU's fp32 is part of the backend's name
    (so the call cache never serves one precision's answers for another's). With ``batch_size`` 1 (the CPU
    default) label probabilities are computed one prompt at a time, reusing the key/value cache of a prefix
    shared with the previous prompt (``share_prefixes``); with larger batches prompts are sorted by length and
    run in left-padded batches of near-equal length (8 on an accelerator unless given). Generation, greedy or
    sampled, runs in left-padded batches of ``generate_batch_size`` (default 16) whatever their lengths (a sampled
    answer draws from its own random stream, :class:`RowSeededDraw`, so it does not depend on its batch):
    decoding reads every weight once per step, so
    on a CPU a step for 8 sequences costs about 3 steps for one (``benchmarks/engines.py``) and batches of 16
    are 1.34x faster than batches of 8 on real proxy prompts (``benchmarks/generate_batch.py``; 32 gains
    nothing more), while the prompts' padding costs only prefill. A batch's shape can change fp32 rounding, so in rare cases a
    continuation could depend on which prompts shared its batch (measured: identical on every prompt tried);
    the call cache keeps whichever came first, so a rerun reads, rather than recomputes, it.
    """

    # How sampled answers are drawn (part of a sampled call's cache key: answers drawn another way are not reused).
    sampling_scheme: ClassVar[str] = "row-seeded-gumbel-top50"
    # What a spec's value of an option must be beyond its type (see evalkit.models.options).
    option_checks: ClassVar[dict[str, dict[str, Any]]] = {
        "batch_size": {"minimum": 1}, "dtype": {"choices": tuple(DTYPES)},
        "min_shared_prefix": {"minimum": 1}, "generate_batch_size": {"minimum": 1}}

    def __init__(self, model: str | Path | None = None, *, adapter: str | Path | None = None,
                 batch_size: int | None = None, dtype: str = "auto", device: str = "cpu",
                 share_prefixes: bool = True, min_shared_prefix: int = 8, generate_batch_size: int = 16):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from evalkit.models.defaults import default_lm_path, quiet_model_loading

        quiet_model_loading()
        placement = Placement.of(device, dtype)
        device = placement.device
        location = str(model) if model is not None else str(default_lm_path())
        self.tokenizer = AutoTokenizer.from_pretrained(location)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(location, dtype=placement.torch_dtype).to(device)
        fingerprint = (_folder_fingerprint(Path(location)) if Path(location).is_dir()
                       else str(getattr(self.model.config, "_commit_hash", None) or "hub"))
        if adapter is not None:
            from peft import PeftModel

            self.model = PeftModel.from_pretrained(self.model, str(adapter))
            fingerprint += "+" + _folder_fingerprint(Path(adapter))
        self.model.eval()
        # On a CPU a batch costs as much as its prompts one by one, plus its padding (measured, see
        # the Performance page), so the default there is 1; accelerators batch.
        self.device, self.placement = device, placement
        self.batch_size = batch_size if batch_size is not None else (1 if placement.kind == "cpu" else 8)
        self.generate_batch_size = generate_batch_size
        # One prompt at a time, prompts that open alike reuse the cached keys/values of their common
        # prefix (measured in benchmarks/judge_throughput.py); batched runs compute every prompt whole.
        self.share_prefixes, self.min_shared_prefix = share_prefixes, min_shared_prefix
        self.name = f"transformers:{Path(location).name}:{fingerprint}"
        if placement.tag:  # bf16 on a GPU answers differently from fp32 on the CPU: another name, other cache rows
            self.name += f":{placement.tag}"

    def _encode(self, prompts: Sequence[Messages]) -> list[list[int]]:
        encoded = []
        for messages in prompts:
            # A prompt ending with an assistant message is a prefill: the model continues that message
            # (e.g. a user proxy whose answer must start with "USER:") instead of opening a new one.
            prefill = bool(messages) and messages[-1]["role"] == "assistant"
            ids = self.tokenizer.apply_chat_template(list(map(dict, messages)), add_generation_prompt=not prefill,
                                                     continue_final_message=prefill, tokenize=True,
                                                     return_dict=True)["input_ids"]
            encoded.append(list(ids))
        return encoded

    def _batches(self, encoded: list[list[int]], max_padding: float = 0.1, size: int | None = None):
        """Index batches of ``size`` (default ``batch_size``), longest prompts first; a batch closes when full or
        when the next prompt is more than ``max_padding`` shorter than its first — padded positions cost full
        compute on a CPU (measured: batching gains nothing there, padding waste loses), while equal lengths
        batch well on a GPU."""
        size = size or self.batch_size
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
        batch: list[int] = []
        for index in order:
            if batch and (len(batch) == size
                          or len(encoded[index]) < (1 - max_padding) * len(encoded[batch[0]])):
                yield batch
                batch = []
            batch.append(index)
        if batch:
            yield batch

    def _padded(self, rows: list[list[int]]):
        import torch

        width = max(map(len, rows))
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=self.device)
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=self.device)
        return ids, mask

    def label_token_ids(self, labels: Sequence[str]) -> dict[str, list[int]]:
        """First-token ids of each label, written bare and after a space; labels may not share a token."""
        ids: dict[str, list[int]] = {}
        for label in labels:
            variants = set()
            for text in (label, " " + label):
                first = self.tokenizer.encode(text, add_special_tokens=False)[0]
                piece = self.tokenizer.decode([first]).strip().lower()
                # Some tokenizers split " 4" into " " + "4": a bare space token says nothing about the label.
                if piece and label.lower().startswith(piece):
                    variants.add(first)
            if not variants:
                raise ValueError(f"label {label!r} has no token of its own in this tokenizer")
            ids[label] = sorted(variants)
        seen: dict[int, str] = {}
        for label, tokens in ids.items():
            for token in tokens:
                if token in seen:
                    raise ValueError(f"labels {seen[token]!r} and {label!r} start with the same token")
                seen[token] = label
        return ids

    def _last_logits_batched(self, encoded: list[list[int]]):
        """(indices, last-position logits) per left-padded batch of near-equal length."""
        import torch

        for batch in self._batches(encoded):
            ids, mask = self._padded([encoded[i] for i in batch])
            # Positions count real tokens only, so a left-padded prompt scores as it would alone.
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            with torch.no_grad():
                # Only the last position's logits are needed: skipping the vocabulary projection elsewhere
                # saves about a fifth of the work for a small model with a large vocabulary.
                logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions,
                                    logits_to_keep=1).logits[:, -1, :]
            yield batch, logits

    def _last_logits_sharing_prefixes(self, encoded: list[list[int]]):
        """(indices, last-position logits) one prompt at a time, reusing the key/value cache of the longest
        prefix shared with the previous prompt. Prompts run in lexicographic token order, so prompts that
        open alike (same instructions, same first conversation) follow each other and only their
        differing tails are computed."""
        import torch
        from transformers import DynamicCache

        cache, previous = None, []
        for index in sorted(range(len(encoded)), key=lambda i: encoded[i]):
            ids = encoded[index]
            shared = _reusable_prefix(previous, ids)
            if cache is None or shared < self.min_shared_prefix:
                cache, shared = DynamicCache(config=self.model.config), 0
            else:
                cache.crop(shared - cache.get_seq_length())  # a negative count: drop the previous tail
            with torch.no_grad():
                output = self.model(input_ids=torch.tensor([ids[shared:]], device=self.device),
                                    cache=cache, use_cache=True, logits_to_keep=1)
            previous = ids  # the cache grew in place to cover this whole prompt
            yield [index], output.logits[:, -1, :]

    def label_probs(self, prompts: Sequence[Messages], labels: Sequence[str]) -> list[LabelResult]:
        return self.label_probs_each(prompts, [labels] * len(prompts))

    def label_probs_each(self, prompts: Sequence[Messages], labels: Sequence[Sequence[str]]) -> list[LabelResult]:
        """Label probabilities with each prompt's own labels, all prompts in one pass: two judges' prompts
        about one item differ only in their closing question, so (one at a time, sharing prefixes) the second
        is computed on the first's key/value cache. Each result is that of a :meth:`label_probs` call (to float
        rounding: a shared prefix's keys and values come from another prompt's pass)."""
        import torch

        token_ids = {label_set: self.label_token_ids(label_set) for label_set in {tuple(l) for l in labels}}
        encoded = self._encode(prompts)
        results: list[LabelResult | None] = [None] * len(prompts)
        chunks = (self._last_logits_sharing_prefixes(encoded) if self.batch_size == 1 and self.share_prefixes
                  else self._last_logits_batched(encoded))
        for batch, logits in chunks:
            probabilities = torch.softmax(logits.float(), dim=-1)
            for row, index in enumerate(batch):
                results[index] = _label_result(probabilities[row], token_ids[tuple(labels[index])], self.tokenizer,
                                               len(encoded[index]))
        return results  # type: ignore[return-value]

    def generate(self, prompts: Sequence[Messages], *, max_tokens: int = 128, temperature: float = 0.0,
                 n: int = 1, seed: int = 0) -> list[GenerationResult]:
        import torch
        from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper

        encoded = self._encode(prompts)
        results: list[GenerationResult | None] = [None] * len(prompts)
        # Decoding, not the padded prefill, is the cost, so prompts of any lengths run in batches. A sampled
        # prompt draws from its own random stream (seeded by the seed, the sample's number and the prompt's
        # tokens), so what it says never depends on which prompts shared its batch.
        for batch in self._batches(encoded, max_padding=1.0, size=self.generate_batch_size):
            ids, mask = self._padded([encoded[i] for i in batch])
            # A prompt's n samples are n rows (transformers allows several return sequences only when sampling).
            ids, mask = ids.repeat_interleave(n, dim=0), mask.repeat_interleave(n, dim=0)
            options: dict[str, Any] = {"max_new_tokens": max_tokens,
                                       "pad_token_id": self.tokenizer.pad_token_id, "do_sample": False,
                                       "temperature": None, "top_p": None, "top_k": None}
            if temperature > 0:
                # transformers' sampling defaults (temperature, then the 50 likeliest tokens), then one draw per row
                options["logits_processor"] = LogitsProcessorList([
                    TemperatureLogitsWarper(temperature), TopKLogitsWarper(50),
                    RowSeededDraw([row_seed(seed, k, encoded[i]) for i in batch for k in range(n)])])
            with torch.no_grad():
                output = self.model.generate(input_ids=ids, attention_mask=mask, **options)
            new_tokens = output[:, ids.shape[1]:]
            for row, index in enumerate(batch):
                samples = new_tokens[row * n:(row + 1) * n]
                texts = [self.tokenizer.decode(s, skip_special_tokens=True).strip() for s in samples]
                completion = sum(int((s != self.tokenizer.pad_token_id).sum()) for s in samples)
                results[index] = GenerationResult(texts, len(encoded[index]), completion)
        return results  # type: ignore[return-value]
