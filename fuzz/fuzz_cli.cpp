// libFuzzer target: the command line, flags to resolver to report. The first byte picks a subcommand that
// only reads (plan, model, export, presets); the rest, split at NUL bytes, are its arguments. Flags that
// would write files (-o, --output, --plot) or wait (serve) are dropped. Output goes to /dev/null; any
// input must end with exit code 0 or 2 (or 1 for an internal error, which is a finding too).
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);  // the reports; libFuzzer writes its own lines to stderr
    const int empty = ::open("/dev/null", O_RDONLY);
    ::dup2(empty, STDIN_FILENO);  // `--case -` reads standard input: an empty one, never a wait
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    static const char* commands[] = {"plan", "model", "export", "presets"};
    static std::FILE* sink = std::fopen("/dev/null", "w");
    std::vector<std::string> args = {"shardplan", commands[data[0] % 4]};
    const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
    size_t pos = 0;
    while (pos < rest.size() && args.size() < 40) {
        size_t end = rest.find('\0', pos);
        if (end == std::string::npos) end = rest.size();
        std::string a = rest.substr(pos, end - pos);
        pos = end + 1;
        if (a == "-o" || a.starts_with("--output") || a.starts_with("--plot") || a == "serve") continue;
        args.push_back(std::move(a));
    }
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    const int rc = shardplan::app::run_cli(static_cast<int>(argv.size()), argv.data(), sink);
    if (rc != 0 && rc != 2) std::abort();
    return 0;
}
