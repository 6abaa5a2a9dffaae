"""The parity corpus's judge: what the real Triton 2.51 and `tritonkit validate` say about each case.

Each folder of `cases/` is a tiny model repository plus `case.yaml` (`model` to load, the verdict `triton:
load | reject` recorded from the real server, and for rejections `reason`, a substring of Triton's error).
Model names are unique across the corpus, so ONE embedded Triton (explicit model control, auto-complete off,
as tritonkit runs it) serves a repository holding every case's models and loads each case's model through the
repository API. That takes about a minute here, where a server per case would take several.

    python -m tests.validate.parity.triton_verdicts --record    # rewrite triton:/reason: from the real server
    python -m tests.validate.parity.triton_verdicts --compare   # tritonkit validate vs the recorded verdicts
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from tritonkit.errors import TritonkitError
from tritonkit.serve import health, process
from tritonkit.serve.ports import choose_ports
from tritonkit.serve.runtime import prepare_runtime
from tritonkit.validate.repository_check import validate_repository

CASES = Path(__file__).resolve().parent / "cases"
HOST = "127.0.0.1"
#: A load that takes longer is a hang (a Python model loads in about a second here).
LOAD_TIMEOUT_S = 60
#: What the Python backend logs when a stub cannot start, e.g. for a missing model file. Triton 2.51 then
#: never answers that load (measured: still pending after 200 s), so the log line is the verdict.
STUB_FAILED = re.compile(r"Failed to preinitialize Python stub: (.*)")
#: A config Triton cannot accept fails while polling the repository; the load answer then only says
#: "failed to poll from model repository" and the reason is in the log.
POLL_FAILED = re.compile(r"(?:Poll failed for model directory|failed to poll model) '([^']*)': (.*?)\"?$", re.M)


@dataclass(frozen=True)
class Case:
    """One corpus case: its repository folder and what `case.yaml` records."""

    name: str
    path: Path
    model: str
    triton: str
    reason: str
    source: str

    def model_dirs(self) -> list[Path]:
        return sorted(p for p in self.path.iterdir() if p.is_dir() and not p.name.startswith((".", "__")))


@dataclass(frozen=True)
class Verdict:
    """`load` or `reject`, with the error text (empty for a load)."""

    verdict: str
    error: str = ""


def load_cases(root: Path = CASES) -> list[Case]:
    """Every case under `root`, sorted by name."""
    cases = []
    for path in sorted(p for p in root.iterdir() if (p / "case.yaml").is_file()):
        data = yaml.safe_load((path / "case.yaml").read_text(encoding="utf-8"))
        cases.append(Case(path.name, path, data["model"], data["triton"], data.get("reason", ""),
                          data.get("source", "")))
    return cases


# -- the real server ---------------------------------------------------------------------------------
def _post(url: str, body: dict, timeout: float) -> tuple[int, str]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    try:
        with health.LOCAL_OPENER.open(req, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def stage(cases: list[Case], repository: Path) -> None:
    """Copies every case's model folders into one repository; a name two cases share is a corpus bug."""
    owner: dict[str, str] = {}
    for case in cases:
        for model_dir in case.model_dirs():
            if model_dir.name in owner:
                raise ValueError(f"model folder '{model_dir.name}' is in cases {owner[model_dir.name]} and {case.name}")
            owner[model_dir.name] = case.name
            shutil.copytree(model_dir, repository / model_dir.name)


@contextmanager
def explicit_server(repository: Path, log_path: Path) -> Iterator[str]:
    """tritonserver on `repository` with explicit model control and auto-complete off; yields its HTTP address.

    Not `EmbeddedServer`: that one serves a rewritten copy (ONNX fallbacks) and waits for every model to
    load, while the corpus must reach Triton exactly as written and load one model at a time.
    """
    runtime = prepare_runtime()
    ports = choose_ports(HOST, {"http": None, "grpc": None, "metrics": None})
    cmd = [str(runtime.tritonserver), f"--model-repository={repository}", f"--backend-directory={runtime.backends}",
           f"--cache-directory={runtime.caches}", "--model-control-mode=explicit", "--disable-auto-complete-config",
           "--exit-timeout-secs=5"]
    for endpoint, port in ports.items():
        cmd += [f"--{endpoint}-address={HOST}", f"--{endpoint}-port={port}"]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=runtime.env,
                                start_new_session=True, preexec_fn=process.die_with_parent)
    try:
        url = f"{HOST}:{ports['http']}"
        deadline = time.monotonic() + 60
        while not health.is_live(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"tritonserver did not start; see {log_path}")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate(proc.pid, pgid=proc.pid, proc=proc, timeout=10)


def _error_text(body: str, repository: Path) -> str:
    try:
        error = json.loads(body)["error"]
    except (ValueError, KeyError):
        error = body
    return error.replace(f"{repository}/", "").replace(str(repository), "")


def _log_since(log: Path, offset: int) -> str:
    with open(log, "rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


def _stub_failure(log: Path, offset: int, model: str) -> str | None:
    """The Python backend's message if `model`'s stub failed to start since `offset` of the log."""
    text = _log_since(log, offset)
    for match in STUB_FAILED.finditer(text):
        if f"/{model}/" in match.group(1):
            return match.group(1).strip()
    return None


def load_verdict(url: str, model: str, repository: Path, log: Path) -> Verdict:
    """Loads `model` through the repository API, then unloads it (and what it pulled in) to free its stubs."""
    answer: list[tuple[int, str]] = []
    offset = log.stat().st_size
    def load() -> None:
        try:
            answer.append(_post(f"http://{url}/v2/repository/models/{model}/load", {}, timeout=LOAD_TIMEOUT_S))
        except OSError:  # the server stopped under a load that never returns (see STUB_FAILED)
            pass

    loader = threading.Thread(target=load, daemon=True)
    loader.start()
    while loader.is_alive():
        stub_error = _stub_failure(log, offset, model)
        if stub_error:  # the load never returns; leave it pending
            return Verdict("reject", stub_error.replace(f"{repository}/", ""))
        loader.join(0.1)
    if not answer:  # timed out or the connection broke
        raise TimeoutError(f"no answer to the load of {model} within {LOAD_TIMEOUT_S} s")
    status, body = answer[0]
    _post(f"http://{url}/v2/repository/models/{model}/unload", {"parameters": {"unload_dependents": True}},
          timeout=LOAD_TIMEOUT_S)
    if status == 200:
        return Verdict("load")
    error = _error_text(body, repository)
    polled = POLL_FAILED.search(_log_since(log, offset)) if "failed to poll" in error else None
    return Verdict("reject", f"{error}: model '{polled.group(1)}': {polled.group(2)}" if polled else error)


def triton_verdicts(cases: list[Case], progress: Callable[[Case, Verdict], None] | None = None) -> dict[str, Verdict]:
    """The real server's verdict on each case, from one server over all of them."""
    verdicts = {}
    with tempfile.TemporaryDirectory(prefix="tritonkit-parity-") as tmp:
        repository, log = Path(tmp, "repository"), Path(tmp, "tritonserver.log")
        repository.mkdir()
        stage(cases, repository)
        pending, crashed = list(cases), set()
        while pending:
            with explicit_server(repository, log) as url:
                while pending:
                    case = pending[0]
                    try:
                        verdicts[case.name] = verdict = load_verdict(url, case.model, repository, log)
                    except TimeoutError:
                        tail = log.read_text(errors="replace").splitlines()[-5:]
                        if health.is_live(url) or case.name in crashed:
                            raise RuntimeError(f"case {case.name}: Triton did not answer the load; log tail: "
                                               f"{tail}") from None
                        # Triton 2.51 itself crashed (seen once in CI after ~100 load/unload cycles, the case loads
                        # on a fresh server): start a new one and ask again, once.
                        crashed.add(case.name)
                        print(f"tritonserver crashed while loading {case.name}; restarting it and retrying once")
                        break
                    pending.pop(0)
                    if progress:
                        progress(case, verdict)
    return verdicts


def reason_of(error: str) -> str:
    """The distinctive part of a Triton load error: its innermost message, without the model-name boilerplate."""
    message = error.strip().splitlines()[0].strip().rstrip(";")
    message = re.sub(r"^.*?(?:failed to poll from model repository: model '[^']*': |UNAVAILABLE state: )", "", message)
    message = re.sub(r"^(?:Invalid argument|Internal|Not found|Unsupported|Unavailable|Unknown): ", "", message)
    message = re.sub(r"^load failed for model '[^']*': ", "", message)
    message = re.split(r"\s'?/\S*|\. (?=[A-Z])", message)[0]  # no machine paths, GPU lists or advice
    return re.sub(r" for (?:model )?'?[\w.-]+'?\.?$", "", message)


# -- tritonkit validate ------------------------------------------------------------------------------
def validate_verdict(case: Case) -> Verdict:
    """`validate_repository` on the case's folder: reject when it raises (warnings are not a reject)."""
    try:
        validate_repository(case.path)
    except TritonkitError as err:
        return Verdict("reject", " | ".join(err.lines()))
    return Verdict("load")


def compare(cases: list[Case]) -> dict[str, list[tuple[Case, Verdict]]]:
    """Cases grouped as agree / missed rejection / false alarm, with tritonkit's verdict."""
    groups: dict[str, list[tuple[Case, Verdict]]] = {"agree": [], "missed": [], "false alarm": []}
    for case in cases:
        ours = validate_verdict(case)
        key = "agree" if ours.verdict == case.triton else "missed" if case.triton == "reject" else "false alarm"
        groups[key].append((case, ours))
    return groups


def summary(groups: dict[str, list[tuple[Case, Verdict]]]) -> str:
    """`agree N/M, missed K, false alarms F` and, under it, each disagreeing case with both sides' words."""
    total = sum(len(g) for g in groups.values())
    lines = [f"agree {len(groups['agree'])}/{total}, missed {len(groups['missed'])}, "
             f"false alarms {len(groups['false alarm'])}"]
    for case, _ in groups["missed"]:
        lines.append(f"  missed      {case.name}: Triton: {case.reason}")
    for case, ours in groups["false alarm"]:
        lines.append(f"  false alarm {case.name}: tritonkit: {ours.error}")
    return "\n".join(lines)


def record(cases: list[Case]) -> None:
    """Rewrites each case.yaml's `triton:` and `reason:` from the real server, keeping its other fields."""
    verdicts = triton_verdicts(cases, lambda case, v: print(f"{case.name}: {v.verdict} {v.error}", flush=True))
    for case in cases:
        path = case.path / "case.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        verdict = verdicts[case.name]
        data["triton"] = verdict.verdict
        data.pop("reason", None)
        if verdict.verdict == "reject":
            data["reason"] = reason_of(verdict.error)
        ordered = {k: data[k] for k in ("model", "triton", "reason") if k in data} | data
        path.write_text(yaml.safe_dump(ordered, sort_keys=False, width=200), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Parity corpus: record verdicts from the real Triton, or compare tritonkit validate with them.",
        epilog="example: python -m tests.validate.parity.triton_verdicts --compare")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", action="store_true", help="run the real Triton and rewrite triton:/reason:")
    mode.add_argument("--compare", action="store_true", help="run tritonkit validate and print the agreement")
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    args = parser.parse_args(argv)
    cases = [c for c in load_cases() if not args.cases or c.name in args.cases]
    if args.record:
        record(cases)
        return 0
    groups = compare(cases)
    print(summary(groups))
    return 0 if not groups["missed"] and not groups["false alarm"] else 1


if __name__ == "__main__":
    sys.exit(main())
