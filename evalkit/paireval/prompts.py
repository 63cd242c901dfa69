"""What the judges are shown: the pairwise and the pointwise (DirectEval) prompt, clipped the same way in
training and scoring (:data:`PROMPT_LIMITS`) — the last few turns, each cut to a word budget."""
from __future__ import annotations

from dataclasses import dataclass

from evalkit.data.dialogue import Texts, alternating, render
from evalkit.models import Messages



# --------------------------------------------------------------------------- prompt limits

@dataclass(frozen=True)
class PromptLimits:
    """How much of a conversation a prompt shows: the last ``turns`` turns, each cut to ``words`` words."""

    turns: int = 3
    words: int = 50

    def clip(self, text: str) -> str:
        """``text`` cut to the word budget, an ellipsis marking the cut.

        >>> PromptLimits(words=3).clip("one two three four five")
        'one two three …'
        """
        words = str(text).split()
        return " ".join(words[:self.words]) + (" …" if len(words) > self.words else "")

    def context(self, turns: Texts) -> list[str]:
        """The last ``turns`` turns of a context, each clipped.

        >>> PromptLimits(turns=2, words=2).context(["a b c", "d", "e f g"])
        ['d', 'e f …']
        """
        return [self.clip(turn) for turn in list(turns)[-self.turns:]] if self.turns > 0 else []


PROMPT_LIMITS = PromptLimits()


# --------------------------------------------------------------------------- prompts

def _dialogue_text(context: Texts, limits: PromptLimits) -> str:
    # The last context turn is always "Speaker 2", whatever the context's length.
    return render(alternating(limits.context(context)), empty="(the conversation starts with the reply)")


def pair_messages(context_a: Texts, response_a: str, context_b: Texts, response_b: str, *,
                  limits: PromptLimits = PROMPT_LIMITS) -> Messages:
    """The pairwise prompt: two (conversation, reply) pairs, which reply fits its conversation better?"""
    prompt = ("Two short conversations follow, each with a proposed next reply.\n\n"
              f"Conversation A:\n{_dialogue_text(context_a, limits)}\nReply A: {limits.clip(response_a)}\n\n"
              f"Conversation B:\n{_dialogue_text(context_b, limits)}\nReply B: {limits.clip(response_b)}\n\n"
              "Which reply is the better continuation of its own conversation? Answer with one letter: A or B.")
    return [{"role": "user", "content": prompt}]


def direct_messages(context: Texts, response: str, *, limits: PromptLimits = PROMPT_LIMITS) -> Messages:
    """DirectEval's prompt: one conversation and a reply — is it a good reply? (Yes/No)"""
    prompt = (f"Conversation:\n{_dialogue_text(context, limits)}\nProposed reply: {limits.clip(response)}\n\n"
              "Is the proposed reply a good next turn for this conversation? Answer Yes or No.")
    return [{"role": "user", "content": prompt}]
