package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/openapi"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

// Benchmarks of the handler itself (no network): requests per second is
// 1e9 / ns/op.

func benchServer(b *testing.B) (*Server, *registry.Registry) {
	b.Helper()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := reg.MustLookup("", "namespaces").Create(context.Background(), "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, registry.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	s, err := New(Config{Registry: reg})
	if err != nil {
		b.Fatal(err)
	}
	return s, reg
}

func serve(b *testing.B, s *Server, method, url, ctype, body string) int {
	req := httptest.NewRequest(method, url, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec.Code
}

func BenchmarkCreatePod(b *testing.B) {
	s, _ := benchServer(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := strings.Replace(podJSON, `"name":"web"`, fmt.Sprintf(`"name":"web-%d"`, i), 1)
		if code := serve(b, s, "POST", "/api/v1/namespaces/default/pods", "application/json", body); code != http.StatusCreated {
			b.Fatalf("create: %d", code)
		}
	}
}

func BenchmarkGetPod(b *testing.B) {
	s, _ := benchServer(b)
	serve(b, s, "POST", "/api/v1/namespaces/default/pods", "application/json", podJSON)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := serve(b, s, "GET", "/api/v1/namespaces/default/pods/web", "", ""); code != http.StatusOK {
			b.Fatalf("get: %d", code)
		}
	}
}

// BenchmarkListPods lists 100 pods.
func BenchmarkListPods(b *testing.B) {
	s, _ := benchServer(b)
	for i := 0; i < 100; i++ {
		serve(b, s, "POST", "/api/v1/namespaces/default/pods", "application/json", strings.Replace(podJSON, `"name":"web"`, fmt.Sprintf(`"name":"web-%d"`, i), 1))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := serve(b, s, "GET", "/api/v1/namespaces/default/pods", "", ""); code != http.StatusOK {
			b.Fatalf("list: %d", code)
		}
	}
}

// BenchmarkListPodsPaged reads 100 pods in pages of 10.
func BenchmarkListPodsPaged(b *testing.B) {
	s, reg := benchServer(b)
	for i := 0; i < 100; i++ {
		serve(b, s, "POST", "/api/v1/namespaces/default/pods", "application/json", strings.Replace(podJSON, `"name":"web"`, fmt.Sprintf(`"name":"web-%d"`, i), 1))
	}
	st := reg.MustLookup("", "pods")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := listParams{Limit: 10}
		for {
			list, err := s.listObjects(st, "default", p)
			if err != nil {
				b.Fatal(err)
			}
			next := list.(*corev1.PodList).Continue
			if next == "" {
				break
			}
			p.Continue = next
		}
	}
}

// BenchmarkOpenAPIGenerate builds every OpenAPI v3 document of the default
// resources from scratch: what the first /openapi/v3 request costs.
func BenchmarkOpenAPIGenerate(b *testing.B) {
	s, _ := benchServer(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		spec, err := openapi.New(openapi.Config{Resources: s.openAPIResources})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := spec.V3Paths(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenAPIDefinitions builds only the definitions and paths (what
// server-side apply needs), without encoding the documents.
func BenchmarkOpenAPIDefinitions(b *testing.B) {
	s, _ := benchServer(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		spec, err := openapi.New(openapi.Config{Resources: s.openAPIResources})
		if err != nil {
			b.Fatal(err)
		}
		if defs, _ := spec.Definitions(); len(defs) == 0 {
			b.Fatal("no definitions")
		}
	}
}
