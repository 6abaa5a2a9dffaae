"""`tritonkit validate` against the real Triton 2.51 on the parity corpus (cases/, see triton_verdicts.py).

`test_recorded_verdicts_match_triton` keeps the corpus honest: it runs the real server over every case.
`test_validate_agrees_with_triton` is pure Python and shows each disagreement by case name.
"""
from __future__ import annotations

import pytest

from .triton_verdicts import CASES, Case, compare, load_cases, summary, triton_verdicts, validate_verdict

ALL = load_cases()


def test_corpus_is_well_formed() -> None:
    """Verdicts are load/reject, rejections carry a reason, and a third or more of the cases load."""
    assert len(ALL) >= 100
    for case in ALL:
        assert case.triton in ("load", "reject"), case.name
        assert (case.triton == "reject") == bool(case.reason), case.name
        assert (case.path / case.model).is_dir(), f"{case.name}: no folder for model {case.model}"
    loads = sum(c.triton == "load" for c in ALL)
    assert 3 * loads >= len(ALL), f"only {loads} of {len(ALL)} cases load; false alarms need loading configs"


@pytest.mark.server
def test_recorded_verdicts_match_triton() -> None:
    """One real server over the whole corpus; every recorded verdict and reason still holds."""
    verdicts = triton_verdicts(ALL)
    wrong = [f"{c.name}: recorded {c.triton} ({c.reason}), Triton: {verdicts[c.name].verdict} "
             f"({verdicts[c.name].error})"
             for c in ALL if verdicts[c.name].verdict != c.triton or c.reason not in verdicts[c.name].error]
    assert not wrong, "re-record with `python -m tests.validate.parity.triton_verdicts --record`:\n" + "\n".join(wrong)


def test_agreement_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """The summary line counts every case once; it is printed for the reader (`pytest -s` or -rA)."""
    groups = compare(ALL)
    assert sum(len(g) for g in groups.values()) == len(ALL)
    text = summary(groups)
    with capsys.disabled():
        print(f"\nparity with Triton 2.51 over {CASES.name}/: {text}")
    assert text.startswith(f"agree {len(groups['agree'])}/{len(ALL)}, missed {len(groups['missed'])}, "
                           f"false alarms {len(groups['false alarm'])}")


@pytest.mark.parametrize("case", ALL, ids=[c.name for c in ALL])
def test_validate_agrees_with_triton(case: Case) -> None:
    """tritonkit rejects what Triton rejects and accepts what Triton loads (warnings are not rejections)."""
    ours = validate_verdict(case)
    if case.triton == "reject":
        assert ours.verdict == "reject", f"missed rejection; Triton 2.51 says: {case.reason}"
    else:
        assert ours.verdict == "load", f"false alarm; Triton 2.51 loads it, tritonkit says: {ours.error}"
