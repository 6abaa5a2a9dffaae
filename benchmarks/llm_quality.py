"""What each weight format keeps of SmolLM2's answers, and what it gives in decode speed: the example's default
quantization beside float and the other candidates `export.quantize` can express, in process.

Usage: python benchmarks/llm_quality.py [--rounds 5] [--variants int8,int4_head8,...] [--gate 0.02]

The example project (examples/llm/smollm2) is built with `quantize: none` (benchmarks/llm_weights.py's float graph,
cached), then quantized as `tritonkit build` does (export/onnx2nbits.py) once per variant: the example's own
`quantize` settings ("default") and each of VARIANTS that differs from them. Every variant is measured as the
build measures it (export/quality.py, export/chat_quality.py), against the float graph:
- the chat task set's accuracy (export/chat_tasks.jsonl: each chat with a system prompt, in the model's chat
  format, greedy replies scored by their answer) and greedy agreement on those chats' prompts (teacher forced);
- greedy agreement on the plain-text prompts (teacher forced) and perplexity on the shipped text;
- decode tokens/s through the engine generate runs (runtime/engine.py, generate's parameters: the same intra-op
  threads for every variant): 1 and 8 prompts admitted at once, 32 greedy tokens each (benchmarks/llm.py's
  prompts and in-process batched run); rounds alternate the variants (each first in turn), medians;
- whether greedy text depends on the prompt alone: the task set's first chats run alone, 8 at once, chunked, in
  flight and from a warm prefix cache (export/invariance.py), the fraction whose text is the same every way.
The gate: a variant passes when its task accuracy is within --gate (a fraction: 0.02 = 2 points) of float's; the
recommendation is the passing variant fastest over the default, round by round (the mean of c=1 and c=8), and among
those within 5% of it (a tie on a shared machine) the one that loses the fewest answers.
Prints a table, then one JSON line: {"cpu", "intra_op_threads", "rounds", "default", "gate", "passing",
"recommended", "task_accuracy_default_over_float", "greedy_invariant_fraction" (the default's), and per variant
"<name>_task_accuracy",
"<name>_task_accuracy_drop", "<name>_task_accuracy_drop_stderr", "<name>_chat_greedy_agreement",
"<name>_greedy_agreement", "<name>_perplexity_ratio", "<name>_c1_tok_s", "<name>_c8_tok_s",
"<name>_c1_over_default", "<name>_c8_over_default", "<name>_greedy_invariant_fraction", "<name>_mib"}.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

from tritonkit.pipelines import registry  # noqa: E402

registry.install()   # the shipped pipelines, as `tritonkit build` runs with them

FOLDER = REPO_ROOT / ".tritonkit" / "bench" / "llm_quality"
#: Candidates besides the example's own settings (`export.quantize` fields; the rest at their defaults).
VARIANTS: dict[str, dict[str, Any]] = {
    "int8": {"weights": "int8"},
    "int4_rescore64": {"weights": "int4", "head_rescore_top_k": 64},
    "int4_head8": {"weights": "int4", "head_rescore_top_k": 0},
    "int4_embed_f32": {"weights": "int4", "embedding": "float32"},
    "int4_b16_rescore64": {"weights": "int4", "block_size": 16, "head_rescore_top_k": 64},
    "int4_b16_asym_rescore64": {"weights": "int4", "block_size": 16, "symmetric": False, "head_rescore_top_k": 64},
}
LEVELS, TOKENS = (1, 8), 32
#: A variant's measures by name ({"task_accuracy": ...}); float's too, under "float".
Measured = dict[str, dict[str, Any]]


def cpu_model() -> str:
    """lscpu's "Model name"."""
    out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "?")


def example_quantize() -> Any:
    """The example's `export.quantize` as a QuantizeSpec, without its bounds (`lm`) and tolerance."""
    from examples.llm.project import RECIPES
    from tritonkit.spec.export import QuantizeSpec

    quantize = yaml.safe_load(RECIPES["smollm2"][0].read_text())["models"]["generate"]["export"]["quantize"]
    return QuantizeSpec.model_validate({k: v for k, v in quantize.items() if k not in ("lm", "tolerance")})


def variant_specs(names: list[str]) -> dict[str, Any]:
    """"default" (the example's settings) and each named variant whose settings differ from them."""
    from tritonkit.spec.export import QuantizeSpec

    default = example_quantize()
    specs = {"default": default}
    for name in names:
        spec = QuantizeSpec.model_validate(VARIANTS[name])
        if spec.model_dump(exclude={"lm", "tolerance"}) != default.model_dump(exclude={"lm", "tolerance"}):
            specs[name] = spec
    return specs


def variant_folder(source: Path, name: str, spec: Any) -> Path:
    """A folder generate could serve: `source`'s decoder quantized as the build does with `spec`, beside the
    float build's tokenizer.json and generation.json."""
    from tritonkit.export.onnx2nbits import quantize_graph

    folder = FOLDER / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for asset in ("tokenizer.json", "generation.json"):
        shutil.copy2(source.parent / asset, folder / asset)
    quantize_graph(source, folder / "model.onnx", spec.bits, spec.block_size, spec.symmetric, spec.embedding_bits,
                   always_external=True, head_rescore_top_k=spec.head_rescore_top_k)
    return folder


def answers(folders: dict[str, Path], args: argparse.Namespace) -> Measured:
    """Task accuracy, chat and plain-text greedy agreement and perplexity of each folder's decoder against the
    float graph's (in folders["float"])."""
    from tritonkit.pipelines.llm.export.chat_quality import ChatReference
    from tritonkit.pipelines.llm.export.quality import Reference
    from tritonkit.pipelines.llm.runtime.assets import GenerationConfig

    source = folders["float"] / "model.onnx"
    tokenizer = folders["float"] / "tokenizer.json"
    print("measuring the float graph's answers and perplexity", file=sys.stderr)
    chat = ChatReference(source, tokenizer, GenerationConfig.load(folders["float"]))
    text = Reference(source, tokenizer)
    float_accuracy = chat.float.accuracy(chat.tasks)
    measured = {"float": {"task_accuracy": float_accuracy, "task_accuracy_drop": 0.0,
                          "task_accuracy_drop_stderr": 0.0, "chat_greedy_agreement": 1.0,
                          "greedy_agreement": 1.0, "perplexity_ratio": 1.0, "perplexity": text.perplexity,
                          "changed": "the reference"}}
    for name, folder in folders.items():
        if name == "float":
            continue
        print(f"measuring {name}'s answers and perplexity", file=sys.stderr)
        c, t = chat.against(folder / "model.onnx"), text.against(folder / "model.onnx")
        measured[name] = {"task_accuracy": c["task_accuracy_quantized"], "task_accuracy_drop": c["task_accuracy_drop"],
                          "task_accuracy_drop_stderr": c["task_accuracy_drop_stderr"],
                          "chat_greedy_agreement": c["chat_greedy_agreement"],
                          "greedy_agreement": t["greedy_agreement_quantized_vs_float"],
                          "perplexity_ratio": t["perplexity_quantized_over_float"],
                          "perplexity": t["perplexity_quantized"],
                          "changed": f"{c['chat_replies_changed']} replies, {c['tasks_right_float_only']} right only "
                                     f"in float, {c['tasks_right_quantized_only']} only here"}
    return measured


def decode_speed(folders: dict[str, Path], args: argparse.Namespace) -> Measured:
    """Tokens/s of each folder's decoder in generate's engine (generate's parameters), at each of LEVELS, and over
    the default's in the same round (the median of those ratios: a shared machine's load, which moves every
    variant's tokens/s from round to round, cancels out of it)."""
    from llm import PROMPTS, inprocess_batched_run

    from tritonkit.pipelines.llm.runtime.loading import load_engine

    engines = {name: load_engine(folder, args.params) for name, folder in folders.items()}
    for loaded in engines.values():
        inprocess_batched_run(loaded, PROMPTS[:2], 4)   # warm-up
    runs: dict[str, dict[int, list[float]]] = {name: {c: [] for c in LEVELS} for name in engines}
    names = list(engines)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            for c in LEVELS:
                runs[name][c].append(inprocess_batched_run(engines[name], PROMPTS[:c], TOKENS).summary()["tok_s"])
    return {name: {f"c{c}_tok_s": statistics.median(v) for c, v in by_level.items()}
            | {f"c{c}_over_default": statistics.median(a / b for a, b in zip(v, runs["default"][c]))
               for c, v in by_level.items()} for name, by_level in runs.items()}


def invariance(folders: dict[str, Path], args: argparse.Namespace) -> Measured:
    """The fraction of INVARIANCE_CHATS chats (the task set's first, in the chat format) whose greedy text is the
    same alone, 8 at once (either row order), prefilled in chunks, admitted while others decode, and from a warm
    prefix cache (export/invariance.py), for each folder's decoder."""
    from tritonkit.pipelines.llm.export import invariance as ways
    from tritonkit.pipelines.llm.export.chat_tasks import load_tasks
    from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
    from tritonkit.pipelines.llm.runtime.chat import format_chat
    from tritonkit.pipelines.llm.runtime.text import TextCodec

    measured: Measured = {}
    for name, folder in folders.items():
        print(f"measuring {name}'s greedy text every way the engine runs it", file=sys.stderr)
        codec, chat = TextCodec(folder / "tokenizer.json"), GenerationConfig.load(folder).chat
        prompts = [codec.encode(format_chat(chat, t.messages)) for t in load_tasks()[:INVARIANCE_CHATS]]
        measured[name] = {"greedy_invariant_fraction": ways.measure(folder, prompts, max_tokens=TOKENS).fraction}
    return measured


#: Chats the invariance measure runs every way.
INVARIANCE_CHATS = 16
#: Each measure takes the variants' folders and the arguments and returns its values by variant name.
MEASURES: tuple[Callable[[dict[str, Path], argparse.Namespace], Measured], ...] = (answers, decode_speed, invariance)


#: Speeds closer than this share are a tie (a shared 2-core machine's run-to-run spread).
SPEED_TIE = 0.05


def recommend(passing: list[str], measured: Measured) -> str | None:
    """Of the variants that pass the gate, the fastest (the mean of c=1 and c=8 over the default's); among those
    within SPEED_TIE of it, the one that loses the fewest answers."""
    if not passing:
        return None
    speed = {n: (measured[n]["c1_over_default"] + measured[n]["c8_over_default"]) / 2 for n in passing}
    fastest = max(speed.values())
    return min((n for n in passing if speed[n] >= fastest * (1 - SPEED_TIE)),
               key=lambda n: measured[n]["task_accuracy_drop"])


def main(argv: list[str] | None = None) -> int:
    from llm import generate_parameters

    from benchmarks.llm_weights import float_graph
    from benchmarks.report import print_report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"of {', '.join(VARIANTS)}")
    parser.add_argument("--gate", type=float, default=0.02, help="largest task accuracy drop that passes")
    args = parser.parse_args(argv)
    unknown = [n for n in args.variants.split(",") if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant {unknown[0]!r}; choose from {', '.join(VARIANTS)}")
    source = float_graph()
    args.params = generate_parameters(source.parents[2])   # the built example's generate
    intra_op = int(args.params.get("intra_op_thread_count") or 0)
    specs = variant_specs(args.variants.split(","))
    folders = {"float": source.parent} | {name: variant_folder(source, name, spec) for name, spec in specs.items()}
    measured: Measured = {name: {} for name in folders}
    for measure in MEASURES:
        for name, values in measure(folders, args).items():
            measured[name] |= values
    for name, folder in folders.items():
        measured[name]["mib"] = sum(p.stat().st_size for p in folder.glob("model.onnx*")) / 2**20
    float_accuracy = measured["float"]["task_accuracy"]
    passing = [n for n in specs if measured[n]["task_accuracy_drop"] <= args.gate + 1e-9]
    recommended = recommend(passing, measured)
    rows = []
    for name, m in measured.items():
        settings = "float32" if name == "float" else ", ".join(
            f"{k} {v}" for k, v in specs[name].model_dump(exclude={"lm", "tolerance"}).items())
        rows.append((name, f"{m['task_accuracy']:.3f}",
                     f"drop {m['task_accuracy_drop']:+.3f} (standard error {m['task_accuracy_drop_stderr']:.3f}; "
                     f"{m['changed']}); chat agreement "
                     f"{m['chat_greedy_agreement']:.3f}, text agreement {m['greedy_agreement']:.3f}, perplexity "
                     f"{m['perplexity']:.2f} (x{m['perplexity_ratio']:.3f}); tok/s c=1 {m['c1_tok_s']:.1f} "
                     f"(x{m['c1_over_default']:.3f} the default's), c=8 {m['c8_tok_s']:.1f} "
                     f"(x{m['c8_over_default']:.3f}); greedy text the same every way for "
                     f"{m['greedy_invariant_fraction']:.0%} of {INVARIANCE_CHATS} chats; {m['mib']:.0f} MiB; "
                     f"{settings}"))
    cpu = cpu_model()
    rows.append(("cpu", cpu, f"generate's intra_op_thread_count {intra_op or 'default (one per core)'}; "
                 f"{args.rounds} rounds; gate: drop <= {args.gate}"))
    summary: dict[str, Any] = {"cpu": cpu, "intra_op_threads": intra_op, "rounds": args.rounds,
                               "default": {k: v for k, v in specs["default"].model_dump(
                                   exclude={"lm", "tolerance"}).items()},
                               "gate": args.gate, "passing": passing, "recommended": recommended,
                               "task_accuracy_default_over_float": round(
                                   measured["default"]["task_accuracy"] / float_accuracy, 4),
                               "greedy_invariant_fraction": measured["default"]["greedy_invariant_fraction"]}
    for name, m in measured.items():
        summary |= {f"{name}_{key}": round(m[key], 4) for key in (
            "task_accuracy", "task_accuracy_drop", "task_accuracy_drop_stderr", "chat_greedy_agreement",
            "greedy_agreement", "perplexity_ratio", "c1_tok_s", "c8_tok_s", "c1_over_default", "c8_over_default",
            "greedy_invariant_fraction", "mib")}
    print_report(rows, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
