"""shardplan in Python: plan, search and validate distributed training layouts.

The planning library is C++ (shardplan's own); this package builds requests from keyword arguments and
returns plain dicts and lists, the same JSON as ``shardplan plan --json`` (docs/json.md).

    >>> import shardplan
    >>> p = shardplan.plan(model="llama3-70b", cluster="dgx-h100", gpus=512, tp=8, pp=4, vpp=5,
    ...                    global_batch=512, seq_len=8192, recompute="selective")
    >>> round(p["throughput"]["tokens_per_s_per_gpu"])          # doctest: +SKIP
    >>> rows = shardplan.search(model="llama3-8b", cluster="dgx-h100", gpus=64, global_batch=512)
    >>> import pandas; pandas.DataFrame(rows)                   # doctest: +SKIP

Models and clusters are preset names, paths to a model / Hugging Face config.json / cluster JSON, or
dicts in the case format. Bad input raises ValueError with the one line the command line prints
("layout.tp: expected a divisor of heads (64), got 3").
"""
import html as _html
import json as _json
import os as _os

from . import _native

__all__ = ["plan", "search", "fit", "export", "trace", "validate", "model", "presets", "Plan"]

# Keyword arguments that are not layout fields.
_CASE_KEYS = {"model", "cluster", "gpus"}


def _call(status_body):
    status, body = status_body
    data = _json.loads(body) if body else None
    if status != 200:
        message = data.get("error") if isinstance(data, dict) else body
        raise ValueError(message)
    return data


def _model(model):
    if isinstance(model, dict):
        return model
    if not isinstance(model, str):
        raise ValueError("model: expected a preset name, a path to a model JSON or config.json, or a dict")
    if model.endswith(".json") or _os.sep in model:
        return _call(_native.read_json(model, "model"))  # a shardplan model or a Hugging Face config.json
    return model


def _cluster(cluster, gpus):
    if cluster is None:
        cluster = "nvl72"
    if isinstance(cluster, str) and (cluster.endswith(".json") or _os.sep in cluster):
        cluster = _call(_native.read_json(cluster, "cluster"))
    if isinstance(cluster, str):
        cluster = {"preset": cluster}
    if not isinstance(cluster, dict):
        raise ValueError("cluster: expected a preset name, a path to a cluster JSON, or a dict")
    cluster = dict(cluster)
    if gpus is not None:
        cluster["gpus"] = gpus
    return cluster


def _case(model, cluster, gpus, layout):
    if model is None:
        raise ValueError("model: expected a preset name, a path or a dict (see shardplan.presets())")
    return {"model": _model(model), "cluster": _cluster(cluster, gpus), "layout": layout}


class Plan(dict):
    """A plan (the JSON of ``plan --json``) that draws itself in a notebook."""

    def _repr_html_(self):
        return _plan_html(self)


def plan(model=None, cluster=None, gpus=None, **layout):
    """The plan of one layout: memory per GPU by category, traffic per axis, step time, MFU.

    ``layout`` takes the case format's layout fields: tp, cp, pp, dp, ep, etp, vpp, micro_batch,
    global_batch, seq_len, zero, recompute, recompute_modules, recompute_method, recompute_layers, attention_kernel, kernels, stage_split,
    grad_buckets, grad_accumulation, cross_entropy, allocator, dropout, sequence_parallel, tp_recompute_allgather, tp_comm_overlap, ep_comm_overlap, dp_comm_overlap, fp8_params, fp32_shards, moe_dispatcher, expert_gemms, zero3_comm, cuda_graphs, pipeline_pacing, pipeline_sends, pipeline_scatter_gather, moe_imbalance, moe_capacity_factor, precision, schedule, grad_dtype, order, framework.
    """
    return Plan(_call(_native.api("POST", "/api/plan", _json.dumps(_case(model, cluster, gpus, layout)))))


def search(model=None, cluster=None, gpus=None, top=10, pareto=False, pins=None, no_crossing=False, headroom=None,
           **layout):
    """The fastest layouts that fit, as a list of flat dicts (one per layout, ready for pandas).

    ``layout`` holds the fixed settings (global_batch, seq_len, precision, ...); ``pins`` fixes search
    dimensions ({"tp": 8}). ``headroom`` (0-1) keeps to layouts that leave that share of what they need
    free (0.1: none that may not fit within the memory prediction's error). The full answer (rejection
    counts, plans) is on the list's ``raw``.
    """
    body = _case(model, cluster, gpus, layout)
    body["top"] = top
    body["pareto"] = pareto
    body["pins"] = dict(pins or {})
    if no_crossing:
        body["pins"]["no_crossing"] = True
    if headroom is not None:
        body["pins"]["headroom"] = headroom
    raw = _call(_native.api("POST", "/api/search", _json.dumps(body)))
    rows = _Rows(_flat(rank, p) for rank, p in enumerate(raw.get("best", []), 1))
    rows.raw = raw
    return rows


def fit(model=None, cluster=None, gpus=None, **layout):
    """The single changes that make a layout fit (recompute, ZeRO, TP×2, PP×2, ...), each planned: a list of
    flat dicts, fitting ones first and fastest first; the whole answer is on the list's ``raw``."""
    raw = _call(_native.api("POST", "/api/fit", _json.dumps(_case(model, cluster, gpus, layout))))
    rows = _Rows({"change": c["change"], "layout": c["layout_string"], "fits": c["fits"],
                  "tokens_per_s_per_gpu": c["tokens_per_s_per_gpu"], "memory_bytes": c["memory_bytes"],
                  "short_bytes": c["short_bytes"]} for c in raw["changes"])
    rows.raw = raw
    return rows


def export(format, model=None, cluster=None, gpus=None, **layout):
    """The layout as a launch configuration ("megatron", "torchtitan" or "deepspeed"), as text; ValueError
    with the framework's reason when it cannot run the layout. Without ``framework=`` the layout is planned
    as the format's framework runs it (its defaults for what is not given), so the text runs what is planned."""
    body = _case(model, cluster, gpus, layout)
    body["format"] = format
    return _call(_native.api("POST", "/api/export", _json.dumps(body)))["text"]


def trace(model=None, cluster=None, gpus=None, **layout):
    """The simulated step as a Chrome trace (a dict: save it with json.dump and open it in Perfetto)."""
    return _call(_native.api("POST", "/api/trace", _json.dumps(_case(model, cluster, gpus, layout))))


def validate(path):
    """Published runs in the case format predicted and compared: a list of one flat dict per case, with
    the whole report (summary, ranking, first choice, memory by kind) on the list's ``raw``."""
    if not isinstance(path, str):
        raise ValueError("path: expected a path to a JSON array of cases")
    raw = _call(_native.validate(path))
    rows = _Rows()
    for c in raw["cases"]:
        pred, meas = c.get("predicted") or {}, c.get("measured") or {}
        rows.append({"id": c["id"], "source": c.get("source"), "gpu": c.get("gpu"), "kind": c.get("kind"),
                     "error": c.get("error"),
                     "predicted_tokens_per_s_per_gpu": pred.get("tokens_per_s_per_gpu"),
                     "measured_tokens_per_s_per_gpu": meas.get("tokens_per_s_per_gpu"),
                     "throughput_error": c.get("throughput_error"),
                     "predicted_memory_bytes": pred.get("memory_bytes"),
                     "measured_memory_bytes": meas.get("memory_bytes"), "memory_error": c.get("memory_error")})
    rows.raw = raw
    rows.summary = raw["summary"]
    return rows


def model(name_or_path, seq_len=4096):
    """A model's parameter counts (as ``shardplan model --json``): a preset name, a JSON file, or a dict
    (a model in the case format or a Hugging Face config.json already loaded)."""
    if isinstance(name_or_path, dict):
        return _call(_native.api("POST", "/api/model", _json.dumps({"model": name_or_path, "seq_len": seq_len})))
    if not isinstance(name_or_path, str):
        raise ValueError("model: expected a preset name, a path to a model JSON or config.json, or a dict")
    return _call(_native.model(name_or_path, seq_len))


def presets():
    """The built-in models, GPUs, clusters and fitted constants (as ``shardplan presets --json``)."""
    return _call(_native.api("GET", "/api/presets"))


class _Rows(list):
    raw = None
    summary = None


def _flat(rank, p):
    lay = p["inputs"]["layout"]
    row = {"rank": rank, "layout": p["layout_string"]}
    for k in ("tp", "cp", "pp", "dp", "ep", "etp", "vpp", "micro_batch", "zero", "recompute", "schedule", "order"):
        row[k] = lay.get(k)
    row["tokens_per_s_per_gpu"] = p["throughput"]["tokens_per_s_per_gpu"]
    row["mfu"] = p["throughput"]["mfu"]
    row["step_s"] = p["time"]["step_s"]
    row["memory_bytes"] = p["memory"]["total_bytes"]
    # What the allocations could still take (the allocator's cache given up first): tight layouts all
    # show usable HBM as memory_bytes, their cache filling the rest.
    row["margin_bytes"] = p["memory"]["margin_bytes"]
    row["fits"] = p["memory"]["fits"]
    # Rank orders that plan exactly as this one (one answer), joined so the row stays flat: "" for none.
    row["same_orders"] = ", ".join(p.get("same_orders", []))
    # How far behind the first it is predicted; under the search's ranking_resolution (on the list's
    # raw) the two are closer than the model can order (docs/search.md, "How close is a tie").
    row["gap_to_best"] = p.get("gap_to_best")
    return row


# ---- The notebook view: memory bar, traffic per axis, step breakdown ------------------------------------

_CATEGORIES = [("weights_bytes", "weights", "#4e79a7"), ("grads_bytes", "gradients", "#f28e2b"),
               ("optimizer_bytes", "optimizer", "#e15759"), ("activations_bytes", "activations", "#76b7b2"),
               ("other_bytes", "buffers", "#59a14f"), ("allocator_bytes", "allocator", "#edc948"),
               ("runtime_bytes", "runtime", "#b07aa1")]


def _gb(x):
    return "%.1f GB" % (x / 1e9)


def _plan_html(p):
    e = _html.escape
    mem = p["memory"]
    cap = max(mem.get("capacity_bytes") or 1.0, mem["total_bytes"], 1.0)
    bar = "".join('<div title="%s %s" style="width:%.2f%%;background:%s"></div>'
                  % (e(label), _gb(mem[key]), 100.0 * mem[key] / cap, color)
                  for key, label, color in _CATEGORIES if mem.get(key))
    legend = " ".join('<span style="color:%s">&#9632;</span> %s %s' % (color, e(label), _gb(mem[key]))
                      for key, label, color in _CATEGORIES if mem.get(key))
    fits = "fits" if mem["fits"] else "does not fit (short by %s)" % _gb(mem.get("short_bytes") or 0)
    rows = "".join("<tr><td>%s</td><td>%s</td><td>%s</td><td style='text-align:right'>%.1f ms</td>"
                   "<td style='text-align:right'>%.1f ms</td><td%s>%s</td></tr>"
                   % (e(c["axis"]), e(c["collective"]), e(c["tier"]), 1e3 * c["time_s"], 1e3 * c["exposed_s"],
                      " style='color:#c00'" if c.get("crosses_domain") else "",
                      "leaves its domain" if c.get("crosses_domain") else "")
                   for c in p.get("comm", []))
    t = p["time"]
    steps = "".join("<tr><td>%s</td><td style='text-align:right'>%.3f s</td></tr>" % (e(k), t[k])
                    for k in ("compute_s", "recompute_s", "exposed_comm_s", "bubble_s", "optimizer_s", "step_s")
                    if k in t)
    th = p["throughput"]
    return ("<div style='font-family:sans-serif;font-size:13px'>"
            "<b>%s</b> &middot; %s tokens/s/GPU &middot; MFU %.1f %%<br>"
            "<div style='display:flex;width:480px;height:14px;border:1px solid #888;margin:6px 0'>%s</div>"
            "<div>%s of %s usable: %s</div><div>%s</div>"
            "<table><tr><th>axis</th><th>collective</th><th>tier</th><th>time</th><th>exposed</th><th></th></tr>%s"
            "</table><table>%s</table></div>"
            % (e(p["layout_string"]), "{:,.0f}".format(th["tokens_per_s_per_gpu"]), 100.0 * th["mfu"], bar,
               _gb(mem["total_bytes"]), _gb(cap), fits, legend, rows, steps))
