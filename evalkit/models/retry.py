"""How hard a remote backend tries: one frozen value, handed whole to the backend."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RetryPolicy"]


@dataclass(frozen=True)
class RetryPolicy:
    """Retries and time bounds of one model call (one request and its retries).

    A failure worth retrying (a 429, a 5xx, a timeout, a stalled, dropped or reset connection, a malformed
    200 reply) is retried up to ``max_retries`` times, waiting ``backoff_s`` doubling between tries (or the
    server's ``Retry-After``, at most ``max_retry_after_s``). Each request waits at most ``timeout_s`` for
    the connection and for each read; the whole call — connect, headers and body of every try, and the
    waits between them — is held to ``deadline_s`` of wall-clock time.

    >>> policy = RetryPolicy(max_retries=2, backoff_s=0.5)
    >>> policy.attempts, [policy.backoff(attempt) for attempt in range(policy.max_retries)]
    (3, [0.5, 1.0])
    >>> RetryPolicy(deadline_s=0)
    Traceback (most recent call last):
    ...
    ValueError: timeout_s and deadline_s must be above 0 (got 60.0, 0)
    """

    max_retries: int = 3
    backoff_s: float = 0.5
    timeout_s: float = 60.0
    deadline_s: float = 180.0
    max_retry_after_s: float = 60.0

    def __post_init__(self) -> None:
        if not self.timeout_s > 0 or not self.deadline_s > 0:
            raise ValueError(f"timeout_s and deadline_s must be above 0 (got {self.timeout_s}, {self.deadline_s})")
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f"max_retries must be a whole number >= 0 (got {self.max_retries!r})")
        if not self.backoff_s >= 0 or not self.max_retry_after_s >= 0:
            raise ValueError(f"backoff_s and max_retry_after_s must be >= 0 (got {self.backoff_s}, "
                             f"{self.max_retry_after_s})")

    @property
    def attempts(self) -> int:
        """Requests a call may send: the first and its retries."""
        return self.max_retries + 1

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after the failed try number ``attempt`` (0 for the first)."""
        return self.backoff_s * 2 ** attempt
