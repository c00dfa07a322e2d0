package etcdctl

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

// get --decode prints what kube-apiserver stored (protobuf) as the
// object's YAML; plain get still prints etcdctl's bytes.
func TestGetDecode(t *testing.T) {
	s := store.New(store.Config{})
	reg, err := registry.Default(registry.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := reg.MustLookup("", "namespaces").Create(ctx, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}}},
	}}
	if _, err := reg.MustLookup("apps", "deployments").Create(ctx, "default", d, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const key = "/registry/deployments/default/web"
	kv, _ := s.Get(key)
	decoder := WithDecoder(reg.DecodeYAML)
	for _, tc := range []struct {
		args      []string
		opts      []Option
		code      int
		want      []string // in order
		wantNot   []string
		wantError string
	}{
		{args: []string{"get", key}, opts: []Option{decoder}, want: []string{key + "\n", "k8s\x00"[:3]}, wantNot: []string{"kind: Deployment"}},
		{args: []string{"get", key, "--decode"}, opts: []Option{decoder}, want: []string{key + "\n", "apiVersion: apps/v1\n", "kind: Deployment\n", "name: web\n", "resourceVersion: \"" + strconv.FormatInt(kv.ModRevision, 10) + "\"", "image: hello"}},
		{args: []string{"get", "/registry/deployments", "--prefix", "--decode", "--print-value-only"}, opts: []Option{decoder}, want: []string{"apiVersion: apps/v1\n"}, wantNot: []string{key}},
		{args: []string{"get", key, "--decode", "-w", "json"}, opts: []Option{decoder}, code: ExitBadArgs, wantError: "Error: --decode is only for `--write-out=simple`"},
		{args: []string{"get", key, "--decode"}, code: ExitBadFeature, wantError: "Error: --decode is not available"},
	} {
		var out, errOut bytes.Buffer
		code := Run(ctx, tc.args, IOStreams{Out: &out, ErrOut: &errOut}, s, tc.opts...)
		if code != tc.code || !strings.HasPrefix(errOut.String(), tc.wantError) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, errOut.String(), tc.code, tc.wantError)
			continue
		}
		rest := out.String()
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%v: %q missing or out of order:\n%s", tc.args, w, out.String())
				break
			}
			rest = rest[i+len(w):]
		}
		for _, w := range tc.wantNot {
			if strings.Contains(out.String(), w) {
				t.Errorf("%v: prints %q:\n%s", tc.args, w, out.String())
			}
		}
	}
}
