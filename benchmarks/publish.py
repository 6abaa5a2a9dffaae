"""Publish benchmark: `tritonkit publish` of the example repository to a local S3 endpoint vs a plain upload,
and requests failed while a rollout swaps a model version under load.

Usage: python benchmarks/publish.py [--rounds 7] [--concurrency 8]
Part 1 builds the example project (tritonkit.yaml at the repository root) into a temporary folder and, in
alternating rounds, publishes it to a fresh prefix of a moto S3 server (its own process, like a real
endpoint) with `tritonkit.publish.publish` (listing, manifest read, sha256 of every file, configs after
their model's files, manifest last) and uploads the same files plainly: the same boto3 client settings and
number of parallel uploads, one PUT per file below the multipart threshold (what `aws s3 sync` does), with
and without the destination listing `aws s3 sync` starts with. All in-process (no Python start-up counted);
boto3 client creation is untimed on every side. Part 2 serves the classifier starter (`tritonkit init`) from s3:// on
the embedded Triton, publishes a changed preprocess model and runs `tritonkit rollout` while `--concurrency` clients
send requests to the ensemble without pause.
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

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tritonkit.publish.destination import MULTIPART_THRESHOLD, S3Destination  # noqa: E402
from tritonkit.publish.publish import publish  # noqa: E402
from tritonkit.serve.ports import choose_ports  # noqa: E402
from tritonkit.serve.server import EmbeddedServer  # noqa: E402

BUCKET = "bench"
JOBS = 8


def cli(*args: str, cwd: Path) -> str:
    result = subprocess.run([sys.executable, "-m", "tritonkit", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"tritonkit {args[0]} failed: {(result.stderr or result.stdout).strip().splitlines()[-1]}")
    return result.stdout


def model_files(repository: Path) -> list[Path]:
    """The files publish uploads: everything inside the model folders (not the repository's README)."""
    return [p for p in repository.rglob("*") if p.is_file() and len(p.relative_to(repository).parts) > 1]


def plain_upload(dest: S3Destination, repository: Path, listing: bool) -> None:
    """`aws s3 sync` without its checks: optionally the destination listing, then every file in parallel."""
    client = dest.client
    if listing:
        client.list_objects_v2(Bucket=BUCKET, Prefix=dest.prefix + "/")

    def put(path: Path) -> None:
        key = f"{dest.prefix}/{path.relative_to(repository).as_posix()}"
        if path.stat().st_size < MULTIPART_THRESHOLD:
            with open(path, "rb") as body:
                client.put_object(Bucket=BUCKET, Key=key, Body=body)
        else:
            client.upload_file(str(path), BUCKET, key)

    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        list(pool.map(put, model_files(repository)))


def upload_rounds(endpoint: str, repository: Path, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"publish": [], "plain": [], "sync": []}
    for k in range(rounds):  # alternating, so drift on a shared machine hits every side alike
        for side in times:
            # a fresh prefix and client each time; client creation (0.1-0.9 s in botocore) is not timed
            dest = S3Destination(BUCKET, f"{side}-{k}", endpoint)
            started = time.perf_counter()
            if side == "publish":
                publish(repository, dest, jobs=JOBS)
            else:
                plain_upload(dest, repository, listing=side == "sync")
            times[side].append(time.perf_counter() - started)
    return times


def start_moto() -> tuple[subprocess.Popen, str]:
    """moto's S3 server in its own process on a free loopback port, with the benchmark's bucket."""
    port = choose_ports("127.0.0.1", {"http": None})["http"]
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client("s3", endpoint_url=endpoint)
    deadline = time.monotonic() + 60
    while True:
        try:
            client.create_bucket(Bucket=BUCKET)
            return proc, endpoint
        except Exception:  # noqa: BLE001 - not up yet
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                sys.exit("moto server did not start")
            time.sleep(0.2)


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
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                       "AWS_DEFAULT_REGION": "us-east-1"})
    moto, endpoint = start_moto()
    try:
        with tempfile.TemporaryDirectory(prefix="tritonkit-bench-publish-") as tmp:
            work = Path(tmp)
            repository = work / "example_repository"
            cli("build", "-o", str(repository), "--compose", str(work / "docker-compose.yml"), cwd=REPO_ROOT)
            files = model_files(repository)
            size_kb = sum(p.stat().st_size for p in files) / 1e3
            times = upload_rounds(endpoint, repository, args.rounds)
            failed, answered, seconds = rollout_under_load(endpoint, work, args.concurrency)
    finally:
        moto.kill()
        moto.wait()
    median = {side: statistics.median(t) for side, t in times.items()}
    ratio = median["publish"] / median["plain"]
    print(f"example repository: {len(files)} files, {size_kb:.0f} kB; {args.rounds} alternating rounds, "
          f"{JOBS} parallel uploads, medians; load average {os.getloadavg()[0]:.1f}")
    print("| step | seconds | over plain |")
    print("|---|---|---|")
    print("| tritonkit publish (listing, manifest, sha256, configs after files, manifest last) | "
          f"{median['publish']:.3f} | {ratio:.2f}x |")
    print(f"| plain parallel upload of the same files | {median['plain']:.3f} | 1.00x |")
    print(f"| aws s3 sync-equivalent (listing, then the plain upload) | {median['sync']:.3f} | "
          f"{median['sync'] / median['plain']:.2f}x |")
    print(f"| rollout of classifier-starter preprocess v2, {args.concurrency} clients | {seconds:.2f} |")
    print(f"rollout under load: {answered} requests answered, {failed} failed")
    print(json.dumps({"publish_over_plain_upload": round(ratio, 2), "failed_requests_during_rollout": failed}))


if __name__ == "__main__":
    main()
