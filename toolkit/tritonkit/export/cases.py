"""Verification inputs: the example itself plus random inputs at batch 1, the max batch and other dynamic lengths.

A graph exported from one example can silently bake in that example's sizes or branches; running it at
other sizes and values is what exposes that.
"""
from dataclasses import dataclass

import numpy as np


@dataclass
class Case:
    """One set of named inputs and a label that says how it was made."""

    label: str
    inputs: dict[str, np.ndarray]

    def shapes(self) -> str:
        """`name=[2, 8] other=[2, 8, 16]`: the shapes an error message names."""
        return " ".join(f"{k}={list(v.shape)}" for k, v in self.inputs.items())


def dim_sizes(example: dict[str, np.ndarray], axes: dict[str, dict[int, str]]) -> dict[str, int]:
    """The example's size of each named dynamic dim (shared names must agree)."""
    sizes: dict[str, int] = {}
    for tensor, mapping in axes.items():
        if tensor not in example:
            continue
        for axis, dim in mapping.items():
            sizes.setdefault(dim, int(example[tensor].shape[axis]))
    return sizes


def default_lengths(size: int) -> list[int]:
    """Half and double the example's size (distinct, >= 1): shorter and longer than what was traced."""
    return sorted({max(1, size // 2), size * 2} - {size}) or [size + 1]


def _random_like(template: np.ndarray, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random values of the template's dtype and range: floats by its mean/std, integers within its min..max."""
    if template.dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(template.dtype, np.integer):
        lo, hi = (int(template.min()), int(template.max())) if template.size else (0, 1)
        return rng.integers(lo, hi + 1, size=shape, dtype=np.int64).astype(template.dtype)
    flat = template.astype(np.float64)
    mean = float(flat.mean()) if flat.size else 0.0
    std = float(flat.std()) if flat.size > 1 else 1.0
    return (mean + (std or 1.0) * rng.standard_normal(shape)).astype(template.dtype)


def _shaped(example: dict[str, np.ndarray], axes: dict[str, dict[int, str]], batch: int | None,
            sizes: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """Each input's shape with the batch axis set to `batch` (when batched) and named dims set from `sizes`."""
    shapes = {}
    for name, value in example.items():
        shape = list(value.shape)
        if batch is not None:
            shape[0] = batch
        for axis, dim in axes.get(name, {}).items():
            if dim in sizes:
                shape[axis] = sizes[dim]
        shapes[name] = tuple(shape)
    return shapes


def make_cases(example: dict[str, np.ndarray], axes: dict[str, dict[int, str]], max_batch_size: int,
               batch_sizes: list[int] | None = None, lengths: dict[str, list[int]] | None = None,
               seed: int = 0) -> list[Case]:
    """The example, then random inputs per batch size, then random inputs per dynamic length step.

    `axes` maps input name -> {axis: dim name}; the batch axis (0) is implied when max_batch_size > 0.
    """
    rng = np.random.default_rng(seed)
    batched = max_batch_size > 0
    if batched:  # the batch axis is driven by batch sizes, not by the named-dim steps below
        axes = {n: {a: d for a, d in m.items() if a != 0} for n, m in axes.items()}
    cases = [Case("example", dict(example))]
    base_sizes = dim_sizes(example, axes)

    def random_case(label: str, batch: int | None, sizes: dict[str, int]) -> Case:
        shapes = _shaped(example, axes, batch, sizes)
        return Case(label, {n: _random_like(example[n], shapes[n], rng) for n in example})

    if batched:
        for b in batch_sizes or sorted({1, max_batch_size}):
            cases.append(random_case(f"random batch={b}", b, base_sizes))
    else:
        cases.append(random_case("random", None, base_sizes))
    steps = {d: (lengths or {}).get(d) or default_lengths(s) for d, s in base_sizes.items()}
    for i in range(max((len(v) for v in steps.values()), default=0)):
        sizes = {d: v[min(i, len(v) - 1)] for d, v in steps.items()}
        batch = min(2, max_batch_size) if batched else None
        label = "random " + " ".join(f"{d}={s}" for d, s in sizes.items()) + (f" batch={batch}" if batched else "")
        cases.append(random_case(label, batch, sizes))
    return cases
