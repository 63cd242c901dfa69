"""Scoring a proxy against the humans it replaces: per-episode lexical z-scores and judge scores, the HH/PP
controls, and the tables the chapter reports (mean, 95% t-interval, controls, calibrated score)."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.models import Backend
from evalkit.userproxy import realism
from evalkit.userproxy.rollout import is_echo
from evalkit.userproxy.lexical import (LEXICAL_METRICS, LEXICAL_MODES, LexicalMode, Tokenizer, lexical_profile, tokenizer_named,
                      user_text)
from evalkit.stats import summarise
from evalkit.data.dialogue import Turn

__all__ = ["lexical_z_scores", "lexical_mode_table", "lexical_table", "judge_scores", "control_scores", "realism_table", "JUDGE_METRICS",
           "CALIBRATED_METRICS", "JUDGE_SCORE_RANGE", "calibrated_summary", "plot_realism_and_diversity", "user_turn_counts", "echoes", "repeats"]

JUDGE_METRICS = ("gteval", "pi", "rnr")
# RNR judges one conversation at a time, so its proxy-proxy "control" re-scores the proxy's own conversations
# and equals the proxy's score by construction: a calibrated RNR would be 0 whatever the proxy. Only the
# pairwise metrics have a PP control and a calibrated score; RNR keeps its HH reference.
CALIBRATED_METRICS = ("gteval", "pi")
# Every judge metric is a share or probability: its mean and interval lie in [0, 1].
JUDGE_SCORE_RANGE = (0.0, 1.0)


def lexical_z_scores(human: Sequence[Sequence[Turn]], proxy: Sequence[Sequence[Turn]],
                     tokenizer: Tokenizer, *, min_tokens: int = 5, mode: LexicalMode = LEXICAL_MODES["kit"],
                     topic_restored: Sequence[bool] | None = None,
                     proxy_topic_restored: Sequence[bool] | None = None) -> pd.DataFrame:
    """Per proxy episode and metric, z = (proxy value − human mean) / human sd, the human statistics taken
    over the real episodes of the same dataset with the same tokenizer and ``mode`` (how turns are joined,
    whether a restored opening query counts, whether short texts are scored). Episodes under ``min_tokens``
    user tokens are ``unstable``: left out (z missing) in the kit's mode, scored and flagged in MirrorBench's.
    ``topic_restored`` marks the human conversations whose first user turn the loader restored, and
    ``proxy_topic_restored`` the conversations each proxy episode mirrors: where a mode leaves a restored query
    out, the proxy's turn written in its place is left out too, so both sides count the same turns."""
    def skips(flags: Sequence[bool] | None, n: int) -> list[bool]:
        return [bool(flag) and not mode.restored_topic for flag in (flags if flags is not None else [False] * n)]

    humans = lexical_profile([user_text(t, mode.joiner, skip_first=s)
                              for t, s in zip(human, skips(topic_restored, len(human)))], tokenizer,
                             min_tokens=min_tokens, score_short=mode.score_short)
    proxies = lexical_profile([user_text(t, mode.joiner, skip_first=s)
                               for t, s in zip(proxy, skips(proxy_topic_restored, len(proxy)))], tokenizer,
                              min_tokens=min_tokens, score_short=mode.score_short)
    out = pd.DataFrame({"tokens": proxies["tokens"], "unstable": proxies["unstable"]})
    for metric in LEXICAL_METRICS:
        mean, sd = humans[metric].mean(), humans[metric].std(ddof=1)
        out[metric] = (proxies[metric] - mean) / sd if sd and np.isfinite(sd) else np.nan
        out[f"{metric}_proxy"], out[f"{metric}_human_mean"] = proxies[metric], mean
    out.attrs["human_unstable"] = int(humans["unstable"].sum())
    return out


def lexical_mode_table(anchors: dict[str, pd.DataFrame], proxies: dict[str, Sequence[Sequence[Turn]]], *,
                       kit_tokenizer: str | None = None, min_tokens: int = 5,
                       modes: Sequence[str] = ("kit", "mirrorbench"),
                       proxy_topic_restored: dict[str, Sequence[bool]] | None = None) -> pd.DataFrame:
    """The same proxy episodes and human anchors scored in each lexical mode, side by side: per dataset,
    metric and mode the human and proxy means, the mean z with its 95% t-interval and how many texts were
    short (``unstable``). ``anchors`` are the human conversations per dataset (a mirror-set frame with
    ``turns`` and ``topic_restored``); ``kit_tokenizer`` is the job's tokenizer setting for the kit's mode;
    ``proxy_topic_restored`` flags, per dataset, the conversations the proxy episodes mirror."""
    rows = []
    for mode_name in modes:
        mode = LEXICAL_MODES[mode_name]
        tokenizer = tokenizer_named(mode.tokenizer if mode.tokenizer is not None else kit_tokenizer)
        for dataset, anchor in anchors.items():
            z = lexical_z_scores(list(anchor["turns"]), proxies[dataset], tokenizer, min_tokens=min_tokens,
                                 mode=mode, topic_restored=list(anchor["topic_restored"]),
                                 proxy_topic_restored=(proxy_topic_restored or {}).get(dataset))
            for metric in LEXICAL_METRICS:
                result = summarise(z[metric])
                rows.append({"dataset": dataset, "metric": metric, "mode": mode_name,
                             "human value": z[f"{metric}_human_mean"].iloc[0] if len(z) else np.nan,
                             "proxy value": z[f"{metric}_proxy"].mean(), "z": result["mean"],
                             "low": result["t_low"], "high": result["t_high"], "n": result["n"],
                             "short proxy texts": int(z["unstable"].sum()),
                             "short human texts": int(z.attrs["human_unstable"])})
    return pd.DataFrame(rows).set_index(["dataset", "metric", "mode"])


def lexical_table(z_scores: pd.DataFrame) -> pd.DataFrame:
    """Mean human-anchored z per metric with its 95% t-interval (0 is human-like)."""
    rows = {}
    for metric in LEXICAL_METRICS:
        result = summarise(z_scores[metric])
        rows[metric] = {"z": result["mean"], "low": result["t_low"], "high": result["t_high"], "n": result["n"],
                        "proxy value": z_scores[f"{metric}_proxy"].mean(),
                        "human value": z_scores[f"{metric}_human_mean"].iloc[0] if len(z_scores) else np.nan}
    return pd.DataFrame(rows).T


def judge_scores(human: Sequence[Sequence[Turn]], proxy: Sequence[Sequence[Turn]], judge: Backend, *,
                 seed: int = 0, mode: realism.Mode = "probs", samples: int = 1,
                 metrics: Sequence[str] = JUDGE_METRICS) -> pd.DataFrame:
    """Per episode: GTEval (real vs proxy), PI (1 = proxy taken for the human) and RNR (of the proxy
    conversation), each NaN where the judge abstained."""
    pairs = list(zip(human, proxy))
    out = pd.DataFrame(index=range(len(pairs)))
    if "gteval" in metrics:
        out["gteval"] = realism.gteval(pairs, judge, mode=mode, samples=samples).scores
    if "pi" in metrics:
        out["pi"] = realism.pairwise_indistinguishability(pairs, judge, seed=seed, mode=mode, samples=samples).scores
    if "rnr" in metrics:
        out["rnr"] = realism.rubric_and_reason(list(proxy), judge, mode=mode, samples=samples).scores
    return out


def control_scores(human: Sequence[Sequence[Turn]], proxy: Sequence[Sequence[Turn]], judge: Backend, *,
                   seed: int = 0, mode: realism.Mode = "probs", samples: int = 1,
                   metrics: Sequence[str] = JUDGE_METRICS) -> dict[str, dict[str, float]]:
    """The same judges on human-human (HH) and proxy-proxy (PP) pairs of different conversations: the score
    a genuinely human "proxy" gets, and the score of one proxy conversation measured against another."""
    controls: dict[str, dict[str, float]] = {}
    for name, side in (("HH", list(human)), ("PP", list(proxy))):
        pairs = realism.control_pairs(side, seed=seed)
        reference, candidate = [a for a, _ in pairs], [b for _, b in pairs]
        scores = judge_scores(reference, candidate, judge, seed=seed, mode=mode, samples=samples, metrics=metrics)
        for metric in metrics:
            if name == "PP" and metric not in CALIBRATED_METRICS:
                controls.setdefault(metric, {})[name] = float("nan")  # no PP control exists (see above)
                continue
            controls.setdefault(metric, {})[name] = float(np.nanmean(scores[metric]))
    return controls


def calibrated_summary(metric: str, mean: float, hh: float, pp: float) -> float:
    """The calibrated score of ``metric`` (NaN for RNR, which has no proxy-proxy control).

    >>> calibrated_summary("gteval", 0.75, 1.0, 0.5), calibrated_summary("rnr", 0.75, 1.0, 0.75)
    (0.5, nan)
    """
    return realism.calibrated(mean, hh, pp) if metric in CALIBRATED_METRICS else float("nan")


def realism_table(scores: pd.DataFrame, controls: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Per judge metric: mean with 95% t-interval, the HH and PP controls and the calibrated score
    clip((score − PP) / (HH − PP), 0, 1) with the interval the mean's t-interval maps to (``calibrated_low``,
    ``calibrated_high``; the controls' own sampling error is not in it, so it is a lower bound on the
    uncertainty: with HH and PP close together it spans most of [0, 1]). PI is also given as Δw = mean − 0.5.

    >>> table = realism_table(pd.DataFrame({"gteval": [0.55, 0.6, 0.65, 0.6]}), {"gteval": {"HH": 0.7, "PP": 0.5}})
    >>> table.loc["gteval", ["calibrated", "calibrated_low", "calibrated_high"]].round(2).tolist()
    [0.5, 0.18, 0.82]
    """
    rows = {}
    for metric in scores.columns:
        result = summarise(scores[metric], bounds=JUDGE_SCORE_RANGE)
        hh, pp = controls.get(metric, {}).get("HH", np.nan), controls.get(metric, {}).get("PP", np.nan)
        rows[metric] = {"mean": result["mean"], "low": result["t_low"], "high": result["t_high"],
                        "n": result["n"], "abstained": result["missing"], "HH": hh, "PP": pp,
                        "calibrated": calibrated_summary(metric, result["mean"], hh, pp),
                        "calibrated_low": calibrated_summary(metric, result["t_low"], hh, pp),
                        "calibrated_high": calibrated_summary(metric, result["t_high"], hh, pp)}
        if metric == "pi":
            rows[metric]["delta_w"] = result["mean"] - 0.5
    return pd.DataFrame(rows).T


def plot_realism_and_diversity(realism_frame: pd.DataFrame, lexical_frame: pd.DataFrame,
                               set_names: Mapping[str, str] | None = None):
    """The paper's Figure 2 layout: judge metrics (mean with 95% t-interval, HH and PP controls as ticks)
    left, lexical z-scores (0 is human-like) right; one row per dataset, labelled by ``set_names`` (a dataset not
    in it by its own name). Frames are indexed by (dataset, metric) with ``mean``/``t_low``/``t_high``/``HH``/
    ``PP`` and ``z``/``low``/``high``."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 6, figsize=(14, 3.2))
    for ax, metric in zip(axes[:3], JUDGE_METRICS):
        table = realism_frame.xs(metric, level="metric")
        y = np.arange(len(table))
        ax.errorbar(table["mean"], y, xerr=[table["mean"] - table["t_low"], table["t_high"] - table["mean"]], fmt="o")
        ax.scatter(table["HH"], y, marker="|", s=200, color="tab:red", label="HH")
        ax.scatter(table["PP"], y, marker="|", s=200, color="tab:green", label="PP")
        labels = [(set_names or {}).get(dataset, dataset) for dataset in table.index]
        ax.set_yticks(y, labels if metric == JUDGE_METRICS[0] else [""] * len(y))
        ax.set_title({"gteval": "GTEval", "pi": "PI", "rnr": "RNR"}[metric])
    axes[0].legend(fontsize=7)
    for ax, metric in zip(axes[3:], LEXICAL_METRICS):
        table = lexical_frame.xs(metric, level="metric")
        y = np.arange(len(table))
        ax.errorbar(table["z"], y, xerr=[table["z"] - table["low"], table["high"] - table["z"]], fmt="s",
                    color="tab:purple")
        ax.axvline(0, ls=":", color="grey")
        ax.set_yticks(y, [""] * len(y))
        ax.set_title({"mattr": "MATTR z", "hdd": "HD-D z", "yules_k": "Yule's K z"}[metric])
    fig.tight_layout()
    return fig


def user_turn_counts(episodes_by_dataset: dict[str, list[dict]], real_user_turns) -> tuple[dict[str, int], dict[str, int]]:
    """(proxy user turns, real user turns) per dataset over stored rollout episodes; ``real_user_turns(dataset,
    conversation_id)`` gives the real conversation's count — the mirror driver must match it exactly."""
    proxy, real = {}, {}
    for dataset, episodes in episodes_by_dataset.items():
        proxy[dataset] = sum(t["role"] == "user" for e in episodes for t in e["payload"]["turns"])
        real[dataset] = int(sum(real_user_turns(dataset, e["episode_id"]) for e in episodes))
    return proxy, real


def repeats(turns: Sequence[Turn], *, speaker: str = "user", overlap: float = 0.8) -> tuple[int, int]:
    """(``speaker``'s turns that repeat one of its own earlier turns, ``speaker``'s turns after its first): a
    proxy that says the same thing again instead of moving the conversation on (the rule of
    :func:`~evalkit.userproxy.rollout.is_echo`).

    >>> turns = [{"role": "user", "content": "Hi, I'm Sarah and I need blog tips."},
    ...          {"role": "assistant", "content": "Sure: write often."},
    ...          {"role": "user", "content": "Hi, I'm Sarah and I need blog tips."},
    ...          {"role": "assistant", "content": "As I said: write often."},
    ...          {"role": "user", "content": "How often?"}]
    >>> repeats(turns)
    (1, 2)
    """
    said = [str(turn.get("content", "")) for turn in turns if turn.get("role") == speaker]
    repeated = sum(any(is_echo(earlier, text, overlap=overlap) for earlier in said[:k]) for k, text in
                   enumerate(said) if k)
    return repeated, max(len(said) - 1, 0)


def echoes(turns: Sequence[Turn], *, speaker: str = "assistant", overlap: float = 0.8) -> tuple[int, int]:
    """(``speaker``'s turns that echo the other side's turn just before them, ``speaker``'s turns that follow
    one): an echo repeats at least ``overlap`` of the turn before's words in the same order
    (:func:`~evalkit.userproxy.rollout.is_echo`). For the assistant, a small model that parrots the proxy
    instead of answering; for the user (the proxy), a proxy that hands the assistant's words back.

    >>> turns = [{"role": "user", "content": "Hey there! I'm Sarah, planning a trip."},
    ...          {"role": "assistant", "content": "Hey there! I'm Sarah, planning a trip."},
    ...          {"role": "user", "content": "Any tips for Lisbon?"},
    ...          {"role": "assistant", "content": "Try the trams and the custard tarts."}]
    >>> echoes(turns), echoes(turns, speaker="user")
    ((1, 2), (0, 1))
    """
    other = "user" if speaker == "assistant" else "assistant"
    echoed = replies = 0
    for before, turn in zip(turns, turns[1:]):
        if before.get("role") != other or turn.get("role") != speaker:
            continue
        replies += 1
        echoed += is_echo(before.get("content", ""), turn.get("content", ""), overlap=overlap)
    return echoed, replies


