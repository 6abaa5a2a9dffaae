"""The peers of benchmarks/llm_peers.py and benchmarks/llm_runtimes.py, set up once: their virtualenvs, llama.cpp's
own programs and onnxruntime-genai's int4 model.

The peers' packages live in their own virtualenv (`.tritonkit/peers/venv`, ignored by git) so nothing of them
reaches the project's: pip builds llama-cpp-python from source with cmake (~15-25 min on 2 busy cores, once).
onnxruntime-genai's model builder needs torch and transformers, which the project's .venv has: it runs with
the peers' python and the project's site-packages appended to its path (the peers' onnxruntime wins). Its input
is SmolLM2 as transformers loads it from the project's GGUF file (the weights tritonkit exports, dequantized),
saved as a Hugging Face folder; nothing is downloaded for it. llama.cpp's `llama-server` builds from the llama.cpp
that llama-cpp-python's source distribution vendors (the same version as the Python server), native CPU flags.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PEERS = REPO_ROOT / ".tritonkit" / "peers"
VENV = PEERS / "venv"
PYTHON = VENV / "bin" / "python"
PACKAGES = ["llama-cpp-python[server]==0.3.16", "onnxruntime-genai==0.18.0"]
ORT_GENAI_MODEL = PEERS / "ort-genai-smollm2-int4"
THREADS = 2
RUNTIMES_VENV = PEERS / "runtimes-venv"
RUNTIMES_OPENVINO = "openvino==2026.4.1"
LLAMA_CPP_PYTHON = "llama-cpp-python==0.3.16"
LLAMA_SERVER_BUILD = PEERS / "llama-server"  # every llama.cpp program built here


def log(message: str) -> None:
    print(f"[llm_peers] {message}", file=sys.stderr, flush=True)


def run(command: list[str], what: str, env: dict[str, str] | None = None) -> None:
    """Runs a setup step under nice, its output in .tritonkit/peers/<what>.log; exits naming the log if it fails."""
    PEERS.mkdir(parents=True, exist_ok=True)
    path = PEERS / f"{what}.log"
    with path.open("w") as out:
        code = subprocess.call(["nice", "-n", "15", *command], stdout=out, stderr=subprocess.STDOUT,
                               env=env or os.environ.copy())
    if code:
        sys.exit(f"llm_peers: {what} failed (exit {code}); see {path}")


def peers_ready() -> bool:
    if not PYTHON.is_file():
        return False
    probe = "import llama_cpp.server, onnxruntime_genai"
    return subprocess.call([str(PYTHON), "-c", probe], stderr=subprocess.DEVNULL) == 0


def setup_venv() -> None:
    """The peers' virtualenv with llama-cpp-python's server and onnxruntime-genai (skipped when importable)."""
    if peers_ready():
        return
    log(f"installing {', '.join(PACKAGES)} into {VENV} (llama.cpp builds from source: many minutes)")
    if not PYTHON.is_file():
        run([sys.executable, "-m", "venv", str(VENV)], "venv")
    # ggml's own thread pool, not OpenMP: llama-cpp-python's server built with OpenMP decoded SmolLM2 at 20 tokens/s
    # on a 2-core AVX-512 machine where its in-process API ran 190-225 and the same server without OpenMP 155-164
    env = os.environ | {"CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2), "CMAKE_ARGS": "-DGGML_OPENMP=OFF"}
    # --no-cache-dir: pip's wheel cache is keyed by the source, not CMAKE_ARGS, and gave a wheel built before with
    # OpenMP (22.8 tokens/s where this build decodes ~180)
    run([str(PYTHON), "-m", "pip", "install", "--no-cache-dir", *PACKAGES], "install", env)


def llama_tool(target: str) -> Path:
    """One of llama.cpp's programs (`llama-server`, `llama-batched-bench`) built from the llama.cpp that
    llama-cpp-python's source distribution vendors: Release, native CPU flags, ggml's thread pool. Built once; the
    programs share one build folder: the first takes ~15 min on 2 busy cores, a second one a minute."""
    binary = LLAMA_SERVER_BUILD / "bin" / target
    if binary.is_file():
        return binary
    source = llama_cpp_source()
    log(f"building llama.cpp's {target} from {LLAMA_CPP_PYTHON}'s source distribution into {LLAMA_SERVER_BUILD}")
    # OpenMP off for the reason setup_venv gives; curl off: the model is a local file
    run(["cmake", "-S", str(source), "-B", str(LLAMA_SERVER_BUILD), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
         "-DGGML_NATIVE=ON", "-DGGML_OPENMP=OFF", "-DLLAMA_CURL=OFF", "-DBUILD_SHARED_LIBS=OFF"],
        f"{target}-configure")
    run(["cmake", "--build", str(LLAMA_SERVER_BUILD), "--target", target, "-j", str(os.cpu_count() or 2)],
        f"{target}-build")
    return binary


def llama_cpp_source() -> Path:
    """The llama.cpp source folder of llama-cpp-python's source distribution (downloaded and unpacked once)."""
    sdist = PEERS / "sdist"
    if not list(sdist.glob("llama_cpp_python-*.tar.gz")):
        run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "-d", str(sdist),
             LLAMA_CPP_PYTHON], "llama-cpp-download")
    [archive] = sdist.glob("llama_cpp_python-*.tar.gz")
    source = sdist / archive.name.removesuffix(".tar.gz") / "vendor" / "llama.cpp"
    if not source.is_dir():
        with tarfile.open(archive) as tar:
            tar.extractall(sdist, filter="data")
    return source


def runtimes_python() -> Path:
    """The python of `.tritonkit/peers/runtimes-venv`: OpenVINO beside the onnxruntime and onnx versions the
    project runs, for benchmarks/llm_runtimes.py's kernels (installed once)."""
    from importlib.metadata import version

    python = RUNTIMES_VENV / "bin" / "python"
    packages = [RUNTIMES_OPENVINO, f"onnxruntime=={version('onnxruntime')}", f"onnx=={version('onnx')}", "numpy"]
    probe = "import openvino, onnxruntime, onnx; print(onnxruntime.__version__)"
    ready = python.is_file() and subprocess.run([str(python), "-c", probe], capture_output=True, text=True,
                                                check=False).stdout.strip() == version("onnxruntime")
    if not ready:
        log(f"installing {', '.join(packages)} into {RUNTIMES_VENV}")
        if not python.is_file():
            run([sys.executable, "-m", "venv", str(RUNTIMES_VENV)], "runtimes-venv")
        run([str(python), "-m", "pip", "install", *packages], "runtimes-install")
    return python


def hf_folder(target: Path) -> Path:
    """SmolLM2 as a Hugging Face folder (float32 safetensors, config, tokenizer), from the project's GGUF."""
    from tritonkit.pipelines.llm.export.smollm2 import load_hf_model, load_hf_tokenizer

    if not (target / "config.json").is_file():
        log(f"saving SmolLM2 (dequantized from the GGUF file) to {target}")
        model = load_hf_model()
        model.hf_quantizer = None  # loaded from GGUF: its weights are plain float32 tensors now
        model.config.__dict__.pop("quantization_config", None)
        model.save_pretrained(target)
        load_hf_tokenizer().save_pretrained(target)
    return target


def ort_genai_model() -> Path:
    """onnxruntime-genai's int4 (MatMulNBits) CPU model of SmolLM2, `THREADS` intra-op threads (built once)."""
    config = ORT_GENAI_MODEL / "genai_config.json"
    if not config.is_file():
        source = hf_folder(PEERS / "smollm2-hf")
        log(f"building onnxruntime-genai's int4 model into {ORT_GENAI_MODEL}")
        site = sysconfig.get_paths()["purelib"]  # torch and transformers of the project's .venv
        builder = ("import runpy, sys; sys.path.append(sys.argv.pop(1)); "
                   "runpy.run_module('onnxruntime_genai.models.builder', run_name='__main__')")
        run([str(PYTHON), "-c", builder, site, "-m", str(source), "-i", str(source), "-o", str(ORT_GENAI_MODEL),
             "-p", "int4", "-e", "cpu", "-c", str(PEERS / "ort-genai-cache")], "ort-genai-build",
            os.environ | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    settings = json.loads(config.read_text())
    settings["model"]["decoder"].setdefault("session_options", {})["intra_op_num_threads"] = THREADS
    config.write_text(json.dumps(settings, indent=4))
    return ORT_GENAI_MODEL


if __name__ == "__main__":
    setup_venv()
    llama_tool("llama-server")
    print(ort_genai_model())
