"""The ASR corpus's voices: each one espeak-ng really renders as itself, and held-out voices are not training voices.

espeak-ng says nothing when it ignores a variant: 1.51 ignores any after `en-gb` (en-gb+m5 is byte for byte en-gb)
and falls back to the plain accent for an unknown name (`annie`; the file is `Annie`). So voices are compared by
what they say, not by name.
"""
from __future__ import annotations

import pytest

from examples.asr import corpus
from examples.asr.heldout import read_heldout


@pytest.mark.slow
def test_every_heldout_voice_differs_from_every_training_voice_on_the_same_text() -> None:
    corpus.check_distinct_voices(corpus.TRAIN_VARIANTS + corpus.HELDOUT_VARIANTS)   # raises naming the first pair
    trained = {corpus.Voice(a, v, 0, 0, 0).name for a in corpus.ACCENTS for v in corpus.TRAIN_VARIANTS}
    assert all(u.voice not in trained and u.voice.split("+")[0] in corpus.ACCENTS for u in read_heldout())


@pytest.mark.slow  # synthesizes voices with espeak-ng: seconds
def test_a_voice_whose_audio_equals_another_voices_is_refused() -> None:
    with pytest.raises(ValueError) as refused:
        corpus.check_distinct_voices(["", "annie"])   # no such variant: espeak-ng speaks the plain accent
    assert str(refused.value) == ("voice en-us+annie sounds exactly like en-us (espeak-ng 'call one four go left'): "
                                  "espeak-ng ignored the variant; use another variant name")


def test_british_english_takes_its_variant() -> None:
    plain, varied = (corpus.synthesize(["go", "left"], corpus.Voice("en", v, 175, 50, 0)) for v in ("", "m5"))
    assert "en-gb" not in corpus.ACCENTS and "en" in corpus.ACCENTS
    assert plain.tobytes() != varied.tobytes()
