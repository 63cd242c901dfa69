"""Tiny randomly initialised models, built offline in a folder: a Llama causal LM (hidden 32, 2 layers) and a BERT
encoder, each with a tokenizer trained here on a few sentences. They load like any Hugging Face folder, so every
device and precision path of the kit runs on them in seconds.

Only torch, transformers and tokenizers are imported: ``scripts/accelerator_check.py`` loads this file by path on
a machine without the kit's other dependencies.
"""
from __future__ import annotations

from pathlib import Path

CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

CORPUS = [
    "Which reply is better, A or B? Answer with A or B.",
    "Is the reply a good next turn? Answer Yes or No.",
    "Hello, how are you today? I am fine, thank you. What did you do at the weekend?",
    "We went to the park and had a picnic by the river with some friends.",
    "Conversation A: user: Can I help you? assistant: Yes, I need a ticket to London.",
    "Conversation B: user: Where is the station? assistant: The weather is nice.",
    "Rate the reply from 1 to 5. 1 2 3 4 5",
] * 4


def tiny_llama(folder: str | Path, *, seed: int = 0, hidden: int = 32, layers: int = 2) -> Path:
    """A random Llama (``hidden`` wide, ``layers`` deep) and a byte-level BPE tokenizer with a chat template."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(CORPUS, trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|im_start|>", eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>", unk_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=512, tie_word_embeddings=True,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def tiny_bert(folder: str | Path, *, seed: int = 0, hidden: int = 32, layers: int = 2) -> Path:
    """A random BERT encoder and a word-level WordPiece vocabulary (the corpus's words and every letter)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    words = sorted({w.strip(".,?:!").lower() for line in CORPUS for w in line.split()} - {""})
    letters = sorted({c for line in CORPUS for c in line.lower() if c.isalnum()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(set(words) | set(letters)) + \
        [f"##{c}" for c in letters]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True, model_max_length=256)
    tokenizer.save_pretrained(folder)
    config = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=2 * hidden, max_position_embeddings=256)
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(folder)
    return folder
