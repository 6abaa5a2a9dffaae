"""Writes the CRD schemas `tritonkit deploy` validates against: each CRD's openAPIV3Schema, descriptions dropped.

Run with the upstream CRD files (from the release tags named in toolkit/tritonkit/deploy/schemas/README.md):
  python scripts/vendor_crd_schemas.py monitoring.coreos.com_podmonitors.yaml ...
Writes toolkit/tritonkit/deploy/schemas/<kind>-<group>-<version>.json.gz, the file name kubernetes-validate uses.
"""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).resolve().parents[1] / "toolkit" / "tritonkit" / "deploy" / "schemas"


def without_descriptions(node: Any) -> Any:
    """The schema minus its prose, which is most of its size and none of its rules."""
    if isinstance(node, dict):
        return {k: without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    return node


def main(paths: list[str]) -> None:
    for path in paths:
        crd = yaml.safe_load(Path(path).read_text())
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            name = f"{kind.lower()}-{group.split('.')[0]}-{version['name']}.json.gz"
            text = json.dumps(without_descriptions(version["schema"]["openAPIV3Schema"]), sort_keys=True,
                              separators=(",", ":"))
            (OUT / name).write_bytes(gzip.compress(text.encode(), mtime=0))
            print(f"wrote {OUT / name} ({len(text)} bytes before gzip)")


if __name__ == "__main__":
    main(sys.argv[1:])
