"""Publish benchmark: `tritonkit publish` of the example repository to a local S3 endpoint vs a plain upload,
and requests failed while a rollout swaps a model version under load.

Usage: python benchmarks/publish.py [--rounds 7] [--concurrency 8]
Part 1 builds the example project (tritonkit.yaml at the repository root) into a temporary folder and, in
alternating rounds, publishes it to a fresh prefix of a moto S3 server with `tritonkit.publish.publish`
(listing, sha256 of every file, pending journal, manifest) and uploads the same files with boto3's
`upload_file` and the same number of parallel uploads (what `aws s3 sync` does). Both in-process, so Python
start-up is not counted. Part 2 serves the classifier starter (`tritonkit init`) from s3:// on the embedded
Triton, publishes a changed preprocess model and runs `tritonkit rollout` while `--concurrency` clients send
requests to the ensemble without pause.
Prints a table; the LAST line is {"publish_over_plain_upload": x, "failed_requests_during_rollout": n}.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import numpy as np
import tritonclient.http as httpclient
from moto.server import ThreadedMotoServer

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tritonkit.publish.destination import S3Destination  # noqa: E402
from tritonkit.publish.publish import publish  # noqa: E402
from tritonkit.serve.server import EmbeddedServer  # noqa: E402

BUCKET = "bench"
JOBS = 8


def cli(*args: str, cwd: Path) -> str:
    result = subprocess.run([sys.executable, "-m", "tritonkit", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"tritonkit {args[0]} failed: {(result.stderr or result.stdout).strip().splitlines()[-1]}")
    return result.stdout


def plain_upload(client: object, repository: Path, prefix: str) -> None:
    files = [p for p in repository.rglob("*") if p.is_file()]
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        list(pool.map(lambda p: client.upload_file(str(p), BUCKET, f"{prefix}/{p.relative_to(repository).as_posix()}"), files))  # type: ignore[attr-defined]


def upload_rounds(endpoint: str, repository: Path, rounds: int) -> tuple[list[float], list[float]]:
    client = boto3.client("s3", endpoint_url=endpoint)
    ours, plain = [], []
    for k in range(rounds):  # alternating, so drift on a shared machine hits both sides alike
        dest = S3Destination(BUCKET, f"publish-{k}", endpoint)  # client creation (0.1-0.9 s in botocore) not timed on either side
        started = time.perf_counter()
        publish(repository, dest, jobs=JOBS)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        plain_upload(client, repository, f"plain-{k}")
        plain.append(time.perf_counter() - started)
    return ours, plain


def rollout_under_load(endpoint: str, work: Path, concurrency: int) -> tuple[int, int, float]:
    """(failed requests, answered requests, rollout seconds) for one version swap of `preprocess`."""
    project = work / "classifier"
    cli("init", str(project), cwd=work)
    cli("build", cwd=project)
    dest = ["s3://" + BUCKET + "/rollout", "--endpoint-url", endpoint]
    cli("publish", *dest, cwd=project)
    host_port = endpoint.split("://", 1)[1]
    with EmbeddedServer(f"s3://{host_port}/{BUCKET}/rollout", work_dir=work / ".tritonkit") as server:
        code = project / "models" / "preprocess.py"
        code.write_text(code.read_text() + "\n# version 2: same answers, a new version to roll out\n")
        cli("build", cwd=project)
        cli("publish", *dest, cwd=project)
        answered, failed, stop = [0], [0], threading.Event()

        def send() -> None:
            client = httpclient.InferenceServerClient(server.http_url)
            raw = httpclient.InferInput("RAW", [1, 4], "FP32")
            raw.set_data_from_numpy(np.array([[5.1, 3.5, 1.4, 0.2]], np.float32))
            while not stop.is_set():
                try:
                    client.infer("classify", [raw])
                    answered[0] += 1
                except Exception:  # noqa: BLE001 - counted
                    failed[0] += 1
            client.close()

        threads = [threading.Thread(target=send) for _ in range(concurrency)]
        for t in threads:
            t.start()
        time.sleep(1.0)
        started = time.perf_counter()
        cli("rollout", *dest, "--server", server.http_url, cwd=project)
        seconds = time.perf_counter() - started
        time.sleep(1.0)
        stop.set()
        for t in threads:
            t.join()
    return failed[0], answered[0], seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"})
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=BUCKET)
    try:
        with tempfile.TemporaryDirectory(prefix="tritonkit-bench-publish-") as tmp:
            work = Path(tmp)
            repository = work / "example_repository"
            cli("build", "-o", str(repository), "--compose", str(work / "docker-compose.yml"), cwd=REPO_ROOT)
            files = [p for p in repository.rglob("*") if p.is_file()]
            size_kb = sum(p.stat().st_size for p in files) / 1e3
            ours, plain = upload_rounds(endpoint, repository, args.rounds)
            failed, answered, seconds = rollout_under_load(endpoint, work, args.concurrency)
    finally:
        moto.stop()
    ratio = statistics.median(ours) / statistics.median(plain)
    print(f"example repository: {len(files)} files, {size_kb:.0f} kB; "
          f"{args.rounds} alternating rounds, {JOBS} parallel uploads, medians")
    print("| step | seconds |")
    print("|---|---|")
    print(f"| tritonkit publish (list, sha256, journal, manifest) | {statistics.median(ours):.3f} |")
    print(f"| plain boto3 upload_file of the same files | {statistics.median(plain):.3f} |")
    print(f"| rollout of classifier-starter preprocess v2, {args.concurrency} clients | {seconds:.2f} |")
    print(f"rollout under load: {answered} requests answered, {failed} failed")
    print(json.dumps({"publish_over_plain_upload": round(ratio, 2), "failed_requests_during_rollout": failed}))


if __name__ == "__main__":
    main()
