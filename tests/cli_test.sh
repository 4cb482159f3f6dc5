#!/usr/bin/env bash
# The CLI as a user meets it: exit code 0 for answers, 2 and one line naming the field for bad input.
set -u
bin="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

expect() {  # expect CODE "stderr/stdout fragment" args...
    local want="$1" frag="$2"
    shift 2
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    local lines
    lines=$(wc -l <"$tmp/err")
    if [ "$got" -ne "$want" ] || ! grep -qF -- "$frag" "$tmp/out" "$tmp/err"; then
        echo "FAIL: shardplan $* → exit $got (want $want), looking for '$frag'"
        head -5 "$tmp/err" "$tmp/out"
        fail=$((fail + 1))
    elif [ "$want" -eq 2 ] && [ "$lines" -ne 1 ]; then
        echo "FAIL: shardplan $* → $lines lines on stderr, want exactly one"
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
}

expect 0 "Memory per GPU" plan
expect 0 '"schema": "shardplan.plan.v1"' plan --json
expect 0 "TP group of 16 spans 2 scale-up domains" plan --model llama3-70b --cluster dgx-h100 --gpus 64 --tp 16 --global-batch 64
expect 0 "DOES NOT FIT" plan --model llama3-405b --cluster dgx-h100 --gpus 8 --tp 8 --global-batch 8
expect 0 "llama3-405b" presets
expect 0 "No layout runs: every one is rejected by the checks above, most often: a capacity factor on a dense model" \
    search --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 64 --seq-len 4096 --moe-capacity-factor 1
expect 0 '"models"' presets --json
expect 2 "layout.tp: expected a divisor of heads (128), got 3" plan --tp 3 --dp 1 --pp 1 --gpus 3
expect 2 "layout.dp: expected tp·cp·pp·dp = gpus" plan --dp 7
expect 2 "--dp: expected gpus (100) divisible by tp·cp·pp" plan --gpus 100
expect 2 "--model: expected a model preset" plan --model llama9
expect 2 "--cluster: expected a cluster preset" plan --cluster dgx-h900
expect 2 "--precision: expected one of bf16, fp16, fp8, mxfp8, nvfp4" plan --precision fp9
expect 2 "--recompute: expected one of none, selective, full" plan --recompute most
expect 2 "--zero: expected 0, 1, 2 or 3" plan --zero 5
expect 2 "--case: expected a readable file" plan --case "$tmp/none.json"
expect 2 "--tp" plan --tp eight
expect 2 "--bogus" plan --bogus
expect 2 "layout.vpp: expected at least 2 for the interleaved schedule" plan --schedule interleaved --vpp 1
expect 2 "layout.global_batch: expected at least 16 micro-batches" plan --global-batch 1024

# Special files are refused before anything is read from them (issue 19): no 6 GB from /dev/zero, no
# hang on a FIFO, no 2^63-byte directory.
expect 2 '--case: expected a regular JSON file, "/dev/zero" is a device, FIFO or socket' plan --case /dev/zero
ln -s /dev/zero "$tmp/zero.json"
expect 2 'is a device, FIFO or socket' plan --case "$tmp/zero.json"
expect 2 'is a device, FIFO or socket' calibrate /dev/zero
expect 2 'is a device, FIFO or socket' plan --model "$tmp/zero.json"
mkfifo "$tmp/fifo.json"
expect 2 'is a device, FIFO or socket' plan --case "$tmp/fifo.json"
mkdir "$tmp/dir.json"
expect 2 'is a directory' plan --case "$tmp/dir.json"
expect 2 '--tp: expected an integer in [1, 100000000], got 4294967296' plan --tp 4294967296 --cp 4294967296
expect 2 '--seq-len: expected an integer, got "1.5"' plan --seq-len 1.5
expect 2 '--headroom: expected a number, got "abc"' search --headroom abc
expect 2 'command: expected one of plan, search' bogus
printf '{"model": "llama3-8b", "cluster": {"gpu": "h100-sxm", "gpus": 8}, "layout": {"pp": 0}}' >"$tmp/pp0.json"
expect 2 'layout.pp: expected an integer in [1, 100000000], got 0' plan --case "$tmp/pp0.json" --gpus 8
expect 2 '--etp: expected an integer in [1, 100000000]' plan --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --tp 8 --ep 4 --etp 4611686018427387904 --global-batch 64

# A 100 kB argument (the kernel's limit for one is 128 kB) still makes one short line.
"$bin" plan "$(head -c 100000 /dev/zero | tr '\0' k)" >/dev/null 2>"$tmp/err"
if [ $? -eq 2 ] && [ "$(wc -c <"$tmp/err")" -lt 600 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; then pass=$((pass + 1))
else echo "FAIL: a 100 kB argument made a $(wc -c <"$tmp/err")-byte message"; fail=$((fail + 1)); fi
expect 2 '--gpus: expected values in [1, 100000000], got 100000000000' sweep --model llama3-8b --cluster dgx-h100 --gpus 100000000000,8 --global-batch 64
gpu='"hbm_gb":80,"hbm_tbps":3,"bf16_tflops":900,"scale_out_gbps":50'
printf '{"model":"llama3-8b","cluster":{"gpu":{"generation":"hopper",%s,"scale_up_gbps":1e-300},"gpus":8},"layout":{"tp":8}}' "$gpu" >"$tmp/slow.json"
expect 2 'cluster.gpu.scale_up_gbps: expected a number in [0.01, 1000000], got 1e-300' plan --case "$tmp/slow.json"
printf '{"model":"llama3-8b","cluster":{"gpu":{"generation":"quantum",%s,"scale_up_gbps":450},"gpus":8},"layout":{"tp":8}}' "$gpu" >"$tmp/q.json"
expect 2 'cluster.gpu.generation: expected one of volta, ampere, ada, hopper' plan --case "$tmp/q.json"
printf '{"model":"llama3-8b","cluster":"dgx-h100","layout":{"tp":8,"tp":2}}' >"$tmp/dup.json"
expect 2 'with each key once per object, "tp" is repeated' plan --case "$tmp/dup.json"

printf '{"model": "llama3-8b", "cluster": {"gpu": "h100-sxm", "gpus": 8}, "layout": {"tp": "8"}}' >"$tmp/bad.json"
expect 2 'layout.tp: expected an integer, got "8"' plan --case "$tmp/bad.json"
printf '{"model": "llama3-8b", "cluster": {"gpu": "h100-sxm", "gpus": 8}, "layout": {"tp": 8, "seq_len": 4096}}' >"$tmp/ok.json"
expect 0 "TP8·CP1·PP1·DP1·EP1" plan --case "$tmp/ok.json"
expect 0 "TP4·CP1·PP1·DP2·EP1" plan --case "$tmp/ok.json" --tp 4
printf '{"model": ' >"$tmp/trunc.json"
expect 2 "--case: expected valid JSON" plan --case "$tmp/trunc.json"
printf '\xff\xfe\x00garbage' >"$tmp/binary.json"
expect 2 "--case: expected valid JSON" plan --case "$tmp/binary.json"

# Bridges: Hugging Face config in, framework configs out, sweeps, formats.
mkdir -p "$tmp/Meta-Llama-3-8B"
printf '{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": false}' >"$tmp/Meta-Llama-3-8B/config.json"
expect 0 "8030261248" model --model "$tmp/Meta-Llama-3-8B/config.json"
expect 0 '"params_total": 8030261248' model --model "$tmp/Meta-Llama-3-8B/config.json" --json
expect 0 "Meta-Llama-3-8B on 64" plan --model "$tmp/Meta-Llama-3-8B/config.json" --cluster dgx-h100 --gpus 64 --global-batch 128
printf '{"model": "Meta-Llama-3-8B/config.json", "cluster": {"gpu": "h100-sxm", "gpus": 8}, "layout": {"tp": 8, "seq_len": 4096}}' >"$tmp/hfcase.json"
expect 0 "TP8·CP1·PP1·DP1·EP1" plan --case "$tmp/hfcase.json"
printf '{"architectures": ["FalconForCausalLM"], "hidden_size": 64}' >"$tmp/falcon.json"
expect 2 "--model.architectures: expected a supported architecture, got \"FalconForCausalLM\"" model --model "$tmp/falcon.json"
expect 0 "--tensor-model-parallel-size 8" export --model llama3-70b --cluster dgx-h100 --gpus 64 --tp 8 --global-batch 64 --format megatron
expect 0 "tensor_parallel_degree = 8" export --model llama3-70b --cluster dgx-h100 --gpus 64 --tp 8 --global-batch 64 --zero 3 --format torchtitan
expect 0 '"train_micro_batch_size_per_gpu": 1' export --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 64 --format deepspeed
expect 2 "deepspeed: pipeline parallelism" export --model llama3-8b --cluster dgx-h100 --gpus 8 --pp 2 --global-batch 64 --format deepspeed
expect 2 "--format: expected one of megatron, torchtitan, deepspeed" export --format nemo
# A plan naming no framework is exported as the format's framework runs it, said on stderr; a setting it
# would not run as planned is refused by name.
expect 0 "# planned as torchtitan runs it (--framework torchtitan)" export --model llama3-8b --cluster dgx-h100 --gpus 8 --zero 3 --format torchtitan
expect 2 'torchtitan: it would run grad_dtype "fp32" (not "bf16")' export --model llama3-8b --cluster dgx-h100 --gpus 8 --zero 3 --grad-dtype bf16 --format torchtitan
expect 2 'none of the 8 fastest can, the fastest it can write (TP1·CP1·PP1·DP8·EP1) because torchtitan: it would run grad_dtype' search --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 64 --grad-dtype bf16 --export torchtitan --max-tp 1 --max-cp 1 --max-pp 1 --zero 3
expect 0 "# searched as Megatron-LM runs it" search --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 64 --export megatron --schedule 1f1b
expect 0 "--num-layers 32" search --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 64 --export megatron --schedule 1f1b
expect 0 "gpus,layout,micro_batch" sweep --model llama3-8b --cluster dgx-h100 --gpus 8,16 --global-batch 64 --format csv --plot "$tmp/s.svg"
grep -q "</svg>" "$tmp/s.svg" && pass=$((pass + 1)) || { echo "FAIL: sweep --plot wrote no SVG"; fail=$((fail + 1)); }
expect 2 "--gpus: expected a list of at least two values" sweep --model llama3-8b --gpus 8
expect 2 "--seq-len: expected a single value: --gpus is already swept" sweep --model llama3-8b --gpus 8,16 --seq-len 1024,2048
expect 2 "--gpus: expected positive integers separated by commas" sweep --model llama3-8b --gpus 8,x
expect 0 "memory.total_bytes" plan --format csv
expect 0 "| model | cluster |" plan --format markdown
expect 0 "set,rank,layout" search --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 64 --format csv
expect 0 ",memory_bytes,margin_bytes,gap_to_best" search --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 64 --format csv
# Answers predicted within 5 % of the first are named as closer than the model can order (docs/search.md).
expect 0 "within 5 % of #1, closer than the model can order layouts" search --model llama3-70b --cluster dgx-h100 --gpus 512 --seq-len 8192 --global-batch 1024
expect 2 "--format: expected one of table, json, csv, markdown" plan --format yaml
# A sweep's header names only what stays fixed (issue 16: a seq-len sweep said "seq 8192").
expect 0 "shardplan sweep · llama3-8b on h100-sxm · seq_len · global batch 64" sweep --model llama3-8b --cluster dgx-h100 --gpus 8 --seq-len 2048,4096 --global-batch 64
# Pins no layout can have are refused by name (they had evaluated nothing and read "No layout fits. Add GPUs").
expect 2 "--dp: expected a divisor of the GPU count (8), got 3" search --model llama3-8b --cluster dgx-h100 --gpus 8 --dp 3
expect 2 "--pp: expected pinned degrees whose product divides the GPU count (8), got tp·pp = 16" search --model llama3-8b --cluster dgx-h100 --gpus 8 --tp 4 --pp 4
expect 2 "--ep: expected 1 for a dense model, got 2" search --model llama3-8b --cluster dgx-h100 --gpus 8 --ep 2
expect 2 "--ep: expected a divisor of experts (8), got 3" search --model mixtral-8x7b --cluster dgx-h100 --gpus 16 --ep 3
expect 2 "--tp: expected a divisor of heads (32), got 3" search --model llama3-8b --cluster dgx-h100 --gpus 24 --tp 3
expect 0 "12  no layout has the pinned degrees" sweep --model llama3-8b --cluster dgx-h100 --gpus 8,12 --tp 8
# Below a million tokens a step the plan's header counts them whole (it had said "0.0 M tokens").
expect 0 "global batch 3 (12288 tokens)" plan --model llama3-8b --cluster dgx-h100 --gpus 3
# Without --global-batch each layout takes one micro-batch per replica; the header had said "global batch 1".
expect 0 "seq 4096 · global batch unset: one micro-batch per replica · bf16" search --model llama3-8b --cluster dgx-h100 --gpus 8
expect 0 "gpus · seq 4096 · global batch unset: one micro-batch per replica" sweep --model llama3-8b --cluster dgx-h100 --gpus 8,16
# README's search → export example: the fastest layout Megatron can express (the fastest splits 80 layers
# into 64 chunks, which it cannot), the configuration on stdout.
expect 0 "--num-virtual-stages-per-pipeline-rank 8" search --model ../../examples/hf/Meta-Llama-3-70B/config.json --cluster dgx-h100 --gpus 512 --global-batch 512 --seq-len 8192 --export megatron
expect 0 '"feasible": true' plan --case ../../examples/run.json --tp 4 --json
# README's Hugging Face example runs verbatim from a fresh clone (the config ships in examples/hf).
expect 0 "Meta-Llama-3-70B" model --model ../../examples/hf/Meta-Llama-3-70B/config.json
# Recompute modules, the attention kernel and dropout (issue 15): named as Megatron names them.
expect 0 "recompute selective (core_attn,mlp)" plan --model llama3-8b --cluster dgx-h100 --gpus 8 --tp 8 --global-batch 8 --recompute-modules core_attn,mlp
expect 0 "recompute selective (core_attn)" plan --model llama3-8b --cluster dgx-h100 --gpus 8 --tp 8 --global-batch 8 --recompute selective
expect 2 "--recompute-modules: expected only with recompute selective, got recompute full" plan --model llama3-8b --cluster dgx-h100 --gpus 8 --tp 8 --recompute full --recompute-modules mlp
expect 0 "recompute selective (core_attn,mlp)" search --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 64 --recompute-modules core_attn,mlp
expect 2 "--recompute-modules: expected only with recompute selective, got recompute full" search --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 64 --recompute full --recompute-modules mlp
expect 2 "--attention-kernel: expected one of flash, fused, unfused" plan --model llama3-8b --cluster dgx-h100 --gpus 8 --tp 8 --attention-kernel sdpa

# Import (issue 16): an exported launch configuration read back and planned from stdin.
"$bin" export --model llama3-70b --cluster dgx-h100 --gpus 512 --tp 8 --pp 4 --vpp 5 --global-batch 512 --seq-len 8192 --format megatron > "$tmp/run.args"
if "$bin" import --format megatron "$tmp/run.args" --cluster dgx-h100 --gpus 512 2>/dev/null | "$bin" plan --case - | grep -q "TP8·CP1·PP4·DP16·EP1·VPP5"; then
    pass=$((pass + 1))
else
    echo "FAIL: export | import | plan --case - did not give back TP8·CP1·PP4·DP16·VPP5"; fail=$((fail + 1))
fi
expect 2 "--format: expected one of megatron, torchtitan, deepspeed" import --format nemo "$tmp/run.args"
"$bin" export --model llama3-8b --cluster dgx-h100 --gpus 64 --tp 2 --sequence-parallel false --global-batch 256 --seq-len 4096 --format deepspeed > "$tmp/ds.json"
expect 2 "--seq-len: expected the sequence length (a DeepSpeed config does not give it)" import --format deepspeed "$tmp/ds.json" --model llama3-8b
# --no-crossing that rejects every layout says so, not "add GPUs" (issue 16).
expect 0 "1 that would run was rejected by --no-crossing" search --model llama3-70b --cluster dgx-h100 --gpus 16 --global-batch 16 --seq-len 2048 --no-crossing --max-pp 1 --max-cp 1 --recompute selective --grad-dtype fp32
# A headroom keeps to layouts that leave that share of what they need free; one no layout leaves says so,
# not "add GPUs" alone; a share outside [0, 1] is refused in one line.
expect 0 "too_little_headroom    fits, but leaves less free than --headroom asks" search --model llama3-70b --cluster dgx-h100 --gpus 64 --global-batch 64 --seq-len 8192 --headroom 0.1
expect 0 "No layout leaves the headroom asked: 2535 that fit were rejected by --headroom 0.5" search --model llama3-70b --cluster dgx-h100 --gpus 24 --global-batch 24 --seq-len 4096 --headroom 0.5
expect 2 "--headroom: expected a share in [0, 1] of the memory a layout needs, got -0.1" search --headroom -0.1
expect 0 "TP2·CP2·PP1·DP16·EP1" sweep --model llama3-70b --cluster dgx-h100 --gpus 32,64 --global-batch 64 --seq-len 8192 --headroom 0.1
expect 2 "--headroom: expected a share in [0, 1] of the memory a layout needs, got 3" sweep --model llama3-70b --cluster dgx-h100 --gpus 32,64 --headroom 3
expect 0 "A search with a headroom of 0.1 keeps to layouts that leave a tenth." plan --model llama3-70b --cluster dgx-h100 --gpus 64 --tp 2 --cp 2 --pp 4 --vpp 16 --zero 2 --global-batch 64 --seq-len 8192
# A search that already recomputes everything is not told to allow recomputation.
expect 0 "No layout fits. Add GPUs, lower the global batch or sequence length." search --model llama3-405b --cluster dgx-h100 --gpus 8 --global-batch 8 --seq-len 8192 --recompute full
# The optimizer step is the peak where its fp32 copies of 16-bit gradients outweigh what the passes hold.
expect 0 "at the optimizer step (fp32 copies of its 16-bit gradients)" plan --model llama3-8b --cluster dgx-h100 --gpus 8 --tp 8 --global-batch 8 --seq-len 2048 --recompute full --grad-dtype bf16 --zero 0
# ... and where those copies keep a layout from fitting, fp32 gradients are among the changes that make it fit.
expect 0 "gradients in fp32 (no copy at the optimizer step)" plan --model llama3-70b --cluster dgx-h100 --gpus 16 --tp 16 --global-batch 16 --seq-len 2048 --recompute full
# calibrate's single-source rule counts sources as the fit does, over runs with a measured throughput: a
# second source that only names a layout does not switch it on; one with a measurement does.
runs() {  # runs SOURCE2 MEASURED2
    cat <<JSON
[{"id": "a1", "source": "a", "model": "llama3-8b", "cluster": {"preset": "dgx-h100", "gpus": 8},
  "layout": {"tp": 1, "micro_batch": 1, "global_batch": 64, "seq_len": 8192, "precision": "bf16"},
  "measured": {"tokens_per_s_per_gpu": 9000}},
 {"id": "a2", "source": "a", "model": "llama3-8b", "cluster": {"preset": "dgx-h100", "gpus": 16},
  "layout": {"tp": 2, "micro_batch": 1, "global_batch": 64, "seq_len": 4096, "precision": "bf16"},
  "measured": {"tokens_per_s_per_gpu": 7000}},
 {"id": "b1", "source": "$1", "model": "llama3-8b", "cluster": {"preset": "dgx-h100", "gpus": 8},
  "layout": {"tp": 1, "micro_batch": 2, "global_batch": 64, "seq_len": 4096, "precision": "bf16"},
  "measured": {"tokens_per_s_per_gpu": $2}}]
JSON
}
runs b null > "$tmp/one_measured.json"
runs b 9500 > "$tmp/two_measured.json"
"$bin" calibrate "$tmp/one_measured.json" > "$tmp/cal1" 2>&1
"$bin" calibrate "$tmp/two_measured.json" > "$tmp/cal2" 2>&1
if ! grep -q "one source's runs only" "$tmp/cal1" && grep -q "one source's runs only" "$tmp/cal2"; then
    pass=$((pass + 1))
else
    echo "FAIL: calibrate's single-source rule did not follow the sources with a measured throughput"; head -12 "$tmp/cal1" "$tmp/cal2"
    fail=$((fail + 1))
fi

# Runs with a measured memory fit the memory constants too: calibrate prints memory before and after and
# the fitted allocator share and runtime, and the profile carries them; a plan with that profile uses them.
cat >"$tmp/memory_runs.json" <<'JSON'
[{"id": "m1", "source": "a", "model": "llama3-8b", "cluster": {"preset": "dgx-h100", "gpus": 8},
  "layout": {"tp": 1, "micro_batch": 1, "global_batch": 64, "seq_len": 4096, "precision": "bf16"},
  "measured": {"tokens_per_s_per_gpu": 9000, "memory_gb_per_gpu": 72, "memory_kind": "reserved"}},
 {"id": "m2", "source": "a", "model": "llama3-8b", "cluster": {"preset": "dgx-h100", "gpus": 16},
  "layout": {"tp": 2, "micro_batch": 2, "global_batch": 64, "seq_len": 4096, "precision": "bf16"},
  "measured": {"tokens_per_s_per_gpu": 7000, "memory_gb_per_gpu": 52, "memory_kind": "device"}}]
JSON
"$bin" calibrate "$tmp/memory_runs.json" -o "$tmp/memory_profile.json" >"$tmp/calm" 2>&1
"$bin" plan --model llama3-8b --cluster "$tmp/memory_profile.json" --gpus 8 --global-batch 64 --seq-len 8192 --json >"$tmp/calm_plan.json" 2>&1
if grep -q "memory median" "$tmp/calm" && grep -q "memory constants" "$tmp/calm" &&
    python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); q=json.load(open(sys.argv[2])); m=p["calibration"]["memory"]; sys.exit(0 if m["before"]["runs"]==2 and m["fitted_on"]["median_abs_error"]<m["before"]["median_abs_error"] and m["constants"]["fragmentation"]==p["efficiency"]["fragmentation"]!=0.2 and q["inputs"]["cluster"]["efficiency"]["fragmentation"]==p["efficiency"]["fragmentation"] else 1)' "$tmp/memory_profile.json" "$tmp/calm_plan.json"; then
    pass=$((pass + 1))
else
    echo "FAIL: calibrate did not fit the memory constants to the runs' measured memory"; cat "$tmp/calm"
    fail=$((fail + 1))
fi

# One default per field whichever door a request comes in by: flags naming a model and a cluster, and a
# case file saying only as much (the API's and the Python module's reader), plan the same layout (the CLI
# had put the built-in scenario's 8,192 tokens where the library's default is 4,096).
printf '{"model": "llama3-8b", "cluster": {"preset": "dgx-h100", "gpus": 8}, "layout": {"global_batch": 64}}' >"$tmp/short.json"
"$bin" plan --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 64 --json >"$tmp/flags.json" 2>/dev/null
"$bin" plan --case "$tmp/short.json" --json >"$tmp/file.json" 2>/dev/null
if python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); sys.exit(0 if a["inputs"]["layout"]["seq_len"]==4096 and a["inputs"]["layout"]==b["inputs"]["layout"] and a["throughput"]==b["throughput"] else 1)' "$tmp/flags.json" "$tmp/file.json"; then
    pass=$((pass + 1))
else
    echo "FAIL: flags and a case file with the same fields planned different layouts"; fail=$((fail + 1))
fi

# Tables keep their columns whatever a name's length: the collective column as wide as FSDP's longest
# name, the rejection codes as wide as the longest code (each row's number, code and text start where the
# header's and the others' do; "all-gather ×2 + reduce-scatter (FSDP)" had pushed its row 3 columns right).
"$bin" plan --model llama3-70b --cluster dgx-h100 --gpus 64 --tp 2 --zero 3 --global-batch 32 >"$tmp/cols" 2>&1
"$bin" search --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --seq-len 4096 --global-batch 1530 >"$tmp/cols_s" 2>&1
if python3 - "$tmp/cols" "$tmp/cols_s" <<'PY'
import re, sys
plan = open(sys.argv[1], encoding="utf-8").read().splitlines()
head = next(i for i, l in enumerate(plan) if l.lstrip().startswith("axis collective"))
rows = []
for l in plan[head + 1:]:  # the table's rows, up to the first line that is not one
    if not re.match(r"  (tp|cp|ep|pp|dp|edp)  ", l):
        break
    rows.append(l)
col = plan[head].index("tier")
ok = len(rows) >= 2 and any("FSDP" in r for r in rows) and all(r[col - 1] == " " and r[col] != " " for r in rows)
search = open(sys.argv[2], encoding="utf-8").read().splitlines()
codes = [l for l in search if re.match(r"\s+\d+  [a-z_]+ +\S", l)]
starts = {len(re.match(r"(\s+\d+  [a-z_]+ +)", l).group(1)) for l in codes}
ok = ok and len(codes) >= 3 and len(starts) == 1
sys.exit(0 if ok else 1)
PY
then
    pass=$((pass + 1))
else
    echo "FAIL: a table's columns moved with a long name"; cat "$tmp/cols" "$tmp/cols_s" | head -40
    fail=$((fail + 1))
fi

# The Pareto front's memory column is what it is drawn by, the memory its allocations need: it rises down
# the list as the throughput does (the device figure it had shown, cache included, went 8.93 → 8.92 GB).
"$bin" search --model llama3-70b --cluster dgx-h100 --gpus 64 --global-batch 256 --pareto >"$tmp/front" 2>&1
if python3 - "$tmp/front" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("Pareto front", 1)[1].split("\n\n", 1)[0].splitlines()
unit = {"kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
rows = [re.search(r"(\d+)\s+[\d.]+%\s+([\d.]+) (kB|MB|GB|TB)\s", l) for l in lines[2:]]
pts = [(int(m.group(1)), float(m.group(2)) * unit[m.group(3)]) for m in rows if m]
ok = "needed" in lines[1] and len(pts) >= 3 and all(b[0] > a[0] and b[1] >= a[1] for a, b in zip(pts, pts[1:]))
sys.exit(0 if ok else 1)
PY
then
    pass=$((pass + 1))
else
    echo "FAIL: the Pareto front's memory column does not rise with its throughput"; sed -n '/Pareto/,$p' "$tmp/front" | head -20
    fail=$((fail + 1))
fi

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
