"""Checks on declared BLS calls, like those on ensemble steps: callees exist, no cycles, streams fit."""
from tritonkit.triton.model_config import pb
from tritonkit.triton.model_graph import bls_calls, find_cycle
from tritonkit.validate.findings import Finding


def check_bls(configs: dict[str, pb.ModelConfig], unknown: frozenset[str] = frozenset()) -> list[Finding]:
    """Findings for every model that declares BLS calls, each call located as `bls.calls[i]`; callees in
    `unknown` (exports a dry run skips) are taken on trust, as ensemble steps are."""
    found: list[Finding] = []
    reported_cycles: set[frozenset[str]] = set()
    for name, config in configs.items():
        calls = bls_calls(config)
        if not calls:
            continue
        if config.backend != "python":
            kind = config.platform or config.backend or "unknown"
            found.append(Finding(name, "bls", "only a Python-backend model can call other models (BLS) "
                                 f"but '{name}' is {kind}", "set backend: python, or remove bls"))
            continue
        for i, callee in enumerate(calls):
            if callee in unknown:
                continue
            found += _check_call(name, config, i, callee, configs)
        cycle = find_cycle(configs, name)
        if cycle and frozenset(cycle) not in reported_cycles:
            reported_cycles.add(frozenset(cycle))
            index = calls.index(cycle[1])
            found.append(Finding(name, f"bls.calls[{index}]",
                                 "models call each other in a cycle: " + " -> ".join(cycle),
                                 "remove one of the calls or steps in the cycle"))
    return found


def _check_call(name: str, caller: pb.ModelConfig, index: int, callee: str,
                configs: dict[str, pb.ModelConfig]) -> list[Finding]:
    where = f"bls.calls[{index}]"
    if callee == name:
        return [Finding(name, where, f"model '{name}' cannot call itself", "call another model, or loop "
                        "inside the model's own code")]
    target = configs.get(callee)
    if target is None:
        return [Finding(name, where, f"model '{callee}' does not exist", "define it, or call one of: "
                        f"{', '.join(sorted(n for n in configs if n != name))}")]
    if target.model_transaction_policy.decoupled and not caller.model_transaction_policy.decoupled:
        return [Finding(name, where, f"decoupled model '{callee}' streams responses but '{name}' is not decoupled "
                        "(Triton lets it call with exec(decoupled=True) and collect them)",
                        f"declare '{name}' decoupled (model_transaction_policy: {{decoupled: true}}) if "
                        "it should stream them on", "warning")]
    return []
