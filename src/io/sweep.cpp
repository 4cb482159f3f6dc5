#include "shardplan/sweep.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace shardplan {

std::vector<SweepPoint> sweep(const ModelSpec& m, const ClusterSpec& c, const Layout& base, const SearchSpace& space,
                              SweepAxis axis, const std::vector<int64_t>& values, const SearchOptions& opt) {
    std::vector<SweepPoint> out;
    for (int64_t v : values) {
        ClusterSpec cc = c;
        Layout l = base;
        switch (axis) {
            case SweepAxis::gpus: cc.gpus = v; break;
            case SweepAxis::seq_len: l.seq_len = v; break;
            case SweepAxis::global_batch: l.global_batch = v; break;
        }
        out.push_back({v, search(m, cc, l, space, opt)});
    }
    return out;
}

Table sweep_table(const std::vector<SweepPoint>& points, SweepAxis axis) {
    Table t;
    t.header = {std::string(enum_name(axis)), "layout", "micro_batch", "zero", "recompute", "schedule",
                "tokens_per_s_per_gpu", "mfu", "memory_bytes", "margin_bytes", "step_s", "evaluated", "feasible"};
    for (const SweepPoint& p : points) {
        std::vector<std::string> row = {std::to_string(p.value)};
        if (p.result.best.empty()) {
            row.resize(t.header.size() - 2);  // blank up to the search counts, the last two columns
        } else {
            const Plan& b = p.result.best.front();
            row.insert(row.end(), {to_string(b.layout), std::to_string(b.layout.micro_batch), std::to_string(b.layout.zero),
                                   std::string(enum_name(b.layout.recompute)), std::string(enum_name(b.layout.schedule)),
                                   number_text(b.throughput.tokens_per_s_per_gpu), number_text(b.throughput.mfu),
                                   number_text(b.memory.total_bytes()), number_text(b.margin_bytes()),
                                   number_text(b.time.step_s)});
        }
        row.push_back(std::to_string(p.result.evaluated));
        row.push_back(std::to_string(p.result.feasible));
        t.rows.push_back(row);
    }
    return t;
}

namespace {

std::string xml(const std::string& s) {
    std::string out;
    for (char ch : s) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += ch;
        }
    }
    return out;
}

// A "nice" tick step (1, 2 or 5 × 10^k) giving about n ticks up to `top`.
double nice_step(double top, int n) {
    const double raw = top / n;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double f : {1.0, 2.0, 5.0, 10.0})
        if (raw <= f * mag) return f * mag;
    return 10 * mag;
}

std::string short_number(double v) {
    if (v >= 1e6) return fmt::format("{:g}M", v / 1e6);
    if (v >= 1e3) return fmt::format("{:g}k", v / 1e3);
    return fmt::format("{:g}", v);
}

}  // namespace

std::string sweep_svg(const std::vector<SweepPoint>& points, SweepAxis axis, const std::string& title) {
    constexpr double W = 760, H = 440, L = 80, R = 80, T = 56, B = 64;
    const double pw = W - L - R, ph = H - T - B;
    double xmin = 1e300, xmax = -1e300, ymax = 0, mmax = 0;
    for (const SweepPoint& p : points) {
        xmin = std::min(xmin, double(p.value));
        xmax = std::max(xmax, double(p.value));
        if (!p.result.best.empty()) {
            ymax = std::max(ymax, p.result.best.front().throughput.tokens_per_s_per_gpu);
            mmax = std::max(mmax, p.result.best.front().throughput.mfu * 100);
        }
    }
    if (points.empty()) xmin = xmax = 1;
    const bool logx = xmin > 0 && xmax / xmin >= 8;
    auto fx = [&](double v) {
        if (xmax == xmin) return L + pw / 2;
        return logx ? L + pw * (std::log2(v) - std::log2(xmin)) / (std::log2(xmax) - std::log2(xmin))
                    : L + pw * (v - xmin) / (xmax - xmin);
    };
    const double ystep = nice_step(ymax > 0 ? ymax * 1.1 : 1, 5), ytop = ystep * std::ceil((ymax > 0 ? ymax * 1.1 : 1) / ystep);
    const double mstep = nice_step(mmax > 0 ? mmax * 1.1 : 10, 5), mtop = mstep * std::ceil((mmax > 0 ? mmax * 1.1 : 10) / mstep);
    auto fy = [&](double v) { return T + ph * (1 - v / ytop); };
    auto fm = [&](double v) { return T + ph * (1 - v / mtop); };

    std::string s = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
        "font-family=\"sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"{}\">\n",
        W, H, W, H, xml(title));
    s += fmt::format("<rect width=\"{:.0f}\" height=\"{:.0f}\" fill=\"#ffffff\"/>\n", W, H);
    s += fmt::format("<text x=\"{:.0f}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", L, xml(title));
    // Grid and axes.
    for (double v = 0; v <= ytop + ystep / 2; v += ystep) {
        s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e5e7eb\"/>\n", L, fy(v), L + pw, fy(v));
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#1d4ed8\">{}</text>\n", L - 8, fy(v) + 4,
                         short_number(v));
    }
    for (double v = 0; v <= mtop + mstep / 2; v += mstep)
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#b45309\">{:g} %</text>\n", L + pw + 8, fm(v) + 4, v);
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#111827\"/>\n", L, T, T + ph);
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#111827\"/>\n", L + pw, T, T + ph);
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#111827\"/>\n", L, T + ph, L + pw, T + ph);
    for (const SweepPoint& p : points) {
        s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#111827\"/>\n",
                         fx(double(p.value)), T + ph, T + ph + 5);
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", fx(double(p.value)), T + ph + 20,
                         p.value);
    }
    const char* xname = axis == SweepAxis::gpus ? "GPUs" : axis == SweepAxis::seq_len ? "sequence length (tokens)"
                                                                                       : "global batch (sequences)";
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}{}</text>\n", L + pw / 2, H - 18, xname,
                     logx ? " (log scale)" : "");
    s += fmt::format("<text transform=\"translate(18 {:.1f}) rotate(-90)\" text-anchor=\"middle\" fill=\"#1d4ed8\">"
                     "tokens/s per GPU</text>\n", T + ph / 2);
    s += fmt::format("<text transform=\"translate({:.1f} {:.1f}) rotate(90)\" text-anchor=\"middle\" fill=\"#b45309\">"
                     "MFU</text>\n", W - 16, T + ph / 2);
    // Curves: a polyline per metric, broken where nothing fits.
    auto curve = [&](bool mfu, const char* color) {
        std::string pts;
        auto flush = [&] {
            if (!pts.empty())
                s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.5\"/>\n", pts, color);
            pts.clear();
        };
        for (const SweepPoint& p : points) {
            if (p.result.best.empty()) {
                flush();
                continue;
            }
            const Plan& b = p.result.best.front();
            const double y = mfu ? fm(b.throughput.mfu * 100) : fy(b.throughput.tokens_per_s_per_gpu);
            pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", fx(double(p.value)), y);
        }
        flush();
        for (const SweepPoint& p : points) {
            if (p.result.best.empty()) continue;
            const Plan& b = p.result.best.front();
            const double y = mfu ? fm(b.throughput.mfu * 100) : fy(b.throughput.tokens_per_s_per_gpu);
            s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{} = {}: {} ({:.0f} tokens/s/GPU, "
                             "MFU {:.1f} %)</title></circle>\n",
                             fx(double(p.value)), y, color, enum_name(axis), p.value, xml(to_string(b.layout)),
                             b.throughput.tokens_per_s_per_gpu, 100 * b.throughput.mfu);
        }
    };
    curve(false, "#1d4ed8");
    curve(true, "#b45309");
    for (const SweepPoint& p : points)
        if (p.result.best.empty())
            s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#b91c1c\">no layout fits</text>\n",
                             fx(double(p.value)), T + ph - 8);
    // Legend.
    s += fmt::format("<rect x=\"{:.1f}\" y=\"34\" width=\"14\" height=\"4\" fill=\"#1d4ed8\"/>"
                     "<text x=\"{:.1f}\" y=\"40\">tokens/s per GPU (best layout)</text>\n", L + pw - 330, L + pw - 310);
    s += fmt::format("<rect x=\"{:.1f}\" y=\"34\" width=\"14\" height=\"4\" fill=\"#b45309\"/>"
                     "<text x=\"{:.1f}\" y=\"40\">MFU</text>\n", L + pw - 110, L + pw - 90);
    s += "</svg>\n";
    return s;
}

}  // namespace shardplan
