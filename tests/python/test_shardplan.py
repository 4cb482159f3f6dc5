"""The Python module against the command line: same plans, same one-line errors (issue 18)."""
import json
import os
import subprocess

import pytest

import shardplan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("SHARDPLAN_BIN", os.path.join(ROOT, "build", "shardplan"))
CASE = dict(model="llama3-70b", cluster="dgx-h100", gpus=512, tp=8, pp=4, vpp=5, global_batch=512, seq_len=8192,
            recompute="selective")


def cli_json(*args):
    out = subprocess.run([BIN, *args, "--json"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_plan_is_the_cli_plan():
    p = shardplan.plan(**CASE)
    c = cli_json("plan", "--model", "llama3-70b", "--cluster", "dgx-h100", "--gpus", "512", "--tp", "8", "--pp", "4",
                 "--vpp", "5", "--global-batch", "512", "--seq-len", "8192", "--recompute", "selective")
    assert p["layout_string"] == c["layout_string"] == "TP8·CP1·PP4·DP16·EP1·VPP5"
    assert p["throughput"]["tokens_per_s_per_gpu"] == pytest.approx(c["throughput"]["tokens_per_s_per_gpu"], rel=1e-12)
    assert p["memory"]["total_bytes"] == pytest.approx(c["memory"]["total_bytes"], rel=1e-12)
    assert isinstance(p, dict) and isinstance(p, shardplan.Plan)


def test_models_and_clusters_by_path_and_dict():
    hf = os.path.join(ROOT, "examples", "hf", "Meta-Llama-3-70B", "config.json")
    by_path = shardplan.plan(**{**CASE, "model": hf})
    assert by_path["throughput"]["tokens_per_s_per_gpu"] == pytest.approx(
        shardplan.plan(**CASE)["throughput"]["tokens_per_s_per_gpu"], rel=1e-9)
    by_dict = shardplan.plan(**{**CASE, "cluster": {"preset": "dgx-h100"}})
    assert by_dict["inputs"]["cluster"]["gpus"] == 512
    assert shardplan.model(hf)["params_total"] == shardplan.model("llama3-70b")["params_total"]
    # A config already loaded as a dict reads the same, and a family it does not know is a ValueError.
    with open(hf) as f:
        assert shardplan.model(json.load(f))["params_total"] == shardplan.model("llama3-70b")["params_total"]
    with pytest.raises(ValueError, match=r'^model\.architectures: expected a supported architecture, got "FalconForCausalLM"'):
        shardplan.model({"architectures": ["FalconForCausalLM"]})


def test_bad_input_raises_value_error_with_the_cli_line():
    with pytest.raises(ValueError, match=r"^layout\.dp: expected gpus \(512\) divisible by tp·cp·pp \(12\)"):
        shardplan.plan(**{**CASE, "tp": 3})
    with pytest.raises(ValueError, match=r"^layout\.tpp"):
        shardplan.plan(**{**CASE, "tpp": 4})
    with pytest.raises(ValueError, match=r"^model"):
        shardplan.plan(**{**CASE, "model": "llama9"})
    with pytest.raises(ValueError, match=r"^model: expected"):
        shardplan.plan(**{**CASE, "model": 42})
    with pytest.raises(ValueError, match=r"^path"):
        shardplan.validate("/no/such/file.json")
    # The same refusal, word for word, as the command line prints it after "shardplan: ".
    cli = subprocess.run([BIN, "plan", "--model", "llama3-70b", "--cluster", "dgx-h100", "--gpus", "3", "--tp", "3",
                          "--global-batch", "3"], capture_output=True, text=True)
    assert cli.returncode == 2
    with pytest.raises(ValueError) as e:
        shardplan.plan(model="llama3-70b", cluster="dgx-h100", gpus=3, tp=3, global_batch=3)
    assert cli.stderr.strip() == "shardplan: " + str(e.value) == "shardplan: layout.tp: expected a divisor of heads (64), got 3"


def test_search_rows_are_flat_and_ranked():
    rows = shardplan.search(model="llama3-8b", cluster="dgx-h100", gpus=64, global_batch=512, seq_len=8192, top=5)
    assert 1 <= len(rows) <= 5
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    speeds = [r["tokens_per_s_per_gpu"] for r in rows]
    assert speeds == sorted(speeds, reverse=True)
    assert all(not isinstance(v, (dict, list)) for r in rows for v in r.values())
    assert all(isinstance(r["same_orders"], str) for r in rows)
    # How far behind the first: 0 for it, (t1 - t)/t for the others, beside the resolution on raw.
    assert rows[0]["gap_to_best"] == 0
    assert all(abs(r["gap_to_best"] - (speeds[0] - r["tokens_per_s_per_gpu"]) / r["tokens_per_s_per_gpu"]) < 1e-12 for r in rows)
    assert rows.raw["ranking_resolution"] == 0.05
    # Memory to spare: what the allocations could still take, never more than the device figure leaves
    # beside the allocator's cache nor less than what it leaves outright.
    for r, p in zip(rows, rows.raw["best"]):
        m = p["memory"]
        assert r["margin_bytes"] == m["margin_bytes"] == m["capacity_bytes"] - m["needed_bytes"]
        assert m["capacity_bytes"] - m["device_bytes"] <= r["margin_bytes"] <= m["capacity_bytes"] - m["device_bytes"] + m["allocator_bytes"] + 1
    assert rows.raw["evaluated"] > 0
    pinned = shardplan.search(model="llama3-8b", cluster="dgx-h100", gpus=64, global_batch=512, seq_len=8192, top=3,
                              pins={"tp": 8})
    assert all(r["tp"] == 8 for r in pinned)


def test_search_with_headroom_keeps_a_share_of_memory_free():
    job = dict(model="llama3-70b", cluster="dgx-h100", gpus=64, global_batch=64, seq_len=8192, top=5)
    tight = shardplan.search(**job)
    roomy = shardplan.search(**job, headroom=0.1)
    # The fastest layout leaves under a tenth free; with the headroom every answer leaves at least that.
    assert tight.raw["best"][0]["memory"]["margin_bytes"] < 0.1 * tight.raw["best"][0]["memory"]["needed_bytes"]
    for p in roomy.raw["best"]:
        assert p["memory"]["margin_bytes"] >= 0.1 * p["memory"]["needed_bytes"]
    assert roomy.raw["rejected"]["too_little_headroom"] > 0
    assert roomy[0]["tokens_per_s_per_gpu"] <= tight[0]["tokens_per_s_per_gpu"]
    with pytest.raises(ValueError, match=r"^pins\.headroom: expected a share in \[0, 1\]"):
        shardplan.search(**job, headroom=2)
    with pytest.raises(ValueError, match=r"^pins\.headroom: expected a number in \[0, 1\]"):
        shardplan.search(**job, headroom="lots")


def test_fit_lists_the_changes_that_make_it_fit():
    rows = shardplan.fit(model="llama3-70b", cluster="dgx-h100", gpus=64, tp=8, global_batch=64, seq_len=8192,
                         zero=0, micro_batch=2)
    assert rows.raw["fits"] is False
    assert rows[0]["change"] == "ZeRO 0 → 2" and rows[0]["fits"]


def test_export_is_the_cli_export():
    text = shardplan.export("megatron", **CASE)
    cli = subprocess.run([BIN, "export", "--format", "megatron", "--model", "llama3-70b", "--cluster", "dgx-h100",
                          "--gpus", "512", "--tp", "8", "--pp", "4", "--vpp", "5", "--global-batch", "512",
                          "--seq-len", "8192", "--recompute", "selective"], capture_output=True, text=True, check=True)
    assert text == cli.stdout
    with pytest.raises(ValueError, match="ZeRO-1/2 have no equivalent"):
        shardplan.export("torchtitan", **CASE)


def test_validate_returns_one_row_per_case():
    rows = shardplan.validate(os.path.join(ROOT, "examples", "runs_h100.json"))
    assert len(rows) == 10
    assert rows.summary["predicted"] == 10
    assert all(r["throughput_error"] is not None for r in rows)
    # One layout a job in this file: no pair to rank and no first choice to make.
    assert rows.summary["ranking"]["pairs"] == 0
    assert rows.summary["first_choice"]["jobs"] == 0
    assert rows.summary["first_choice"]["worst_pick"] is None


def test_model_presets_and_trace():
    assert shardplan.model("gpt-oss-120b")["params_active"] == 5_132_849_472
    names = {m["name"] for m in shardplan.presets()["models"]}
    assert {"llama3-70b", "deepseek-v3"} <= names
    t = shardplan.trace(model="llama3-8b", cluster="dgx-h100", gpus=16, pp=2, global_batch=16, seq_len=4096)
    assert t["traceEvents"]


def test_notebook_view_draws_the_plan():
    html = shardplan.plan(**CASE)._repr_html_()
    assert "TP8·CP1·PP4·DP16·EP1·VPP5" in html
    assert "weights" in html and "activations" in html  # the memory bar's legend
    assert "<th>axis</th>" in html and ">tp<" in html    # traffic per axis
    assert "step_s" in html                              # the step breakdown
