"""The build log's words on a quantized decoder's measures (`quality.measure`), after its size."""
from typing import Any


def measures_line(lm: dict[str, Any]) -> str:
    """Greedy agreement and perplexity against the float graph, and the chat tasks when measured."""
    line = (f"; greedy agreement with float {lm['greedy_agreement_quantized_vs_float']:.3f} "
            f"({lm['prompts']} prompts x {lm['tokens_per_prompt']} tokens; free running "
            f"{lm['greedy_agreement_free_running']:.3f}), perplexity "
            f"{lm['perplexity_quantized']:.2f} vs {lm['perplexity_float']:.2f} "
            f"(x{lm['perplexity_quantized_over_float']:.3f})")
    if "task_accuracy_drop" in lm:
        line += (f"; chat tasks right {lm['task_accuracy_quantized']:.3f} vs {lm['task_accuracy_float']:.3f} "
                 f"({lm['chat_tasks']} tasks; {lm['tasks_right_float_only']} right in float only, "
                 f"{lm['tasks_right_quantized_only']} quantized only), greedy agreement on their prompts "
                 f"{lm['chat_greedy_agreement']:.3f}")
    return line
