/// evaluate(): one training step of a model on a cluster under a layout, in execution order
/// (docs/model.md): split layers into stages → memory per stage → per-layer forward/backward work →
/// per-axis traffic and what of it stays exposed → pipeline schedule → DP reduction → optimizer →
/// step time, tokens/s, MFU, HFU. The pipeline is one stage of it (pipeline.h): the closed forms or the
/// simulation, one result. A layout that cannot run is a Plan whose `rejection` says why;
/// one that runs but does not fit in memory is a Plan with memory_fits = false. Nothing throws.
///
///   Plan p = evaluate(preset_model("llama3-405b"), preset_cluster("nvl72"), layout);
///   if (p.rejection) ...;               // e.g. {"tp_divides_heads", "layout.tp", "a divisor of heads (128)..."}
///   p.memory.total_bytes(); p.time.step_s; p.throughput.mfu;
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "shardplan/comm.h"
#include "shardplan/compute.h"
#include "shardplan/hardware.h"
#include "shardplan/layout.h"
#include "shardplan/memory.h"
#include "shardplan/model.h"
#include "shardplan/schedule.h"
#include "shardplan/pipeline.h"
#include "shardplan/ranges.h"
#include "shardplan/topology.h"

namespace shardplan {

/// One axis's communication over a whole step on one GPU of the critical stage.
struct CommTerm {
    Axis axis = Axis::tp;
    const char* collective = "";
    int64_t group_size = 1;
    double bytes_per_step = 0;   // bytes this GPU sends per step on this axis
    int64_t calls_per_step = 0;
    double time_s = 0;           // total time of those calls
    double exposed_s = 0;        // the part compute does not hide (adds to the step)
    bool critical_path = false;  // some of its traffic waits: exposed_s beyond what hidden traffic's SMs cost
    Tier tier = Tier::scale_up;
    bool crosses_domain = false;
    int64_t domains_spanned = 1;
    double bytes_per_flop = 0;   // bytes_per_step over the FLOPs this GPU computes per step
    const char* algorithm = "none";
    /// Synchronises gradients after the last backward (DP and EDP reductions, the tied embedding's
    /// all-reduce): outside the pipeline's passes.
    bool gradient_sync = false;
};

struct StageReport {
    Stage stage;
    MemoryBreakdown memory;
    double in_flight = 0;  // micro-batches of activations alive at the peak
    StageTimes times;      // per micro-batch, exposed per-layer communication included
    /// What one more micro-batch in flight adds to the stored activations: memory.activations_bytes =
    /// base + in_flight × this, the base being what the stage holds with none in flight (a full-recompute
    /// working set, say); the allocator's share (fragmentation) comes on top in allocator_bytes.
    double activation_bytes_per_micro_batch = 0;
};

struct TimeBreakdown {
    double step_s = 0;          // = compute_s + recompute_s + exposed_comm_s + bubble_s + optimizer_s
    double compute_s = 0;       // forward + backward of all micro-batches on the critical stage
    double recompute_s = 0;     // recomputed forwards
    double bubble_s = 0;        // pipeline fill and drain
    double pipeline_slack_s = 0;  // how much less bubble + exposed PP sends a simulation could give: the search's, not reported
    double exposed_comm_s = 0;  // communication not hidden by compute, all axes
    double optimizer_s = 0;     // Adam step on the parameters this GPU owns
    bool pipeline_simulated = false;  // bubble, PP exposure and in-flight memory from simulate_pipeline()
    std::string pipeline_note;        // why it was not simulated, when pp > 1 and it was not (a finding)
};

struct Throughput {
    double tokens_per_s = 0;
    double tokens_per_s_per_gpu = 0;
    double model_flops_per_token = 0;
    double hardware_flops_per_token = 0;  // + recomputation
    double peak_flops = 0;                // dense peak of the layout's precision: the MFU denominator
    double mfu = 0;
    double hfu = 0;
    /// Where measured tokens/s per GPU of runs like this fell 80 % of the time (ranges.h): set by a full
    /// evaluation, not by the search's inner loop.
    ThroughputRange range;
};

struct Plan {
    ModelSpec model;
    ClusterSpec cluster;
    Layout layout;
    std::optional<LayoutProblem> rejection;  // set: the layout cannot run; nothing below is filled
    int64_t micro_batches = 0;
    std::vector<StageReport> stages;
    int64_t worst_memory_stage = 0;
    int64_t critical_stage = 0;  // slowest per micro-batch
    MemoryBreakdown memory;      // of worst_memory_stage
    double capacity_bytes = 0;   // usable HBM
    bool memory_fits = false;
    /// The most any stage's allocations and runtime need (allocated + runtime, the caching allocator's
    /// cache left out: it yields to allocations), which `memory_fits` compares with capacity_bytes.
    double needed_bytes = 0;
    std::vector<CommTerm> comm;
    std::vector<GroupPlacement> groups;
    TimeBreakdown time;
    Throughput throughput;
    bool feasible() const { return !rejection && memory_fits; }
    /// How much memory the fullest stage lacks (0 when it fits).
    double short_bytes() const { return std::max(0.0, memory.total_bytes() - capacity_bytes); }
    /// How much more every stage could allocate before the GPU runs out, its cached blocks given up first
    /// (0 when it does not fit): the margin of `memory_fits`.
    double margin_bytes() const { return memory_fits ? std::max(0.0, capacity_bytes - needed_bytes) : 0.0; }
    /// Whether it fits with at least `share` of what its allocations and runtime need still free (margin ≥
    /// share · needed): room for the memory prediction's own error (docs/validation.md, "Memory").
    bool leaves_headroom(double share) const { return memory_fits && margin_bytes() >= share * needed_bytes; }
};

/// The per-layer work and memory of a layout (a dense, a MoE and the LM-head layer for one micro-batch). It depends
/// only on the fields in `key`, so a search can compute it once and share it across ZeRO stages (ZeRO-3
/// apart under eager gradient accumulation, which follows FSDP's shards) and rank orders of
/// the same model on the same cluster.
struct StepWork {
    using Key = std::array<int64_t, 12>;
    LayerWork dense, moe, head;
    LayerMemory memory;
    Key key{};
};
StepWork step_work(const ModelSpec& m, const ClusterSpec& c, const Layout& l);
/// The layout fields a StepWork depends on.
StepWork::Key work_key(const Layout& l);

/// How much of the step evaluate_into() computes.
enum class Depth {
    full,    // everything, as evaluate()
    lean,    // no per-stage reports; a layout that does not fit stops after its memory
    memory,  // memory and group placement only: whether it fits (the search's bound-pruned layouts)
};

/// How the pipeline stage works out the bubble, the exposed sends and the in-flight memory.
enum class PipelineMethod {
    simulated,    // pass by pass (simulate.h), when pp > 1; the closed forms when it cannot run, with a note
    closed_form,  // docs/model.md §7: what the search's inner loop uses
};

/// A plan's step simulated once, with every pass recorded: what a trace draws.
struct SimulatedStep {
    PipelineSpec spec;
    SimResult result;
};

struct EvalOptions {
    Depth depth = Depth::full;
    PipelineMethod pipeline = PipelineMethod::simulated;
    int64_t max_passes = 1'000'000;  // more passes (micro-batches × pp × vpp) than this: the closed forms
    /// From step_work() for the same model and cluster; used only if its key matches the layout.
    const StepWork* work = nullptr;
    /// Set: the step is simulated (pp = 1 too) with every pass recorded, and the spec and passes the
    /// plan's pipeline figures came from are kept here (a trace plans once).
    SimulatedStep* keep = nullptr;
    /// Set: simulations shared with other evaluations (a search's re-timing), not run twice.
    PipelineMemo* memo = nullptr;
};

/// One plan: every step of docs/model.md §8 in execution order, the pipeline simulated by default.
Plan evaluate(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const EvalOptions& o = {});

/// The same plan with the closed-form pipeline (docs/model.md §7).
Plan evaluate_closed_form(const ModelSpec& m, const ClusterSpec& c, const Layout& l);

/// evaluate() that keeps its recorded simulation: the plan and the passes a trace draws come from one
/// evaluation.
Plan evaluate_traced(const ModelSpec& m, const ClusterSpec& c, const Layout& l, SimulatedStep& step);

/// evaluate() into an existing Plan, reusing its storage and leaving its model, cluster and layout
/// copies untouched (they may be stale): for loops that evaluate millions of layouts and read only
/// the results. Everything else in `out` is overwritten; what `o.depth` skips stays zero.
void evaluate_into(const ModelSpec& m, const ClusterSpec& c, const Layout& l, Plan& out, const EvalOptions& o = {});

/// An upper bound on tokens/s per GPU for any layout sharing `work`, above its closed form and above
/// its ceiling (what the simulated pipeline could make of it): each stage's compute alone, filled and
/// drained as the simulation's floor (pipeline_floor_s) has it, no communication or optimizer. The
/// search skips timing layouts whose bound cannot reach the ceilings it already holds; it passes the
/// layout's stages (split_stages), which it splits once per schedule.
double tokens_per_s_per_gpu_bound(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const StepWork& work,
                                  const std::vector<Stage>& stages);
double tokens_per_s_per_gpu_bound(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const StepWork& work);

/// What the closed forms (docs/model.md §7) predict for the simulated span of the plan's layout: the
/// closed-form step less what happens outside the pipeline (the exposed gradient synchronisation, DP's
/// reduction tail and a tied embedding's all-reduce, and the optimizer step). It re-evaluates the layout
/// without the simulation.
double closed_form_pipeline_s(const Plan& p);

/// Why a layout's step cannot be drawn: the layout cannot run (check_layout), or it has more than
/// `max_passes` passes (micro-batches × pp × vpp), which would make a trace too large to open. Cheap:
/// callers check it before the plan is evaluated (and simulated).
std::optional<LayoutProblem> trace_refusal(const ModelSpec& m, const ClusterSpec& c, const Layout& l,
                                           int64_t max_passes);

}  // namespace shardplan
