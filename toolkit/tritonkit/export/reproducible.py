"""Strips what ties an exported ONNX graph to the folder and environment it was built in.

torch.onnx's exporter records a Python stack trace on every node (metadata `pkg.torch.onnx.stack_trace`): absolute paths
of the project's model code, of tritonkit and of the virtualenv. The same model built in another folder was
byte-different, so `publish` uploaded it again as a new version. The traces are for debugging the export only (no
runtime reads node metadata); the other metadata torch writes (module names, scopes, the FX node) name no file and stay.
"""
from collections.abc import Iterator
from typing import Any

#: Node metadata keys that carry source locations (file paths and line numbers).
LOCATION_KEYS = ("pkg.torch.onnx.stack_trace",)


def _graphs(graph: Any) -> Iterator[Any]:
    """`graph` and every subgraph (If/Loop/Scan bodies) below it."""
    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("g"):
                yield from _graphs(attribute.g)
            for sub in attribute.graphs:
                yield from _graphs(sub)


def strip_locations(model: Any) -> None:
    """Removes the source-location metadata of every node of `model` (ModelProto, changed in place)."""
    nodes = [node for graph in _graphs(model.graph) for node in graph.node]
    nodes += [node for function in model.functions for node in function.node]
    for node in nodes:
        kept = [prop for prop in node.metadata_props if prop.key not in LOCATION_KEYS]
        if len(kept) != len(node.metadata_props):
            del node.metadata_props[:]
            node.metadata_props.extend(kept)
