"""Chapter 3 — reference metrics: the candidate (Option B) scored against the human reference (Option A).

* ROUGE-1/2/L/Lsum F-measures (``rouge-score``; for Lsum we split sentences ourselves — nltk's punkt data is
  not available offline);
* embedding cosine with a sentence encoder (default all-MiniLM-L6-v2; the paper used mxbai-embed-large);
* BERTScore precision / recall / F1 (``bert-score``) with the same local encoder, 6 layers.

:class:`ReferenceMetrics` computes each metric once per unique (reference, candidate) pair, embeds each unique
text once, in batches, and keeps every result in an on-disk cache keyed by text hash and metric config, so a
second call recomputes nothing (``hits`` / ``computed`` count it).
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from evalkit.models.cache import open_store
from evalkit.models.defaults import cache_dir, default_encoder_path, quiet_model_loading
from evalkit.models.device import resolve_device

__all__ = ["ROUGE_TYPES", "split_sentences", "ReferenceMetrics", "MetricStore", "text_key"]

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (a regex splitter: end punctuation followed by a capital, or a newline).

    >>> split_sentences("Sure. What time? 8 pm works.\\nSee you!")
    ['Sure.', 'What time?', '8 pm works.', 'See you!']
    """
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def text_key(namespace: str, text: str) -> str:
    """A store key for ``text`` under ``namespace`` (a model and its settings): a sha256, so that keys have one
    length whatever the text.

    >>> text_key("m", "hi") == text_key("m", "hi") != text_key("n", "hi")
    True
    """
    return _digest(namespace, text)


def _digest(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


class MetricStore:
    """SQLite key-value store for metric values (JSON) and embeddings (float32 bytes)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else cache_dir() / "metrics.sqlite"
        self._lock = threading.Lock()
        self._db = open_store(self.path, "CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                              "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, value BLOB NOT NULL);",
                              "an evalkit metric store")

    def _get(self, table: str, keys: Sequence[str]) -> dict[str, object]:
        found = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start:start + 500])
                marks = ",".join("?" * len(chunk))
                found.update(self._db.execute(f"SELECT key, value FROM {table} WHERE key IN ({marks})", chunk))
        return found

    def _put(self, table: str, rows: list[tuple[str, object]]) -> None:
        if rows:
            with self._lock, self._db:
                self._db.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?, ?)", rows)

    def get_scores(self, keys: Sequence[str]) -> dict[str, dict]:
        return {key: json.loads(value) for key, value in self._get("scores", keys).items()}

    def put_scores(self, items: dict[str, dict]) -> None:
        self._put("scores", [(key, json.dumps(value)) for key, value in items.items()])

    def get_vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        return {key: np.frombuffer(value, dtype=np.float32) for key, value in self._get("vectors", keys).items()}

    def put_vectors(self, items: dict[str, np.ndarray]) -> None:
        self._put("vectors", [(key, np.asarray(value, dtype=np.float32).tobytes()) for key, value in items.items()])


def bert_score_tokenizer(tokenizer):
    """``tokenizer`` able to encode an empty text the way bert-score asks for it.

    bert-score encodes an empty text with ``build_inputs_with_special_tokens([])``, which transformers 5
    tokenizers no longer have; this gives the tokenizer that method (the special tokens of an empty text, as
    the tokenizer itself adds them), so an empty candidate scores instead of failing.

    >>> from bert_score.utils import get_tokenizer
    >>> tokenizer = bert_score_tokenizer(get_tokenizer(ReferenceMetrics().encoder, False))
    >>> tokenizer.convert_ids_to_tokens(tokenizer.build_inputs_with_special_tokens([]))
    ['[CLS]', '[SEP]']
    """
    try:
        tokenizer.build_inputs_with_special_tokens  # noqa: B018 - transformers 4 still has it
    except AttributeError:
        def with_special_tokens(token_ids, second=None):
            if token_ids or second:
                raise NotImplementedError("bert-score asks only for an empty text's special tokens")
            return list(tokenizer("", add_special_tokens=True)["input_ids"])

        tokenizer.build_inputs_with_special_tokens = with_special_tokens
    return tokenizer


@dataclass
class ReferenceMetrics:
    """Scorer object: build once, call :meth:`score` on many (reference, candidate) pairs.

    ``encoder`` is a local sentence-transformers folder (default: all-MiniLM-L6-v2 from its package);
    ``bertscore_layers`` the layer whose token embeddings BERTScore compares; ``device`` where the encoder runs
    (:func:`evalkit.models.device.resolve_device`; always in fp32 — int8 and half precision move the scores,
    see the Performance page). A device other than the CPU is part of :attr:`config`, so of every cache key.
    """

    encoder: str | Path | None = None
    bertscore_layers: int = 6
    batch_size: int = 64
    store: MetricStore | None = None
    use_stemmer: bool = True
    device: str = "cpu"
    hits: int = 0
    computed: int = 0
    _models: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        quiet_model_loading()
        self.encoder = str(self.encoder or default_encoder_path())
        self.device = resolve_device(self.device)
        if self.store is None:
            self.store = MetricStore()

    @property
    def config(self) -> str:
        """Identity of the metric settings; part of every cache key."""
        kind = self.device.split(":")[0]
        return json.dumps({"encoder": Path(self.encoder).name, "bertscore_layers": self.bertscore_layers,
                           "stemmer": self.use_stemmer, "rouge": ROUGE_TYPES, "version": 1,
                           **({"device": kind} if kind != "cpu" else {})})

    # -- the three metric families, each on unique pairs/texts only -------------------------------
    def _rouge(self, pairs: list[tuple[str, str]]) -> list[dict[str, float]]:
        from rouge_score import rouge_scorer

        scorer = self._models.setdefault("rouge", rouge_scorer.RougeScorer(list(ROUGE_TYPES),
                                                                            use_stemmer=self.use_stemmer))
        results = []
        for reference, candidate in pairs:
            scores = scorer.score("\n".join(split_sentences(reference)), "\n".join(split_sentences(candidate)))
            results.append({name: float(scores[name].fmeasure) for name in ROUGE_TYPES})
        return results

    def _sentence_model(self):
        if "encoder" not in self._models:
            from sentence_transformers import SentenceTransformer

            self._models["encoder"] = SentenceTransformer(self.encoder, device=self.device)
        return self._models["encoder"]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings of ``texts``; each unique text is encoded once and cached on disk."""
        keys = [_digest(self.config, "embed", text) for text in texts]
        unique = dict(zip(keys, texts))
        cached = self.store.get_vectors(list(unique))
        missing = [key for key in unique if key not in cached]
        if missing:
            vectors = self._sentence_model().encode([unique[key] for key in missing], batch_size=self.batch_size,
                                                    normalize_embeddings=True, convert_to_numpy=True)
            fresh = dict(zip(missing, vectors.astype(np.float32)))
            self.store.put_vectors(fresh)
            cached.update(fresh)
        return np.stack([cached[key] for key in keys])

    def _bertscore_parts(self):
        """bert-score's model (its first ``bertscore_layers`` layers), tokenizer and unweighted idf (special
        tokens 0), built as :class:`bert_score.BERTScorer` builds them."""
        if "bertscore" not in self._models:
            from collections import defaultdict

            from bert_score.utils import get_model, get_tokenizer

            tokenizer = bert_score_tokenizer(get_tokenizer(self.encoder, False))
            idf = defaultdict(lambda: 1.0)
            idf[tokenizer.sep_token_id] = idf[tokenizer.cls_token_id] = 0
            self._models["bertscore"] = (get_model(self.encoder, self.bertscore_layers).to(self.device), tokenizer, idf)
        return self._models["bertscore"]

    def _token_states(self, texts: Sequence[str]) -> dict[str, tuple]:
        """Each unique text's token states at layer ``bertscore_layers`` and idf weights, in bert-score's
        batches (longest first by words; ties by text, so a run's batches never depend on hash order)."""
        from bert_score.utils import get_bert_embedding

        model, tokenizer, idf = self._bertscore_parts()
        unique = sorted(set(texts), key=lambda text: (-len(text.split(" ")), text))
        states = {}
        for start in range(0, len(unique), self.batch_size):
            batch = unique[start:start + self.batch_size]
            embeddings, masks, weights = get_bert_embedding(batch, model, tokenizer, idf, device=self.device)
            embeddings, masks, weights = embeddings.cpu(), masks.cpu(), weights.cpu()  # matched on the CPU
            for row, text in enumerate(batch):
                length = int(masks[row].sum())
                states[text] = (embeddings[row, :length], weights[row, :length])
        return states

    def _bertscore(self, pairs: list[tuple[str, str]], states: dict[str, tuple]) -> list[dict[str, float]]:
        """BERTScore of each (reference, candidate) pair from the texts' token states: bert-score's greedy
        matching on its padded batches (``bert_score.utils.bert_cos_score_idf`` after the embedding step)."""
        import torch
        from bert_score.utils import greedy_cos_idf
        from torch.nn.utils.rnn import pad_sequence

        def padded(texts):
            embeddings, weights = zip(*(states[text] for text in texts))
            lengths = torch.tensor([len(e) for e in embeddings])
            mask = torch.arange(int(lengths.max())).expand(len(texts), -1) < lengths.unsqueeze(1)
            return (pad_sequence(list(embeddings), batch_first=True, padding_value=2.0), mask,
                    pad_sequence(list(weights), batch_first=True))

        results = []
        with torch.no_grad():
            for start in range(0, len(pairs), self.batch_size):
                batch = pairs[start:start + self.batch_size]
                precision, recall, f1 = greedy_cos_idf(*padded([r for r, _ in batch]), *padded([c for _, c in batch]))
                results.extend({"bertscore_precision": float(p), "bertscore_recall": float(r), "bertscore_f1": float(f)}
                               for p, r, f in zip(precision, recall, f1))
        return results

    def _pooled_length(self) -> int | None:
        """The longest text (in tokens) whose sentence embedding equals the mean of its BERTScore token states,
        normalised: the encoder is a plain mean-pooling, normalising sentence-transformers folder whose every
        layer BERTScore reads, so one pass serves both metrics; None when it is not (each metric then runs its
        own pass)."""
        if "pooled_length" not in self._models:
            folder, length = Path(self.encoder), None
            try:
                modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((folder / "modules.json").read_text())]
                pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
                layers = json.loads((folder / "config.json").read_text())["num_hidden_layers"]
                settings = json.loads((folder / "sentence_bert_config.json").read_text())
                modes = [key for key, on in pooling.items() if key.startswith("pooling_mode") and on]
                if (modules == ["Transformer", "Pooling", "Normalize"] and modes == ["pooling_mode_mean_tokens"]
                        and layers == self.bertscore_layers and not settings.get("do_lower_case")):
                    length = int(settings["max_seq_length"])
            except (OSError, KeyError, ValueError, TypeError):
                length = None
            self._models["pooled_length"] = length
        return self._models["pooled_length"]

    def _embed_from_states(self, texts: Sequence[str], states: dict[str, tuple]) -> np.ndarray:
        """:meth:`embed` of ``texts``, taking the vector of a text the encoder reads whole from its token states
        (mean, then unit length: what the sentence encoder computes, to float rounding) and running the
        sentence encoder only on longer texts, which it truncates differently from BERTScore."""
        keys = [_digest(self.config, "embed", text) for text in texts]
        unique = dict(zip(keys, texts))
        cached = self.store.get_vectors(list(unique))
        limit = self._pooled_length() or 0
        fresh = {}
        for key, text in unique.items():
            if key not in cached and len(states[text][0]) <= limit:
                mean = states[text][0].mean(dim=0).numpy()
                fresh[key] = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
        self.store.put_vectors(fresh)
        cached.update(fresh)
        rest = [key for key in unique if key not in cached]
        if rest:
            cached.update(zip(rest, self.embed([unique[key] for key in rest])))
        return np.stack([cached[key] for key in keys])

    # -- the public call ---------------------------------------------------------------------------
    def score(self, references: Sequence[str], candidates: Sequence[str]) -> pd.DataFrame:
        """One row per input pair: rouge1, rouge2, rougeL, rougeLsum, embedding_cosine, bertscore_*."""
        if len(references) != len(candidates):
            raise ValueError(f"{len(references)} references but {len(candidates)} candidates")
        keys = [_digest(self.config, "pair", reference, candidate)
                for reference, candidate in zip(references, candidates)]
        unique = dict(zip(keys, zip(references, candidates)))
        cached = self.store.get_scores(list(unique))
        missing = [key for key in unique if key not in cached]
        self.hits += len(unique) - len(missing)
        self.computed += len(missing)
        if missing:
            pairs = [unique[key] for key in missing]
            rouge = self._rouge(pairs)
            # One encoder pass gives BERTScore's token states and, pooled, the sentence embeddings.
            states = self._token_states([text for pair in pairs for text in pair])
            reference_vectors = self._embed_from_states([reference for reference, _ in pairs], states)
            candidate_vectors = self._embed_from_states([candidate for _, candidate in pairs], states)
            cosine = (reference_vectors * candidate_vectors).sum(axis=1)
            bertscore = self._bertscore(pairs, states)
            fresh = {key: {**rouge[i], "embedding_cosine": float(cosine[i]), **bertscore[i]}
                     for i, key in enumerate(missing)}
            self.store.put_scores(fresh)
            cached.update(fresh)
        return pd.DataFrame([cached[key] for key in keys])
