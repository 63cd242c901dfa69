"""Goals and rollouts: a user proxy re-plays real conversations.

Goal synthesis: an auxiliary model reads a real conversation and writes what the user wants at one of three
levels — ``full`` (2-4 sentences: intent, tone, the kind of person), ``topic`` (3-8 words) or ``none``.

The mirror driver then lets the proxy write every user turn of the conversation from the goal and the
conversation so far, while the assistant — shown the real assistant reply of that point — answers in its
spirit, so the rollout follows the real trajectory. A small assistant model often repeats the user's turn
instead of answering it; with the echo guard, such a reply (:func:`is_echo`) is asked for once more with an
instruction not to repeat, and a guided assistant whose second reply still echoes gives the real reply of
that point instead. The single-turn driver stops after the first exchange.
Small models asked to "be the user" tend to answer as the assistant, so the proxy is told about the user in
the third person and asked to continue a transcript whose next line starts with ``USER:``.
"""
from __future__ import annotations

import difflib
import re
from typing import Any, Literal, Sequence

from evalkit.models import Backend, Messages
from evalkit.userproxy.data import render
from evalkit.data.dialogue import Turn

__all__ = ["GoalLevel", "goal_messages", "synthesize_goals", "proxy_messages", "assistant_messages",
           "clean_user_turn", "is_echo", "mirror_rollouts"]

GoalLevel = Literal["full", "topic", "none"]

_GOAL_ASK = {
    "full": ("In two to four sentences, written in the third person, describe what the USER in this conversation "
             "is trying to get, the tone they use, and what kind of person they come across as. Do not quote them."),
    "topic": "In three to eight words, name what the USER in this conversation wants help with. Give only the words.",
}


def goal_messages(turns: Sequence[Turn], level: GoalLevel) -> Messages:
    """The auxiliary model's prompt for a goal of ``level`` (``none`` needs no prompt)."""
    if level == "none":
        raise ValueError("a 'none' goal is empty; nothing to synthesise")
    return [{"role": "user", "content": f"{render(turns, max_words=80)}\n\n{_GOAL_ASK[level]}"}]


def synthesize_goals(episodes: Sequence[Sequence[Turn]], level: GoalLevel, backend: Backend, *,
                     max_tokens: int = 96) -> list[str]:
    """A goal per episode at ``level`` (empty strings for ``none``), written by ``backend`` at temperature 0."""
    if level == "none":
        return [""] * len(episodes)
    results = backend.generate([goal_messages(turns, level) for turns in episodes], max_tokens=max_tokens)
    return [r.texts[0].strip() for r in results]


def proxy_messages(goal: str, level: GoalLevel, so_far: Sequence[Turn], *, max_words: int = 60) -> Messages:
    """The proxy's prompt: who the user is (third person) and the transcript so far; the answer is prefilled
    with ``USER:`` (a local model continues it; an OpenAI-compatible server treats a final assistant message
    as its own, which some servers continue and others answer)."""
    about = {"full": f"About the person: {goal}\n", "topic": f"The person wants help with: {goal}\n",
             "none": ""}[level] if goal or level == "none" else ""
    transcript = render(so_far, max_words=max_words) if so_far else "(the conversation has not started yet)"
    prompt = ("Below is a chat between a person (USER) and an AI assistant (ASSISTANT).\n" + about +
              "Write the USER's next message the way this person would type it: plain, in their own words, "
              "usually short. Write only that message.\n\n" + transcript)
    # The answer is prefilled with the speaker label, so the model writes as the user, not as an assistant.
    return [{"role": "user", "content": prompt}, {"role": "assistant", "content": "USER:"}]


_NO_ECHO = " Do not repeat or quote the user's message: answer it in your own words."


def assistant_messages(so_far: Sequence[Turn], reference: str | None, *, max_words: int = 80,
                       no_echo: bool = False) -> Messages:
    """The assistant's prompt: the rollout so far as chat turns, guided by the real reply at this point
    (``no_echo``: told not to repeat the user, the echo guard's second ask)."""
    guide = ("You are a helpful AI assistant." if reference is None else
             "You are a helpful AI assistant. In the original conversation the assistant replied at this point: "
             f"\"{' '.join(reference.split()[:max_words])}\". Answer the user's latest message in the same spirit.")
    guide += _NO_ECHO if no_echo else ""
    return [{"role": "system", "content": guide}] + [{"role": t["role"], "content": t["content"]} for t in so_far]


_SPEAKER = re.compile(r"^\s*(USER|User|user)\s*:\s*")
_NEXT_SPEAKER = re.compile(r"\n\s*(ASSISTANT|Assistant|USER|User)\s*:|\bASSISTANT\s*:")


def clean_user_turn(text: str) -> str:
    """The proxy's output cut to one user message: a leading ``USER:`` removed, anything after the next
    speaker label dropped, quotes around the whole message stripped.

    >>> clean_user_turn('USER: "where is it?"\\nASSISTANT: It is here.')
    'where is it?'
    """
    text = _SPEAKER.sub("", text.strip())
    text = _NEXT_SPEAKER.split(text, maxsplit=1)[0].strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def _words(text: str) -> list[str]:
    return "".join(c.lower() if c.isalnum() else " " for c in str(text)).split()


def _words_in_order(first: list[str], second: list[str]) -> int:
    """How many of ``first``'s words ``second`` repeats in the same order (difflib's matching blocks), so a
    copy with a word swapped ("my reach" for "your reach") still counts nearly all of its words."""
    matcher = difflib.SequenceMatcher(None, first, second, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks())


def is_echo(said: str, answer: str, *, overlap: float = 0.8) -> bool:
    """Whether ``answer`` repeats ``said``: the words of ``said`` that ``answer`` repeats in the same order are
    at least ``overlap`` of them (case and punctuation ignored; a swapped pronoun does not hide a copy).

    >>> is_echo("Hey there! I'm Sarah, planning a trip.", "hey there, I'm Sarah planning a trip")
    True
    >>> is_echo("I want to grow my reach and attract more users to my blog",
    ...         "I want to grow your reach and attract more users to your blog. First, ...")
    True
    >>> is_echo("Any tips for Lisbon?", "Try the trams and the custard tarts.")
    False
    >>> is_echo("What is the capital of France?", "The capital of France is Paris.")
    False
    """
    words = _words(said)
    return bool(words) and _words_in_order(words, _words(answer)) >= overlap * len(words)


PLACEHOLDER = "…"


def _filled(text: str, episode: int, so_far: Sequence[Turn], role: str,
            empty_turns: list[dict[str, Any]] | None) -> str:
    """``text``, or the placeholder for an empty turn (recorded in ``empty_turns``)."""
    if text:
        return text
    if empty_turns is not None:
        empty_turns.append({"episode": episode, "turn": len(so_far), "role": role})
    return PLACEHOLDER


def mirror_rollouts(episodes: Sequence[Sequence[Turn]], goals: Sequence[str],
                    level: GoalLevel | Sequence[GoalLevel], proxy: Backend, assistant: Backend, *,
                    mode: Literal["multi", "single"] = "multi", user_tokens: int = 48,
                    assistant_tokens: int = 64, guided: bool = True, temperature: float = 0.0,
                    seed: int = 0, empty_turns: list[dict[str, Any]] | None = None,
                    served: list[tuple[str, list[int]]] | None = None, echo_guard: bool = True,
                    echo_repairs: list[dict[str, Any]] | None = None) -> list[list[Turn]]:
    """Replay each real conversation with the proxy writing the user turns.

    A model that writes nothing still gives the conversation its turn (an ellipsis holds the place, so the
    next prompt keeps its shape); each such turn is appended to ``empty_turns`` (episode, turn, role) when
    a list is given, so the run can count and report them.

    ``multi`` writes as many user turns as the real conversation has, each followed by an assistant reply
    (guided by the real one unless ``guided`` is False — the assistant-sensitivity study); ``single`` stops
    after the first exchange. The proxy samples at ``temperature`` (0: greedy) with ``seed``; the assistant
    is greedy. Turns are generated one position at a time across all episodes, so every step is one
    batched call per model (and cached by the model door).

    ``level`` is one goal level for every episode or each episode's own (so proxies that differ only in what
    they are told about the user roll out together). When ``served`` is a list, each model call appends
    (``"proxy"`` or ``"assistant"``, the episodes its prompts belong to, in order): a door's call records
    can then be charged to the episodes that caused them.

    With ``echo_guard``, an assistant reply that echoes the user turn before it is asked for once more
    (:func:`assistant_messages` with ``no_echo``); a guided assistant whose second reply still echoes gives
    the real reply of that point. Each such turn is appended to ``echo_repairs`` (episode, turn, and
    ``"asked again"``, ``"real reply"`` or ``"still an echo"``) when a list is given.
    """
    if len(episodes) != len(goals):
        raise ValueError(f"{len(episodes)} episodes but {len(goals)} goals")
    levels = [level] * len(episodes) if isinstance(level, str) else list(level)
    if len(levels) != len(episodes):
        raise ValueError(f"{len(episodes)} episodes but {len(levels)} goal levels")
    real_users = [[t for t in turns if t["role"] == "user"] for turns in episodes]
    real_replies = [[t["content"] for t in turns if t["role"] == "assistant"] for turns in episodes]
    rounds = [1 if mode == "single" else len(users) for users in real_users]
    rollouts: list[list[Turn]] = [[] for _ in episodes]
    for step in range(max(rounds, default=0)):
        active = [i for i, n in enumerate(rounds) if step < n]
        prompts = [proxy_messages(goals[i], levels[i], rollouts[i]) for i in active]
        # Greedy output does not depend on the seed; leaving it out of the call keeps one cache entry.
        written = proxy.generate(prompts, max_tokens=user_tokens, temperature=temperature,
                                 seed=seed if temperature > 0 else 0)
        if served is not None:
            served.append(("proxy", active))
        for i, result in zip(active, written):
            rollouts[i].append({"role": "user", "content": _filled(clean_user_turn(result.texts[0]), i, rollouts[i],
                                                                   "user", empty_turns)})
        answering = [i for i in active if step < len(real_replies[i])]
        guides = {i: real_replies[i][step] if guided else None for i in answering}
        replies = assistant.generate([assistant_messages(rollouts[i], guides[i]) for i in answering],
                                     max_tokens=assistant_tokens)
        if served is not None:
            served.append(("assistant", answering))
        texts = {i: result.texts[0].strip() for i, result in zip(answering, replies)}
        echoed = [i for i in answering if echo_guard and is_echo(rollouts[i][-1]["content"], texts[i])]
        if echoed:
            again = assistant.generate([assistant_messages(rollouts[i], guides[i], no_echo=True) for i in echoed],
                                       max_tokens=assistant_tokens)
            if served is not None:
                served.append(("assistant", echoed))
            for i, result in zip(echoed, again):
                texts[i], how = result.texts[0].strip(), "asked again"
                if is_echo(rollouts[i][-1]["content"], texts[i]):
                    texts[i], how = (guides[i], "real reply") if guides[i] else (texts[i], "still an echo")
                if echo_repairs is not None:
                    echo_repairs.append({"episode": i, "turn": len(rollouts[i]), "how": how})
        for i in answering:
            rollouts[i].append({"role": "assistant", "content": _filled(texts[i], i, rollouts[i], "assistant",
                                                                        empty_turns)})
    return rollouts
