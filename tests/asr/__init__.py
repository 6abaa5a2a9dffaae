"""ASR pipeline tests."""
