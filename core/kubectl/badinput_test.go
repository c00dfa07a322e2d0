package kubectl

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBadInputMatrix: bad input over raw HTTP (what any client can send)
// and over the console's kubectl gets kube-apiserver's status code and
// reason, or kubectl's own wording, and stores nothing: the store's
// revision, which every write moves, stays where it was.
func TestBadInputMatrix(t *testing.T) {
	e := newEnv(t)
	e.cluster()
	e.mustRun("create deployment api --image=hello:1.0")
	pod := func(name, extra string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `"` + extra + `},"spec":{"containers":[{"name":"c","image":"hello"}]}}`
	}
	deploy := func(name, replicas string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `"},"spec":{"replicas":` + replicas +
			`,"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"hello"}]}}}}`
	}
	var live map[string]any
	if err := json.Unmarshal([]byte(e.mustRun("get deployment api -o json")), &live); err != nil {
		t.Fatal(err)
	}
	liveWith := func(edit func(m map[string]any)) string {
		m := deepCopyMap(live)
		edit(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	big := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"x":"` + strings.Repeat("a", 3<<20+1) + `"}}`

	const pods = "/api/v1/namespaces/default/pods"
	const deploys = "/apis/apps/v1/namespaces/default/deployments"
	httpCases := []struct {
		name, method, path, contentType, body string
		code                                  int
		reason                                metav1.StatusReason
		message                               string // a part of the Status message
	}{
		{"malformed JSON", "POST", pods, "application/json", `{"apiVersion":"v1","kind":"Pod",`, 400, metav1.StatusReasonBadRequest, `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Pod ...)`},
		{"malformed YAML", "POST", pods, "application/yaml", "kind: Pod\nmetadata: [name\n", 400, metav1.StatusReasonBadRequest, ""},
		{"JSON that is not an object", "POST", pods, "application/json", `["a"]`, 400, metav1.StatusReasonBadRequest, "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct {"},
		{"wrong apiVersion", "POST", deploys, "application/json", strings.Replace(deploy("v2", "1"), "apps/v1", "apps/v2", 1), 400, metav1.StatusReasonBadRequest, "does not match the expected API version"},
		{"wrong kind", "POST", pods, "application/json", strings.Replace(pod("k", ""), `"kind":"Pod"`, `"kind":"Service"`, 1), 400, metav1.StatusReasonBadRequest, `no kind "Service" is registered`},
		{"invalid name", "POST", pods, "application/json", pod("Bad_Name", ""), 422, metav1.StatusReasonInvalid, "metadata.name: Invalid value"},
		{"name too long", "POST", pods, "application/json", pod(strings.Repeat("a", 254), ""), 422, metav1.StatusReasonInvalid, "metadata.name: Invalid value"},
		{"invalid label key", "POST", pods, "application/json", pod("l", `,"labels":{"bad key!":"x"}`), 422, metav1.StatusReasonInvalid, "metadata.labels: Invalid value"},
		{"invalid label value", "POST", pods, "application/json", pod("v", `,"labels":{"k":"-bad-"}`), 422, metav1.StatusReasonInvalid, "metadata.labels: Invalid value"},
		{"negative replicas", "POST", deploys, "application/json", deploy("neg", "-1"), 422, metav1.StatusReasonInvalid, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
		{"no containers", "POST", pods, "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"empty"},"spec":{"containers":[]}}`, 422, metav1.StatusReasonInvalid, "spec.containers: Required value"},
		{"selector does not match template", "POST", deploys, "application/json", strings.Replace(deploy("mismatch", "1"), `"labels":{"app":"x"}`, `"labels":{"app":"y"}`, 1), 422, metav1.StatusReasonInvalid, "spec.template.metadata.labels"},
		{"immutable selector", "PUT", deploys + "/api", "application/json", liveWith(func(m map[string]any) {
			nestedMap(m, "spec", "selector")["matchLabels"] = map[string]any{"app": "other"}
			nestedMap(m, "spec", "template", "metadata")["labels"] = map[string]any{"app": "other"}
		}), 422, metav1.StatusReasonInvalid, "field is immutable"},
		{"stale resourceVersion", "PUT", deploys + "/api", "application/json", liveWith(func(m map[string]any) {
			nestedMap(m, "metadata")["resourceVersion"] = "1"
		}), 409, metav1.StatusReasonConflict, "the object has been modified"},
		{"name differs from the URL", "PUT", deploys + "/api", "application/json", liveWith(func(m map[string]any) {
			nestedMap(m, "metadata")["name"] = "other"
		}), 400, metav1.StatusReasonBadRequest, "does not match the name"},
		{"namespace differs from the URL", "POST", pods, "application/json", pod("ns", `,"namespace":"team-a"`), 400, metav1.StatusReasonBadRequest, "the namespace of the provided object does not match the namespace sent on the request"},
		{"namespace does not exist", "POST", "/api/v1/namespaces/nope/pods", "application/json", pod("x", ""), 404, metav1.StatusReasonNotFound, `namespaces "nope" not found`},
		{"already exists", "POST", deploys, "application/json", deploy("api", "1"), 409, metav1.StatusReasonAlreadyExists, `deployments.apps "api" already exists`},
		{"body over 3 MiB", "POST", "/api/v1/namespaces/default/configmaps", "application/json", big, 413, metav1.StatusReasonRequestEntityTooLarge, "Request entity too large"},
		{"unknown field under Strict", "POST", pods + "?fieldValidation=Strict", "application/json", strings.Replace(pod("strict", ""), `"spec":{`, `"spec":{"bogus":1,`, 1), 400, metav1.StatusReasonBadRequest, `unknown field "spec.bogus"`},
		{"unknown fieldValidation", "POST", pods + "?fieldValidation=Loose", "application/json", pod("fv", ""), 422, metav1.StatusReasonInvalid, `fieldValidation: Unsupported value: "Loose"`},
		{"text/plain body", "POST", pods, "text/plain", pod("tp", ""), 415, metav1.StatusReasonUnsupportedMediaType, ""},
		{"unparseable content type", "POST", pods, "application/json; =", pod("ct", ""), 415, metav1.StatusReasonUnsupportedMediaType, ""},
		{"patch with a non-patch type", "PATCH", deploys + "/api", "application/json", `{"spec":{"replicas":2}}`, 415, metav1.StatusReasonUnsupportedMediaType, ""},
		{"malformed JSON patch", "PATCH", deploys + "/api", "application/json-patch+json", `[{"op":"replace","path":`, 400, metav1.StatusReasonBadRequest, ""},
		{"patch to negative replicas", "PATCH", deploys + "/api", "application/merge-patch+json", `{"spec":{"replicas":-3}}`, 422, metav1.StatusReasonInvalid, "spec.replicas"},
		{"patch an immutable selector", "PATCH", deploys + "/api", "application/merge-patch+json", `{"spec":{"selector":{"matchLabels":{"app":"z"}},"template":{"metadata":{"labels":{"app":"z"}}}}}`, 422, metav1.StatusReasonInvalid, "field is immutable"},
		{"bad label selector", "DELETE", pods + "?labelSelector=a+in+(b", "", "", 400, metav1.StatusReasonBadRequest, ""},
		{"unknown resource", "POST", "/api/v1/namespaces/default/widgets", "application/json", `{}`, 404, metav1.StatusReasonNotFound, ""},
		{"bad propagationPolicy", "DELETE", deploys + "/api", "application/json", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Sideways"}`, 422, metav1.StatusReasonInvalid, "propagationPolicy"},
	}
	for _, tc := range httpCases {
		t.Run("http/"+tc.name, func(t *testing.T) {
			before := e.st.Revision()
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			req.Header.Set("Accept", "application/json")
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, req)
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" {
				t.Fatalf("%s %s: %d, not a Status: %.300s", tc.method, tc.path, rec.Code, rec.Body.String())
			}
			if rec.Code != tc.code || st.Code != int32(tc.code) || st.Reason != tc.reason || !strings.Contains(st.Message, tc.message) {
				t.Errorf("%s %s: got %d %s %q (Status code %d); want %d %s containing %q", tc.method, tc.path, rec.Code, st.Reason, st.Message, st.Code, tc.code, tc.reason, tc.message)
			}
			if after := e.st.Revision(); after != before {
				t.Errorf("the store moved from revision %d to %d: something was stored", before, after)
			}
		})
	}

	// The same kinds of mistakes typed into the console.
	e.files["malformed.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\n  labels: [oops\n"
	e.files["malformed.json"] = `{"apiVersion": "v1", "kind": "ConfigMap",`
	e.files["wrong-version.yaml"] = "apiVersion: apps/v9\nkind: Deployment\nmetadata:\n  name: x\n"
	e.files["no-kind.yaml"] = "apiVersion: v1\nmetadata:\n  name: x\n"
	e.files["no-containers.yaml"] = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: empty\nspec:\n  containers: []\n"
	e.files["bad-name.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n"
	e.files["unknown-field.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict\nbogus: true\n"
	e.files["big.json"] = big
	consoleCases := []struct{ line, want string }{
		{"apply -f malformed.yaml", `error: error parsing malformed.yaml: error converting YAML to JSON: yaml: line 5: did not find expected ',' or ']'`},
		{"create -f malformed.json", "error: error parsing malformed.json: unexpected EOF"},
		{"create -f wrong-version.yaml", `error: resource mapping not found for name: "x" namespace: "" from "wrong-version.yaml": no matches for kind "Deployment" in version "apps/v9"`},
		{"apply -f no-kind.yaml", `error: error validating "no-kind.yaml": error validating data: kind not set`},
		{"create -f no-containers.yaml", `The Pod "empty" is invalid: spec.containers: Required value`},
		{"create -f bad-name.yaml", `The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"`},
		{"create -f unknown-field.yaml", `Error from server (BadRequest): error when creating "unknown-field.yaml": `},
		{"create -f unknown-field.yaml", `strict decoding error: unknown field "bogus"`},
		{"create -f big.json", `Error from server (RequestEntityTooLarge): error when creating "big.json": Request entity too large`},
		{"create -f unknown-field.yaml --validate=maybe", `error: invalid - validate option "maybe"; must be one of: strict (or true), warn, ignore (or false)`},
		{"create deployment neg --image=hello --replicas=-1", `error: failed to create deployment: Deployment.apps "neg" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`},
		{"create namespace Bad_Name", `The Namespace "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"`},
		{"label deployment api 'bad key!=x'", `The Deployment "api" is invalid: metadata.labels: Invalid value: "bad key!"`},
		{"label deployment api k=-bad-", `error: invalid label value: "k=-bad-"`},
		{"scale deployment api --replicas=-1", "error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0"},
		{`patch deployment api --type merge -p '{"spec":{"selector":{"matchLabels":{"app":"z"}}}}'`, "field is immutable"},
		{`patch deployment api --type json -p '{"not":"a list"}'`, "Error from server (BadRequest)"},
		{"get pods -l 'a in (b'", "Error from server (BadRequest): unable to parse requirement"},
	}
	for _, tc := range consoleCases {
		t.Run("console/"+tc.line, func(t *testing.T) {
			before := e.st.Revision()
			out, errs, code := e.run(tc.line)
			if code == 0 || !strings.Contains(errs, tc.want) {
				t.Errorf("kubectl %s: exit %d\nstdout: %s\nstderr: %s\nwant stderr containing %q", tc.line, code, out, errs, tc.want)
			}
			if after := e.st.Revision(); after != before {
				t.Errorf("kubectl %s: the store moved from revision %d to %d", tc.line, before, after)
			}
		})
	}
	if n := len(httpCases) + len(consoleCases); n < 30 {
		t.Errorf("only %d bad-input cases", n)
	}
}
