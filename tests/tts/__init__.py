"""TTS pipeline tests."""
