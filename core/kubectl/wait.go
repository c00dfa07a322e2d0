package kubectl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitDeleted blocks until the object is gone (or replaced by one with
// another uid), watching it rather than polling: upstream's `kubectl wait
// --for=delete`, which `kubectl delete` runs by default.
func (s *session) waitDeleted(res apiResource, namespace, name, uid string, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(s.ctx, deadline)
	defer cancel()
	for {
		obj, err := s.getObject(res, namespace, name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return s.waitErr(ctx, err, res, name)
		}
		if uid != "" && nestedString(obj, "metadata", "uid") != uid {
			return nil
		}
		q := listQuery("", "metadata.name="+name)
		q.Set("watch", "true")
		q.Set("resourceVersion", nestedString(obj, "metadata", "resourceVersion"))
		resp, err := s.client.do(ctx, request{method: http.MethodGet, path: res.path(namespace, "", ""), query: q})
		if err != nil {
			return s.waitErr(ctx, err, res, name)
		}
		dec := json.NewDecoder(resp.Body)
		for {
			var ev metav1.WatchEvent
			if err := dec.Decode(&ev); err != nil {
				break // watch ended: look again
			}
			if ev.Type == "DELETED" {
				resp.Body.Close()
				return nil
			}
		}
		resp.Body.Close()
		if ctx.Err() != nil {
			return s.waitErr(ctx, ctx.Err(), res, name)
		}
	}
}

func (s *session) waitErr(ctx context.Context, err error, res apiResource, name string) error {
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	if ctx.Err() != nil {
		return fmt.Errorf("timed out waiting for the condition on %s/%s", res.groupResource().String(), name)
	}
	return err
}
