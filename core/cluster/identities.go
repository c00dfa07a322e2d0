package cluster

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/authz"
	"github.com/kubetab/kubetab/core/client"
)

// Who is who in the cluster. Each component acts under its own user, as in
// a kubeadm cluster, and the API server authorizes every request it makes:
//
//	kubectl (the kubeconfig's token)  kubetab-admin, system:masters
//	kube-scheduler                    system:kube-scheduler
//	kube-controller-manager           system:kube-controller-manager (its
//	                                  shared informers, the token controller)
//	  each controller                 system:serviceaccount:kube-system:<name>
//	                                  (--use-service-account-credentials),
//	                                  bound to system:controller:<name>
//	kubelet on node-1                 system:node:node-1 in system:nodes
//	                                  (the Node authorizer)
//	kube-proxy                        system:kube-proxy (system:node-proxier)
//	CoreDNS                           system:serviceaccount:kube-system:coredns
//	                                  (kubeadm's system:coredns role)
//
// A refused request is logged with the component's name (what its log
// would say upstream) and shows in the trace as a 403; in a cluster as
// kubetab builds it nothing is refused, and the tests of this package fail
// if anything is.

// componentUser is a component's user: authenticated, in groups.
func componentUser(name string, groups ...string) *authz.User {
	return &authz.User{Name: name, Groups: append(groups, authz.GroupAuthenticated)}
}

// serviceAccountUser is the user of a ServiceAccount's token.
func serviceAccountUser(namespace, name string) *authz.User {
	return componentUser(authz.ServiceAccountPrefix+namespace+":"+name, "system:serviceaccounts", "system:serviceaccounts:"+namespace)
}

var (
	schedulerUser         = componentUser("system:kube-scheduler")
	controllerManagerUser = componentUser("system:kube-controller-manager")
	kubeProxyUser         = componentUser("system:kube-proxy")
)

func nodeUser(node string) *authz.User {
	return componentUser(authz.NodeUserPrefix+node, authz.NodesGroup)
}

// deniedHook, when set (by this package's tests), hears every refused
// request of a component besides the log.
var (
	deniedMu   sync.Mutex
	deniedHook func(component string, err error)
)

// denied reports a component's refused request.
func denied(component string, err error) {
	log.Printf("kubetab: %s: %v", component, err)
	deniedMu.Lock()
	hook := deniedHook
	deniedMu.Unlock()
	if hook != nil {
		hook(component, err)
	}
}

// clientAs returns an in-process client that names itself userAgent and
// acts as u.
func (c *Cluster) clientAs(userAgent string, u *authz.User) *client.Client {
	return c.Client(userAgent).As(client.Identity{User: u, Authorizer: c.API.Authorizer(), Denied: denied})
}

// controllerClient is a controller's client: its ServiceAccount's user for
// what it does, the controller manager's for its informers' lists and
// watches (client.Identity.ListWatchAs). An empty serviceAccount is the
// controller manager itself.
func (c *Cluster) controllerClient(userAgent, serviceAccount string) *client.Client {
	u := controllerManagerUser
	if serviceAccount != "" {
		u = serviceAccountUser(metav1.NamespaceSystem, serviceAccount)
	}
	return c.Client(userAgent).As(client.Identity{User: u, ListWatchAs: controllerManagerUser, Authorizer: c.API.Authorizer(), Denied: denied})
}

// ensureControllerServiceAccounts creates the controllers' ServiceAccounts
// in kube-system, as kube-controller-manager's client builder does before
// it hands a controller its credentials.
func (c *Cluster) ensureControllerServiceAccounts(ctx context.Context) error {
	sas := c.clientAs("kube-controller-manager", controllerManagerUser)
	seen := map[string]bool{}
	for _, d := range controllerDescriptors {
		if d.serviceAccount == "" || seen[d.serviceAccount] {
			continue
		}
		seen[d.serviceAccount] = true
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: d.serviceAccount, Namespace: metav1.NamespaceSystem}}
		if _, err := client.For[*corev1.ServiceAccount](sas, "", "serviceaccounts").Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create serviceaccount %s/%s: %w", metav1.NamespaceSystem, d.serviceAccount, err)
		}
	}
	return nil
}

// coreDNSServiceAccount is CoreDNS's ServiceAccount in kube-system.
const coreDNSServiceAccount = "coredns"

// ensureCoreDNSIdentity creates what kubeadm's CoreDNS addon gives CoreDNS:
// its ServiceAccount, the ClusterRole system:coredns and its binding.
func (c *Cluster) ensureCoreDNSIdentity(ctx context.Context, cl *client.Client) error {
	ns := metav1.NamespaceSystem
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: coreDNSServiceAccount, Namespace: ns}}
	if _, err := client.For[*corev1.ServiceAccount](cl, "", "serviceaccounts").Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cluster: create serviceaccount %s/%s: %w", ns, coreDNSServiceAccount, err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"list", "watch"}, APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}},
		{Verbs: []string{"list", "watch"}, APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}},
	}}
	if _, err := client.For[*rbacv1.ClusterRole](cl, rbacv1.GroupName, "clusterroles").Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cluster: create clusterrole system:coredns: %w", err)
	}
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:coredns"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: coreDNSServiceAccount, Namespace: ns}}}
	if _, err := client.For[*rbacv1.ClusterRoleBinding](cl, rbacv1.GroupName, "clusterrolebindings").Create(ctx, b); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cluster: create clusterrolebinding system:coredns: %w", err)
	}
	return nil
}

// newAdminToken is a random bearer token for the administrator: 32 bytes
// from crypto/rand, as kubeadm's tokens are random.
func newAdminToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// AdminToken is the administrator's bearer token (kubetab-admin, in
// system:masters): what `kubetab cluster` writes into its kubeconfig.
func (c *Cluster) AdminToken() string { return c.adminToken }

// Handler is the API server as the cluster's administrator reaches it
// with the kubeconfig kubetab writes: a request that brings no
// Authorization header gets the admin's bearer token, as kubectl adds the
// kubeconfig's (client-go's bearer round tripper also leaves a request's
// own header alone). The console, the page and the lesson verifier talk
// to it; a request with its own token is that token's user, and the API
// server itself (c.API, what `kubetab cluster` serves) takes nothing on
// trust: no credentials there is system:anonymous.
func (c *Cluster) Handler() http.Handler {
	token := "Bearer " + c.adminToken
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			r2 := *r
			r2.Header = r.Header.Clone()
			r2.Header.Set("Authorization", token)
			r = &r2
		}
		c.API.ServeHTTP(w, r)
	})
}
