"""Standard ONNX operators newer than the TorchScript exporter's opset (20), such as Attention (opset 23).

A wrapper emits them from a `symbolic` under DOMAIN (a custom domain passes the exporter's checks); `promote`
then moves them into the standard domain and raises the graph's opset to the one that defines them. onnxruntime
runs each as one fused kernel where the exporter would have written a dozen small nodes. onnxruntime 1.24 or later
runs them as specified (1.23's Attention gave other numbers for grouped heads over a past: SmolLM2's logits 30 off).
"""
from typing import Any

#: Where a symbolic puts a standard operator the exporter's opset does not have yet.
DOMAIN = "tritonkit.onnx23"
#: The standard opset that defines every operator emitted under DOMAIN.
OPSET = 23


def promote(model: Any) -> None:
    """Moves DOMAIN's nodes into the standard domain at OPSET (in place); a graph without any is left as it is."""
    nodes = [n for n in model.graph.node if n.domain == DOMAIN]
    if not nodes:
        return
    for node in nodes:
        node.domain = ""
    imports = [o for o in model.opset_import if o.domain != DOMAIN]
    for o in imports:
        if o.domain in ("", "ai.onnx"):
            o.version = max(o.version, OPSET)
    del model.opset_import[:]
    model.opset_import.extend(imports)
