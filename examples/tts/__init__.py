"""TTS example: Kokoro-82M behind tritonkit's TTS pipeline (tritonkit.yaml) and a client that writes WAV files."""
