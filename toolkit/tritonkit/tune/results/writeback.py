"""Writes the `tuned:` overlay into the spec file, leaving every other byte of the file as the user wrote it.

ruamel.yaml locates the top-level `tuned:` block and dumps the new one, but the file is not re-dumped as a
whole: a full round trip re-indents block sequences and rewrites flow mappings such as `[{kind: X}]`
(seen on this project's own spec), so the block is spliced into the original text instead.
"""
import io
from pathlib import Path
from typing import Any

import yaml
from google.protobuf import text_format
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from tritonkit.errors import TritonkitError, shown_path
from tritonkit.files import write_text_atomically
from tritonkit.repository.build import BuildResult, build
from tritonkit.spec.tuned import TunedModel
from tritonkit.triton.model_config import pb as mc

HEADER = "# Written by `tritonkit tune`: measured settings that override the models' own (re-run tune to refresh)."


def _flow(value: list | dict) -> CommentedSeq | CommentedMap:
    """`value` written on one line: `[1, 2]`, `{kind: KIND_CPU, count: 2}`."""
    out = CommentedSeq(value) if isinstance(value, list) else CommentedMap(value)
    out.fa.set_flow_style()
    return out


def entry_data(tuned: TunedModel) -> CommentedMap:
    """One model's entry: the searched fields (always explicit) and the provenance, in a readable layout."""
    out = CommentedMap()
    if tuned.max_batch_size is not None:
        out["max_batch_size"] = tuned.max_batch_size
    if tuned.instance_group is not None:
        groups = []
        for group in tuned.instance_group:
            data = group.model_dump(mode="json", by_alias=True, exclude_defaults=True)
            groups.append(_flow({"kind": group.kind, "count": group.count, **data}))
        out["instance_group"] = _flow(groups)
    if tuned.dynamic_batching is not None:
        db = tuned.dynamic_batching
        rest = db.model_dump(mode="json", exclude_defaults=True,
                             exclude={"preferred_batch_size", "max_queue_delay_microseconds"})
        out["dynamic_batching"] = _flow({"preferred_batch_size": _flow(list(db.preferred_batch_size)),
                                             "max_queue_delay_microseconds": db.max_queue_delay_microseconds, **rest})
    if tuned.parameters:
        out["parameters"] = _flow(dict(tuned.parameters))
    if tuned.sequence_batching is not None:
        out["sequence_batching"] = tuned.sequence_batching.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    prov = tuned.provenance.model_dump(mode="json", exclude_none=True)
    if "constraints" in prov:
        prov["constraints"] = _flow(prov["constraints"])
    if not prov.get("notes"):
        prov.pop("notes", None)
    out["provenance"] = CommentedMap(prov)
    return out


def _dump_block(entries: dict[str, Any]) -> str:
    dumper = YAML()
    dumper.indent(mapping=2, sequence=4, offset=2)
    dumper.width = 4096
    buffer = io.StringIO()
    dumper.dump(CommentedMap({"tuned": CommentedMap(entries)}), buffer)
    return f"{HEADER}\n{buffer.getvalue()}"


def _block_span(lines: list[str], start: int) -> tuple[int, int]:
    """Lines [first, end) of the top-level block starting at `start`, with our header comment above it."""
    end = start + 1
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if line.strip() and not line[0].isspace():
            break
        if line.strip():
            end = index + 1
    first = start
    while first > 0 and lines[first - 1].startswith("# Written by `tritonkit tune`"):
        first -= 1
    return first, end


def _tuned_line(text: str, shown: str) -> int | None:
    """0-based line of the top-level `tuned:` key, or None."""
    try:
        doc = YAML().load(text)
    except Exception as exc:  # noqa: BLE001 - ruamel raises many kinds; the loader already reported real errors
        raise TritonkitError(shown, "", f"cannot parse the spec to write tuned settings ({exc.__class__.__name__})",
                             "fix the YAML and run tune again") from None
    if isinstance(doc, CommentedMap) and "tuned" in doc:
        return doc.lc.key("tuned")[0]
    return None


def updated_spec_text(text: str, new: dict[str, TunedModel], shown: str) -> str:
    """The spec text with `new` merged into its `tuned:` block (other models' entries are kept)."""
    existing = (yaml.safe_load(text) or {}).get("tuned") or {}
    merged = {**{name: TunedModel.model_validate(v) for name, v in existing.items() if name not in new}, **new}
    block = _dump_block({name: entry_data(tuned) for name, tuned in sorted(merged.items())})
    lines = text.splitlines(keepends=True)
    start = _tuned_line(text, shown)
    if start is None:
        prefix = text if text.endswith("\n") or not text else text + "\n"
        return prefix + ("\n" if prefix.strip() else "") + block
    first, end = _block_span(lines, start)
    return "".join(lines[:first]) + block + "".join(lines[end:])


def write_tuned(spec_path: Path, new: dict[str, TunedModel], shown: str) -> str:
    """Writes the updated spec atomically; returns the previous text so a failed rebuild can restore it."""
    old = spec_path.read_text(encoding="utf-8")
    write_text_atomically(spec_path, updated_spec_text(old, new, shown))
    return old


def _check_rebuilt(repository: Path, tuned: dict[str, TunedModel]) -> None:
    """The rebuilt configs must carry the tuned values (guards the spec loader applying the overlay)."""
    for name, entry in tuned.items():
        path = repository / name / "config.pbtxt"
        config = text_format.Parse(path.read_text(), mc.ModelConfig())
        wrong = []
        if entry.max_batch_size is not None and config.max_batch_size != entry.max_batch_size:
            wrong.append(f"max_batch_size {config.max_batch_size} != {entry.max_batch_size}")
        if entry.instance_group is not None:
            counts = [g.count for g in config.instance_group]
            if counts != [g.count for g in entry.instance_group]:
                wrong.append(f"instance counts {counts} != {[g.count for g in entry.instance_group]}")
        delay = config.dynamic_batching.max_queue_delay_microseconds
        if entry.dynamic_batching is not None and delay != entry.dynamic_batching.max_queue_delay_microseconds:
            wrong.append(f"queue delay {delay} != {entry.dynamic_batching.max_queue_delay_microseconds}")
        oldest = entry.sequence_batching.oldest if entry.sequence_batching is not None else None
        if oldest is not None and config.sequence_batching.oldest.max_queue_delay_microseconds != \
                oldest.max_queue_delay_microseconds:
            wrong.append(f"sequence queue delay {config.sequence_batching.oldest.max_queue_delay_microseconds} != "
                         f"{oldest.max_queue_delay_microseconds}")
        for key, value in (entry.parameters or {}).items():
            if config.parameters[key].string_value != str(value):
                wrong.append(f"parameter {key} '{config.parameters[key].string_value}' != '{value}'")
        if wrong:
            raise TritonkitError(str(path), f"tuned.{name}", "the rebuilt config does not carry the tuned values (" +
                                 ", ".join(wrong) + ")", "the spec loader must apply `tuned:`, report this as a bug")


def write_back_spec(spec_path: Path, tuned: dict[str, TunedModel]) -> BuildResult:
    """Writes `tuned:` into the spec and rebuilds; a rebuild that fails restores the spec as it was."""
    old = write_tuned(spec_path, tuned, shown_path(spec_path))
    try:
        result = build(spec_path)
        _check_rebuilt(result.repository, tuned)
    except BaseException:
        write_text_atomically(spec_path, old)
        raise
    return result
