"""Reading perf_analyzer's CSV report: rows come back in load order, not perf_analyzer's throughput order."""
from __future__ import annotations

from tritonkit.serve.perf import parse_csv

# perf_analyzer 2.51's report of `tritonkit perf mlp --concurrency 1:8:1` on the example project (2 shared
# cores), cut to three levels: it sorts rows by throughput, so concurrency 8 (5939 infer/s) precedes 7 (6151).
_REPORT = """\
Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,\
Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency
6,5674.4,2,243,270,19,206,184,0,836,1500,1768,4574
8,5939.1,2,188,279,17,213,152,0,1279,1800,1976,3509
7,6151.5,2,200,275,18,210,160,0,1024,1700,1832,3085
"""


def test_rows_come_back_in_concurrency_order_with_their_numbers() -> None:
    rows = parse_csv(_REPORT)
    assert [row["concurrency"] for row in rows] == [6, 7, 8]
    assert [row["throughput_infer_per_sec"] for row in rows] == [5674.4, 6151.5, 5939.1]
    assert rows[1]["p99_latency_us"] == 3085


def test_request_rate_reports_are_ordered_by_rate() -> None:
    report = "Request Rate,Inferences/Second,p99 latency\n200,180.5,900\n100,99.9,500\n"
    assert [row["request_rate"] for row in parse_csv(report)] == [100, 200]
