#!/bin/sh
# Builds every guest "container image" of kubetab from source: one WASI
# preview1 module (wasm32-wasi) per image tag, written next to its source
# (hello/hello-1.0.wasm, hello/hello-2.0.wasm, ...). The .wasm files are checked
# in, so `go test` and `go build` work on machines without clang; run this after
# changing an image's source and commit the new .wasm with it.
#
# Needs Debian's clang, lld, wasi-libc and libclang-rt-dev-wasm32:
#
#	apt-get install clang lld wasi-libc libclang-rt-dev-wasm32
#
# Usage: wasm/images/build.sh   (from any directory)
set -eu

cd "$(dirname "$0")"

CC=${CC:-clang}
SYSROOT=${WASI_SYSROOT:-/usr}
# -Os keeps modules small (a node compiles each image once and keeps it);
# --strip-all drops the name section, so guest stack traces show indexes.
CFLAGS="--target=wasm32-wasi --sysroot=$SYSROOT -Os -Wall -Werror"
LDFLAGS="-Wl,--strip-all"

need() { # need <what> <debian package>
	echo "wasm/images/build.sh: $1 not found; install the Debian package $2 (apt-get install $2)" >&2
	exit 1
}
command -v "$CC" >/dev/null 2>&1 || need "$CC" clang
command -v wasm-ld >/dev/null 2>&1 || need wasm-ld lld
[ -f "$SYSROOT/include/wasm32-wasi/stdio.h" ] || need "wasi-libc headers ($SYSROOT/include/wasm32-wasi)" wasi-libc
[ -f "$SYSROOT/lib/wasm32-wasi/libc.a" ] || need "wasi-libc ($SYSROOT/lib/wasm32-wasi/libc.a)" wasi-libc
rt=$("$CC" --target=wasm32-wasi --sysroot="$SYSROOT" -print-libgcc-file-name)
[ -f "$rt" ] || need "compiler-rt builtins for wasm32 ($rt)" libclang-rt-dev-wasm32

# The object files go to a temporary directory.
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT

# compile_link <out.wasm> <src.c> <extra cflags...>: compiles, then links in a
# second step without -O. Linking through clang with -O runs Binaryen's
# wasm-opt whenever it is on PATH (clang's WebAssembly driver does), which
# would make the bytes depend on what else the machine has installed; the
# checked-in modules are built without it.
compile_link() {
	out=$1 src=$2
	shift 2
	# shellcheck disable=SC2086 # CFLAGS and LDFLAGS are word lists on purpose
	"$CC" $CFLAGS "$@" -c -o "$obj/module.o" "$src"
	# shellcheck disable=SC2086
	"$CC" --target=wasm32-wasi --sysroot="$SYSROOT" -o "$out" "$obj/module.o" $LDFLAGS
	echo "built $out ($(wc -c <"$out") bytes)"
}

# build <dir> <tag> <extra cflags...>: compiles <dir>/<dir>.c (which may include
# ../flags.h) into <dir>/<dir>-<tag>.wasm
build() {
	dir=$1 tag=$2
	shift 2
	compile_link "$dir/$dir-$tag.wasm" "$dir/$dir.c" "$@"
}

# hello: two tags from one source (see hello/README.md).
build hello 1.0 -DVERSION='"1.0"' -DGREETING='"Hello from"'
build hello 2.0 -DVERSION='"2.0"' -DGREETING='"Hi again from"'

# One tag each; see README.md for what they do.
for image in web crash oom cpu sleep config job; do
	build "$image" 1.0
done

# The userland of every image, and the busybox image (see busybox/README.md).
build busybox 1.36.1

# A test guest of the runtime (core/kubelet/cri/testdata/README.md).
compile_link ../../core/kubelet/cri/testdata/escape.wasm ../../core/kubelet/cri/testdata/escape.c

# The images' digests, for the tab's start (SHA-256 under js/wasm runs at a
# few MB/s): images.New takes each module's digest from here instead of
# hashing it; TestDigestTable checks every line against the content.
sha256sum */*.wasm >digests.txt
