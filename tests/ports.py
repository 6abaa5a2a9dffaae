"""Ports for tests that bind them long after choosing them (image builds, project builds in between).

A port from bind(("127.0.0.1", 0)) lies in the kernel's ephemeral range, which every outgoing connection also
draws its local port from: during a minutes-long image build one of those can take it (CI saw podman's
"bind: address already in use" that way). Ports below that range are never handed out implicitly.
"""
from __future__ import annotations

import random
import socket
from contextlib import ExitStack
from pathlib import Path

_FLOOR = 20000  # above the well-known and most registered service ports


def _ephemeral_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def quiet_ports(n: int) -> list[int]:
    """`n` distinct ports free on 127.0.0.1 now, below the ephemeral range (held together while chosen)."""
    candidates = list(range(_FLOOR, _ephemeral_start()))
    random.shuffle(candidates)
    chosen: list[int] = []
    with ExitStack() as held:
        for port in candidates:
            sock = held.enter_context(socket.socket())
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            chosen.append(port)
            if len(chosen) == n:
                return chosen
    raise RuntimeError(f"fewer than {n} free ports in {_FLOOR}-{_ephemeral_start()}")
