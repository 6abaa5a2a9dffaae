"""The frontend's one error type: a ValueError whose message is one line `problem; fix` (adapters answer INVALID_ARG)."""


class FrontendError(ValueError):
    """Input the frontend cannot turn into speech, or a missing espeak-ng; the message says how to fix it."""
