"""`tritonkit publish`: a built repository to a folder or S3 as new model versions, staged and verified."""
import shlex
import time
from dataclasses import asdict
from pathlib import Path

import click

from tritonkit.cli.output import emit_json, json_option, reports_errors
from tritonkit.cli.paths import LocalFolder
from tritonkit.errors import TritonkitError
from tritonkit.publish.destination import S3Destination, open_destination, storage_errors, triton_url
from tritonkit.publish.publish import ProgressFn, publish, verify
from tritonkit.triton.server_args import BY_HAND, Launch, tritonserver_args


def _progress() -> ProgressFn:
    """A stderr line about once a second while files upload."""
    last = [0.0]

    def show(files: int, total: int, done_bytes: int, total_bytes: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 1.0 or files == total:
            last[0] = now
            click.echo(f"publishing: {files}/{total} files, {done_bytes / 1e6:.1f}/{total_bytes / 1e6:.1f} MB",
                       err=True)
    return show


@click.command("publish")
@click.argument("dest")
@click.option("-r", "--repository", default="model_repository", show_default=True, type=LocalFolder(),
              help="The built repository to publish.")
@click.option("--endpoint-url", help="S3-compatible endpoint (MinIO, a local moto server); credentials come from the "
              "standard AWS environment/profile/role chain and are never stored or printed.")
@click.option("--verify", "check", is_flag=True, help="Afterwards, re-read every published file and compare its "
              "sha256 (after the repairs).")
@click.option("--jobs", default=8, show_default=True, type=click.IntRange(1, 64), help="Parallel uploads.")
@json_option
@reports_errors
def publish_command(dest: str, repository: Path, endpoint_url: str | None, check: bool,
                    jobs: int, as_json: bool) -> None:
    """Publish the built repository to DEST (a folder or s3://bucket/prefix) as new model versions.

    Each changed model goes up as the next numeric version after the highest in DEST's manifest, never
    touching a version a server may be reading; unchanged models are skipped. A model new to DEST gets its
    config.pbtxt after its files; a model already live keeps its config.pbtxt (pinned to the live version) until
    `tritonkit rollout` has the new version serving. Every file's sha256 goes into the manifest
    `.tritonkit-publish.json`, written last: it marks the publish complete. An interrupted publish leaves
    the live versions as they were, and running the same command again finishes it in the same version
    numbers, skipping files already uploaded with the right hash. A bucket that does not exist is created (one
    line says so). Every object the manifest lists that is
    missing or differs from it (size, ETag, else sha256) is put back from this build, under the same key and
    version, and named.

    \b
    Example:
      tritonkit build && tritonkit publish s3://models/prod --verify
      tritonkit publish s3://models/prod --endpoint-url http://127.0.0.1:9000 --json   # MinIO
      tritonkit publish /mnt/shared/triton-repo
    """
    destination = open_destination(dest, endpoint_url)
    with storage_errors(destination.url):
        created = False
        if repository.is_dir() and isinstance(destination, S3Destination):   # nothing made for a missing build
            created = destination.create_bucket_if_missing()
            if created and not as_json:
                click.echo(f"created the bucket s3://{destination.bucket} (it did not exist)", err=True)
        outcome = publish(repository, destination, jobs=jobs, progress=None if as_json else _progress())
        bad = verify(destination) if check else []
    if bad:
        raise TritonkitError(destination.url, "", f"{len(bad)} published file(s) missing or "
                             f"different: {', '.join(bad[:5])}",
                             "publish again (files with the wrong hash are uploaded again)")
    outcome.verified = True if check else None
    if as_json:
        emit_json({"ok": True, **asdict(outcome), "created_bucket": created,
                   "triton_repository": triton_url(destination)})
    else:
        published = ", ".join(f"{m} v{','.join(map(str, v))}" for m, v in sorted(outcome.published.items()))
        unchanged = f"; unchanged: {', '.join(outcome.unchanged)}" if outcome.unchanged else ""
        click.echo(f"{outcome.destination}: published {published or 'nothing new'}; {outcome.uploaded} files uploaded, "
                   f"{outcome.skipped} already there{unchanged}")
        if outcome.repaired:
            click.echo(f"repaired {len(outcome.repaired)} object(s) that differed from the manifest (same versions): "
                       f"{', '.join(outcome.repaired)}")
        if check:
            click.echo("verified: every file in the manifest re-read with the right sha256")
        click.echo(f"serve it with: {shlex.join(tritonserver_args(BY_HAND, Launch(triton_url(destination), {})))}")
