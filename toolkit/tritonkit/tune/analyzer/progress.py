"""Turns Model Analyzer's log lines into short progress messages: stage, configuration, concurrency, count.

Model Analyzer prints one line per step ("Creating model config: m_config_3", "Profiling m_config_3:
concurrency=8", "Saved checkpoint ..."); the user wants to know where the run is, not every line.
"""
import re
from dataclasses import dataclass, field

_PREFIX = re.compile(r"^\[Model Analyzer\]\s?")
_CREATING = re.compile(r"(?:Creating|Found existing) (?:ensemble )?model config: (\S+)")
_SETTING = re.compile(r"^\s+Setting (\w+) to (.*)$")
_PROFILING = re.compile(r"Profiling (\S+): (concurrency|request-rate)=(\d+)")
_LOADED_CKPT = re.compile(r"Loaded checkpoint from file (\S+)")
_GAVE_UP = re.compile(r"Ran perf_analyzer (\d+) times, but no valid requests recorded")
_ADJUST = re.compile(r"perf_analyzer's ((?:request count|measurement window) is too small), increased to (\d+)")

_STAGES = {
    "Starting a local Triton Server": "starting Triton",
    "Using remote Triton Server": "connecting to the remote Triton",
    "Starting a Triton Server using docker": "starting Triton in docker",
    "Profiling server only metrics": "measuring the idle server",
    "mode search to find optimal configs": "searching configurations",
    "Done with quick mode search": "search done",
    "Done gathering concurrency sweep measurements": "concurrency sweep done",
    "Profile complete": "profile complete",
    "Exporting inference metrics": "writing results",
    "Exporting Summary Report": "writing reports",
}


@dataclass
class ProgressState:
    """What Model Analyzer is doing now, as far as its log tells."""

    stage: str = "starting Model Analyzer"
    variant: str | None = None
    concurrency: int | None = None
    measured: int = 0
    failed: int = 0
    skipped: int = 0
    resumed_from: str | None = None
    #: Settings of every configuration created so far, and the configurations each measurement runs together.
    settings: dict[str, dict[str, str]] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)

    def describe(self) -> str:
        if self.stage == "measuring" and self.variant:
            names = self.groups.get(self.variant, [self.variant])
            parts = [f"{n} ({', '.join(f'{k} {v}' for k, v in self.settings[n].items())})"
                     if self.settings.get(n) else n for n in names]
            done = f"{self.measured} measured" + (f", {self.failed} failed" if self.failed else "")
            return f"measuring {'; '.join(parts)} at concurrency {self.concurrency} ({done})"
        return self.stage


#: Setting -> (its short name, the pattern of the one number shown of its value; None: the value as it is).
_SHORT = {"instance_group": ("instances", r"'count': (\d+)"), "max_batch_size": ("max batch", None),
          "dynamic_batching": ("delay us", r"'max_queue_delay_microseconds': (\d+)")}


def _short(name: str, value: str) -> tuple[str, str]:
    short, pattern = _SHORT.get(name, (name, None))
    found = re.search(pattern, value) if pattern else None
    return short, found.group(1) if found else value


class ProgressTracker:
    """Feed it Model Analyzer's output line by line; it returns a message when there is news to show."""

    def __init__(self) -> None:
        self.state = ProgressState()
        self.notes: list[str] = []
        self._created: list[str] = []  # configurations created since the last measurement started
        self._failed_current = False  # the measurement in progress gave up (its checkpoint save is no success)

    def feed(self, raw: str) -> str | None:
        line = _PREFIX.sub("", raw.rstrip())
        s = self.state
        if m := _CREATING.search(line):
            self._created.append(m.group(1))
            s.settings[m.group(1)] = {}
            return None
        if (m := _SETTING.match(line)) and self._created:
            key, value = _short(m.group(1), m.group(2))
            s.settings[self._created[-1]][key] = value
            return None
        if m := _PROFILING.search(line):
            variant = m.group(1)
            if self._created:
                s.groups[variant] = [n for n in self._created if n != variant] + [variant]
                self._created = []
            s.stage, s.variant, s.concurrency = "measuring", variant, int(m.group(3))
            return s.describe()
        if "Existing measurement found" in line:
            s.skipped += 1
            self._created = []
            return None
        if line.startswith("Saved checkpoint") and s.stage == "measuring":
            s.measured += 0 if self._failed_current else 1
            self._failed_current = False
            return None
        if m := _LOADED_CKPT.search(line):
            s.resumed_from = m.group(1)
            return f"resuming from checkpoint {m.group(1)}"
        if m := _ADJUST.search(line):
            return f"perf_analyzer could not get a stable measurement; Model Analyzer raised the window to {m.group(2)}"
        if m := _GAVE_UP.search(line):
            s.failed += 1
            self._failed_current = True
            note = (f"{s.variant or 'a configuration'} at concurrency {s.concurrency}: no stable measurement after "
                    f"{m.group(1)} perf_analyzer runs (skipped; a longer --measurement-requests window helps)")
            self.notes.append(note)
            return note
        for marker, stage in _STAGES.items():
            if marker in line:
                s.stage, s.variant = stage, None
                return stage
        return None
