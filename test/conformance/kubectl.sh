#!/usr/bin/env bash
# Real-kubectl conformance: drives the real kubectl (v1.32, /usr/bin/kubectl)
# against `kubetab cluster` and checks each command's exit code and an output
# pattern taken from upstream kubectl's behaviour (not from kubetab's output).
#
# Usage: test/conformance/kubectl.sh [path/to/kubetab]
set -uo pipefail
cd "$(dirname "$0")/../.."
KUBETAB=${1:-bin/kubetab}
KUBECTL=${KUBECTL:-kubectl}
command -v "$KUBECTL" >/dev/null || { echo "kubectl not found (install kubectl v1.32)"; exit 1; }
[ -x "$KUBETAB" ] || { echo "$KUBETAB not built: run ./build.sh build"; exit 1; }

work=$(mktemp -d)
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
port=$(( 20000 + RANDOM % 20000 ))
export KUBECONFIG=$work/kubeconfig
"$KUBETAB" cluster --addr "127.0.0.1:$port" --kubeconfig "$KUBECONFIG" >"$work/cluster.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  grep -q ready "$work/cluster.log" 2>/dev/null && break
  kill -0 $pid 2>/dev/null || { echo "kubetab cluster exited:"; cat "$work/cluster.log"; exit 1; }
  sleep 0.1
done
grep -q ready "$work/cluster.log" || { echo "kubetab cluster never printed ready"; cat "$work/cluster.log"; exit 1; }

passed=0 failed=0
# check NAME EXPECTED_EXIT PATTERN -- kubectl args...
check() {
  local name=$1 want=$2 pattern=$3; shift 4
  local out code
  out=$("$KUBECTL" "$@" 2>&1); code=$?
  if [ "$code" = "$want" ] && grep -Eq -- "$pattern" <<<"$out"; then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name: kubectl $* (exit $code, want $want; pattern /$pattern/)"
    sed 's/^/     | /' <<<"$out" | head -20
  fi
}
# until_ok SECONDS NAME PATTERN -- kubectl args...: retries until the pattern shows.
until_ok() {
  local secs=$1 name=$2 pattern=$3; shift 4
  local end=$((SECONDS + secs)) out
  while [ $SECONDS -lt $end ]; do
    out=$("$KUBECTL" "$@" 2>&1) && grep -Eq -- "$pattern" <<<"$out" && break
    sleep 0.5
  done
  check "$name" 0 "$pattern" -- "$@"
}

# until_count SECONDS N NAME PATTERN -- kubectl args...: exactly N lines match.
until_count() {
  local secs=$1 n=$2 name=$3 pattern=$4; shift 5
  local end=$((SECONDS + secs)) out got=0
  while [ $SECONDS -lt $end ]; do
    out=$("$KUBECTL" "$@" 2>&1)
    got=$(grep -Ec -- "$pattern" <<<"$out")
    [ "$got" = "$n" ] && break
    sleep 0.5
  done
  if [ "$got" = "$n" ]; then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name: kubectl $* ($got lines match /$pattern/, want $n)"
    sed 's/^/     | /' <<<"$out" | head -20
  fi
}

check "version" 0 'Server Version: v1\.' -- version
check "get nodes" 0 '^node-1 +Ready +<none> +[0-9]+[smh]' -- get nodes
check "get nodes -o wide" 0 'INTERNAL-IP' -- get nodes -o wide
check "create deployment" 0 '^deployment.apps/web created$' -- create deployment web --image=hello --replicas=2
until_count 60 2 "get pods: 2 Running" '^web-[a-z0-9]+-[a-z0-9]{5} +1/1 +Running +0 +[0-9]+s' -- get pods
pod=$("$KUBECTL" get pods -l app=web -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
until_ok 30 "logs" "$pod" -- logs "$pod"
check "get rs has pod-template-hash" 0 'pod-template-hash=' -- get rs --show-labels
check "scale to 0" 0 '^deployment.apps/web scaled$' -- scale deployment web --replicas=0
until_ok 60 "pods gone after scale" 'No resources found' -- get pods
check "delete deployment" 0 '^deployment.apps "web" deleted' -- delete deployment web
check "get deleted deployment" 1 'Error from server \(NotFound\): deployments.apps "web" not found' -- get deployment web
check "unknown resource" 1 "the server doesn't have a resource type \"foos\"" -- get foos

echo
echo "kubectl conformance: $passed passed, $failed failed"
[ "$failed" = 0 ]
