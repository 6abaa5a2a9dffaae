"""Publish repairs: objects at the destination that differ from the manifest get the build's bytes back.

The manifest's sha256 per key is the truth. Checking every object by reading it back would cost a
download of the whole repository on each publish, so the check is cheap first: the listing (which publish
makes anyway) gives each object's size and S3 ETag, and the ETag is compared with the one the build's bytes
get when tritonkit uploads them (MD5 of one PUT, or of 8 MiB parts) without a request. Only an object whose
ETag differs (damaged, or uploaded another way) is read and its sha256 decides. A local folder has no such
tag: its files are hashed. Same key, same version number: nothing is renumbered and the manifest is unchanged.
An object whose content this build does not have (an older live version) is checked for presence only.
"""
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tritonkit.publish.destination import Destination, Stored


@dataclass(frozen=True)
class Source:
    """Bytes this build can put back for a sha256: held in memory, or read from `path`."""

    size: int
    path: Path | None = None
    data: bytes | None = None


@dataclass
class Damage:
    """What a check found: keys to restore with their bytes, and missing keys this build cannot restore."""

    restore: dict[str, tuple[str, Source]]
    lost: list[str]


def find_damage(dest: Destination, files: dict[str, str], listing: dict[str, Stored], sources: dict[str, Source],
                pool: ThreadPoolExecutor) -> Damage:
    """Checks every (key, sha256) of `files` against the listing, the ETag or the bytes (in parallel)."""

    def broken(key: str, sha: str) -> bool:
        stored, source = listing.get(key), sources[sha]
        if stored is None or key.endswith("/"):
            return stored is None
        return stored.size != source.size or not dest.holds(key, stored, sha, source.data, source.path)

    known = {key: sha for key, sha in files.items() if sha in sources}
    flags = dict(zip(known, pool.map(lambda pair: broken(*pair), known.items())))
    return Damage(restore={key: (sha, sources[sha]) for key, sha in known.items() if flags[key]},
                  lost=sorted(key for key, sha in files.items() if sha not in sources and key not in listing))


def restore(dest: Destination, damage: Damage, pool: ThreadPoolExecutor) -> list[str]:
    """Puts the build's bytes back under each damaged key; returns the keys, sorted."""

    def put(key: str, sha: str, source: Source) -> None:
        if source.data is not None:
            dest.write(key, source.data, sha)
        elif source.path is not None:
            dest.upload(key, source.path, sha)

    list(pool.map(lambda item: put(item[0], *item[1]), damage.restore.items()))
    return sorted(damage.restore)
