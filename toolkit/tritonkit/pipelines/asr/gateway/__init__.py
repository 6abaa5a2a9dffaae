"""The ASR pipeline behind /v1/audio/transcriptions (ensemble `asr` of tritonkit:ensembles/asr.yaml)."""
