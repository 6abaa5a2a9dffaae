"""The TTS pipeline behind /v1/audio/speech (decoupled `tts_stream` of tritonkit:ensembles/tts.yaml)."""
