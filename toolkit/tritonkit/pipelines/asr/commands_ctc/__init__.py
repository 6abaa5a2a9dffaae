"""The shipped ASR model: a command-word CTC acoustic model the project trained itself (scripts/train_asr.py).

What the `asr` starter (`tritonkit init --pipeline asr`) serves, so it works from an installed wheel: `model.py` (the
network, `build()` for the exporter), `weights/` (state_dict + provenance json), `lang/` (tokens, lexicon, grammar, a
grammar corpus for an n-gram) and `smoke/` (held-out-voice clips with their transcripts' known answers).
"""
