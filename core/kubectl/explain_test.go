package kubectl

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
)

// openAPIFixture is a small OpenAPI v3 document for apps/v1, shaped like
// kube-apiserver's: schemas named by package, $ref and allOf wrappers,
// x-kubernetes-group-version-kind on the kind's schema.
const openAPIFixture = `{
  "openapi": "3.0.0",
  "components": {"schemas": {
    "io.k8s.api.apps.v1.Deployment": {
      "description": "Deployment enables declarative updates for Pods and ReplicaSets.",
      "type": "object",
      "properties": {
        "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
        "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
        "spec": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}], "default": {}, "description": "Specification of the desired behavior of the Deployment."}
      },
      "x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    },
    "io.k8s.api.apps.v1.DeploymentSpec": {
      "description": "DeploymentSpec is the specification of the desired behavior of the Deployment.",
      "type": "object",
      "required": ["selector", "template"],
      "properties": {
        "replicas": {"type": "integer", "format": "int32", "description": "Number of desired pods. This is a pointer to distinguish between explicit zero and not specified. Defaults to 1."},
        "selector": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"}], "description": "Label selector for pods."},
        "strategyType": {"type": "string", "enum": ["Recreate", "RollingUpdate"], "description": "Type of deployment."},
        "template": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Template describes the pods that will be created."}
      }
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector": {
      "description": "A label selector is a label query over a set of resources.",
      "type": "object",
      "properties": {"matchLabels": {"type": "object", "additionalProperties": {"type": "string"}, "description": "matchLabels is a map of {key,value} pairs."}}
    }
  }}
}`

// withOpenAPI serves /openapi/v3 itself and passes everything else on.
type withOpenAPI struct{ next http.RoundTripper }

func (w withOpenAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	body := ""
	switch r.URL.Path {
	case "/openapi/v3":
		body = `{"paths":{"apis/apps/v1":{"serverRelativeURL":"/openapi/v3/apis/apps/v1?hash=ABC"}}}`
	case "/openapi/v3/apis/apps/v1":
		if r.URL.Query().Get("hash") != "ABC" {
			return nil, http.ErrNoLocation
		}
		body = openAPIFixture
	default:
		return w.next.RoundTrip(r)
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: ioNopCloser(body), Request: r}, nil
}

func TestExplain(t *testing.T) {
	e := newEnv(t)
	cli, err := New(Config{Transport: withOpenAPI{next: InProcessTransport(e.srv)}, Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range []string{"explain deployments", "explain deployment.spec.replicas", "explain deploy.spec.selector",
		"explain deployment.spec.strategyType", "explain deployment.spec --recursive", "explain deployment.spec.nope", "explain foos", "explain"} {
		args, _ := SplitWords(line)
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), args, IOStreams{Out: &out, ErrOut: &errb})
		b.WriteString("$ kubectl " + line + "\n" + out.String())
		if errb.Len() > 0 {
			b.WriteString("[stderr]\n" + errb.String())
		}
		if code != 0 {
			b.WriteString("[exit 1]\n")
		}
		b.WriteString("\n")
	}
	golden(t, "explain", b.String())

	// Against kubetab's own /openapi/v3, generated from the served types.
	out, errs, code := e.run("explain deployment.spec.replicas")
	if code != 0 || !strings.Contains(out, "FIELD: replicas <integer>") || !strings.Contains(out, "Number of desired pods") {
		t.Errorf("explain against the server: exit %d, %s%s", code, out, errs)
	}

	// A server without OpenAPI gets a clear error.
	old, err := New(Config{Transport: withoutOpenAPI{next: InProcessTransport(e.srv)}, Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code = old.Run(context.Background(), []string{"explain", "deployments"}, IOStreams{Out: &stdout, ErrOut: &stderr})
	if code == 0 || !strings.Contains(stderr.String(), "does not serve OpenAPI v3") {
		t.Errorf("explain without /openapi/v3: exit %d, %s", code, stderr.String())
	}
}

// withoutOpenAPI answers 404 for /openapi/..., like a server that serves none.
type withoutOpenAPI struct{ next http.RoundTripper }

func (w withoutOpenAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/openapi/") {
		return &http.Response{StatusCode: 404, Header: http.Header{"Content-Type": {"text/plain"}}, Body: ioNopCloser("404 page not found"), Request: r}, nil
	}
	return w.next.RoundTrip(r)
}

func TestWordWrap(t *testing.T) {
	got := wordWrap("one two three four\nfive  six seven-eight-nine", 9)
	want := "one two\nthree\nfour\nfive six\nseven-eight-nine"
	if got != want {
		t.Errorf("wordWrap = %q, want %q", got, want)
	}
}

func ioNopCloser(s string) *nopBody { return &nopBody{strings.NewReader(s)} }

type nopBody struct{ *strings.Reader }

func (nopBody) Close() error { return nil }
