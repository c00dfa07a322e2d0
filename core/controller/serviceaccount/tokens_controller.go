package serviceaccount

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// The token controller (upstream: tokens_controller.go, kube-controller-
// manager's "serviceaccount-token-controller") as kube-controller-manager
// 1.32 runs it by default. Since 1.24 it no longer makes a Secret for every
// ServiceAccount (pods get short-lived bound tokens from the TokenRequest
// API instead, mounted by the kubelet as a projected volume); what is left
// is the legacy path a learner still meets in tutorials: a Secret of type
// kubernetes.io/service-account-token that names a ServiceAccount in its
// kubernetes.io/service-account.name annotation.
//
//	Secret created, names ServiceAccount "build"
//	  "build" exists ──▶ the controller fills in data.token (a legacy
//	                     token), data["ca.crt"], data.namespace and the
//	                     kubernetes.io/service-account.uid annotation
//	  no such "build" (or another one, by UID) ──▶ the Secret is deleted
//	ServiceAccount deleted ──▶ its token Secrets are deleted with it
//
// The legacy token is a JWT with upstream's legacy claims (issuer
// kubernetes/serviceaccount, the namespace, the Secret's and the
// ServiceAccount's name and UID). It is not signed ("alg": "none"), like
// the kubelet's projected tokens, so the API server does not accept it (a
// request bearing it gets 401). The
// legacy-serviceaccount-token-cleaner (on by default since 1.30) removes
// only Secrets the old auto-generation made and nothing used for a year;
// there are none here, so it has nothing to do.

// TokensComponent is the token controller's user agent.
const TokensComponent = "tokens-controller"

// legacyIssuer is the iss claim of legacy ServiceAccount tokens.
const legacyIssuer = "kubernetes/serviceaccount"

// TokensConfig configures the token controller.
type TokensConfig struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// RootCA is the PEM bundle put in ca.crt; empty means the registry's.
	RootCA string
	// Clock times the queue's retries; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is how many Secrets sync at once; 0 means 1.
	Workers int
}

// TokensController is the token controller.
type TokensController struct {
	client  *client.Client
	rootCA  string
	workers int
	queue   *client.Queue[types.NamespacedName] // Secrets

	saInformer     *client.Informer[*corev1.ServiceAccount]
	secretInformer *client.Informer[*corev1.Secret]
}

// NewTokens returns a token controller; call Run to start it.
func NewTokens(cfg TokensConfig) (*TokensController, error) {
	if err := controller.CheckConfig("serviceaccount-token", cfg.Client, &cfg.Workers, 1, &cfg.Clock); err != nil {
		return nil, err
	}
	if cfg.RootCA == "" {
		cfg.RootCA = cfg.Client.Registry().RootCA()
	}
	c := &TokensController{
		client:         cfg.Client,
		rootCA:         cfg.RootCA,
		workers:        cfg.Workers,
		queue:          client.NewQueue[types.NamespacedName](cfg.Clock),
		saInformer:     client.NewInformer(serviceAccounts(cfg.Client), "", client.ListOptions{}),
		secretInformer: client.NewInformer(secrets(cfg.Client), "", client.ListOptions{}),
	}
	queueSecret := func(s *corev1.Secret) {
		if s.Type == corev1.SecretTypeServiceAccountToken {
			c.queue.Add(types.NamespacedName{Namespace: s.Namespace, Name: s.Name})
		}
	}
	c.secretInformer.AddHandler(client.Handler[*corev1.Secret]{
		OnAdd:    queueSecret,
		OnUpdate: func(_, s *corev1.Secret) { queueSecret(s) },
	})
	// A ServiceAccount that comes or goes: its token Secrets are synced
	// again (filled in, or deleted with it).
	queueTokensOf := func(sa *corev1.ServiceAccount) {
		for _, s := range c.secretInformer.List() {
			if s.Namespace == sa.Namespace && s.Type == corev1.SecretTypeServiceAccountToken &&
				s.Annotations[corev1.ServiceAccountNameKey] == sa.Name {
				c.queue.Add(types.NamespacedName{Namespace: s.Namespace, Name: s.Name})
			}
		}
	}
	c.saInformer.AddHandler(client.Handler[*corev1.ServiceAccount]{
		OnAdd:    queueTokensOf,
		OnDelete: queueTokensOf,
	})
	return c, nil
}

func secrets(c *client.Client) client.Resource[*corev1.Secret] {
	return client.For[*corev1.Secret](c, "", "secrets")
}

// HasSynced reports whether the caches hold their first lists.
func (c *TokensController) HasSynced() bool { return controller.Synced(c.informers()...) }

func (c *TokensController) informers() []controller.Informer {
	return []controller.Informer{c.saInformer, c.secretInformer}
}

// Run syncs token Secrets until ctx is done.
func (c *TokensController) Run(ctx context.Context) error {
	return controller.Run(ctx, TokensComponent, c.informers(),
		controller.Worker[types.NamespacedName]{Queue: c.queue, Workers: c.workers, Reconcile: c.syncSecret})
}

// syncSecret fills in or deletes one token Secret (upstream: syncSecret).
func (c *TokensController) syncSecret(ctx context.Context, key types.NamespacedName) error {
	s, ok := c.secretInformer.Get(key.Namespace, key.Name)
	if !ok || s.Type != corev1.SecretTypeServiceAccountToken || s.DeletionTimestamp != nil {
		return nil
	}
	saName := s.Annotations[corev1.ServiceAccountNameKey]
	sa, ok := c.saInformer.Get(s.Namespace, saName)
	if ok {
		if uid := s.Annotations[corev1.ServiceAccountUIDKey]; uid != "" && uid != string(sa.UID) {
			ok = false // a ServiceAccount of the same name, but not the one the token was for
		}
	}
	if !ok {
		// The cache may be behind a ServiceAccount created a moment ago:
		// ask the API server before deleting.
		live, err := serviceAccounts(c.client).Get(ctx, s.Namespace, saName)
		switch {
		case err == nil && (s.Annotations[corev1.ServiceAccountUIDKey] == "" || s.Annotations[corev1.ServiceAccountUIDKey] == string(live.UID)):
			sa = live
		case err != nil && !apierrors.IsNotFound(err):
			return err
		default:
			uid := s.UID
			err := secrets(c.client).Delete(ctx, s.Namespace, s.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return err
			}
			return nil
		}
	}
	if len(s.Data[corev1.ServiceAccountTokenKey]) > 0 && string(s.Data[corev1.ServiceAccountRootCAKey]) == c.rootCA &&
		string(s.Data[corev1.ServiceAccountNamespaceKey]) == s.Namespace && s.Annotations[corev1.ServiceAccountUIDKey] == string(sa.UID) {
		return nil // filled in already
	}
	u := s.DeepCopy()
	if u.Data == nil {
		u.Data = map[string][]byte{}
	}
	if u.Annotations == nil {
		u.Annotations = map[string]string{}
	}
	u.Data[corev1.ServiceAccountRootCAKey] = []byte(c.rootCA)
	u.Data[corev1.ServiceAccountNamespaceKey] = []byte(s.Namespace)
	if len(u.Data[corev1.ServiceAccountTokenKey]) == 0 {
		u.Data[corev1.ServiceAccountTokenKey] = legacyToken(sa, s)
	}
	u.Annotations[corev1.ServiceAccountNameKey] = sa.Name
	u.Annotations[corev1.ServiceAccountUIDKey] = string(sa.UID)
	_, err := secrets(c.client).Update(ctx, u)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or changed: the informer brings the news
	}
	return err
}

// legacyToken is a legacy ServiceAccount token: upstream's LegacyClaims in
// an unsigned JWT (see the file comment).
func legacyToken(sa *corev1.ServiceAccount, s *corev1.Secret) []byte {
	claims := map[string]any{
		"iss":                                    legacyIssuer,
		"kubernetes.io/serviceaccount/namespace": sa.Namespace,
		"kubernetes.io/serviceaccount/secret.name":          s.Name,
		"kubernetes.io/serviceaccount/service-account.name": sa.Name,
		"kubernetes.io/serviceaccount/service-account.uid":  string(sa.UID),
		"sub": "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
	}
	header, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	body, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding
	return []byte(strings.Join([]string{enc.EncodeToString(header), enc.EncodeToString(body), ""}, "."))
}
