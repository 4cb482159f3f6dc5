// The Python module's native half (pybind11): four calls into the library, JSON text in and out. The
// Python half (python/shardplan/__init__.py) builds requests from keyword arguments, turns 400s into
// ValueError and adds the notebook views. Plans, searches and traces go through the HTTP API's own
// function (handle_api), so a notebook, the server and the page give the same answer for the same case.
#include <pybind11/pybind11.h>

#include <filesystem>
#include <functional>
#include <string>
#include <utility>

#include "shardplan/api.h"
#include "shardplan/error.h"
#include "shardplan/io.h"
#include "shardplan/resolve.h"
#include "shardplan/validate.h"

namespace py = pybind11;
using namespace shardplan;

namespace {

// (status, body): a request through the API function, with a notebook's limits (no 10 s search budget,
// a wider top): the caller's own machine, not a shared server.
std::pair<int, std::string> api(const std::string& method, const std::string& path, const std::string& body) {
    ApiLimits limits;
    limits.max_top = 1000;
    limits.max_search_s = 3600;
    limits.max_body_bytes = static_cast<size_t>(kMaxJsonFileBytes);
    py::gil_scoped_release release;  // a search may take seconds: let other Python threads run
    const ApiResponse r = handle_api(method, path, body, limits);
    return {r.status, r.body};
}

// Errors keep the CLI's one line ("field: expected ..."): the Python half raises ValueError with it.
std::pair<int, std::string> guarded(const std::function<std::string()>& f) {
    try {
        return {200, f()};
    } catch (const ConfigError& e) {
        return {400, json{{"error", e.what()}}.dump()};
    }
}

}  // namespace

PYBIND11_MODULE(_native, m) {
    m.doc() = "shardplan's planning library (see the shardplan package for the Python interface)";
    m.def("api", &api, py::arg("method"), py::arg("path"), py::arg("body") = "",
          "One request through shardplan's HTTP API function: (status, JSON text).");
    m.def("validate", [](const std::string& path) {
        return guarded([&] {
            const FileAccess files{std::filesystem::path(path).parent_path().string()};
            return validation_to_json(validate_cases(read_cases(read_json_file(path, "path"), "path", &files))).dump();
        });
    }, py::arg("path"), "Published runs (the validation case format) predicted and compared: (status, JSON text).");
    m.def("model", [](const std::string& name_or_path, int64_t seq_len) {
        return guarded([&] { return model_report_json(model_from_arg(name_or_path, "model"), seq_len).dump(); });
    }, py::arg("name_or_path"), py::arg("seq_len") = 4096, "A model's parameter counts: (status, JSON text).");
    m.def("read_json", [](const std::string& path, const std::string& field) {
        return guarded([&] { return read_json_file(path, field).dump(); });
    }, py::arg("path"), py::arg("field"), "A JSON file under shardplan's limits: (status, JSON text).");
}
