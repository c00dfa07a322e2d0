package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// requestInfo is what the path and method say (upstream:
// k8s.io/apiserver/pkg/endpoints/request/requestinfo.go).
type requestInfo struct {
	Verb        string // get list watch create update patch delete deletecollection
	GV          schema.GroupVersion
	Namespace   string
	Resource    string
	Name        string
	Subresource string
	// Out is the negotiated encoding and shape of the answer.
	Out output
}

// parseRequest splits a resource path. ok is false for paths that are not
// resource paths (discovery documents are served by the caller).
func parseRequest(r *http.Request) (info requestInfo, parts []string, err error) {
	p := strings.Trim(r.URL.Path, "/")
	segs := strings.Split(p, "/")
	switch {
	case segs[0] == "api" && len(segs) >= 2:
		info.GV = schema.GroupVersion{Version: segs[1]}
		parts = segs[2:]
	case segs[0] == "apis" && len(segs) >= 3:
		info.GV = schema.GroupVersion{Group: segs[1], Version: segs[2]}
		parts = segs[3:]
	default:
		return info, nil, notFoundPath(r.URL.Path)
	}
	if len(parts) == 0 {
		return info, parts, nil
	}
	if parts[0] == "namespaces" && len(parts) >= 3 && parts[2] != "status" && parts[2] != "finalize" {
		info.Namespace = parts[1]
		parts = parts[2:]
	}
	info.Resource = parts[0]
	if len(parts) > 1 {
		info.Name = parts[1]
	}
	if len(parts) > 2 {
		info.Subresource = parts[2]
	}
	if len(parts) > 3 {
		return info, nil, notFoundPath(r.URL.Path)
	}
	if info.Resource == "namespaces" && info.Name != "" {
		info.Namespace = info.Name
	}
	watch, _ := queryBool(r.URL.Query(), "watch")
	switch r.Method {
	case http.MethodGet:
		switch {
		case info.Name == "" && watch:
			info.Verb = "watch"
		case info.Name == "":
			info.Verb = "list"
		default:
			info.Verb = "get"
		}
	case http.MethodPost:
		info.Verb = "create"
	case http.MethodPut:
		info.Verb = "update"
	case http.MethodPatch:
		info.Verb = "patch"
	case http.MethodDelete:
		if info.Name == "" {
			info.Verb = "deletecollection"
		} else {
			info.Verb = "delete"
		}
	default:
		return info, nil, methodNotAllowed()
	}
	return info, parts, nil
}

// resources serves everything under /api/ and /apis/.
func (s *Server) resources(w http.ResponseWriter, r *http.Request) {
	info, parts, err := parseRequest(r)
	if err != nil {
		// /apis/<group> is a group document, not a resource path.
		segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		if len(segs) == 2 && segs[0] == "apis" && r.Method == http.MethodGet {
			s.groupDocument(w, r, segs[1])
			return
		}
		writeError(w, r, err)
		return
	}
	if len(parts) == 0 {
		if r.Method != http.MethodGet {
			writeError(w, r, methodNotAllowed())
			return
		}
		s.resourceList(w, r, info.GV)
		return
	}
	if isMetricsGV(info.GV) {
		s.serveMetrics(w, r, info)
		return
	}
	st, ok := s.reg.LookupVersion(info.GV.WithResource(info.Resource))
	if !ok {
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	if !st.Resource.Namespaced && info.Namespace != "" && info.Resource != "namespaces" {
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	if st.Resource.Namespaced && info.Name != "" && info.Namespace == "" {
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	if info.Subresource != "" && !st.Resource.HasSubresource(info.Subresource) {
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	if info.Resource == "namespaces" {
		info.Namespace = ""
	}
	if info.Subresource != "log" {
		// Negotiate before doing anything: a client that cannot read the
		// answer must not get its create applied (upstream does the same).
		if info.Out, err = negotiate(r, shapeTable, shapeMetadata); err != nil {
			writeError(w, r, err)
			return
		}
		if info.Out.include, err = includeObject(r, info.Out); err != nil {
			writeError(w, r, err)
			return
		}
		info.Out.table = st.Resource.Table
	}
	if who := traceComponent(r); who != "" && s.reg.Trace() != nil {
		var tw *tracedWriter
		tw, r = s.traceRequest(w, r, st, info, who)
		defer tw.done()
		w = tw
	}
	var handlerErr error
	switch info.Verb {
	case "get":
		handlerErr = s.get(w, r, st, info)
	case "list":
		handlerErr = s.list(w, r, st, info)
	case "watch":
		handlerErr = s.watch(w, r, st, info)
	case "create":
		handlerErr = s.create(w, r, st, info)
	case "update":
		handlerErr = s.update(w, r, st, info)
	case "patch":
		handlerErr = s.patch(w, r, st, info)
	case "delete":
		handlerErr = s.delete(w, r, st, info)
	case "deletecollection":
		handlerErr = s.deleteCollection(w, r, st, info)
	}
	if handlerErr != nil {
		writeError(w, r, handlerErr)
	}
}

// writeObject answers with obj in the negotiated encoding and shape: the
// object, a Table (kubectl get) or PartialObjectMetadata. A Status is always
// itself.
func (s *Server) writeObject(w http.ResponseWriter, info requestInfo, code int, obj runtime.Object) error {
	if _, isStatus := obj.(*metav1.Status); !isStatus {
		switch info.Out.shape {
		case shapeTable:
			t, err := toTable(obj, info.Out, s.now())
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			obj = t
		case shapeMetadata:
			m, err := asMetadata(obj)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			obj = m
		}
	}
	writeEncoded(w, info.Out, code, obj)
	return nil
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo) error {
	switch info.Subresource {
	case "log":
		return s.logs(w, r, st, info)
	case "scale":
		sc, err := st.GetScale(r.Context(), info.Namespace, info.Name)
		if err != nil {
			return err
		}
		return s.writeObject(w, info, http.StatusOK, sc)
	case "binding", "eviction":
		return apierrors.NewMethodNotSupported(st.Resource.GroupResource(), "get")
	}
	obj, err := st.Get(r.Context(), namespaceOf(st, info), info.Name)
	if err != nil {
		return err
	}
	return s.writeObject(w, info, http.StatusOK, obj)
}

func namespaceOf(st *registry.Store, info requestInfo) string {
	if st.Resource.Namespaced {
		return info.Namespace
	}
	return ""
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo) error {
	if info.Subresource != "" {
		return notFoundPath(r.URL.Path)
	}
	p, err := parseListParams(r, st, "list")
	if err != nil {
		return err
	}
	list, err := s.listObjects(st, namespaceOf(st, info), p)
	if err != nil {
		return err
	}
	return s.writeObject(w, info, http.StatusOK, list)
}

// readBody reads a request body within the size limit.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxRequestBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if int64(len(data)) > s.cfg.MaxRequestBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", s.cfg.MaxRequestBodyBytes))
	}
	return data, nil
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo) error {
	ctx := r.Context()
	wo, err := parseWriteOptions(r, "create", "")
	if err != nil {
		return err
	}
	switch info.Subresource {
	case "binding":
		b := &corev1.Binding{}
		if err := s.decode(w, r, corev1.SchemeGroupVersion.WithKind("Binding"), b); err != nil {
			return err
		}
		if b.Name == "" {
			b.Name = info.Name
		}
		if b.Namespace == "" {
			b.Namespace = info.Namespace
		}
		if b.Name != info.Name {
			return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", b.Name, info.Name))
		}
		if wo.DryRun {
			err = dryRunBind(ctx, st, b)
		} else {
			_, err = st.Bind(ctx, b)
		}
		if err != nil {
			return err
		}
		return s.writeObject(w, info, http.StatusCreated, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated})
	case "eviction":
		return s.evict(w, r, st, info, wo.DryRun)
	case "":
	default:
		return apierrors.NewMethodNotSupported(st.Resource.GroupResource(), "create")
	}
	if info.Name != "" {
		return apierrors.NewMethodNotSupported(st.Resource.GroupResource(), "create")
	}
	obj := st.Resource.New()
	if err := s.decode(w, r, st.Resource.GroupVersionKind(), obj); err != nil {
		return err
	}
	if acc, err := meta.Accessor(obj); err == nil {
		// The request names its object only in the body, or only the prefix
		// of its name ("web-5d9c7b8f6-", generateName).
		name := acc.GetName()
		if name == "" {
			name = acc.GetGenerateName()
		}
		traceCreating(ctx, name)
	}
	obj = s.trackUpdate(r, st, "", nil, obj, wo)
	out, err := st.Create(ctx, info.Namespace, obj, registry.CreateOptions{DryRun: wo.DryRun})
	if err != nil {
		return err
	}
	if acc, err := meta.Accessor(out); err == nil {
		traceCreated(ctx, acc.GetName())
	}
	return s.writeObject(w, info, http.StatusCreated, out)
}

// dryRunBind checks a pods/binding as Bind would, and writes nothing.
func dryRunBind(ctx context.Context, st *registry.Store, b *corev1.Binding) error {
	gk := corev1.SchemeGroupVersion.WithKind("Binding").GroupKind()
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		return apierrors.NewInvalid(gk, b.Name, field.ErrorList{field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"})})
	}
	if b.Target.Name == "" {
		return apierrors.NewInvalid(gk, b.Name, field.ErrorList{field.Required(field.NewPath("target", "name"), "")})
	}
	obj, err := st.Get(ctx, b.Namespace, b.Name)
	if err != nil {
		return err
	}
	pod := obj.(*corev1.Pod)
	switch {
	case pod.DeletionTimestamp != nil:
		return apierrors.NewConflict(st.Resource.GroupResource(), pod.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
	case pod.Spec.NodeName != "":
		return apierrors.NewConflict(st.Resource.GroupResource(), pod.Name, fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName))
	case b.UID != "" && b.UID != pod.UID:
		return apierrors.NewConflict(st.Resource.GroupResource(), pod.Name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", b.UID, pod.UID))
	}
	return nil
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo) error {
	ctx := r.Context()
	wo, err := parseWriteOptions(r, "update", "")
	if err != nil {
		return err
	}
	opts := registry.UpdateOptions{DryRun: wo.DryRun}
	switch info.Subresource {
	case "scale":
		sc := &autoscalingv1.Scale{}
		if err := s.decode(w, r, autoscalingv1.SchemeGroupVersion.WithKind("Scale"), sc); err != nil {
			return err
		}
		if err := checkNames(sc, info); err != nil {
			return err
		}
		out, err := st.UpdateScale(ctx, sc, opts)
		if err != nil {
			return err
		}
		return s.writeObject(w, info, http.StatusOK, out)
	case "status", "", "finalize": // finalize: a namespace's spec.finalizers
		opts.Subresource = info.Subresource
	default:
		return apierrors.NewMethodNotSupported(st.Resource.GroupResource(), "update")
	}
	obj := st.Resource.New()
	if err := s.decode(w, r, st.Resource.GroupVersionKind(), obj); err != nil {
		return err
	}
	if err := checkNames(obj, info); err != nil {
		return err
	}
	if live, err := st.Get(ctx, namespaceOf(st, info), info.Name); err == nil {
		obj = s.trackUpdate(r, st, opts.Subresource, live, obj, wo)
	}
	out, err := st.Update(ctx, obj, opts)
	if err != nil {
		return err
	}
	return s.writeObject(w, info, http.StatusOK, out)
}

// checkNames refuses a body whose name or namespace differs from the URL.
func checkNames(obj runtime.Object, info requestInfo) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if acc.GetName() == "" {
		acc.SetName(info.Name)
	}
	if acc.GetName() != info.Name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", acc.GetName(), info.Name))
	}
	if info.Namespace != "" && info.Resource != "namespaces" {
		if acc.GetNamespace() == "" {
			acc.SetNamespace(info.Namespace)
		}
		if acc.GetNamespace() != info.Namespace {
			return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	}
	return nil
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo) error {
	if info.Subresource != "" {
		return apierrors.NewMethodNotSupported(st.Resource.GroupResource(), "delete")
	}
	opts, err := s.deleteOptions(r)
	if err != nil {
		return err
	}
	obj, gone, err := st.Delete(r.Context(), namespaceOf(st, info), info.Name, opts)
	if err != nil {
		return err
	}
	if !gone {
		return s.writeObject(w, info, http.StatusOK, obj)
	}
	acc, _ := meta.Accessor(obj)
	return s.writeObject(w, info, http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name: info.Name, Group: st.Resource.Group, Kind: st.Resource.Resource, UID: acc.GetUID(),
		},
	})
}

// deleteOptions reads DeleteOptions from the body and the query.
func (s *Server) deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	data, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == protobufMediaType && len(data) > 0 {
		// client-go (and so the real kubectl) sends DeleteOptions as protobuf,
		// tagged v1 or meta.k8s.io/v1.
		if err := decodeProtobufDeleteOptions(data, opts); err != nil {
			return nil, err
		}
	} else if len(strings.TrimSpace(string(data))) > 0 {
		if err := json.Unmarshal(data, opts); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: %v", err))
		}
	}
	q := r.URL.Query()
	grace, err := queryInt64(q, "gracePeriodSeconds")
	if err != nil {
		return nil, err
	}
	if grace != nil {
		opts.GracePeriodSeconds = grace
	}
	if p := q.Get("propagationPolicy"); p != "" {
		pp := metav1.DeletionPropagation(p)
		opts.PropagationPolicy = &pp
	}
	if v, ok := queryBool(q, "orphanDependents"); ok {
		opts.OrphanDependents = &v //nolint:staticcheck // still part of the API
	}
	if dry := q["dryRun"]; len(dry) > 0 {
		opts.DryRun = dry
	}
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return opts, nil
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo) error {
	lopts, err := parseListParams(r, st, "deletecollection")
	if err != nil {
		return err
	}
	dopts, err := s.deleteOptions(r)
	if err != nil {
		return err
	}
	list, err := st.List(r.Context(), namespaceOf(st, info), lopts.ListOptions)
	if err != nil {
		return err
	}
	items, _ := meta.ExtractList(list)
	for _, it := range items {
		acc, _ := meta.Accessor(it)
		if _, _, err := st.Delete(r.Context(), acc.GetNamespace(), acc.GetName(), dopts); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return s.writeObject(w, info, http.StatusOK, list)
}

// logs serves pods/{name}/log.
func (s *Server) logs(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo) error {
	obj, err := st.Get(r.Context(), info.Namespace, info.Name)
	if err != nil {
		return err
	}
	pod := obj.(*corev1.Pod)
	q := r.URL.Query()
	opts := &corev1.PodLogOptions{
		Container:  q.Get("container"),
		Follow:     q.Get("follow") == "true",
		Previous:   q.Get("previous") == "true",
		Timestamps: q.Get("timestamps") == "true",
	}
	for name, dst := range map[string]**int64{"tailLines": &opts.TailLines, "sinceSeconds": &opts.SinceSeconds, "limitBytes": &opts.LimitBytes} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return apierrors.NewBadRequest(fmt.Sprintf("invalid %s %q", name, v))
			}
			*dst = &n
		}
	}
	if opts.Container == "" {
		if len(pod.Spec.Containers) != 1 {
			names := make([]string, 0, len(pod.Spec.Containers))
			for _, c := range pod.Spec.Containers {
				names = append(names, c.Name)
			}
			return apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, names))
		}
		opts.Container = pod.Spec.Containers[0].Name
	}
	found := false
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		found = found || c.Name == opts.Container
	}
	if !found {
		return apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", opts.Container, pod.Name))
	}
	if pod.Spec.NodeName == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	if s.cfg.Logs == nil {
		return apierrors.NewServiceUnavailable("no kubelet serves logs")
	}
	fw := &flushWriter{w: w}
	fw.header = func() {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
	}
	if err := s.cfg.Logs.PodLogs(r.Context(), pod, opts, fw); err != nil {
		if fw.wrote {
			return nil // the stream already started; nothing more can be said
		}
		return err
	}
	if !fw.wrote {
		fw.header()
	}
	return nil
}

// flushWriter sends the header on the first write and flushes every write, so
// `kubectl logs -f` sees lines as they come.
type flushWriter struct {
	w      http.ResponseWriter
	header func()
	wrote  bool
}

func (f *flushWriter) Write(p []byte) (int, error) {
	if !f.wrote {
		f.wrote = true
		f.header()
	}
	n, err := f.w.Write(p)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}
