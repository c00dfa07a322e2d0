package apiserver

import (
	"net/http"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// evict serves POST pods/{name}/eviction (upstream:
// pkg/registry/core/pod/storage/eviction.go): the polite delete that
// `kubectl drain` uses. Upstream first checks the PodDisruptionBudgets that
// select the pod and answers 429 TooManyRequests ("Cannot evict pod as it
// would violate the pod's disruption budget.") when one would be broken;
// kubetab serves no PodDisruptionBudgets yet, so every eviction is allowed,
// and it deletes the pod with the eviction's DeleteOptions (a graceful
// delete: the kubelet stops the containers first).
func (s *Server) evict(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo, dryRun bool) error {
	ev := &policyv1.Eviction{}
	if err := s.decode(w, r, policyv1.SchemeGroupVersion.WithKind("Eviction"), ev); err != nil {
		return err
	}
	if ev.Name == "" {
		ev.Name = info.Name
	}
	if ev.Name != info.Name {
		return apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	opts := ev.DeleteOptions
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if _, _, err := st.Delete(r.Context(), info.Namespace, info.Name, opts); err != nil {
		return err
	}
	return s.writeObject(w, info, http.StatusCreated, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated,
	})
}
