"""Renders config.pbtxt text from the spec with Jinja templates (StrictUndefined: no leftover placeholders)."""
