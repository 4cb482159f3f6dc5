/// What each parallel axis sends, per call, over which tier, and how long one call takes
/// (docs/model.md §5). Volumes per Megatron-LM (Korthikanti et al. 2022 for TP/SP, ring attention
/// for CP, ZeRO for DP, the DeepSeek-V3 report for EP all-to-all); times from collectives.h on the
/// tier the group's placement (topology.h) puts it on. Exposure is decided by the step (plan.cpp),
/// which knows what compute each collective can hide under.
///
///   Traffic t = tp_traffic(model, layout, groups[tp], fabric);
///   t.time_s;            // one TP collective (all-reduce, or RS + AG pair with SP)
#pragma once
#include <cstdint>

#include "shardplan/collectives.h"
#include "shardplan/topology.h"

namespace shardplan {

struct ModelSpec;
struct Layout;
struct GpuSpec;

/// One kind of call an axis makes: its buffer, group and the time of one call.
struct Traffic {
    Collective kind = Collective::all_reduce;
    const char* label = "";  // "all-reduce", "reduce-scatter + all-gather", "ring send/recv", ...
    double buffer_bytes = 0; // S of one call (nccl-tests convention)
    double wire_bytes = 0;   // bytes one GPU sends for one call
    double time_s = 0;       // one call
    int64_t group_size = 1;
    Tier tier = Tier::scale_up;
    const char* algorithm = "none";
};

/// TP: per layer and micro-batch, 2 collectives forward and 2 backward on b·(s/cp)·h activations;
/// with SP each is a reduce-scatter + all-gather pair of the same total (Korthikanti §4.2.2).
Traffic tp_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& g, const Fabric& f);
/// Exposed time of `comm_s` of collectives cut into `chunks` pieces that run under the `gemm_s` of
/// GEMMs they feed or drain (Wang et al., ASPLOS 2023, "Overlap Communication with Dependent Computation
/// via Decomposition"; Transformer Engine's userbuffers ring exchange, one chunk per TP rank): the first
/// chunk cannot hide, each later one runs under the previous chunk's GEMM, so
/// comm/k + (k − 1)/k · max(0, comm − gemm). k = 1 exposes everything.
double chunked_overlap_exposed_s(double comm_s, double gemm_s, int64_t chunks);
/// The share of a hidden collective's time the step still pays: while it runs beside the computation its
/// kernels hold `comm_sms` of the GPU's `sms` SMs (NCCL launches one CTA per channel; DeepEP keeps a fixed
/// budget, 20 SMs in DeepSeek-V3's DualPipe), and the computation it hides under runs on the rest:
/// comm_sms / sms, at most 1; 0 where the GPU names no SM count (a TPU's collectives run on its DMA
/// engines). docs/model.md §5.3.
double overlap_sm_share(const GpuSpec& gpu);
/// The exposed time of `comm_s` of collectives of which `hidden_s` runs under computation that loses
/// `sm_share` of its SMs meanwhile: comm − hidden·(1 − sm_share).
double exposed_beside_s(double comm_s, double hidden_s, double sm_share);
/// Whether some of a collective's traffic waits on the critical path rather than only the SMs of its hidden
/// part: `exposed_s` (what exposed_beside_s gave) beyond `sm_share` of `comm_s`.
bool traffic_waits(double comm_s, double exposed_s, double sm_share);
/// CP: ring attention passes a K/V block of b·(s/cp)·(k+v width)/tp to the next rank cp − 1 times per
/// layer forward, twice that backward (K/V again and their gradients).
Traffic cp_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& g, const Fabric& f);
/// Expected number of `parts` equal consecutive slices of `experts` experts that a token's `top_k`
/// distinct experts fall into: parts · (1 − C(E − E/parts, k) / C(E, k)).
double expert_parts_hit(int64_t experts, int64_t top_k, double parts);
/// EP: per MoE layer and micro-batch, dispatch + combine forward and again backward. alltoall: an
/// all-to-all of the rank's (T/tp)·k routed token copies of h elements; deepep / hybridep: one copy per
/// GPU reached over NVLink and one per other domain reached over the NIC (Layout::moe_dispatcher).
Traffic ep_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& g, const Fabric& f);
/// PP: one boundary activation (÷ tp with SP) per micro-batch, forward and backward. Split over the TP
/// ranks without SP where the framework scatters it (scatters_pipeline_sends): 1/tp crosses, and the
/// receiving TP group `tp` all-gathers the whole tensor on its own links, a time added to the send's.
Traffic pp_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& g, const GroupPlacement& tp,
                   const Fabric& f);
/// PP with tied embeddings: the first stage's input embedding and the last stage's output layer are one
/// matrix held twice, so after the backward the two copies' gradients, V/tp × h in the gradient dtype,
/// are all-reduced between those two ranks (Megatron-LM's `_allreduce_word_embedding_grads` in
/// finalize_model_grads.py, DeepSpeed's pipeline engine `_exec_reduce_tied_grads`, nanotron's
/// `sync_tied_weights_gradients`). `ends` is that pair's placement (end_stages).
Traffic tied_embedding_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& ends, const Fabric& f);
/// The placement of the PP group's first and last member: two ranks, in different scale-up domains
/// whenever the placed group `pp` spans more than one.
GroupPlacement end_stages(const GroupPlacement& pp, int64_t pp_degree);
/// DP: gradient reduction of `grad_bytes` (all-reduce for ZeRO-0, reduce-scatter for ZeRO ≥ 1).
Traffic dp_reduce_traffic(double grad_bytes, int zero, const GroupPlacement& g, const Fabric& f);
/// DP: parameter all-gather of `param_bytes` (ZeRO-1/2 once per step, ZeRO-3 per micro-batch, twice).
Traffic dp_gather_traffic(double param_bytes, const GroupPlacement& g, const Fabric& f);
/// What one GPU's ZeRO-3 collectives reach under DeepSpeed's per-tensor engine (through v0.3.x, 2021):
/// 21 GB/s, whatever the links. DeepSpeed issue #1174 (v0.3.16, one p4d node of 8 A100 on NVSwitch):
/// ZeRO-3's forward took 480 ms against ZeRO-2's 60 ms for a 5.1B model, its 10.2 GB of fp16 weights
/// gathered (7/8 of them received) in the 420 ms between: 8.9 GB / 0.42 s ≈ 21 GB/s. Each parameter was
/// gathered by a collective of its own, each all-gather synchronised the device and its output copied
/// after it (PR #1188, which reworked that path in June 2021).
inline constexpr double kPerTensorZero3_Bps = 21e9;
/// A ZeRO-3 collective under that engine: the slower of the links' time and its wire bytes at
/// kPerTensorZero3_Bps (layout.zero3_comm per_tensor).
Traffic per_tensor_zero3(Traffic t);

}  // namespace shardplan
