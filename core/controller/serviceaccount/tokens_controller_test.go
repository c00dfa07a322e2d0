package serviceaccount

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

// The token controller fills in a Secret of type
// kubernetes.io/service-account-token for an existing ServiceAccount, and
// deletes token Secrets whose ServiceAccount is missing or deleted, as
// kube-controller-manager 1.32 does.
func TestTokensController(t *testing.T) {
	e := controllertest.NewEnv(t)
	const ca = "-----BEGIN CERTIFICATE-----\nkubetab test CA\n-----END CERTIFICATE-----\n"
	c, err := NewTokens(TokensConfig{Client: e.ClientFor(TokensComponent), Clock: e.Clock, RootCA: ca})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(TokensComponent, c.Run)
	sa, err := serviceAccounts(e.Client).Create(e.Ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "build", Namespace: "default"}})
	if err != nil {
		t.Fatal(err)
	}
	token := func(name, saName string) {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			Annotations: map[string]string{corev1.ServiceAccountNameKey: saName}}, Type: corev1.SecretTypeServiceAccountToken}
		if _, err := secrets(e.Client).Create(e.Ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(name string) func() (bool, string) {
		return func() (bool, string) {
			s, err := secrets(e.Client).Get(e.Ctx, "default", name)
			if apierrors.IsNotFound(err) {
				return true, ""
			}
			return false, fmt.Sprint(s.Data, err)
		}
	}

	token("build-token", "build")
	e.Eventually("the token filled in", func() (bool, string) {
		s, err := secrets(e.Client).Get(e.Ctx, "default", "build-token")
		if err != nil {
			return false, err.Error()
		}
		return len(s.Data["token"]) > 0, fmt.Sprint(s.Data)
	})
	s, _ := secrets(e.Client).Get(e.Ctx, "default", "build-token")
	if string(s.Data["namespace"]) != "default" || string(s.Data["ca.crt"]) != ca ||
		s.Annotations[corev1.ServiceAccountUIDKey] != string(sa.UID) {
		t.Fatalf("secret %v %v", s.Annotations, s.Data)
	}
	parts := strings.Split(string(s.Data["token"]), ".")
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]string
	if err != nil || json.Unmarshal(body, &claims) != nil || claims["sub"] != "system:serviceaccount:default:build" ||
		claims["iss"] != "kubernetes/serviceaccount" || claims["kubernetes.io/serviceaccount/secret.name"] != "build-token" {
		t.Fatalf("token claims %s: %v", body, err)
	}

	token("orphan-token", "nobody")
	e.Eventually("the token of a missing ServiceAccount deleted", gone("orphan-token"))

	if err := serviceAccounts(e.Client).Delete(e.Ctx, "default", "build", nil); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the token deleted with its ServiceAccount", gone("build-token"))
}
