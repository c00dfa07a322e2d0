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
# The HPA's downscale window is kube-controller-manager's flag, shortened
# from 5 min so the autoscale checks below see the scale down.
"$KUBETAB" cluster --addr "127.0.0.1:$port" --kubeconfig "$KUBECONFIG" --horizontal-pod-autoscaler-downscale-stabilization=15s >"$work/cluster.log" 2>&1 &
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

# Manifests the checks apply, diff and create from.
cat >"$work/api.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  labels:
    app: api
spec:
  replicas: 1
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
      - name: hello
        image: hello:1.0
EOF
sed 's/replicas: 1/replicas: 2/' "$work/api.yaml" >"$work/api-2.yaml"
cat >"$work/bad.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: bad
  labels: [oops
EOF
cat >"$work/unknown-field.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: strict
data:
  a: b
spec:
  bogus: true
EOF

# --- discovery and information ---
check "version" 0 'Server Version: v1\.' -- version
check "api-resources" 0 '^deployments +deploy +apps/v1 +true +Deployment$' -- api-resources
check "api-resources --namespaced=false" 0 '^nodes +no +v1 +false +Node$' -- api-resources --namespaced=false
check "api-versions" 0 '^apps/v1$' -- api-versions
# The review APIs kubectl auth uses are in discovery, create only.
check "api-resources: selfsubjectaccessreviews" 0 '^selfsubjectaccessreviews +authorization\.k8s\.io/v1 +false +SelfSubjectAccessReview$' -- api-resources
check "api-resources: localsubjectaccessreviews" 0 '^localsubjectaccessreviews +authorization\.k8s\.io/v1 +true +LocalSubjectAccessReview$' -- api-resources --api-group=authorization.k8s.io
check "api-resources: selfsubjectreviews" 0 '^selfsubjectreviews +authentication\.k8s\.io/v1 +false +SelfSubjectReview$' -- api-resources --api-group=authentication.k8s.io
check "api-resources -o wide: reviews are create only" 0 '^selfsubjectrulesreviews +authorization\.k8s\.io/v1 +false +SelfSubjectRulesReview +create *$' -- api-resources -o wide
check "api-versions: authorization.k8s.io/v1" 0 '^authorization\.k8s\.io/v1$' -- api-versions
check "create -f a SelfSubjectAccessReview" 0 '^true$' -- create -o 'jsonpath={.status.allowed}' -f - <<<'{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}}'
check "get selfsubjectaccessreviews: create only" 1 'MethodNotAllowed' -- get selfsubjectaccessreviews
check "explain selfsubjectaccessreviews" 0 '^KIND: +SelfSubjectAccessReview$' -- explain selfsubjectaccessreviews
check "explain a review's field" 0 '^FIELD: resourceAttributes <ResourceAttributes>$' -- explain localsubjectaccessreview.spec.resourceAttributes
check "cluster-info" 0 'Kubernetes control plane.* is running at https://127\.0\.0\.1' -- cluster-info
check "explain pods" 0 '^KIND: +Pod$' -- explain pods
check "explain deployment.spec.replicas" 0 '^FIELD: +replicas <integer>$' -- explain deployment.spec.replicas

# --- get: output formats ---
check "get nodes" 0 '^node-1 +Ready +<none> +[0-9]+[smh]' -- get nodes
check "get nodes -o wide" 0 '^NAME +STATUS +ROLES +AGE +VERSION +INTERNAL-IP' -- get nodes -o wide
check "get node -o yaml" 0 '^kind: Node$' -- get node node-1 -o yaml
check "get nodes -o json" 0 '^    "kind": "List",$' -- get nodes -o json
check "get node -o jsonpath" 0 '^node-1$' -- get node node-1 -o 'jsonpath={.metadata.name}'
check "get nodes -o jsonpath range" 0 '^node-2 Ready$' -- get nodes -o 'jsonpath={range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Ready")].type}{"\n"}{end}'
check "get nodes -o name" 0 '^node/node-3$' -- get nodes -o name
check "get nodes -o custom-columns" 0 '^NAME +CPU$' -- get nodes -o custom-columns=NAME:.metadata.name,CPU:.status.capacity.cpu
check "get node -o go-template" 0 '^node-1$' -- get node node-1 -o 'go-template={{.metadata.name}}'
# A node registered without a kubelet (checked at the end, once the node
# lifecycle controller's 50 s grace period has passed); unschedulable, so
# no check's pod lands on it.
printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"bare"},"spec":{"unschedulable":true}}' >"$work/bare.json"
check "create a node without a kubelet" 0 '^node/bare created$' -- create -f "$work/bare.json"
check "a node without conditions is Unknown" 0 '^bare +Unknown,SchedulingDisabled ' -- get node bare
check "get unknown output format" 1 'unable to match a printer suitable for the output format "bogus"' -- get nodes -o bogus

# --- create ---
check "create namespace" 0 '^namespace/team-a created$' -- create namespace team-a
check "create deployment" 0 '^deployment.apps/web created$' -- create deployment web --image=hello --replicas=2
check "create deployment again" 1 '^error: failed to create deployment: deployments.apps "web" already exists$' -- create deployment web --image=hello
check "create deployment --replicas=-1" 1 'spec.replicas: Invalid value: -1: must be greater than or equal to 0' -- create deployment neg --image=hello --replicas=-1
check "create configmap --from-literal" 0 '^configmap/settings created$' -- create configmap settings --from-literal=color=blue --from-literal=size=L
check "get configmap -o jsonpath" 0 '^blue$' -- get configmap settings -o 'jsonpath={.data.color}'
check "create secret generic" 0 '^secret/creds created$' -- create secret generic creds --from-literal=password=s3cret
check "get secret data is base64" 0 '^czNjcmV0$' -- get secret creds -o 'jsonpath={.data.password}'
check "create service clusterip" 0 '^service/front created$' -- create service clusterip front --tcp=80:8080
check "get service" 0 '^front +ClusterIP +[0-9.]+ +<none> +80/TCP' -- get service front
check "create job" 0 '^job.batch/once created$' -- create job once --image=hello
check "create cronjob" 0 '^cronjob.batch/tick created$' -- create cronjob tick --image=hello --schedule='*/1 * * * *'
check "get cronjob" 0 '^tick +\*/1 \* \* \* \* +<none> +False +0 +<none> +[0-9]+s$' -- get cronjob tick
check "create cronjob without --schedule" 1 'required flag\(s\) \\?"schedule\\?" not set' -- create cronjob nosched --image=hello
check "create cronjob bad schedule" 1 '^error: failed to create cronjob: CronJob.batch "bad" is invalid: spec.schedule' -- create cronjob bad --image=hello --schedule='not a schedule'
check "create job --from=cronjob" 0 '^job.batch/manual created$' -- create job manual --from=cronjob/tick
# The CronJob controller sees a Job it controls but did not start (upstream warns the same).
until_ok 30 "cronjob-controller: UnexpectedJob" '^Saw a job that the controller did not create or forgot: manual$' -- get events --field-selector reason=UnexpectedJob -o 'jsonpath={.items[0].message}'
check "create -f malformed YAML" 1 'error converting YAML to JSON|error parsing' -- create -f "$work/bad.yaml"
check "create --validate=strict unknown field" 1 'unknown field "spec"' -- create --validate=strict -f "$work/unknown-field.yaml"

# --- the deployment runs ---
until_count 60 2 "get pods: 2 Running" '^web-[a-z0-9]+-[a-z0-9]{5} +1/1 +Running +0 +[0-9]+s' -- get pods -l app=web
check "wait --for=condition=Available" 0 '^deployment.apps/web condition met$' -- wait --for=condition=Available deployment/web --timeout=60s
check "rollout status" 0 'deployment "web" successfully rolled out' -- rollout status deployment/web --timeout=60s
pod=$("$KUBECTL" get pods -l app=web -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
until_ok 30 "logs" "$pod" -- logs "$pod"
check "logs deployment/web" 0 'Hello from web-' -- logs deployment/web
# kubectl top reads metrics.k8s.io (metrics-server's API upstream).
until_ok 30 "top nodes" '^node-1 +[0-9]+m +[0-9]+% +[0-9]+Mi' -- top nodes
until_ok 30 "top pods" '^web-[a-z0-9]+-[a-z0-9]{5} +[0-9]+m +[0-9]+Mi' -- top pods -l app=web
check "get pods -A" 0 '^default +web-[a-z0-9]+-[a-z0-9]{5} +1/1 +Running' -- get pods -A
check "get pods -l" 0 '^web-[a-z0-9]+-[a-z0-9]{5} +1/1 +Running' -- get pods -l app=web
check "get pods --field-selector" 0 '^pod/web-' -- get pods --field-selector=status.phase=Running -o name
check "get pods -L" 0 '^NAME +READY +STATUS +RESTARTS +AGE +APP$' -- get pods -L app
check "get pods --sort-by" 0 '^web-' -- get pods --sort-by=.metadata.name
# --sort-by on a spec field needs the whole objects in the Table's rows
# (includeObject=Object); without them kubectl prints "No resources found".
check "get pods --sort-by a spec field" 0 '^web-' -- get pods --sort-by='{spec.containers[0].name}'
check "get -w (bounded)" 0 '^web +2/2 +2 +2' -- get deployment web -w --request-timeout=2s
check "get rs has pod-template-hash" 0 'pod-template-hash=' -- get rs --show-labels
check "describe deployment" 0 '^Replicas: +2 desired \| 2 updated \| 2 total \| 2 available \| 0 unavailable$' -- describe deployment web
check "describe node" 0 '^Capacity:$' -- describe node node-1
check "events" 0 '^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$' -- events
check "events --for" 0 'ScalingReplicaSet +Deployment/web +Scaled up replica set web-[a-z0-9]+ .*to 2' -- events --for deployment/web

# --- run and expose ---
check "run" 0 '^pod/solo created$' -- run solo --image=hello
check "run --dry-run=client -o yaml" 0 '^    run: preview$' -- run preview --image=hello --dry-run=client -o yaml
check "run without --image" 1 'required flag\(s\) .*image.* not set' -- run nope
check "run --restart invalid" 1 '^error: invalid restart policy: Sometimes$' -- run nope --image=hello --restart=Sometimes
check "run --expose without --port" 1 '^error: --port must be set when exposing a service$' -- run nope --image=hello --expose
check "run --rm without --attach" 1 '^error: --rm should only be used for attached containers$' -- run nope --image=hello --rm
check "run --expose" 0 '^service/runweb created$' -- run runweb --image=web --port=8080 --expose
until_ok 60 "run: pod Running" '^solo +1/1 +Running +0 ' -- get pod solo
check "run: labelled run=NAME" 0 '^pod/solo$' -- get pods -l run=solo -o name
check "run --attach --rm --restart=Never" 0 '^pod "once" deleted$' -- run once --attach --rm --restart=Never --image=hello -- --ticks=1
check "run --attach exit code" 3 '^pod default/fails terminated \(Error\)$' -- run fails --attach --restart=Never --image=hello -- --ticks=0 --exit=3
check "expose deployment" 0 '^service/web exposed$' -- expose deployment web --port=80 --target-port=8080
check "expose deployment again" 1 '^Error from server \(AlreadyExists\): services "web" already exists$' -- expose deployment web --port=80
check "expose without a port" 1 "^error: couldn't find port via --port flag or introspection$" -- expose deployment web --name=web2
check "expose pod" 0 '^service/solo exposed$' -- expose pod solo --port=80
check "expose configmap" 1 '^error: cannot expose a ConfigMap$' -- expose configmap settings --port=80
check "get exposed service" 0 '^web +ClusterIP +[0-9.]+ +<none> +80/TCP ' -- get service web
until_ok 60 "exposed service has endpoints" '^web +[0-9.]+:8080,[0-9.]+:8080 ' -- get endpoints web

# --- apply, diff, patch, label, annotate, scale ---
check "create deployment for patching" 0 '^deployment.apps/api created$' -- create deployment api --image=hello:1.0
check "diff -f unchanged" 0 '^$' -- diff -f "$work/api.yaml"
check "diff -f changed" 1 '^\+  replicas: 2$' -- diff -f "$work/api-2.yaml"
# kubectl apply validates against the server's /openapi/v3 before sending
# (--validate=true is the default), so these need the server's OpenAPI.
sed 's/name: api$/name: site/; s/app: api$/app: site/' "$work/api.yaml" >"$work/site.yaml"
sed 's/replicas: 1/replicas: 2/' "$work/site.yaml" >"$work/site-2.yaml"
sed 's/name: api$/name: shop/; s/app: api$/app: shop/' "$work/api.yaml" >"$work/shop.yaml"
check "apply -f (created)" 0 '^deployment.apps/site created$' -- apply -f "$work/site.yaml"
check "apply -f again (unchanged)" 0 '^deployment.apps/site unchanged$' -- apply -f "$work/site.yaml"
check "apply -f changed (configured)" 0 '^deployment.apps/site configured$' -- apply -f "$work/site-2.yaml"
check "apply -f changed: generation 2" 0 '^2$' -- get deployment site -o jsonpath='{.metadata.generation}'
check "apply --server-side" 0 '^deployment.apps/site serverside-applied$' -- apply --server-side -f "$work/site-2.yaml"
site_rv=$("$KUBECTL" get deployment site -o jsonpath='{.metadata.generation} {.metadata.resourceVersion}')
check "apply --server-side again (no change)" 0 '^deployment.apps/site serverside-applied$' -- apply --server-side -f "$work/site-2.yaml"
check "no-op apply keeps generation and resourceVersion" 0 "^${site_rv}\$" -- get deployment site -o jsonpath='{.metadata.generation} {.metadata.resourceVersion}'
# kubectl create --raw posts the file as it is, with no Content-Type: read
# as JSON (as upstream), so JSON is created and YAML gets the serializer's
# error with the start of the body in hex.
printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"raw-json"}}' >"$work/raw.json"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: raw-yaml\n' >"$work/raw.yaml"
# PodTemplate: stored and printed as upstream (NAME CONTAINERS IMAGES POD LABELS).
printf '{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"tmpl"},"template":{"metadata":{"labels":{"app":"tmpl"}},"spec":{"containers":[{"name":"hello","image":"hello:1.0"}]}}}' >"$work/tmpl.json"
check "create podtemplate" 0 '^podtemplate/tmpl created$' -- create -f "$work/tmpl.json"
check "get podtemplates" 0 '^tmpl +hello +hello:1\.0 +app=tmpl$' -- get podtemplates
check "explain podtemplate.template" 0 '^FIELD: +template <PodTemplateSpec>$' -- explain podtemplate.template
check "create --raw with JSON" 0 '"name":"raw-json"' -- create --raw /api/v1/namespaces/default/configmaps -f "$work/raw.json"
check "create --raw with YAML" 1 "^Error from server \(BadRequest\): the object provided is unrecognized \(must be of type ConfigMap\): couldn't get version/kind; json parse error: invalid character 'a' looking for beginning of value \(61706956657273696f6e3a2076310a6b696e643a20436f6e6669674d6170 \.\.\.\)$" -- create --raw /api/v1/namespaces/default/configmaps -f "$work/raw.yaml"
check "create -f" 0 '^deployment.apps/shop created$' -- create -f "$work/shop.yaml"
check "create -f again" 1 'Error from server \(AlreadyExists\): error when creating ".*shop.yaml": deployments.apps "shop" already exists' -- create -f "$work/shop.yaml"
check "patch --type merge" 0 '^deployment.apps/api patched$' -- patch deployment api --type merge -p '{"spec":{"replicas":3}}'
check "patch --type merge (no change)" 0 '^deployment.apps/api patched \(no change\)$' -- patch deployment api --type merge -p '{"spec":{"replicas":3}}'
check "patch --type json" 0 '^deployment.apps/api patched$' -- patch deployment api --type json -p '[{"op":"replace","path":"/spec/replicas","value":1}]'
check "patch --type strategic" 0 '^deployment.apps/api patched$' -- patch deployment api -p '{"spec":{"template":{"spec":{"containers":[{"name":"hello","image":"hello:2.0"}]}}}}'
check "patch --type unknown" 1 '^error: --type must be one of \[json merge strategic\], not "foo"$' -- patch deployment api --type foo -p '{}'
check "patch without -p" 1 'must specify --patch or --patch-file containing the contents of the patch' -- patch deployment api
check "label" 0 '^deployment.apps/api labeled$' -- label deployment api tier=backend
check "label without --overwrite" 1 "'tier' already has a value \(backend\), and --overwrite is false" -- label deployment api tier=front
check "label --overwrite" 0 '^deployment.apps/api labeled$' -- label deployment api tier=front --overwrite
check "label KEY-" 0 '^deployment.apps/api unlabeled$' -- label deployment api tier-
check "annotate" 0 '^deployment.apps/api annotated$' -- annotate deployment api owner=team-a
check "scale" 0 '^deployment.apps/api scaled$' -- scale deployment api --replicas=2
check "cordon" 0 '^node/node-3 cordoned$' -- cordon node-3
check "uncordon" 0 '^node/node-3 uncordoned$' -- uncordon node-3

# --- delete ---
check "delete --cascade=orphan" 0 '^deployment.apps "api" deleted' -- delete deployment api --cascade=orphan
check "orphaned replicaset stays" 0 '^api-[a-z0-9]+ ' -- get rs -l app=api
check "delete -l" 0 '^replicaset.apps "api-[a-z0-9]+" deleted' -- delete rs -l app=api
check "delete by name" 0 '^configmap "settings" deleted' -- delete configmap settings
check "scale web to 0" 0 '^deployment.apps/web scaled$' -- scale deployment web --replicas=0
until_ok 60 "web pods gone after scale" 'No resources found' -- get pods -l app=web
check "delete deployment" 0 '^deployment.apps "web" deleted' -- delete deployment web
check "wait --for=delete (already gone)" 0 '' -- wait --for=delete deployment/web --timeout=5s
check "get deleted deployment" 1 'Error from server \(NotFound\): deployments.apps "web" not found' -- get deployment web
check "unknown resource" 1 "the server doesn't have a resource type \"foos\"" -- get foos

# --- exec: kubectl v1.32 streams it over a WebSocket (v5.channel.k8s.io) ---
check "run pod for exec" 0 '^pod/exec-target created$' -- run exec-target --image=hello
check "wait for exec-target" 0 '^pod/exec-target condition met$' -- wait --for=condition=Ready pod/exec-target --timeout=60s
check "exec" 0 '^Hello from exec-target! \(hello:1\.0\) args: --ticks=0$' -- exec exec-target -- hello --ticks=0
check "exec: the command's exit code" 7 '^command terminated with exit code 7$' -- exec exec-target -- hello --ticks=0 --exit=7
check "exec -c unknown container" 1 '^Error from server \(BadRequest\): container nope is not valid for pod exec-target$' -- exec exec-target -c nope -- hello
check "exec into an unknown pod" 1 '^Error from server \(NotFound\): pods "nope" not found$' -- exec nope -- hello
# -i with an empty stdin: kubectl sends v5's close signal for stdin at once.
check "exec -i, stdin at EOF" 0 '^hello: done after 0 ticks, exit code 0$' -- exec -i exec-target -- hello --ticks=0 </dev/null
# stdin reaches the command (hello --stdin echoes each line), streamed.
check "exec -i with input" 0 '^hello: stdin: hi there$' -- exec -i exec-target -- hello --stdin <<<"hi there"
check "attach to an unknown pod" 1 '^Error from server \(NotFound\): pods "nope" not found$' -- attach nope
# attach joins the container's own process: its output from now on (hello
# ticks every second, so kubectl is stopped after 4 s: timeout's 124).
printf '#!/usr/bin/env bash\nexec timeout 4 "$REAL_KUBECTL" "$@"\n' >"$work/for-4s"
chmod +x "$work/for-4s"
REAL_KUBECTL=$KUBECTL KUBECTL=$work/for-4s check "attach streams the output" 124 '^hello: tick [0-9]+$' -- attach exec-target
# exec -it: kubectl needs a terminal on its stdin (script(1) gives it a
# pty); the container's sh gets one too (the runtime's line discipline):
# it prompts, runs the typed lines, and exit ends the session with its code.
if command -v script >/dev/null; then
  cat >"$work/in-tty" <<'EOF'
#!/usr/bin/env bash
exec script -qec "$(printf '%q ' "$REAL_KUBECTL" "$@")" /dev/null
EOF
  chmod +x "$work/in-tty"
  export REAL_KUBECTL=$KUBECTL
  printf 'echo tty-$HOSTNAME\nexit 5\n' >"$work/tty-in"
  KUBECTL=$work/in-tty check "exec -it sh on a pty: the prompt" 5 '^/ # ' -- exec -it exec-target -- sh <"$work/tty-in"
  # The input is all typed ahead, so its echo may land inside the output
  # line ("exittty-exec-target"), as on any terminal: match it unanchored
  # (the echoed command line says tty-$HOSTNAME, not the expansion).
  KUBECTL=$work/in-tty check "exec -it sh on a pty: the output" 5 'tty-exec-target' -- exec -it exec-target -- sh <"$work/tty-in"
  # run -it: the pod's sh has stdin and a terminal, and attach joins it.
  printf 'echo attached-$HOSTNAME\nexit 4\n' >"$work/attach-in"
  KUBECTL=$work/in-tty check "run -it --rm busybox -- sh (attach on a pty)" 4 'attached-debug' -- run -it --rm debug --image=busybox --restart=Never -- sh <"$work/attach-in"
fi

# --- a userland in every container (issue #13): exec resolves the command
# on PATH in the container's root file system, as a runtime does ---
check "exec ls /etc" 0 '^resolv\.conf$' -- exec exec-target -- ls /etc
check "exec cat /etc/hostname" 0 '^exec-target$' -- exec exec-target -- cat /etc/hostname
check "exec sh -c: \$HOSTNAME" 0 '^exec-target$' -- exec exec-target -- sh -c 'echo $HOSTNAME && env | grep KUBERNETES_SERVICE_HOST'
check "exec sh -c: env | grep" 0 '^KUBERNETES_SERVICE_HOST=10\.96\.0\.1$' -- exec exec-target -- sh -c 'echo $HOSTNAME && env | grep KUBERNETES_SERVICE_HOST'
check "exec an unknown command: 127" 127 '^OCI runtime exec failed: exec failed: unable to start container process: exec: "nope": executable file not found in \$PATH: unknown$' -- exec exec-target -- nope
check "exec: the service account's files" 0 '^token$' -- exec exec-target -- ls /var/run/secrets/kubernetes.io/serviceaccount
printf 'copied in\n' >"$work/cp-in.txt"
check "cp a file into a pod" 0 '^$' -- cp "$work/cp-in.txt" exec-target:/tmp/cp-in.txt
check "the file copied in" 0 '^copied in$' -- exec exec-target -- cat /tmp/cp-in.txt
check "cp a file out of a pod" 0 "^tar: removing leading '/' from member names$" -- cp exec-target:/etc/hostname "$work/cp-out.txt"
check "the file copied out" 0 '^exec-target$' -- exec -i exec-target -- cat <"$work/cp-out.txt"
check "create deployment without --port" 0 '^deployment.apps/userweb created$' -- create deployment userweb --image=web --replicas=2
check "expose --target-port=8080 without containerPort" 0 '^service/userweb exposed$' -- expose deployment userweb --port=80 --target-port=8080
until_ok 60 "userweb has endpoints" '^userweb +[0-9.]+:8080,[0-9.]+:8080 ' -- get endpoints userweb
check "services/proxy reaches a port the image exposes" 0 '^web: hello from userweb-' -- get --raw /api/v1/namespaces/default/services/userweb:80/proxy/
check "run -i --rm busybox wget" 0 '^web: hello from userweb-' -- run -i --rm wgetter --image=busybox --restart=Never -- wget -qO- http://userweb
userweb_ip=$("$KUBECTL" get service userweb -o jsonpath='{.spec.clusterIP}')
check "nslookup a Service" 0 "^Address: ${userweb_ip//./\\.}\$" -- exec exec-target -- nslookup userweb.default.svc.cluster.local
check "cat /etc/resolv.conf" 0 '^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local$' -- exec exec-target -- cat /etc/resolv.conf

# --- port-forward: kubectl v1.32 tunnels SPDY through a WebSocket ---
# forward NAME TARGET REMOTE_PORT ANSWER_PATTERN LOG_PATTERN: runs kubectl
# port-forward TARGET LOCAL:REMOTE_PORT in the background, sends one HTTP
# request through the local port (bash's /dev/tcp), then stops kubectl;
# the answer and kubectl's output must match.
forward() {
  local name=$1 target=$2 remote=$3 answer_pattern=$4 log_pattern=$5
  local lport=$(( 40000 + RANDOM % 20000 )) answer fpid
  "$KUBECTL" port-forward "$target" "$lport:$remote" >"$work/forward.log" 2>&1 &
  fpid=$!
  for _ in $(seq 1 100); do grep -q '^Forwarding from 127' "$work/forward.log" && break; sleep 0.1; done
  answer=$( { exec 3<>"/dev/tcp/127.0.0.1/$lport" && printf 'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3 && timeout 10 cat <&3; } 2>&1 )
  sleep 0.3
  kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null
  if grep -Eq -- "$answer_pattern" <<<"$answer" && grep -Eq -- "$log_pattern" "$work/forward.log"; then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name: kubectl port-forward $target $lport:$remote (answer /$answer_pattern/, log /$log_pattern/)"
    sed 's/^/     answer | /' <<<"$answer" | head -10
    sed 's/^/     log    | /' "$work/forward.log" | head -10
  fi
}
# --- the API server's proxy to pods and Services (kubectl get --raw, kubectl proxy) ---
check "pods/proxy" 0 '^web: hello from runweb ' -- get --raw /api/v1/namespaces/default/pods/runweb:8080/proxy/
check "services/proxy" 0 '^ok$' -- get --raw /api/v1/namespaces/default/services/runweb:8080/proxy/healthz
check "services/proxy: no such port" 1 '^Error from server \(ServiceUnavailable\): no service port 81 found for service "runweb"$' -- get --raw /api/v1/namespaces/default/services/runweb:81/proxy/
check "pods/proxy: nothing listens" 1 '^Error from server \(ServiceUnavailable\): error trying to reach service: dial tcp [0-9.]+:81: connect: connection refused$' -- get --raw /api/v1/namespaces/default/pods/runweb:81/proxy/
# kubectl proxy serves the API on a local port, the proxy subresources included.
pport=$(( 40000 + RANDOM % 20000 ))
"$KUBECTL" proxy --port="$pport" >"$work/proxy.log" 2>&1 &
ppid=$!
for _ in $(seq 1 100); do grep -q '^Starting to serve' "$work/proxy.log" && break; sleep 0.1; done
answer=$( { exec 3<>"/dev/tcp/127.0.0.1/$pport" && printf 'GET /api/v1/namespaces/default/services/runweb:8080/proxy/ HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3 && timeout 10 cat <&3; } 2>&1 )
kill "$ppid" 2>/dev/null; wait "$ppid" 2>/dev/null
if grep -q '^web: hello from runweb ' <<<"$answer"; then
  passed=$((passed + 1)); echo "ok   kubectl proxy to services/proxy"
else
  failed=$((failed + 1)); echo "FAIL kubectl proxy to services/proxy"
  sed 's/^/     answer | /' <<<"$answer" | head -10; sed 's/^/     log    | /' "$work/proxy.log" | head -5
fi
forward "port-forward svc/runweb" svc/runweb 8080 '^web: hello from runweb ' '^Handling connection for [0-9]+$'
forward "port-forward pod/runweb" pod/runweb 8080 '^HTTP/1\.[01] 200 OK' "^Forwarding from 127\.0\.0\.1:[0-9]+ -> 8080\$"
forward "port-forward to a port nobody serves" pod/runweb 81 '^$' \
  'error forwarding port 81 to pod [0-9a-f-]+, uid : failed to connect to localhost:81 inside the pod: connection refused'

# --- PodDisruptionBudgets: the disruption controller's status, and drain
# (through pods/eviction) held back by the budget ---
check "create pdb" 0 '^poddisruptionbudget.policy/exec-pdb created$' -- create pdb exec-pdb --selector=run=exec-target --min-available=1
until_ok 30 "pdb status: 1 healthy of min 1 allows 0" '^exec-pdb +1 +N/A +0 ' -- get pdb exec-pdb
node=$("$KUBECTL" get pod exec-target -o jsonpath='{.spec.nodeName}')
check "drain held back by the pdb" 1 'Cannot evict pod as it would violate the pod.s disruption budget' -- drain "$node" --force --timeout=3s
check "uncordon after the drain" 0 "^node/$node uncordoned\$" -- uncordon "$node"
check "the pod is still there" 0 '^exec-target +1/1 +Running' -- get pod exec-target
check "delete pdb" 0 '^poddisruptionbudget.policy "exec-pdb" deleted' -- delete pdb exec-pdb

# --- the node lifecycle controller: a node whose kubelet never posted ---
until_ok 120 "the controller writes its Ready condition" '^Unknown NodeStatusNeverUpdated Kubelet never posted node status\.$' -- get node bare -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason} {.status.conditions[?(@.type=="Ready")].message}'
check "then NotReady (Ready is Unknown)" 0 '^bare +NotReady,SchedulingDisabled ' -- get node bare
check "its conditions: Kubelet never posted node status." 0 '^  Ready +Unknown .* NodeStatusNeverUpdated +Kubelet never posted node status\.$' -- describe node bare
check "delete the node without a kubelet" 0 '^node "bare" deleted' -- delete node bare

# --- DaemonSets, StatefulSets and ReplicationControllers, with their
# ControllerRevisions (rollout status, history, undo) ---
cat >"$work/ds.yaml" <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: hello
        image: hello
EOF
cat >"$work/sts.yaml" <<'EOF'
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 3
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: hello
        image: hello
EOF
cat >"$work/rc.yaml" <<'EOF'
apiVersion: v1
kind: ReplicationController
metadata:
  name: legacy
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: legacy}
    spec:
      containers:
      - name: hello
        image: hello
EOF
nodes=$("$KUBECTL" get nodes --no-headers 2>/dev/null | wc -l)
check "create daemonset" 0 '^daemonset.apps/agent created$' -- create -f "$work/ds.yaml"
check "rollout status ds" 0 '^daemon set "agent" successfully rolled out$' -- rollout status ds/agent --timeout=60s
until_count 30 "$nodes" "one daemon pod per node" '^agent-[a-z0-9]{5} +1/1 +Running' -- get pods -l app=agent
until_count 30 "$nodes" "daemon pods on distinct nodes" '.' -- get pods -l app=agent -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}'
check "a daemon pod's node affinity names its node" 0 '^metadata.name In node-' -- get pods -l app=agent -o 'jsonpath={.items[0].spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key} {.items[0].spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].operator} {.items[0].spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0]}'
check "get ds" 0 "^agent +$nodes +$nodes +$nodes +$nodes +$nodes +<none> " -- get ds agent
check "set image ds" 0 '^daemonset.apps/agent image updated$' -- set image ds/agent hello=hello:2.0
check "rollout status ds after set image" 0 '^daemon set "agent" successfully rolled out$' -- rollout status ds/agent --timeout=90s
check "rollout history ds" 0 '^2 +<none>$' -- rollout history ds/agent
check "rollout history ds --revision=2" 0 'Image:[[:space:]]+hello:2\.0' -- rollout history ds/agent --revision=2
check "get controllerrevisions" 0 '^agent-[a-z0-9]+ +daemonset\.apps/agent +2 ' -- get controllerrevisions
check "rollout undo ds" 0 '^daemonset.apps/agent rolled back$' -- rollout undo ds/agent
check "rollout status ds after undo" 0 '^daemon set "agent" successfully rolled out$' -- rollout status ds/agent --timeout=90s
check "undo renumbers revision 1 as 3" 0 '^3 +<none>$' -- rollout history ds/agent
until_count 30 "$nodes" "daemon pods back on the first image" '^hello$' -- get pods -l app=agent -o 'jsonpath={range .items[*]}{.spec.containers[0].image}{"\n"}{end}'
check "delete ds" 0 '^daemonset.apps "agent" deleted' -- delete ds agent

check "create statefulset" 0 '^statefulset.apps/db created$' -- create -f "$work/sts.yaml"
check "rollout status sts" 0 'roll out complete: 3 new pods have been updated' -- rollout status sts/db --timeout=90s
check "pods db-0 db-1 db-2" 0 '^db-0 db-1 db-2 $' -- get pods -l app=db -o 'jsonpath={range .items[*]}{.metadata.name} {end}'
check "created in order" 0 '^create Pod db-0 in StatefulSet db successful,create Pod db-1 in StatefulSet db successful,create Pod db-2 in StatefulSet db successful,$' -- get events --field-selector involvedObject.name=db,reason=SuccessfulCreate --sort-by=.metadata.creationTimestamp -o 'jsonpath={range .items[*]}{.message}{","}{end}'
check "stable hostname and subdomain" 0 '^db-1 db$' -- get pod db-1 -o 'jsonpath={.spec.hostname} {.spec.subdomain}'
check "sts status: observedGeneration and revisions" 0 '^1 3 3 db-[a-z0-9]+ db-[a-z0-9]+$' -- get sts db -o 'jsonpath={.status.observedGeneration} {.status.readyReplicas} {.status.updatedReplicas} {.status.currentRevision} {.status.updateRevision}'
check "set image sts" 0 '^statefulset.apps/db image updated$' -- set image sts/db hello=hello:2.0
check "rollout status sts after set image" 0 'roll out complete: 3 new pods have been updated' -- rollout status sts/db --timeout=120s
until_ok 60 "currentRevision becomes updateRevision" '^(db-[a-z0-9]+) \1 3$' -- get sts db -o 'jsonpath={.status.currentRevision} {.status.updateRevision} {.status.currentReplicas}'
check "rollout history sts" 0 '^2 +<none>$' -- rollout history sts/db
check "rollout history sts --revision=2" 0 'Image:[[:space:]]+hello:2\.0' -- rollout history sts/db --revision=2
check "rollout undo sts" 0 '^statefulset.apps/db rolled back$' -- rollout undo sts/db
check "rollout status sts after undo" 0 'roll out complete: 3 new pods have been updated' -- rollout status sts/db --timeout=120s
until_ok 60 "sts pods back on the first image" '^hello hello hello $' -- get pods -l app=db -o 'jsonpath={range .items[*]}{.spec.containers[0].image} {end}'
check "scale sts" 0 '^statefulset.apps/db scaled$' -- scale sts db --replicas=1
until_ok 60 "scaled down to db-0" '^db-0 $' -- get pods -l app=db -o 'jsonpath={range .items[*]}{.metadata.name} {end}'
check "delete sts" 0 '^statefulset.apps "db" deleted' -- delete sts db

check "create replicationcontroller" 0 '^replicationcontroller/legacy created$' -- create -f "$work/rc.yaml"
until_ok 60 "get rc" '^legacy +2 +2 +2 ' -- get rc legacy
check "get all lists the rc" 0 '^replicationcontroller/legacy +2 +2 +2 ' -- get all
check "scale rc" 0 '^replicationcontroller/legacy scaled$' -- scale rc legacy --replicas=1
until_count 60 1 "rc scaled to one pod" '^legacy-[a-z0-9]{5} +1/1 +Running' -- get pods -l app=legacy
check "delete rc" 0 '^replicationcontroller "legacy" deleted' -- delete rc legacy

# --- ResourceQuota, LimitRange and HorizontalPodAutoscaler (issue 14) ---
# In namespaces of their own, deleted at the end, so nothing above sees them.
check "quota: create namespace" 0 '^namespace/quota-demo created$' -- create namespace quota-demo
check "create quota" 0 '^resourcequota/q created$' -- create quota q -n quota-demo --hard=pods=2,count/configmaps=5
until_ok 30 "quota status.used filled by the controller" '^0$' -- get quota q -n quota-demo -o 'jsonpath={.status.used.pods}'
check "quota: first pod" 0 '^pod/p1 created$' -- run p1 -n quota-demo --image=hello --restart=Never
check "quota: second pod" 0 '^pod/p2 created$' -- run p2 -n quota-demo --image=hello --restart=Never
check "quota exceeded" 1 '^Error from server \(Forbidden\): pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2$' -- run p3 -n quota-demo --image=hello --restart=Never
check "get quota columns" 0 '^NAME +AGE +REQUEST +LIMIT$' -- get quota -n quota-demo
check "get quota row" 0 '^q +[0-9]+[sm] +count/configmaps: 1/5, pods: 2/2 *$' -- get quota q -n quota-demo
check "describe quota" 0 '^pods +2 +2$' -- describe quota q -n quota-demo
check "quota freed by a delete" 0 '^pod "p2" force deleted' -- delete pod p2 -n quota-demo --grace-period=0 --force
until_ok 30 "quota used drops to 1" '^1$' -- get quota q -n quota-demo -o 'jsonpath={.status.used.pods}'

cat >"$work/limits.yaml" <<'YAML'
apiVersion: v1
kind: LimitRange
metadata:
  name: limits
spec:
  limits:
  - type: Container
    default:
      cpu: 200m
    defaultRequest:
      cpu: 100m
    max:
      cpu: "1"
YAML
cat >"$work/big.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: big
spec:
  containers:
  - name: app
    image: hello
    resources:
      limits:
        cpu: "2"
YAML
check "limitrange: create namespace" 0 '^namespace/limits-demo created$' -- create namespace limits-demo
check "create limitrange" 0 '^limitrange/limits created$' -- create -f "$work/limits.yaml" -n limits-demo
check "limitrange default applied" 0 '^100m 200m$' -- run lr -n limits-demo --image=hello --restart=Never --dry-run=server -o 'jsonpath={.spec.containers[0].resources.requests.cpu} {.spec.containers[0].resources.limits.cpu}'
check "limitrange annotation" 0 '^LimitRanger plugin set: cpu request for container lr; cpu limit for container lr$' -- run lr -n limits-demo --image=hello --restart=Never --dry-run=server -o 'jsonpath={.metadata.annotations.kubernetes\.io/limit-ranger}'
check "limitrange max" 1 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2$' -- create -f "$work/big.yaml" -n limits-demo
check "get limits" 0 '^limits +[0-9]{4}-' -- get limits -n limits-demo

# autoscale a Deployment of the cpu image (a loop that never sleeps),
# limited to 200m of cpu: 200 % of its 100m request against a 50 % target.
cat >"$work/burn.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: burn
spec:
  replicas: 1
  selector:
    matchLabels:
      app: burn
  template:
    metadata:
      labels:
        app: burn
    spec:
      containers:
      - name: cpu
        image: cpu
        resources:
          requests:
            cpu: 100m
          limits:
            cpu: 200m
YAML
check "hpa: create namespace" 0 '^namespace/hpa-demo created$' -- create namespace hpa-demo
check "hpa: create cpu deployment" 0 '^deployment.apps/burn created$' -- create -f "$work/burn.yaml" -n hpa-demo
check "autoscale" 0 '^horizontalpodautoscaler.autoscaling/burn autoscaled$' -- autoscale deployment burn -n hpa-demo --min=1 --max=3 --cpu-percent=50
check "get hpa columns" 0 '^NAME +REFERENCE +TARGETS +MINPODS +MAXPODS +REPLICAS +AGE$' -- get hpa -n hpa-demo
check "hpa stored as v2" 0 '^50$' -- get horizontalpodautoscalers.v2.autoscaling burn -n hpa-demo -o 'jsonpath={.spec.metrics[0].resource.target.averageUtilization}'
until_ok 180 "hpa scales the busy deployment up to 3" '^3$' -- get deploy burn -n hpa-demo -o 'jsonpath={.spec.replicas}'
until_ok 60 "get hpa row" '^burn +Deployment/burn +cpu: [0-9]+%/50% +1 +3 +3 +' -- get hpa burn -n hpa-demo
check "SuccessfulRescale up" 0 'New size: 3; reason: cpu resource utilization \(percentage of request\) above target' -- get events -n hpa-demo --field-selector reason=SuccessfulRescale -o 'jsonpath={range .items[*]}{.message}{"\n"}{end}'
check "describe hpa conditions" 0 'ScalingActive +True +ValidMetricFound' -- describe hpa burn -n hpa-demo
check "hpa v1 view" 0 '^50 [0-9]+$' -- get horizontalpodautoscalers.v1.autoscaling burn -n hpa-demo -o 'jsonpath={.spec.targetCPUUtilizationPercentage} {.status.currentCPUUtilizationPercentage}'
# The load stops: the same Deployment, an image that sleeps.
check "hpa: load stops" 0 '^deployment.apps/burn image updated$' -- set image deployment/burn cpu=sleep -n hpa-demo
until_ok 240 "hpa scales back down to 1" '^1$' -- get deploy burn -n hpa-demo -o 'jsonpath={.spec.replicas}'
check "SuccessfulRescale down" 0 'New size: 1; reason: All metrics below target' -- get events -n hpa-demo --field-selector reason=SuccessfulRescale -o 'jsonpath={range .items[*]}{.message}{"\n"}{end}'
check "delete hpa" 0 '^horizontalpodautoscaler.autoscaling "burn" deleted' -- delete hpa burn -n hpa-demo
# CustomResourceDefinitions (issue #14): the CronTab of the upstream task
# "Extend the Kubernetes API with CustomResourceDefinitions".
cat >"$work/crd.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec:
                type: string
                description: The cron schedule of the job.
                pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'
              image:
                type: string
              replicas:
                type: integer
                minimum: 1
                maximum: 10
                default: 1
          status:
            type: object
            properties:
              replicas:
                type: integer
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
YAML
cat >"$work/crontab.yaml" <<'YAML'
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
YAML
cat >"$work/badcron.yaml" <<'YAML'
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: bad-cron
spec:
  cronSpec: "* * * *"
  image: my-awesome-cron-image
  replicas: 15
YAML
check "crd: create" 0 '^customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created$' -- apply -f "$work/crd.yaml"
check "crd: established" 0 'condition met$' -- wait --for condition=established --timeout=20s crd/crontabs.stable.example.com
check "crd: get crd" 0 '^crontabs.stable.example.com +[0-9]{4}-' -- get crd
check "crd: api-resources" 0 '^crontabs +ct +stable.example.com/v1 +true +CronTab$' -- api-resources --api-group=stable.example.com
check "crd: create crontab" 0 '^crontab.stable.example.com/my-new-cron-object created$' -- apply -f "$work/crontab.yaml"
check "crd: printer columns" 0 '^NAME +SPEC +REPLICAS +AGE$' -- get crontabs
check "crd: row by short name" 0 '^my-new-cron-object +\* \* \* \* \*/5 +1 +[0-9]+s$' -- get ct
check "crd: defaulted" 0 '^1$' -- get crontab my-new-cron-object -o 'jsonpath={.spec.replicas}'
check "crd: invalid crontab" 1 '^The CronTab "bad-cron" is invalid: $' -- apply -f "$work/badcron.yaml"
check "crd: invalid pattern" 1 '^\* spec.cronSpec: Invalid value: "\* \* \* \*": spec.cronSpec in body should match' -- apply -f "$work/badcron.yaml"
check "crd: invalid maximum" 1 'spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10' -- apply -f "$work/badcron.yaml"
check "crd: apply again (merge patch)" 0 '^crontab.stable.example.com/my-new-cron-object configured$' -- apply -f <(sed 's/my-awesome-cron-image/another-image/' "$work/crontab.yaml")
check "crd: explain" 0 'cronSpec	<string>' -- explain crontab.spec
check "crd: explain field" 0 'The cron schedule of the job' -- explain crontab.spec.cronSpec
check "crd: strategic merge patch refused" 1 '^error: application/strategic-merge-patch\+json is not supported by stable.example.com/v1, Kind=CronTab: the body of the request was in an unknown format - accepted media types include: application/json-patch\+json, application/merge-patch\+json, application/apply-patch\+yaml$' -- patch ct my-new-cron-object -p '{"spec":{"image":"x"}}'
check "crd: merge patch" 0 'patched$' -- patch ct my-new-cron-object --type=merge -p '{"spec":{"image":"patched"}}'
check "crd: scale" 0 '^crontab.stable.example.com/my-new-cron-object scaled$' -- scale crontab my-new-cron-object --replicas=3
check "crd: scaled" 0 '^3$' -- get ct my-new-cron-object -o 'jsonpath={.spec.replicas}'
check "crd: field selector" 0 '^my-new-cron-object$' -- get ct --field-selector metadata.name=my-new-cron-object -o name --no-headers -o 'jsonpath={.items[*].metadata.name}'
# Value validations: a schema may combine restrictions with oneOf (and
# allOf, anyOf, not), but only restrict what it declares: a type inside a
# oneOf is refused at creation; an object that matches no alternative is
# refused with kube-openapi's message.
cat >"$work/backups.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backups.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: backups, singular: backup, kind: Backup}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            oneOf:
            - required: [cron]
            - required: [interval]
            properties:
              cron: {type: string}
              interval: {type: integer}
              owner: {type: string, not: {enum: [root]}}
YAML
check "crd: type inside oneOf refused" 1 '^The CustomResourceDefinition "backups.stable.example.com" is invalid: spec.versions\[0\].schema.openAPIV3Schema.properties\[spec\].oneOf\[1\].type: Forbidden: must be empty to be structural$' -- apply -f <(sed 's/- required: \[interval\]/- {required: [interval], type: object}/' "$work/backups.yaml")
check "crd: create backups" 0 '^customresourcedefinition.apiextensions.k8s.io/backups.stable.example.com created$' -- apply -f "$work/backups.yaml"
check "crd: backups established" 0 'condition met$' -- wait --for condition=established --timeout=20s crd/backups.stable.example.com
check "crd: oneOf, none valid" 1 '^\* <nil>: Invalid value: "": "spec" must validate one and only one schema \(oneOf\)\. Found none valid$' -- create -f - <<<'{"apiVersion":"stable.example.com/v1","kind":"Backup","metadata":{"name":"b"},"spec":{"owner":"me"}}'
check "crd: oneOf, two valid" 1 '^The Backup "b" is invalid: <nil>: Invalid value: "": "spec" must validate one and only one schema \(oneOf\)\. Found 2 valid alternatives$' -- create -f - <<<'{"apiVersion":"stable.example.com/v1","kind":"Backup","metadata":{"name":"b"},"spec":{"cron":"@daily","interval":5}}'
check "crd: not" 1 '"spec.owner" must not validate the schema \(not\)$' -- create -f - <<<'{"apiVersion":"stable.example.com/v1","kind":"Backup","metadata":{"name":"b"},"spec":{"cron":"@daily","owner":"root"}}'
check "crd: oneOf, one valid" 0 '^backup.stable.example.com/b created$' -- create -f - <<<'{"apiVersion":"stable.example.com/v1","kind":"Backup","metadata":{"name":"b"},"spec":{"cron":"@daily"}}'
check "crd: delete backups" 0 '^customresourcedefinition.apiextensions.k8s.io "backups.stable.example.com" deleted$' -- delete crd backups.stable.example.com
# A watch of a CRD's objects ends when the CRD is deleted (upstream tears
# its storage down): kubectl get -w sees the object go, then exits 0.
"$KUBECTL" get ct -w --output-watch-events >"$work/crwatch.out" 2>&1 &
wpid=$!
for _ in $(seq 1 100); do grep -q 'my-new-cron-object' "$work/crwatch.out" && break; sleep 0.1; done
check "crd: delete crd" 0 '^customresourcedefinition.apiextensions.k8s.io "crontabs.stable.example.com" deleted$' -- delete crd crontabs.stable.example.com
for _ in $(seq 1 300); do kill -0 $wpid 2>/dev/null || break; sleep 0.1; done
if kill -0 $wpid 2>/dev/null; then
  kill $wpid; wait $wpid 2>/dev/null
  failed=$((failed + 1)); echo "FAIL crd: watch ends with its CRD: kubectl get ct -w still running 30s after the CRD went"
  sed 's/^/     | /' "$work/crwatch.out" | head -20
elif wait $wpid && grep -Eq '^DELETED +my-new-cron-object' "$work/crwatch.out"; then
  passed=$((passed + 1)); echo "ok   crd: watch ends with its CRD"
else
  failed=$((failed + 1)); echo "FAIL crd: watch ends with its CRD: kubectl get ct -w (want exit 0 after a DELETED my-new-cron-object)"
  sed 's/^/     | /' "$work/crwatch.out" | head -20
fi
# kubectl's discovery cache (~/.kube/cache) still lists crontabs, as it does
# against kube-apiserver; api-resources refreshes it, then the type is gone.
check "crd: api-resources without crontabs" 0 '^NAME' -- api-resources --api-group=stable.example.com
check "crd: get after delete" 1 '^error: the server doesn.t have a resource type "crontabs"$' -- get crontabs
# RBAC: a Role and RoleBinding for jane, checked by impersonation (the
# kubeconfig's user is the admin, in system:masters, who may impersonate).
check "rbac: create namespace" 0 '^namespace/rbac-demo created$' -- create namespace rbac-demo
check "rbac: create namespace other" 0 '^namespace/rbac-other created$' -- create namespace rbac-other
check "create role" 0 '^role.rbac.authorization.k8s.io/pod-reader created$' -- create role pod-reader --verb=get,list --resource=pods -n rbac-demo
check "create rolebinding" 0 '^rolebinding.rbac.authorization.k8s.io/jane-reads created$' -- create rolebinding jane-reads --role=pod-reader --user=jane -n rbac-demo
check "get role" 0 '^pod-reader +[0-9]{4}-[0-9]{2}-[0-9]{2}T' -- get roles -n rbac-demo
check "get rolebinding wide" 0 '^jane-reads +Role/pod-reader +[0-9]+[smh] +jane +$' -- get rolebindings -n rbac-demo -o wide
check "auth can-i list pods --as jane" 0 '^yes$' -- auth can-i list pods --as jane -n rbac-demo
check "auth can-i delete pods --as jane" 1 '^no$' -- auth can-i delete pods --as jane -n rbac-demo
check "auth can-i list pods elsewhere --as jane" 1 '^no$' -- auth can-i list pods --as jane -n rbac-other
check "get pods --as jane: forbidden" 1 '^Error from server \(Forbidden\): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "rbac-other"$' -- get pods --as jane -n rbac-other
check "get nodes --as jane: cluster scope" 1 '^Error from server \(Forbidden\): nodes is forbidden: User "jane" cannot list resource "nodes" in API group "" at the cluster scope$' -- get nodes --as jane
check "get pods --as jane: allowed" 0 '^No resources found in rbac-demo namespace\.$' -- get pods --as jane -n rbac-demo
check "auth can-i --list --as jane" 0 '^pods +\[\] +\[\] +\[get list\]$' -- auth can-i --list --as jane -n rbac-demo
check "auth can-i --list: self reviews" 0 '^selfsubjectaccessreviews.authorization.k8s.io +\[\] +\[\] +\[create\]$' -- auth can-i --list --as jane -n rbac-demo
check "auth can-i as admin" 0 '^yes$' -- auth can-i '*' '*' --all-namespaces
check "auth whoami" 0 '^Groups +\[system:masters system:authenticated\]$' -- auth whoami
check "auth whoami --as" 0 '^Username +jane$' -- auth whoami --as jane --as-group dev
check "get clusterroles: bootstrap roles" 0 '^cluster-admin +[0-9]{4}-' -- get clusterroles
check "get clusterroles: view" 0 '^view +[0-9]{4}-' -- get clusterroles
check "cluster-admin bound to system:masters" 0 '^cluster-admin +ClusterRole/cluster-admin +[0-9a-z]+ +system:masters' -- get clusterrolebindings -o wide
# An add-on's role (its resources need not be served) joins view by a label.
check "create clusterrole to aggregate" 0 '^clusterrole.rbac.authorization.k8s.io/crontab-reader created$' -- create -f - <<<'{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"crontab-reader"},"rules":[{"apiGroups":["stable.example.com"],"resources":["crontabs"],"verbs":["get","list"]}]}'
check "label it aggregate-to-view" 0 '^clusterrole.rbac.authorization.k8s.io/crontab-reader labeled$' -- label clusterrole crontab-reader rbac.authorization.k8s.io/aggregate-to-view=true
until_ok 30 "view aggregates it" 'crontabs' -- get clusterrole view -o 'jsonpath={.rules[*].resources}'
until_ok 30 "edit aggregates view" 'crontabs' -- get clusterrole edit -o 'jsonpath={.rules[*].resources}'
check "create rolebinding to view" 0 '^rolebinding.rbac.authorization.k8s.io/jane-views created$' -- create rolebinding jane-views --clusterrole=view --user=jane -n rbac-other
check "auth can-i get deployments via view" 0 '^yes$' -- auth can-i get deployments.apps --as jane -n rbac-other
check "auth can-i create deployments via view" 1 '^no$' -- auth can-i create deployments.apps --as jane -n rbac-other
check "bad roleRef kind" 1 'Unsupported value: "Policy": supported values: "Role", "ClusterRole"' -- create -f - <<<'{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"bad","namespace":"rbac-demo"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Policy","name":"x"},"subjects":[{"kind":"User","name":"jane"}]}'
check "node authorizer: a kubelet may not read any secret" 1 '^Error from server \(Forbidden\): secrets "nope" is forbidden: User "system:node:node-1" cannot get resource "secrets" in API group "" in the namespace "rbac-demo": no relationship found between node .node-1. and this object$' -- get secret nope -n rbac-demo --as system:node:node-1 --as-group system:nodes
check "node authorizer: a kubelet lists pods" 0 '^No resources found in rbac-demo namespace\.$' -- get pods -n rbac-demo --as system:node:node-1 --as-group system:nodes
check "describe role" 0 '^  pods +\[\] +\[\] +\[get list\]$' -- describe role pod-reader -n rbac-demo
check "describe rolebinding" 0 '^  User +jane +$' -- describe rolebinding jane-reads -n rbac-demo
check "describe clusterrole view (aggregated)" 0 '^  deployments\.apps +\[\] +\[\] +\[get list watch\]$' -- describe clusterrole view
# The escalation check: sam may create roles and bindings in rbac-demo and
# holds nothing else there, so may not grant more; escalate and bind waive it.
check "escalation: role-creator" 0 '^clusterrole.rbac.authorization.k8s.io/role-creator created$' -- create clusterrole role-creator --verb=create --resource=roles,rolebindings
check "escalation: sam creates roles" 0 '^rolebinding.rbac.authorization.k8s.io/sam-creates created$' -- create rolebinding sam-creates --clusterrole=role-creator --user=sam -n rbac-demo
check "escalation: a role granting get secrets" 1 '^Error from server \(Forbidden\): roles\.rbac\.authorization\.k8s\.io "secret-reader" is forbidden: user "sam" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:$' -- create role secret-reader --verb=get --resource=secrets -n rbac-demo --as sam
check "escalation: the missing rule" 1 '^\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}$' -- create role secret-reader --verb=get --resource=secrets -n rbac-demo --as sam
check "escalation: a role within sam's rules" 0 '^role.rbac.authorization.k8s.io/role-maker created$' -- create role role-maker --verb=create --resource=roles -n rbac-demo --as sam
check "escalation: a binding to view" 1 '^error: failed to create rolebinding: rolebindings\.rbac\.authorization\.k8s\.io "sam-views" is forbidden: user "sam" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:$' -- create rolebinding sam-views --clusterrole=view --user=sam -n rbac-demo --as sam
check "escalation: may escalate roles" 0 '^clusterrole.rbac.authorization.k8s.io/role-escalator created$' -- create clusterrole role-escalator --verb=escalate --resource=roles
check "escalation: sam escalates" 0 'created$' -- create rolebinding sam-escalates --clusterrole=role-escalator --user=sam -n rbac-demo
check "escalation: escalate waives it" 0 '^role.rbac.authorization.k8s.io/secret-reader created$' -- create role secret-reader --verb=get --resource=secrets -n rbac-demo --as sam
check "escalation: may bind view" 0 '^clusterrole.rbac.authorization.k8s.io/view-binder created$' -- create clusterrole view-binder --verb=bind --resource=clusterroles --resource-name=view
check "escalation: sam binds view" 0 'created$' -- create rolebinding sam-binds --clusterrole=view-binder --user=sam -n rbac-demo
check "escalation: bind waives it" 0 '^rolebinding.rbac.authorization.k8s.io/sam-views created$' -- create rolebinding sam-views --clusterrole=view --user=sam -n rbac-demo --as sam
check "escalation: only for view" 1 'rolebindings\.rbac\.authorization\.k8s\.io "sam-edits" is forbidden: user "sam"' -- create rolebinding sam-edits --clusterrole=edit --user=sam -n rbac-demo --as sam
for cr in role-creator role-escalator view-binder; do
  check "delete clusterrole $cr" 0 'deleted' -- delete clusterrole "$cr"
done
# Authentication: the kubeconfig's user is the admin by its bearer token;
# a wrong token is 401, and no credentials at all is system:anonymous.
check "auth whoami: the kubeconfig's token" 0 '^Username +kubetab-admin$' -- auth whoami
check "kubeconfig has a token" 0 '^.+$' -- config view --raw -o 'jsonpath={.users[0].user.token}'
sed -E 's/^( +token: ).*/\1not-the-token/' "$KUBECONFIG" >"$work/wrong-token"
check "a wrong token: Unauthorized" 1 '^error: You must be logged in to the server \(Unauthorized\)$' -- --kubeconfig "$work/wrong-token" get pods
# (kubectl without credentials asks for a user name over TLS: curl asks.)
server=$("$KUBECTL" config view -o 'jsonpath={.clusters[0].cluster.server}')
anon() {
  local name=$1 pattern=$2 path=$3 out
  out=$(curl -sk "$server$path" 2>&1)
  if grep -Eq -- "$pattern" <<<"$out"; then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1)); echo "FAIL $name: curl $path (pattern /$pattern/)"; sed 's/^/     | /' <<<"$out" | head -5
  fi
}
anon "anonymous: forbidden" '"message":"pods is forbidden: User \\"system:anonymous\\" cannot list resource \\"pods\\" in API group \\"\\" at the cluster scope"' /api/v1/pods
anon "anonymous: no discovery" '"code":403' /apis
anon "anonymous: /version" '"gitVersion"' /version
# The components' own identities and the controllers' roles.
check "get clusterrole system:controller:deployment-controller" 0 '^system:controller:deployment-controller +[0-9]{4}-' -- get clusterrole system:controller:deployment-controller
check "controller role bound to its ServiceAccount" 0 '^system:controller:replicaset-controller +ClusterRole/system:controller:replicaset-controller +[0-9a-z]+ +kube-system/replicaset-controller$' -- get clusterrolebinding system:controller:replicaset-controller -o wide --no-headers
check "controllers' ServiceAccounts" 0 '^generic-garbage-collector ' -- get serviceaccounts -n kube-system
check "auth can-i: the scheduler binds" 0 '^yes$' -- auth can-i create pods --subresource=binding --as system:kube-scheduler -n default
check "auth can-i: the scheduler may not delete a namespace" 1 '^no$' -- auth can-i delete namespaces --as system:kube-scheduler
check "auth can-i: a controller's ServiceAccount" 0 '^yes$' -- auth can-i create pods --as system:serviceaccount:kube-system:replicaset-controller -n default
check "delete clusterrole crontab-reader" 0 'deleted' -- delete clusterrole crontab-reader
for ns in rbac-demo rbac-other; do
  check "delete namespace $ns" 0 "^namespace \"$ns\" deleted" -- delete namespace "$ns" --wait=false
done

for ns in quota-demo limits-demo hpa-demo; do
  check "delete namespace $ns" 0 "^namespace \"$ns\" deleted" -- delete namespace "$ns" --wait=false
done

# Every component acts under its own identity; a refused request is logged
# as "kubetab: COMPONENT: ... is forbidden: ...". None may be refused.
if grep -Eq 'kubetab: [^ ]+: .* is forbidden' "$work/cluster.log"; then
  failed=$((failed + 1)); echo "FAIL components were refused requests (a missing rule):"
  grep -E 'kubetab: [^ ]+: .* is forbidden' "$work/cluster.log" | sort | uniq -c | head -20 | sed 's/^/     | /'
else
  passed=$((passed + 1)); echo "ok   no component was refused a request"
fi
echo
echo "kubectl conformance: $passed passed, $failed failed"
[ "$failed" = 0 ]
