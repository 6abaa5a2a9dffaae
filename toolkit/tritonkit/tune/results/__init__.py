"""What every strategy does with its measurements (`measurements.py`): the winner (`winner.py`), the table and
summary (`report.py`), the plot (`plot.py`), the `tuned:` entries (`mapping.py`, `provenance.py`) and the spec
written back and rebuilt (`writeback.py`)."""
