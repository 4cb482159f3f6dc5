// Closed-form pipeline schedules (docs/model.md §7). Sources: GPipe (Huang et al. 2019), 1F1B and
// interleaved 1F1B (Narayanan et al. 2021), Megatron-LM theoretical_memory_usage.py for in-flight
// memory, ZB-H1 (Qi et al. 2023, sail-sg/zero-bubble-pipeline-parallelism), DualPipe (DeepSeek-V3 report).
#include "shardplan/schedule.h"

#include <algorithm>

#include "shardplan/layout.h"
#include "shardplan/model.h"

namespace shardplan {

namespace {

// Layers of part i when n layers are split into k consecutive parts, no part above c = ceil(n/k):
// the middle parts take c each and the two ends share the rest, the first end the larger half (the
// last also carries the LM head). Megatron-LM expresses exactly this with
// --decoder-first/last-pipeline-num-layers. When that would leave an end with fewer than one layer,
// the remainder of an even split goes to the middle parts first, then the last, then the first.
struct Split {
    int64_t n, k, c, first, last;
    bool ends;  // the ends-take-the-rest form applies
};

Split make_split(int64_t n, int64_t k) {
    Split s{n, k, (n + k - 1) / k, 0, 0, false};
    if (k >= 3 && n % k != 0) {
        const int64_t rest = n - (k - 2) * s.c;
        if (rest >= 2) {
            s.ends = true;
            s.first = (rest + 1) / 2;
            s.last = rest - s.first;
        }
    }
    return s;
}

int64_t part_layers(const Split& s, int64_t i) {
    if (s.ends) return i == 0 ? s.first : (i == s.k - 1 ? s.last : s.c);
    const int64_t base = s.n / s.k, extra = s.n % s.k, middle = std::max<int64_t>(0, s.k - 2);
    const int64_t to_middle = std::min(extra, middle);
    const int64_t left = extra - to_middle;  // 0, 1 or 2 go to the ends
    if (i == s.k - 1 && s.k > 1) return base + (left >= 1 ? 1 : 0);
    if (i == 0) return base + (s.k == 1 ? extra : (left >= 2 ? 1 : 0));
    return base + (i - 1 < to_middle ? 1 : 0);
}

// First layer of part i (closed form of the prefix sum of part_layers).
int64_t part_first(const Split& s, int64_t i) {
    if (i == 0) return 0;
    if (s.ends) return s.first + (i - 1) * s.c;
    const int64_t base = s.n / s.k, extra = s.n % s.k, middle = std::max<int64_t>(0, s.k - 2);
    return part_layers(s, 0) + (i - 1) * base + std::min(i - 1, std::min(extra, middle));
}

// nanotron's split (nanotron/models/base.py, build_model): the model's blocks in order (embedding, the
// layers, final norm, LM head, loss) each cost what get_block_compute_costs gives them, a Llama layer
// 4·a·d·h + 3·f·h and the LM head V·h, the rest nothing; rank r takes blocks until the running total
// passes (r + 1)/pp of the whole, keeping the block that passes it. Here a layer costs 4·a·d·h plus its
// MLP's matrices (3 or 2 of f·h; a MoE layer's top-k routed and shared experts), so a Llama costs what
// nanotron counts. The LM head and the loss sit on the rank that takes the head; ranks after it hold
// nothing (1.34B, 16 layers, on 8 stages: 3, 3, 2, 3, 2, 3, 0 + head, 0).
void split_by_cost(const ModelSpec& m, int64_t pp, std::vector<Stage>& stages) {
    const double h = static_cast<double>(m.hidden);
    const double attn = 4.0 * static_cast<double>(m.heads * m.head_dim) * h;
    const double mats = gated_mlp(m) ? 3.0 : 2.0;
    auto layer_cost = [&](int64_t i) {
        if (m.moe && is_moe_layer(m, i)) {
            const MoeSpec& e = *m.moe;
            return attn + mats * h * static_cast<double>(e.expert_ffn_hidden * (e.top_k + e.shared_experts));
        }
        return attn + mats * h * static_cast<double>(m.ffn_hidden);
    };
    const double head = static_cast<double>(m.vocab) * h;
    double total = head;
    for (int64_t i = 0; i < m.layers; ++i) total += layer_cost(i);
    int64_t r = 0;
    double sum = 0;
    auto pass = [&](double cost) {  // a block of this cost goes to rank r, then r moves on past its share
        const int64_t mine = r;
        sum += cost;
        if (sum > total * static_cast<double>(r + 1) / static_cast<double>(pp) && r + 1 < pp) ++r;
        return mine;
    };
    stages[0].first = true;
    for (int64_t i = 0; i < m.layers; ++i) {
        Stage& s = stages[static_cast<size_t>(pass(layer_cost(i)))];
        if (s.layers == 0) s.first_layer = i;
        ++s.layers;
        if (m.moe && is_moe_layer(m, i)) ++s.moe_layers;
    }
    stages[static_cast<size_t>(pass(head))].last = true;
    // A rank that took no layer starts where the next layer would be.
    for (size_t k = 1; k < stages.size(); ++k)
        if (stages[k].layers == 0) stages[k].first_layer = stages[k - 1].first_layer + stages[k - 1].layers;
}

}  // namespace

std::vector<Stage> split_stages(const ModelSpec& m, const Layout& l) {
    std::vector<Stage> out;
    split_stages(m, l, out);
    return out;
}

void split_stages(const ModelSpec& m, const Layout& l, std::vector<Stage>& stages) {
    const int64_t pp = l.pp;
    const int64_t v = l.schedule == Schedule::interleaved ? l.vpp : 1;
    const int64_t chunks = pp * v;
    stages.assign(static_cast<size_t>(pp), Stage{});
    for (int64_t r = 0; r < pp; ++r) stages[static_cast<size_t>(r)].index = r;
    if (l.stage_split == StageSplit::cost && chunks == pp && l.schedule != Schedule::dualpipe && pp > 1) {
        split_by_cost(m, pp, stages);
        return;
    }
    const Split split = make_split(m.layers, chunks);
    for (int64_t r = 0; r < pp; ++r) {
        Stage& s = stages[static_cast<size_t>(r)];
        s.first_layer = part_first(split, r);
        auto own = [&](int64_t chunk) {
            const int64_t first = part_first(split, chunk), n = part_layers(split, chunk);
            s.layers += n;
            s.moe_layers += moe_layers_in(m, first, first + n);
            if (chunk == 0) s.first = true;
            if (chunk == chunks - 1) s.last = true;
        };
        if (l.schedule == Schedule::dualpipe) {
            own(r);
            if (pp - 1 - r != r) own(pp - 1 - r);
        } else {
            for (int64_t c = 0; c < v; ++c) own(r + c * pp);
        }
    }
}

int64_t chunks_per_rank(const PipelineSpec& s) {
    if (s.schedule == Schedule::dualpipe) return 2;
    return s.schedule == Schedule::interleaved ? s.vpp : 1;
}

ChunkTimes chunk_times(const PipelineSpec& s, int64_t rank) {
    const StageTimes& t = s.ranks[static_cast<size_t>(rank)];
    // A DualPipe rank's two chunks each carry half its layers, and its per-micro-batch time is already
    // that half (a micro-batch crosses one of them): each chunk gets all of it.
    const double share = s.schedule == Schedule::dualpipe ? 1.0 : static_cast<double>(chunks_per_rank(s));
    return {t.fwd_s / share, (t.bwd_s - t.wgrad_s) / share, t.wgrad_s / share, t.recompute_s / share};
}

double in_flight_micro_batches(Schedule schedule, int64_t pp, int64_t vpp, int64_t stage, int64_t m) {
    const double mm = static_cast<double>(m);
    switch (schedule) {
        case Schedule::gpipe: return mm;
        case Schedule::one_f_one_b: return std::min<double>(static_cast<double>(pp - stage), mm);
        // ZB-H1 holds each micro-batch until its deferred W: every rank reaches the first stage's pp
        // (the simulation's peak, tests/simulate_test.cpp).
        case Schedule::zb: return std::min<double>(static_cast<double>(pp), mm);
        case Schedule::interleaved: {
            // Megatron's warm-up: (pp − i − 1)·2 + (v − 1)·pp chunk-forwards, plus the one in progress.
            const double v = static_cast<double>(vpp);
            const double chunks = static_cast<double>((pp - stage - 1) * 2 + (vpp - 1) * pp + 1);
            return std::min(chunks, mm * v) / v;  // in units of the whole stage (all v chunks)
        }
        case Schedule::dualpipe:
            // DualPipe keeps PP + 1 micro-batches of one stage's activations; a rank owns two stages.
            return std::min(static_cast<double>(pp + 1), mm) / 2.0;
    }
    return 1.0;
}

double in_flight_micro_batches(const Layout& l, int64_t stage, int64_t m) {
    return in_flight_micro_batches(l.schedule, l.pp, l.vpp, stage, m);
}

int64_t slowest_rank(const PipelineSpec& s) {
    int64_t r = 0;
    for (size_t i = 1; i < s.ranks.size(); ++i)
        if (s.ranks[i].total() > s.ranks[static_cast<size_t>(r)].total()) r = static_cast<int64_t>(i);
    return r;
}

double bubble_time_s(const PipelineSpec& s) {
    if (s.pp <= 1 || s.ranks.empty()) return 0.0;
    const StageTimes& slowest = s.ranks[static_cast<size_t>(slowest_rank(s))];
    double sum = 0;
    for (const StageTimes& t : s.ranks) sum += t.total();
    const double F = slowest.fwd_s, B = slowest.bwd_s, W = slowest.wgrad_s;
    // Fill + drain: every other stage's forward and backward once (uniform stages: (pp−1)(F+B)).
    const double fill = sum - slowest.total();
    const double FB = F + B;
    switch (s.schedule) {
        case Schedule::gpipe:
        case Schedule::one_f_one_b: return fill;
        case Schedule::interleaved: return fill / static_cast<double>(s.vpp);
        case Schedule::zb: return FB > 0 ? fill * std::max(0.0, FB - 2.0 * W) / FB : 0.0;
        case Schedule::dualpipe: {
            // (pp/2 − 1)·(F&B + B − 3W) with F&B ≈ F + B, relative to 1F1B's (pp − 1)(F + B).
            const double pp = static_cast<double>(s.pp);
            if (FB <= 0) return 0.0;
            const double per = std::max(0.0, FB + B - 3.0 * W);
            return fill / (pp - 1.0) * (pp / 2.0 - 1.0) * per / FB;
        }
    }
    return fill;
}

double pipeline_floor_s(const PipelineSpec& s, double p2p_s) {
    if (s.pp <= 1 || s.schedule == Schedule::dualpipe || s.ranks.size() != static_cast<size_t>(s.pp)) return 0.0;
    const double m = static_cast<double>(s.micro_batches);
    const double busy_max = m * s.ranks[static_cast<size_t>(slowest_rank(s))].total();
    PipelineFill fill;
    for (int64_t r = 0; r < s.pp; ++r) {
        const ChunkTimes c = chunk_times(s, r);
        fill.add_rank(m * s.ranks[static_cast<size_t>(r)].total(),
                      c.f_s + p2p_s + (s.schedule == Schedule::zb ? 0.0 : c.b_s + c.w_s + p2p_s));
    }
    return std::max(0.0, fill.span_s - busy_max);
}

double exposed_sends_s(const PipelineSpec& s) {
    if (s.pp <= 1) return 0.0;
    const int64_t v = s.schedule == Schedule::interleaved ? s.vpp : 1;
    const double fill = 2.0 * static_cast<double>((s.pp - 1) * v) * s.p2p_s;
    if (!s.blocking_sends) return fill;
    // Blocking sends: the busiest rank also waits out each of its own, every micro-batch: two a chunk
    // (forward and backward) where no chunk sits at either end of the line, one fewer at pp 2.
    const int64_t sends = 2 * v - (s.pp == 2 ? 1 : 0);
    return fill + static_cast<double>(sends) * static_cast<double>(s.micro_batches) * s.p2p_s;
}

}  // namespace shardplan
