"""Cuts a Model Analyzer checkpoint down to what tritonkit reads (structure and values kept as recorded).

    python excerpt.py .tritonkit/tune/MODEL/checkpoints/0.ckpt MODEL OUT.ckpt
"""
import json
import sys

src, model, dst = sys.argv[1], sys.argv[2], sys.argv[3]
data = json.load(open(src))
keep_tags = {"perf_throughput", "perf_latency_p99", "perf_latency_avg"}
out_results = {}
for variant, (run_config, measurements) in data["ResultManager.results"]["_results"][model].items():
    mrcs = []
    for mrc in run_config["_model_run_configs"]:
        mrcs.append({"_model_name": mrc["_model_name"], "_model_config_variant": mrc["_model_config_variant"],
                     "_composing_config_variants": mrc.get("_composing_config_variants", [])})
    kept = {}
    for key, run in measurements.items():
        kept[key] = {"_model_variants_name": run.get("_model_variants_name"), "_model_config_measurements": [
            {"_model_config_name": m["_model_config_name"], "_model_specific_pa_params": m["_model_specific_pa_params"],
             "_non_gpu_data": [e for e in m["_non_gpu_data"] if e[0] in keep_tags]}
            for m in run["_model_config_measurements"]]}
    out_results[variant] = [{"_model_run_configs": mrcs}, kept]
json.dump({"ResultManager.results": {"_results": {model: out_results}}}, open(dst, "w"), indent=1)
