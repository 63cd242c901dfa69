"""The accelerator check: tiny random models on the GPU in bf16 against the CPU in fp32, with timings.

Run by ``scripts/accelerator_check.sh`` (under five minutes on one GPU). It needs torch, transformers, peft and
sentence-transformers only: the kit's device resolver (``evalkit/models/device.py``) and the tiny models
(``tests/tiny_models.py``) are loaded from this checkout by path. When the kit itself is importable (installed
with its dependencies, or its wheel with ``--no-deps`` beside pandas and the rest), its own LoRA trainer and
transformers backend run on the device too. With no accelerator it says so and exits 0 after the CPU half.

Tolerances (bf16 keeps about three significant digits): label probabilities within 0.02 of the CPU's fp32,
LoRA step losses within 3% relative, embeddings within 0.02 per coordinate.
"""
from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LABEL_TOLERANCE, LOSS_TOLERANCE, EMBEDDING_TOLERANCE = 0.02, 0.03, 0.02
PROMPTS = ["Which reply is better, A or B? Conversation A: user: Can I help you?",
           "Which reply is better, A or B? Conversation B: user: Where is the station? assistant: The weather is nice.",
           "Answer with A or B.", "We went to the park and had a picnic by the river with some friends."]
TARGETS = ["A", "B", "B", "A"]
failures: list[str] = []


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def check(what: str, difference: float, tolerance: float) -> None:
    verdict = "ok" if difference <= tolerance else "FAILED"
    print(f"  {what}: largest difference {difference:.4g} (tolerance {tolerance}) {verdict}")
    if difference > tolerance:
        failures.append(what)


def timed(what: str, call, device: str):
    import torch

    started = time.perf_counter()
    result = call()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    print(f"  {what}: {time.perf_counter() - started:.2f} s")
    return result


def encoded(tokenizer):
    return [tokenizer.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True,
                                          tokenize=True, return_dict=True)["input_ids"] for p in PROMPTS]


def padded(rows, pad, device):
    import torch

    width = max(map(len, rows))
    ids = torch.tensor([[pad] * (width - len(r)) + list(r) for r in rows], device=device)
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=device)
    return ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)


def label_probs(model, tokenizer, device, batched: bool):
    """P(A) over {A, B} at the answer position, each prompt alone or all in one left-padded batch."""
    import torch

    a, b = (tokenizer.encode(t, add_special_tokens=False)[0] for t in ("A", "B"))
    rows = encoded(tokenizer)
    groups = [rows] if batched else [[r] for r in rows]
    out = []
    with torch.no_grad():
        for group in groups:
            ids, mask, positions = padded(group, tokenizer.pad_token_id, device)
            logits = model(input_ids=ids, attention_mask=mask, position_ids=positions).logits[:, -1, :].float()
            pair = torch.softmax(logits, -1)[:, [a, b]]
            out.extend((pair[:, 0] / pair.sum(-1)).tolist())
    return out


def lora_losses(folder, placement, steps=6, micro=2, accumulation=2):
    """LoRA (r 16, alpha 8) steps with accumulated micro-batches: the base in the placement's precision, the
    adapter and AdamW in fp32, the forward under autocast, as the kit trains."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    base = AutoModelForCausalLM.from_pretrained(folder, dtype=placement.torch_dtype).to(placement.device)
    model = get_peft_model(base, LoraConfig(r=16, lora_alpha=8, lora_dropout=0.0, target_modules=["q_proj", "v_proj"],
                                            task_type="CAUSAL_LM"))
    for parameter in model.parameters():
        if parameter.requires_grad:
            parameter.data = parameter.data.float()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    rows, targets = encoded(tokenizer), [tokenizer.encode(t, add_special_tokens=False)[0] for t in TARGETS]
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        total = 0.0
        for k in range(accumulation):
            batch = [(step * accumulation * micro + k * micro + i) % len(rows) for i in range(micro)]
            ids, mask, positions = padded([rows[i] for i in batch], tokenizer.pad_token_id, placement.device)
            with placement.autocast():
                logits = model(input_ids=ids, attention_mask=mask, position_ids=positions).logits[:, -1, :]
            loss = torch.nn.functional.cross_entropy(
                logits.float(), torch.tensor([targets[i] for i in batch], device=placement.device)) / accumulation
            loss.backward()
            total += float(loss.detach())
        optimizer.step()
        losses.append(total)
    return losses


def encoder_step(folder, placement):
    """One Bradley-Terry step of a tiny BERT judge under autocast, and its embeddings by sentence-transformers."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(0)
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).to(placement.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def embed(texts):
        batch = tokenizer(texts, padding=True, return_tensors="pt").to(placement.device)
        hidden = model(**batch).last_hidden_state.float()
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)

    with placement.autocast():
        good = (embed(PROMPTS[:2]) * embed(PROMPTS[2:])).sum(-1)
        bad = (embed(PROMPTS[:2]) * embed(PROMPTS[2:][::-1])).sum(-1)
        loss = -torch.nn.functional.logsigmoid(20 * (good - bad)).mean()
    loss.backward()
    optimizer.step()
    encoder = SentenceTransformer(str(folder), device=placement.device)
    vectors = encoder.encode(PROMPTS, normalize_embeddings=True, convert_to_numpy=True)
    return float(loss.detach()), vectors


def main(argv: list[str] | None = None) -> int:
    import argparse
    import warnings

    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="the device half's device (default: auto)")
    parser.add_argument("--dtype", default="auto", help="its precision (default: auto, bf16 on CUDA where supported)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=FutureWarning)  # peft asks transformers a deprecated question
    device_module = load("evalkit_device", ROOT / "evalkit" / "models" / "device.py")
    tiny = load("evalkit_tiny_models", ROOT / "tests" / "tiny_models.py")
    Placement = device_module.Placement
    device = device_module.resolve_device(args.device)
    print(f"torch {torch.__version__}; device {args.device!r} is {device!r}")
    cpu = Placement("cpu", "float32")
    with tempfile.TemporaryDirectory() as folder:
        lm, bert = tiny.tiny_llama(Path(folder) / "lm"), tiny.tiny_bert(Path(folder) / "bert")
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(lm)
        tokenizer.padding_side = "left"
        print("CPU, fp32 (the reference):")
        reference_model = AutoModelForCausalLM.from_pretrained(lm, dtype=torch.float32).eval()
        reference = timed("label probabilities", lambda: label_probs(reference_model, tokenizer, "cpu", False), "cpu")
        reference_losses = timed("6 LoRA steps (2 x 2 accumulated)", lambda: lora_losses(lm, cpu), "cpu")
        reference_loss, reference_vectors = timed("encoder step + embeddings", lambda: encoder_step(bert, cpu), "cpu")
        placement = Placement.of(device, args.dtype)
        if placement.is_default:
            print("SKIP: no accelerator here (torch sees no CUDA or MPS device); the CPU half above ran, the device "
                  "half needs a GPU (`--device cpu --dtype bf16` runs it on the CPU as a dry run).")
            return 0
        print(f"{placement.device}, {placement.dtype}:")
        model = AutoModelForCausalLM.from_pretrained(lm, dtype=placement.torch_dtype).to(device).eval()
        alone = timed("label probabilities, one at a time", lambda: label_probs(model, tokenizer, device, False),
                      device)
        batch = timed("label probabilities, batched", lambda: label_probs(model, tokenizer, device, True), device)
        check("P(A), device against the CPU's fp32", max(abs(x - y) for x, y in zip(alone, reference)), LABEL_TOLERANCE)
        check("P(A), batched against one at a time", max(abs(x - y) for x, y in zip(alone, batch)), LABEL_TOLERANCE)
        ids, mask, _ = padded(encoded(tokenizer), tokenizer.pad_token_id, device)
        timed("greedy generation, 16 tokens x 4 prompts", lambda: model.generate(
            input_ids=ids, attention_mask=mask, max_new_tokens=16, do_sample=False,
            pad_token_id=tokenizer.pad_token_id), device)
        losses = timed("6 LoRA steps (2 x 2 accumulated)", lambda: lora_losses(lm, placement), device)
        check("LoRA step losses, relative", max(abs(x - y) / abs(y) for x, y in zip(losses, reference_losses)),
              LOSS_TOLERANCE)
        loss, vectors = timed("encoder step + embeddings", lambda: encoder_step(bert, placement), device)
        check("encoder loss, relative", abs(loss - reference_loss) / abs(reference_loss), LOSS_TOLERANCE)
        check("sentence-transformers embeddings", float(abs(vectors - reference_vectors).max()), EMBEDDING_TOLERANCE)
        kit_half(lm, placement)
    print("FAILED: " + "; ".join(failures) if failures else "all checks passed")
    return 1 if failures else 0


def kit_half(lm: Path, placement) -> None:
    """The kit's own trainer and backend on the device, when the kit can be imported."""
    try:
        from evalkit.models import TransformersBackend
        from evalkit.paireval.training import train_lora
    except ImportError as error:
        print(f"  the kit's own trainer and backend: not run (the kit does not import here: {error})")
        return
    prompts = [[{"role": "user", "content": p}] for p in PROMPTS]
    device, dtype = placement.device, placement.dtype
    with tempfile.TemporaryDirectory() as out:
        run = timed("evalkit train_lora, 2 epochs, accumulation 2", lambda: train_lora(
            prompts, TARGETS, epochs=2, batch_size=2, accumulation=2, model=lm, device=device, dtype=dtype,
            output_dir=out, reuse=False), device)
        print(f"  its adapter: {len(run.losses)} steps, config device={run.config.get('device')} "
              f"dtype={run.config.get('dtype')}")
    on_cpu, on_device = TransformersBackend(lm), TransformersBackend(lm, device=device, dtype=dtype)
    reference = [r.probs["A"] for r in on_cpu.label_probs(prompts, ["A", "B"])]
    read = timed("evalkit TransformersBackend label probabilities", lambda: on_device.label_probs(prompts, ["A", "B"]),
                 device)
    check("evalkit backend P(A), device against the CPU's fp32",
          max(abs(r.probs["A"] - x) for r, x in zip(read, reference)), LABEL_TOLERANCE)


if __name__ == "__main__":
    sys.exit(main())
