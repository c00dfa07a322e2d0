package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusOf turns any error into the metav1.Status the API answers with.
func statusOf(err error) *metav1.Status {
	if s, ok := err.(apierrors.APIStatus); ok {
		st := s.Status()
		return &st
	}
	return &apierrors.NewInternalError(err).ErrStatus
}

func writeError(w http.ResponseWriter, r *http.Request, err error) {
	st := statusOf(err)
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	code := int(st.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	writeJSON(w, code, st)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	writeEncoded(w, output{mediaType: "application/json"}, code, v)
}

// writeEncoded writes v in the negotiated media type.
func writeEncoded(w http.ResponseWriter, out output, code int, v any) {
	data, err := out.encode(v)
	if err != nil {
		code = http.StatusInternalServerError
		out.mediaType = "application/json"
		data = []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"encode failed","code":500}`)
	}
	w.Header().Set("Content-Type", out.mediaType)
	w.WriteHeader(code)
	_, _ = w.Write(data)
	if out.mediaType == "application/json" {
		_, _ = w.Write([]byte("\n"))
	}
}

// jsonMarshal is how answers are encoded as JSON.
func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func notFoundPath(path string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Message: fmt.Sprintf("404 page not found: %s", path)}}},
	}}
}

func internalError(p any) error {
	return apierrors.NewInternalError(fmt.Errorf("panic: %v", p))
}
