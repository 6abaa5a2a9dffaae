"""The grid: every configuration of the space, up to the budget (the brute-force baseline descent is compared with)."""
from tritonkit.tune.options import Constraints, Objective
from tritonkit.tune.space.knobs import Knob, Point, default_point, grid, normalize
from tritonkit.tune.strategies.budget import Budgeted, Measure, Trace, better


def grid_search(knobs: list[Knob], measure: Measure, budget: int, objective: Objective,
                constraints: Constraints) -> tuple[Point, Trace]:
    """Every configuration (up to the budget): the brute-force baseline; the best by the same rule as descent."""
    run = Budgeted(measure, budget, knobs)
    best: Point = normalize(default_point(knobs), knobs)
    _, best_score = run(best)
    for point in grid(knobs):
        done, score = run(point)
        if not done:
            break
        if better(score, best_score, objective, constraints, margin=0.0):
            best, best_score = point, score
    return best, run.trace
