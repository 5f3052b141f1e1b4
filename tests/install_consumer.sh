#!/usr/bin/env bash
# install_consumer.sh BUILD_DIR SOURCE_DIR: install the built library into a temporary prefix and
# build a C program against it twice, through find_package(w4a16) and through pkg-config.
set -euo pipefail
build=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
cmake -S "$src/tests/consumer" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
cmake --build "$tmp/b" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
"$tmp/b/consumer"
pc="$tmp/prefix/lib/pkgconfig"
[ -d "$pc" ] || pc=$(dirname "$(find "$tmp/prefix" -name w4a16.pc | head -1)")
export PKG_CONFIG_PATH="$pc"
libs=$(pkg-config --libs --static w4a16)
cc "$src/tests/consumer/main.c" $(pkg-config --cflags w4a16) -o "$tmp/pc" ${libs/-lw4a16/-Wl,-Bstatic -lw4a16 -Wl,-Bdynamic}
"$tmp/pc"
echo "install_consumer: find_package and pkg-config consumers built and ran"
