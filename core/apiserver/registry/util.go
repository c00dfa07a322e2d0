package registry

import (
	"encoding/json"
	"errors"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetab/kubetab/core/store"
)

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func setLabel(m *metav1.ObjectMeta, k, v string) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[k] = v
}

// equalJSON compares two values by their JSON form, which treats nil and
// empty slices and maps alike, as the API does.
func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

func parseRV(rv string) (int64, error) { return strconv.ParseInt(rv, 10, 64) }

func isConflict(err error) bool { return errors.Is(err, store.ErrConflict) }

func metaAccessor(obj runtime.Object) (metav1.Object, error) { return meta.Accessor(obj) }
