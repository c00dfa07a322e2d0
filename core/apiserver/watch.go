package apiserver

import (
	"encoding/json"
	"net/http"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/printers"
)

// watch streams watch events as newline-delimited JSON
// ({"type":"ADDED","object":{...}}), flushing each one, until the client goes
// away or timeoutSeconds passes (upstream: handlers/watch.go).
func (s *Server) watch(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo) error {
	opts, err := listOptions(r, st)
	if err != nil {
		return err
	}
	wi, err := st.Watch(r.Context(), namespaceOf(st, info), opts)
	if err != nil {
		return err
	}
	defer wi.Stop()
	table := wantsTable(r)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	timer := time.NewTimer(timeout(r, 30*time.Minute))
	defer timer.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-timer.C:
			return nil
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return nil
			}
			obj := ev.Object
			if table && ev.Type != watch.Error && ev.Type != watch.Bookmark {
				t, err := printers.ToTable(obj, s.now())
				if err != nil {
					obj = &apierrors.NewInternalError(err).ErrStatus
				} else {
					obj = t
				}
			}
			raw, err := json.Marshal(obj)
			if err != nil {
				return nil
			}
			line, _ := json.Marshal(&metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: raw}})
			if _, err := w.Write(append(line, '\n')); err != nil {
				return nil
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
}

// zeroOf returns a new zero value of obj's type.
func zeroOf(obj runtime.Object) runtime.Object {
	t := reflect.TypeOf(obj)
	if t.Kind() == reflect.Pointer {
		return reflect.New(t.Elem()).Interface().(runtime.Object)
	}
	return obj
}
