"""The frontend's one error type: a ValueError with a one-line message `problem; fix` (adapters answer INVALID_ARG)."""


class FrontendError(ValueError):
    """Input the frontend cannot turn into speech, or a missing espeak-ng; the message says how to fix it."""
