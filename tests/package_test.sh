#!/usr/bin/env bash
# The C++ package (issue 18): `cmake --install` into a scratch prefix, then examples/consumer built
# against it twice, through find_package(shardplan) and through pkg-config, and run.
set -eu
build="$1"
root="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
test -f "$tmp/prefix/include/shardplan/shardplan.h"
test -f "$tmp/prefix/lib/cmake/shardplan/shardplanConfig.cmake" || test -f "$tmp/prefix/lib/x86_64-linux-gnu/cmake/shardplan/shardplanConfig.cmake"
cmake -S "$root/examples/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release > "$tmp/configure.log"
cmake --build "$tmp/consumer" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
"$tmp/consumer/consumer"
pc=$(dirname "$(find "$tmp/prefix" -name shardplan.pc | head -1)")
flags=$(PKG_CONFIG_PATH="$pc" pkg-config --define-prefix --cflags --libs shardplan)
g++ -O1 "$root/examples/consumer/main.cpp" $flags -o "$tmp/consumer-pc"
"$tmp/consumer-pc"
echo "package: installed, and the consumer built with find_package and with pkg-config"
