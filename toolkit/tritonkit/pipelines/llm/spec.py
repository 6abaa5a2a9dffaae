"""The llm pipeline's section of a quantized export, `export.quantize.lm:`: how a quantized decoder is judged against
its float graph (`export/quality.py`), reported by the build and bounded here."""
from pydantic import Field

from tritonkit.spec.base import StrictModel

#: What the schema says of the section.
DESCRIPTION = ("For an LM decoder: greedy agreement and perplexity against the float graph, and with a chat format "
               "accuracy on chat tasks and greedy agreement on chat prompts, reported by the build and bounded here.")


class LMQualitySpec(StrictModel):
    """An LM decoder's quality against its float graph (the llm pipeline's KV-cache contract, `kv_graph`)."""

    tokenizer: str = Field(description="tokenizer.json of the model, relative to the spec (e.g. "
                           "assets/tokenizer.json): encodes the prompts and the perplexity text.")
    min_greedy_agreement: float | None = Field(
        default=None, ge=0, le=1, description="Refuse the export when at fewer than this fraction of 8 prompts x "
        "32 positions of the float graph's greedy continuations the quantized graph, fed the same tokens, picks the "
        "same greedy token.")
    max_perplexity_ratio: float | None = Field(
        default=None, gt=0, description="Refuse the export when its perplexity on the llm pipeline's perplexity.txt "
        "over the float graph's exceeds this.")
    max_task_accuracy_drop: float | None = Field(
        default=None, ge=0, le=1, description="Refuse the export when the float graph's accuracy on the llm "
        "pipeline's chat tasks (chat_tasks.jsonl: short facts, arithmetic, instructions, recall, each with a system "
        "prompt, in the model's chat format; greedy replies scored by their answer) minus the quantized graph's "
        "exceeds this fraction (0.02: 2 points). Needs the chat format in the generation.json beside `tokenizer`.")
    min_chat_greedy_agreement: float | None = Field(
        default=None, ge=0, le=1, description="Refuse the export when, fed each chat task's prompt and the float "
        "graph's reply, the quantized graph picks the float graph's greedy token at fewer than this fraction of the "
        "reply's positions. Needs the chat format in the generation.json beside `tokenizer`.")
