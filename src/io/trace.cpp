// The simulated step as a Chrome trace, written event by event (include/shardplan/trace.h).
#include "shardplan/trace.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace shardplan {

namespace {

/// A JSON string literal; the names written here are ASCII, but a model name may hold anything.
std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == '"' || ch == '\\') out += {'\\', ch};
        else if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += ch;
    }
    return out + "\"";
}

/// One event per line of `out`, comma-separated: {"args":{...},"dur":..,"name":..,"ph":..,"pid":..,"tid":..,"ts":..}
class Events {
public:
    explicit Events(std::ostream& out) : out_(out) {}
    void meta(const char* name, int64_t pid, int tid, const std::string& args) {
        sep();
        out_ << fmt::format(R"({{"args":{{{}}},"name":"{}","ph":"M","pid":{},"tid":{}}})", args, name, pid, tid);
    }
    void span(const std::string& name, int64_t pid, int tid, double ts_us, double dur_us, const std::string& args) {
        sep();
        out_ << fmt::format(R"({{"args":{{{}}},"dur":{},"name":{},"ph":"X","pid":{},"tid":{},"ts":{}}})", args, dur_us,
                            quoted(name), pid, tid, ts_us);
    }

private:
    void sep() {
        if (!first_) out_ << ",\n";
        first_ = false;
    }
    std::ostream& out_;
    bool first_ = true;
};

}  // namespace

void write_trace(std::ostream& out, const Plan& p, const SimResult& r, const PipelineSpec& s) {
    const double us = 1e6;
    enum { kCompute = 0, kSend = 1, kLayerComm = 2, kDp = 3, kHidden = 4 };
    out << "{\"displayTimeUnit\":\"ms\",\"otherData\":"
        << fmt::format(R"({{"layout":{},"micro_batches":{},"schedule":"{}","simulated_makespan_s":{}}})",
                       quoted(to_string(p.layout)), p.micro_batches, enum_name(p.layout.schedule), r.makespan_s)
        << ",\"traceEvents\":[\n";
    Events ev(out);
    for (int64_t rank = 0; rank < s.pp; ++rank) {
        ev.meta("process_name", rank, 0, fmt::format(R"("name":"pipeline rank {}")", rank));
        ev.meta("process_sort_index", rank, 0, fmt::format(R"("sort_index":{})", rank));
        for (auto [tid, name] : {std::pair{kCompute, "compute"}, {kSend, "pp send"}, {kLayerComm, "tp/cp/ep collectives"},
                                 {kDp, "dp reduction"}, {kHidden, "tp/cp/ep collectives (overlapped)"}})
            ev.meta("thread_name", rank, tid, fmt::format(R"("name":"{}")", name));
    }
    // Per-layer collectives that stay exposed are inside each pass's time; show them on their own thread.
    // A rank runs m forward passes per chunk (DualPipe: m in all, half per direction).
    const int64_t forwards = p.micro_batches * (s.schedule == Schedule::dualpipe ? 1 : chunks_per_rank(s));
    // The part compute hides runs beside the pass on a thread of its own.
    double layer_comm_per_pass = 0, hidden_per_pass = 0;
    std::string layer_comm_name;
    double layer_comm_bytes = 0;
    for (const CommTerm& c : p.comm)
        if ((c.axis == Axis::tp || c.axis == Axis::cp || c.axis == Axis::ep) && p.micro_batches > 0 && c.time_s > 0) {
            layer_comm_per_pass += c.exposed_s / static_cast<double>(2 * forwards);
            hidden_per_pass += (c.time_s - c.exposed_s) / static_cast<double>(2 * forwards);
            layer_comm_name += (layer_comm_name.empty() ? "" : " + ") + std::string(enum_name(c.axis)) + " " + c.collective;
            layer_comm_bytes += c.bytes_per_step / static_cast<double>(2 * forwards);
        }
    double pp_bytes = 0;
    for (const CommTerm& c : p.comm)
        if (c.axis == Axis::pp && !c.gradient_sync && c.calls_per_step > 0)
            pp_bytes = c.bytes_per_step / static_cast<double>(c.calls_per_step);
    std::vector<double> end_of_passes(static_cast<size_t>(s.pp), 0);
    const bool dual = s.schedule == Schedule::dualpipe;
    for (const SimOp& o : r.ops) {
        const int64_t vs = o.position;
        std::string args = fmt::format(R"("chunk":{},{}"micro_batch":{},"virtual_stage":{})", o.chunk,
                                       dual ? fmt::format(R"("direction":{},)", o.line) : "", o.micro_batch, vs);
        // A backward under recomputation first replays its forward: drawn as "R3" before "B3".
        const double rec = o.kind == 'B' ? std::min(chunk_times(s, o.rank).r_s, o.end_s - o.start_s) : 0.0;
        if (rec > 0)
            ev.span(fmt::format("R{}", o.micro_batch), o.rank, kCompute, o.start_s * us, rec * us,
                    fmt::format(R"("chunk":{},"micro_batch":{},"what":"recomputed forward")", o.chunk, o.micro_batch));
        ev.span(fmt::format("{}{}", o.kind, o.micro_batch), o.rank, kCompute, (o.start_s + rec) * us,
                (o.end_s - o.start_s - rec) * us, args);
        if (o.kind != 'W' && layer_comm_per_pass > 0)
            ev.span(layer_comm_name, o.rank, kLayerComm, o.start_s * us, std::min(layer_comm_per_pass, o.end_s - o.start_s) * us,
                    fmt::format(R"("bytes":{},"exposed":true)", layer_comm_bytes));
        if (o.kind != 'W' && hidden_per_pass > 0)
            ev.span(layer_comm_name, o.rank, kHidden, o.start_s * us, std::min(hidden_per_pass, o.end_s - o.start_s) * us,
                    fmt::format(R"("bytes":{},"exposed":false)", layer_comm_bytes));
        const bool sends = (o.kind == 'F' && vs < r.line_length - 1) || (o.kind == 'B' && vs > 0);
        if (sends && s.p2p_s > 0)
            ev.span("send", o.rank, kSend, o.end_s * us, s.p2p_s * us,
                    fmt::format(R"("bytes":{},"to_virtual_stage":{},"what":"{}")", pp_bytes, o.kind == 'F' ? vs + 1 : vs - 1,
                                o.kind == 'F' ? "activations" : "gradients"));
        auto& end = end_of_passes[static_cast<size_t>(o.rank)];
        end = std::max(end, o.end_s);
    }
    // DP reduction of each rank overlaps the tail of its last backward, then the optimizer step.
    double dp_time = 0, dp_exposed = 0, dp_bytes = 0;
    for (const CommTerm& c : p.comm)
        if (c.axis == Axis::dp || c.axis == Axis::edp) {
            dp_time += c.time_s;
            dp_exposed += c.exposed_s;
            dp_bytes += c.bytes_per_step;
        }
    // A tied embedding's all-reduce joins the end stages after that, before their optimizer step.
    const CommTerm* tied = nullptr;
    for (const CommTerm& c : p.comm)
        if (c.axis == Axis::pp && c.gradient_sync) tied = &c;
    for (int64_t rank = 0; rank < s.pp; ++rank) {
        const double end = end_of_passes[static_cast<size_t>(rank)];
        double opt_start = end;
        if (dp_time > 0) {
            const double start = std::max(0.0, end - (dp_time - dp_exposed));
            ev.span("dp gradient reduction", rank, kDp, start * us, dp_time * us, fmt::format(R"("bytes":{})", dp_bytes));
            opt_start = start + dp_time;
        }
        if (tied && (rank == 0 || rank == s.pp - 1)) {
            const double start = std::max(opt_start, end);
            ev.span("tied embedding all-reduce", rank, kDp, start * us, tied->time_s * us,
                    fmt::format(R"("bytes":{})", tied->bytes_per_step));
            opt_start = start + tied->time_s;
        }
        ev.span("optimizer", rank, kCompute, std::max(opt_start, end) * us, p.time.optimizer_s * us, "");
    }
    out << "\n]}\n";
}

std::string trace_text(const Plan& p, const SimResult& r, const PipelineSpec& s) {
    std::ostringstream out;
    write_trace(out, p, r, s);
    return std::move(out).str();
}

}  // namespace shardplan
