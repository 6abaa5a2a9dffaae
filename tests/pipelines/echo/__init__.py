"""A pipeline that lives outside tritonkit: an OpenAI-style route and an engine with a knob, as a plugin brings them.

It is this folder plus one registry line (`registry.py`); `tests/pipelines/test_new_pipeline.py` serves its route
and tunes its knob through the real CLI with nothing else changed.
"""
