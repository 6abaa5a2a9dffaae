"""`tritonkit up` / `tritonkit down`: the generated compose file run by whichever compose engine exists."""
import subprocess
import time
from pathlib import Path

import click

from tritonkit.cli.output import emit_json, json_option, options, reports_errors
from tritonkit.containers import compose, failures
from tritonkit.containers.compose import Engine, Unhealthy
from tritonkit.errors import Problem, TritonkitError
from tritonkit.serve.state import STATE_DIR

_compose_options = options(
    click.option("-f", "--file", "files", multiple=True, type=click.Path(path_type=Path),
                 help="Compose file; repeat to add overrides, as with docker compose [default: docker-compose.yml]."),
    click.option("--engine", type=click.Choice([e.name for e in compose.ENGINES]),
                 help="Compose engine [default: the first that works, in the order listed]."),
    click.option("-p", "--project-name", "project", help="Compose project [default: the compose file's folder]."))


def _resolve(files: tuple[Path, ...], project: str | None) -> tuple[list[Path], str]:
    chosen = list(files) or [Path("docker-compose.yml")]
    for f in chosen:
        if not f.is_file():
            raise TritonkitError(str(f), "", "compose file not found", "run tritonkit build first, or pass -f FILE")
    return chosen, project or compose.project_name(chosen[0])


def _take_down(engine: Engine, files: list[Path], project: str) -> list[Problem]:
    """Runs the engine's `down`; the problem naming whatever of the project it left, if anything."""
    compose.down(engine, files, project)
    left = compose.leftovers(engine, project)
    problem = Problem(str(files[0]), "", f"down left {', '.join(left)}", f"remove them with {engine.runtime}")
    return [problem] if left else []


def _failed(engine: Engine, files: list[Path], project: str, problems: list[Problem], summary: str,
            fix: str = "read the container log named above") -> TritonkitError:
    """Tears the project down (nothing is left running) and returns the error naming what went wrong."""
    problems = problems or [Problem(str(files[0]), "", summary, fix)]
    return TritonkitError.of(problems + _take_down(engine, files, project))


def _engine_failed(engine: Engine, files: list[Path], project: str, summary: str) -> TritonkitError:
    """`_failed` when the engine itself failed (no container log exists): its own words are the summary."""
    return _failed(engine, files, project, [], summary, f"fix what {engine.name} says and run tritonkit up again "
                   "(an image it cannot pull: make its registry reachable, or pull or build the image first)")


@click.command("up")
@_compose_options
@click.option("--timeout", default=300.0, show_default=True, help="Seconds to wait for the healthchecks.")
@json_option
@reports_errors
def up_command(files: tuple[Path, ...], engine: str | None, project: str | None, timeout: float, as_json: bool) -> None:
    """Start the generated docker-compose.yml in the background and wait until its healthcheck passes.

    Uses `docker compose`, `docker-compose` or `podman-compose`, whichever works here. When the
    deployment does not become healthy (a mount source that does not exist, a taken port, a model that
    fails to load), it names the cause, keeps the container's log in .tritonkit/logs/compose/, and
    takes the deployment down again, so nothing is left running.

    \b
    Examples:
      tritonkit build && tritonkit up          # then: tritonkit smoke --url localhost:8000
      TRITON_ADMIN_KEY=secret tritonkit up -f docker-compose.yml -f local.override.yml --json
      tritonkit down
    """
    chosen, name = _resolve(files, project)
    missing = failures.missing_mounts(chosen)
    if missing:
        raise TritonkitError.of(missing)
    runner = compose.find_engine(engine)
    say = (lambda line: None) if as_json else (lambda line: click.echo(line, err=True))
    say(f"starting {name} with {runner.name}")
    started = time.monotonic()
    proc = subprocess.run(runner.compose(chosen, name, "up", "-d"), capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    engine_problems = failures.from_engine(chosen[0], output)
    if engine_problems:
        raise _failed(runner, chosen, name, engine_problems, "")
    if proc.returncode != 0:
        raise _engine_failed(runner, chosen, name, f"{runner.name} up failed: {failures.engine_error(output)}")
    try:
        running = compose.wait_healthy(runner, name, timeout, say)
    except Unhealthy as exc:
        if not exc.containers:   # the engine made none, so no container log exists: its own output says why
            raise _engine_failed(runner, chosen, name, f"{exc}; {runner.name} said: "
                                 f"{failures.engine_error(output)}") from None
        log_dir = Path.cwd() / STATE_DIR / "logs" / "compose"
        problems = []
        for container in exc.containers:
            log = compose.save_logs(runner, container, log_dir)
            say(f"log of {container.name}: {log}")
            problems += failures.from_triton_log(chosen[0], container.name, log)
        raise _failed(runner, chosen, name, problems, str(exc)) from None
    seconds = round(time.monotonic() - started, 1)
    if as_json:
        emit_json({"ok": True, "engine": runner.name, "project": name, "seconds": seconds,
                   "containers": [c.name for c in running]})
    else:
        click.echo(f"{name} is up and healthy with {runner.name} in {seconds} s "
                   f"({', '.join(c.name for c in running)}); stop it with: tritonkit down")


@click.command("down")
@_compose_options
@json_option
@reports_errors
def down_command(files: tuple[Path, ...], engine: str | None, project: str | None, as_json: bool) -> None:
    """Stop and remove what `tritonkit up` started: containers, the project's network and volumes.

    Runs the engine's `down`, then removes anything of the project it left behind (podman-compose 1.0
    keeps the network), and fails if something still remains.

    \b
    Examples:
      tritonkit down
      tritonkit down -f docker-compose.yml -f local.override.yml --json
    """
    chosen, name = _resolve(files, project)
    runner = compose.find_engine(engine)
    left = _take_down(runner, chosen, name)
    if left:
        raise TritonkitError.of(left)
    if as_json:
        emit_json({"ok": True, "engine": runner.name, "project": name})
    else:
        click.echo(f"{name} is down ({runner.name}): no container, network or volume left")
