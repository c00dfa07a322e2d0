#!/usr/bin/env bash
# build.sh — build, serve, test and benchmark kubetab.
#
#   ./build.sh build   check Debian packages, build guest images, bundle the site,
#                      build kubetab.wasm into site/dist, then bin/kubetab (site embedded)
#   ./build.sh serve   build, then serve the site at http://127.0.0.1:8080
#   ./build.sh test    build, then every test; exits non-zero if any step fails
#   ./build.sh site    build, then copy the site into a folder that any static
#                      host serves as it is (root or sub-path); its path is
#                      the last line printed
#   ./build.sh bench [BASE_REV]
#                      build, then the wire size of a first visit, Go benchmarks, and
#                      issue #16's table in headless Chromium (test/browser/bench_test.go
#                      TestBenchTable: cold and warm navigation to first output, 12 pods,
#                      a 1,000-replica Deployment, main-thread long tasks, the worker's
#                      longest task, the scheduler's throughput), median (min-max) of
#                      KUBETAB_BENCH_RUNS runs (default 5). With BASE_REV (or
#                      KUBETAB_BENCH_BASE_REV), that commit is built too, in a temporary
#                      git worktree, and both are measured interleaved (A B A B), the
#                      table giving both columns and their ratio.
#                      KUBETAB_BENCH_SKIP_1000=1 leaves the 1,000-replica row out (its
#                      runs are most of the time); KUBETAB_BENCH_GO=0 skips the Go
#                      benchmarks, KUBETAB_BENCH_SOAK=0 the classroom-hour soak (native
#                      and Node: heap after ten minutes and at the end). Then the saved
#                      cluster of 300 pods in Chromium (save, restore, reload to Running)
#                      and the Flow tab live while 200 pods start (TestFlowBench).
#
# Go modules come from the Go module proxy and npm packages from the npm
# registry (site/package-lock.json); everything else is a Debian package,
# checked here and installed with apt-get when running as root.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
DIST=site/dist

# Debian packages the build and the tests need, and why.
DEBIAN_PACKAGES=(
  chromium               # browser tests and the page-load benchmark (headless)
  clang                  # guest images: C to wasm32-wasi
  lld                    # wasm-ld for the guest images
  wasi-libc              # the C library of the guest images
  libclang-rt-dev-wasm32 # compiler-rt builtins for wasm32
  wabt                   # wat2wasm, for the WAT guest images
  fonts-ipafont-gothic   # Japanese glyphs, so the Japanese UI renders in headless Chromium
)

# Packages the wasm build compiles without inlining (-gcflags=PKG=-l). The
# inliner's copies compress badly. First, code off the cluster's hot paths
# (kubectl's commands and printers, the console, lesson parsing, OpenAPI and
# its gnostic and protobuf models, YAML, CBOR): kubetab.wasm from 9.13 to
# 8.57 MB at brotli q5 (56.4 to 55.3 MB raw, 2026-12-02). Then the API's
# types and machinery (k8s.io/api, apiextensions, apimachinery,
# sigs.k8s.io), kubetab's CRDs and authorizer: 7.86 to 7.46 MB at brotli q11
# (62.3 to 60.1 MB raw, 2026-12-03), the generated protobuf, deep-copy and
# validation code above all. What that costs, measured under GOOS=js with
# Node (3 rounds each, interleaved, median): a Pod through the store's codec
# 11 -> 17 us to encode, 25 -> 30 us to decode (BenchmarkStorageCodec);
# BenchmarkCreatePod, GetPod and ListPods no slower; in Chromium
# (TestBenchTable, 3 rounds against the build before) the longest worker
# task while a command runs 404 against 401 ms, cold start 2.70 against
# 3.02 s, 12 pods Running 4.28 against 4.59 s. Left inlined, because it
# cost there: the API server's handlers and registry (without: 7.33 MB,
# ListPods +7 %), the controllers (without: 7.39 MB, the longest worker
# task 626 against 415 ms over 8 rounds); and the runtime and the standard
# library, the store, the scheduler, wazero (the guests' interpreter), the
# event loop. No inlining anywhere but there would give 7.07 MB, but
# CreatePod took 1.45 -> 1.83 ms. The native binary keeps the defaults.
WASM_NOINLINE=(
  'github.com/kubetab/kubetab/core/kubectl/...' 'github.com/kubetab/kubetab/core/console/...'
  'github.com/kubetab/kubetab/core/printers' 'github.com/kubetab/kubetab/core/lesson'
  'github.com/kubetab/kubetab/core/etcdctl' 'github.com/kubetab/kubetab/core/curl'
  'github.com/kubetab/kubetab/core/apiserver/openapi'
  'github.com/yuin/...' 'github.com/spf13/...' 'text/template/...'
  'github.com/google/gnostic-models/...' 'google.golang.org/protobuf/...' 'k8s.io/kube-openapi/...'
  'go.yaml.in/...' 'sigs.k8s.io/yaml/...' 'github.com/fxamacker/...' 'debug/...'
  'log/...' 'k8s.io/klog/...' 'github.com/davecgh/...'
  'k8s.io/api/...' 'k8s.io/apiextensions-apiserver/...' 'k8s.io/apimachinery/...'
  'sigs.k8s.io/...'
  'github.com/kubetab/kubetab/core/apiserver/apis/...' 'github.com/kubetab/kubetab/core/apiserver/apiextensions'
  'github.com/kubetab/kubetab/core/apiserver/authz'
)

log() { printf '\n\033[1;34m== %s\033[0m\n' "$*"; }

check_debian_packages() {
  local missing=() pkg
  for pkg in "${DEBIAN_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$pkg")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "build.sh: missing Debian packages: ${missing[*]}" >&2
    echo "build.sh: install them with: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  log "installing Debian packages: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

check_tools() {
  local tool
  for tool in go node npm; do
    command -v "$tool" >/dev/null || { echo "build.sh: $tool is not on PATH" >&2; exit 1; }
  done
}

wasm_exec_dir() {
  local goroot
  goroot=$(go env GOROOT)
  if [ -f "$goroot/lib/wasm/wasm_exec.js" ]; then
    echo "$goroot/lib/wasm"
  else
    echo "$goroot/misc/wasm"
  fi
}

cmd_build() {
  check_tools
  check_debian_packages
  if [ -f wasm/images/build.sh ]; then
    log "guest images (wasm/images/build.sh)"
    bash wasm/images/build.sh
  fi
  log "npm ci (site)"
  (cd site && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  log "bundle the site (esbuild) into $DIST"
  go run ./site/build -src site/src -out "$DIST" -lessons lessons
  log "kubetab.wasm (GOOS=js GOARCH=wasm)"
  local gcflags=() pkg
  for pkg in "${WASM_NOINLINE[@]}"; do gcflags+=("-gcflags=$pkg=-l"); done
  GOOS=js GOARCH=wasm go build -trimpath "${gcflags[@]}" -ldflags='-s -w' -o "$DIST/kubetab.wasm" ./wasm
  cp "$(wasm_exec_dir)/wasm_exec.js" "$DIST/wasm_exec.js"
  log "service worker build line, .gz and .br copies (site/build -finish)"
  # kubetab.wasm at brotli q11 takes minutes of CPU; a day-to-day build uses
  # q9 for it (KUBETAB_BROTLI_LARGE), ./build.sh site and bench use q11.
  go run ./site/build -finish -out "$DIST" -brotli 11 -brotli-large "${KUBETAB_BROTLI_LARGE:-9}"
  log "bin/kubetab"
  mkdir -p bin
  go build -trimpath -o bin/kubetab ./cmd/kubetab
  ls -l "$DIST/kubetab.wasm" bin/kubetab
}

cmd_serve() {
  cmd_build
  log "serving"
  exec bin/kubetab serve --addr 127.0.0.1:8080
}

# Test steps run one after another; a failing step is reported and the rest
# still run, and the script exits non-zero at the end.
FAILED=()
step() {
  local name=$1
  shift
  log "$name"
  local start=$SECONDS
  if "$@"; then
    echo "-- $name: ok ($((SECONDS - start))s)"
  else
    echo "-- $name: FAILED ($((SECONDS - start))s)"
    FAILED+=("$name")
  fi
}

# bg_step starts a step in the background, its output kept in a file until
# wait_steps prints it whole and counts the result like step's. For steps
# that mostly wait on a cluster's timers (the lesson verifier: 13 s of CPU in
# 128 s; the conformance script: real kubectl's round trips), run beside a
# step that keeps both cores busy.
BG=()
bg_step() {
  local name=$1 out
  shift
  out=$(mktemp)
  ( start=$SECONDS; if "$@" >"$out" 2>&1; then r=ok; else r=FAILED; fi
    echo "$r $((SECONDS - start))" >"$out.rc" ) &
  BG+=("$name"$'\t'"$out"$'\t'"$!")
  echo "-- $name: started in the background"
}
wait_steps() {
  local e name out pid r secs
  for e in "${BG[@]}"; do
    IFS=$'\t' read -r name out pid <<<"$e"
    wait "$pid"
    log "$name"
    cat "$out"
    read -r r secs <"$out.rc"
    echo "-- $name: $r (${secs}s, in the background)"
    [ "$r" = ok ] || FAILED+=("$name")
    rm -f "$out" "$out.rc"
  done
  BG=()
}

# Small packages whose tests are cheap enough to run under the race detector.
RACE_PACKAGES=(./core/store/... ./core/client/... ./core/trace/... ./core/eventloop/... ./core/internal/... ./wasm/bridge/... ./core/console/... ./site/...)

go_test_js() {
  local exec
  exec="$(wasm_exec_dir)/go_js_wasm_exec"
  # Every package under core/ must build and pass under GOOS=js as well,
  # and the glue that gives the JavaScript event loop its turns.
  GOOS=js GOARCH=wasm go test -exec="$exec" -count=1 -timeout 8m ./core/... ./wasm/jsloop/
}

browser_tests() {
  # The deployment test saves a screenshot; KUBETAB_SCREENSHOT=docs/screenshot.png
  # refreshes the README's picture, otherwise it goes to bin/ (not tracked).
  local shot=${KUBETAB_SCREENSHOT:-$ROOT/bin/screenshot.png}
  mkdir -p "$(dirname "$shot")"
  KUBETAB_BIN="$ROOT/bin/kubetab" KUBETAB_SCREENSHOT="$shot" \
    go test -count=1 -timeout 25m -parallel 2 -v ./test/browser/
}

# fuzz_briefly runs each fuzz target for a fixed number of inputs; their seed
# corpora (testdata/fuzz) also run as ordinary tests in every go test. A count
# rather than a duration: a duration that ends while the fuzzer minimizes a
# new input fails with "context deadline exceeded" although nothing is wrong.
fuzz_briefly() {
  local t
  for t in "FuzzDecodeAndValidate ./core/apiserver" "FuzzApplyPatch ./core/apiserver" \
           "FuzzRestore ./core/store" "FuzzModule ./core/kubelet/cri/instrument" \
           "FuzzParse ./core/lesson" "FuzzSplitWords ./core/kubectl"; do
    set -- $t
    go test -run '^$' -fuzz "^$1\$" -fuzztime "${KUBETAB_FUZZTIME:-20000x}" -timeout 5m "$2" || return 1
  done
}

cmd_test() {
  # The tests need the .br copies to exist, not to be small: q5 of the wasm
  # takes seconds where q9 takes a minute or more of CPU.
  KUBETAB_BROTLI_LARGE=${KUBETAB_BROTLI_LARGE:-5} cmd_build
  step "go vet (native)" go vet ./...
  step "go vet (GOOS=js)" env GOOS=js GOARCH=wasm go vet ./core/... ./wasm/...
  step "go test (native)" go test -count=1 -timeout 5m ./...
  step "go test -race (small packages)" go test -race -count=1 -timeout 10m "${RACE_PACKAGES[@]}"
  step "site JavaScript tests (node --test)" bash -c 'cd site && node --test $(find src -name "*.test.js" | sort)'
  step "fuzz, briefly (decode+validate, patches, snapshots, module rewriting, lesson files, console word splitting)" fuzz_briefly
  # Every lesson in both languages on fresh clusters (core/lesson); with no
  # lesson it fails ("no lessons found in lessons"). Four at once: the
  # lessons mostly wait on the cluster's timers (28 files: 10 s of CPU,
  # 128 s with -j 4, 180 s with -j 2; 309 MB at most). It and the real
  # kubectl's checks run beside the GOOS=js tests, which keep the cores busy.
  bg_step "lesson verifier" bin/kubetab lessons verify -j 4 lessons
  if [ -f test/conformance/kubectl.sh ]; then
    bg_step "real kubectl conformance" bash test/conformance/kubectl.sh
  fi
  step "go test (GOOS=js under Node)" go_test_js
  wait_steps
  step "browser tests (headless Chromium)" browser_tests
  echo
  if [ ${#FAILED[@]} -gt 0 ]; then
    echo "build.sh test: FAILED: ${FAILED[*]}"
    exit 1
  fi
  echo "build.sh test: all steps passed"
}

# build_sched_wasm builds core/scheduler's tests as a GOOS=js binary in bin/
# of the tree at $1: the table's scheduler row runs its
# BenchmarkSchedulingBasic in headless Chromium.
build_sched_wasm() {
  (cd "$1" && mkdir -p bin && GOOS=js GOARCH=wasm go test -c -o bin/scheduler.test.wasm ./core/scheduler/)
}

cmd_bench() {
  local base_rev=${1:-${KUBETAB_BENCH_BASE_REV:-}} base_dir=""
  KUBETAB_BROTLI_LARGE=${KUBETAB_BROTLI_LARGE:-11} cmd_build
  log "core/scheduler's benchmarks as a GOOS=js binary (bin/scheduler.test.wasm)"
  build_sched_wasm "$ROOT"
  if [ -n "$base_rev" ]; then
    base_dir=$(mktemp -d /tmp/kubetab-bench-base.XXXXXX)
    rmdir "$base_dir"
    trap 'git -C "$ROOT" worktree remove --force "$base_dir" 2>/dev/null || true' EXIT
    log "the base, $base_rev, in a temporary worktree ($base_dir)"
    git worktree add --detach "$base_dir" "$base_rev"
    (cd "$base_dir" && KUBETAB_BROTLI_LARGE=$KUBETAB_BROTLI_LARGE ./build.sh build)
    build_sched_wasm "$base_dir"
  fi
  log "wire size of a first visit (every file the page, its worker and its service worker fetch)"
  go run ./site/build -sizes -out "$DIST"
  if [ "${KUBETAB_BENCH_GO:-1}" != 0 ]; then
    log "Go benchmarks (core)"
    local out status=0
    out=$(mktemp)
    go test -run '^$' -bench . -benchmem -benchtime 200ms ./core/... >"$out" 2>&1 || status=$?
    grep -E '^(pkg:|Benchmark|FAIL|---|panic)' "$out" || true
    rm -f "$out"
    [ "$status" -eq 0 ] || { echo "build.sh bench: Go benchmarks failed" >&2; exit "$status"; }
    log "the saved cluster under GOOS=js (Node): snapshot save, restore and share link of 300 pods"
    PATH="$PATH:$(wasm_exec_dir)" GOOS=js GOARCH=wasm go test -run '^$' -bench 'Snapshot300Pods' -benchtime 3x -benchmem ./core/cluster |
      grep -E '^(Benchmark|FAIL|---|panic)' || echo "build.sh bench: the GOOS=js snapshot benchmark failed" >&2
  fi
  if [ "${KUBETAB_BENCH_SOAK:-1}" != 0 ]; then
    log "soak: a scripted classroom hour at 20x on the injected clock, natively and under Node (heap after 10 min and at the end)"
    go test -run '^$' -bench ClassroomHour -benchtime 1x -timeout 15m ./core/cluster -soak |
      grep -E '^(Benchmark|FAIL|---|panic)' || echo "build.sh bench: the soak benchmark failed" >&2
    PATH="$PATH:$(wasm_exec_dir)" GOOS=js GOARCH=wasm go test -run '^$' -bench ClassroomHour -benchtime 1x -timeout 30m ./core/cluster -soak |
      grep -E '^(Benchmark|FAIL|---|panic)' || echo "build.sh bench: the GOOS=js soak benchmark failed" >&2
  fi
  log "headless Chromium: issue #16's table (${KUBETAB_BENCH_RUNS:-5} runs${base_rev:+, interleaved with $base_rev})"
  KUBETAB_BIN="$ROOT/bin/kubetab" KUBETAB_BENCH_RUNS=${KUBETAB_BENCH_RUNS:-5} \
    KUBETAB_BENCH_BASE=${base_dir:+$base_dir/bin/kubetab} \
    go test -count=1 -timeout 90m -run '^TestBenchTable$' -v ./test/browser/ |
    grep -E '^\||round [0-9]+|kubetab in headless|FAIL|^ok|panic'
  log "headless Chromium: the Flow tab live while 200 pods are created (3 rounds: main-thread long tasks)"
  KUBETAB_BIN="$ROOT/bin/kubetab" KUBETAB_BENCH_RUNS=3 \
    go test -count=1 -timeout 30m -run '^TestFlowBench$' -v ./test/browser/ |
    grep -E 'round [0-9]+:|Flow tab live|FAIL|ok'
  log "headless Chromium: the saved cluster of 300 pods (3 rounds)"
  KUBETAB_BIN="$ROOT/bin/kubetab" KUBETAB_BENCH_RUNS=3 \
    go test -count=1 -timeout 30m -run '^TestRestoreTime$' -v ./test/browser/ |
    grep -E 'median|round [0-9]+:|saved cluster|FAIL|ok'
}

# cmd_site writes bin/site: the built site with its .br and .gz copies, and
# nothing else (no .keep, no source maps). Every URL in it is relative, so it
# works at a host's root or under a sub-path; README.md ("Any static host")
# lists the headers a host should send.
cmd_site() {
  KUBETAB_BROTLI_LARGE=${KUBETAB_BROTLI_LARGE:-11} cmd_build
  local out=$ROOT/bin/site
  log "static site into $out"
  rm -rf "$out"
  mkdir -p "$out"
  (cd "$DIST" && find . -type f ! -name .keep ! -name '*.map' ! -name '*.map.gz' ! -name '*.map.br' -print0 |
    xargs -0 cp --parents -t "$out")
  du -sh "$out" | cut -f1 | sed 's/^/size on disk: /'
  echo "$out"
}

case "${1:-}" in
  build) cmd_build ;;
  site) cmd_site ;;
  serve) cmd_serve ;;
  test) cmd_test ;;
  bench) cmd_bench "${2:-}" ;;
  *)
    echo "usage: $0 build|serve|test|bench [BASE_REV]|site" >&2
    exit 2
    ;;
esac
