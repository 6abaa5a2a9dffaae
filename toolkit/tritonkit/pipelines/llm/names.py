"""Names of the LLM pipeline that its plugin declares to the core and its hooks' code uses: one leaf module, so the
two share them without importing each other."""

#: The engine: the one model holding the weights, stepping every generation; the gateway streams to it.
ENGINE = "generate"
#: The engine's parameter for each instance's KV-cache pool (bytes): memory a pod needs beyond the model's files.
KV_CACHE_PARAMETER = "kv_cache_bytes"
#: What the `llm` ensemble takes and streams: the tensors its measuring clients send and read.
TEXT_INPUT, IDS_OUTPUT = "text_input", "output_ids"
