"""A model whose exported graph bakes in one branch must fail verification with one located line."""
from __future__ import annotations

import pytest

from examples.models.catalog import WRONG_BRANCH
from tritonkit.export import VerificationError

pytestmark = pytest.mark.slow  # exports in the child process (torch): minutes, so out of the unit subset


def test_wrong_branch_fails_verification_in_one_line(exporter):
    with pytest.raises(VerificationError) as info:
        exporter("wrong_branch", WRONG_BRANCH["source"], WRONG_BRANCH["export"], WRONG_BRANCH["max_batch_size"])
    err = info.value
    line = err.line()
    assert "\n" not in line
    assert line.startswith("tritonkit.yaml: models.wrong_branch.export.tolerance: ")
    assert "model 'wrong_branch'" in line and "output 'output'" in line
    assert "at inputs x=[" in line and "max abs error" in line
    assert "torch.where" in err.fix
    # Nothing was installed for a model that failed verification.
    assert not (exporter.root / "repo" / "wrong_branch" / "1" / "model.onnx").exists()
