package kubectl

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// defaultContainerAnnotation names the container `kubectl logs` and `exec`
// pick when none is given.
const defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// logsOptions are the flags of `kubectl logs` (upstream pkg/cmd/logs).
type logsOptions struct {
	container    string
	follow       bool
	tail         int64
	timestamps   bool
	previous     bool
	since        time.Duration
	limitBytes   int64
	podTimeout   time.Duration
	containerSet bool
	// selector (-l) picks the pods by label instead of by name.
	selector      string
	allContainers bool
	allPods       bool
	prefix        bool
	ignoreErrors  bool
	// maxFollow caps the streams `-f` follows at once (--max-log-requests).
	maxFollow int
	sinceTime string
}

// selectorTail is the --tail a selector implies when none is given
// (upstream: selectorTail in pkg/cmd/logs).
const selectorTail int64 = 10

// logsUsageErr is upstream's message for `kubectl logs` with nothing to log.
const logsUsageErr = "expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\nPOD or TYPE/NAME is a required argument for the logs command"

// logTarget is one container whose log `kubectl logs` fetches.
type logTarget struct {
	pod       *corev1.Pod
	container string
}

func (s *session) newLogsCommand() *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:                   "logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]",
		DisableFlagsInUseLine: true,
		Short:                 "Print the logs for a container in a pod",
		Long: `Print the logs for a container in a pod or specified resource. If the pod has only one container, the container name is optional.

 The API server does not keep logs: it asks the kubelet of the pod's node (GET .../pods/NAME/log), which reads them from the container runtime.`,
		Example: `  # Return snapshot logs from pod web with only one container
  kubectl logs web

  # Begin streaming the logs of the hello container in pod web
  kubectl logs -f -c hello web

  # Display only the most recent 20 lines of output in pod web
  kubectl logs --tail=20 web

  # Return snapshot logs from the first pod of deployment web
  kubectl logs deployment/web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.containerSet = cmd.Flags().Changed("container")
			arg := ""
			switch len(args) {
			case 0:
				if o.selector == "" {
					return usageErrorf(cmd, "%s", logsUsageErr)
				}
			case 1:
				if o.selector != "" {
					return usageErrorf(cmd, "only a selector (-l) or a POD name is allowed")
				}
				arg = args[0]
			case 2:
				if o.containerSet {
					return errors.New("only one of -c or an inline [CONTAINER] arg is allowed")
				}
				arg, o.container = args[0], args[1]
			default:
				return usageErrorf(cmd, "%s", logsUsageErr)
			}
			if o.selector != "" && o.tail == -1 {
				o.tail = selectorTail
			}
			if o.allPods {
				o.prefix = true
			}
			return s.runLogs(o, arg)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.container, "container", "c", "", "Print the logs of this container")
	f.BoolVarP(&o.follow, "follow", "f", false, "Specify if the logs should be streamed.")
	f.Int64Var(&o.tail, "tail", -1, "Lines of recent log file to display. Defaults to -1 with no selector, showing all log lines otherwise 10, if a selector is provided.")
	f.BoolVar(&o.timestamps, "timestamps", false, "Include timestamps on each line in the log output")
	f.BoolVarP(&o.previous, "previous", "p", false, "If true, print the logs for the previous instance of the container in a pod if it exists.")
	f.DurationVar(&o.since, "since", 0, "Only return logs newer than a relative duration like 5s, 2m, or 3h. Defaults to all logs.")
	f.Int64Var(&o.limitBytes, "limit-bytes", 0, "Maximum bytes of logs to return. Defaults to no limit.")
	f.DurationVar(&o.podTimeout, "pod-running-timeout", 20*time.Second, "The length of time (like 5s, 2m, or 3h, higher than zero) to wait until at least one pod is running")
	f.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', and '!='.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
	f.BoolVar(&o.allContainers, "all-containers", false, "Get all containers' logs in the pod(s).")
	f.BoolVar(&o.allPods, "all-pods", false, "Get logs from all pod(s). Sets prefix to true.")
	f.BoolVar(&o.prefix, "prefix", false, "Prefix each log line with the log source (pod name and container name)")
	f.BoolVar(&o.ignoreErrors, "ignore-errors", false, "If watching / following pod logs, allow for any errors that occur to be non-fatal")
	f.IntVar(&o.maxFollow, "max-log-requests", 5, "Specify maximum number of concurrent logs to follow when using by a selector. Defaults to 5.")
	f.StringVar(&o.sinceTime, "since-time", "", "Only return logs after a specific date (RFC3339). Defaults to all logs. Only one of since-time / since may be used.")
	return cmd
}

func (s *session) runLogs(o *logsOptions, arg string) error {
	if o.limitBytes < 0 {
		return errors.New("--limit-bytes must be greater than 0")
	}
	if o.tail < -1 {
		return errors.New("--tail must be greater than or equal to -1")
	}
	if o.sinceTime != "" && o.since != 0 {
		return errors.New("at most one of `sinceTime` or `sinceSeconds` may be specified")
	}
	var sinceTime time.Time
	if o.sinceTime != "" {
		t, err := time.Parse(time.RFC3339, o.sinceTime)
		if err != nil {
			return fmt.Errorf("--since-time only accepts times matching RFC3339, eg '2006-01-02T15:04:05Z'")
		}
		sinceTime = t
	}
	podList, err := s.logPods(o, arg)
	if err != nil || len(podList) == 0 {
		return err
	}
	var targets []logTarget
	for _, pod := range podList {
		t, err := s.logTargets(o, pod)
		if err != nil {
			return err
		}
		targets = append(targets, t...)
	}

	q := url.Values{}
	if o.follow {
		q.Set("follow", "true")
	}
	if o.previous {
		q.Set("previous", "true")
	}
	if o.timestamps {
		q.Set("timestamps", "true")
	}
	if o.tail >= 0 {
		q.Set("tailLines", strconv.FormatInt(o.tail, 10))
	}
	if o.since > 0 {
		secs := int64(o.since.Round(time.Second).Seconds())
		if secs == 0 {
			secs = 1
		}
		q.Set("sinceSeconds", strconv.FormatInt(secs, 10))
	}
	if !sinceTime.IsZero() {
		q.Set("sinceTime", sinceTime.Format(time.RFC3339))
	}
	if o.limitBytes > 0 {
		q.Set("limitBytes", strconv.FormatInt(o.limitBytes, 10))
	}
	if o.follow && len(targets) > 1 {
		if len(targets) > o.maxFollow {
			return fmt.Errorf("you are attempting to follow %d log streams, but maximum allowed concurrency is %d, use --max-log-requests to increase the limit", len(targets), o.maxFollow)
		}
		return s.followLogs(o, targets, q)
	}
	for _, t := range targets {
		if err := s.streamLog(o, t, q, s.out()); err != nil {
			if !o.ignoreErrors {
				return err
			}
			fmt.Fprintf(s.out(), "error: %v\n", err)
		}
	}
	return nil
}

// logPods are the pods whose logs `kubectl logs` shows: the named pod, the
// pods matching -l, or the first (with --all-pods, every) pod of a workload.
// With -l and no match it says so on stderr and returns none.
func (s *session) logPods(o *logsOptions, arg string) ([]*corev1.Pod, error) {
	pods, err := s.resolve("pods")
	if err != nil {
		return nil, err
	}
	if o.selector != "" {
		if _, err := labels.Parse(o.selector); err != nil {
			return nil, err
		}
		var list corev1.PodList
		if err := s.client.into(s.ctx, request{method: http.MethodGet, path: pods.path(s.namespace, "", ""), query: listQuery(o.selector, "")}, &list); err != nil {
			return nil, err
		}
		if len(list.Items) == 0 {
			fmt.Fprintf(s.errOut(), "No resources found in %s namespace.\n", s.namespace)
		}
		out := make([]*corev1.Pod, len(list.Items))
		for i := range list.Items {
			out[i] = &list.Items[i]
		}
		return out, nil
	}
	typ, name, isTyped := strings.Cut(arg, "/")
	if !isTyped {
		name = arg
	}
	if !isTyped || typ == "pod" || typ == "pods" || typ == "po" {
		pod, err := s.getPod(pods, name)
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("error from server (NotFound): %w in namespace %q", err, s.namespace)
		}
		if err != nil {
			return nil, err
		}
		return []*corev1.Pod{pod}, nil
	}
	res, err := s.resolve(typ)
	if err != nil {
		return nil, err
	}
	if !o.allPods {
		pod, err := s.firstPodOf(res, name, o.podTimeout)
		if err != nil {
			return nil, err
		}
		return []*corev1.Pod{pod}, nil
	}
	obj, err := s.getObject(res, s.namespaceFor(res, false), name)
	if err != nil {
		return nil, err
	}
	sel, err := workloadSelector(obj)
	if err != nil {
		return nil, fmt.Errorf("cannot get the logs from %s: %v", res.kindName(), err)
	}
	return s.podsMatching(sel, o.podTimeout, true)
}

// logTargets are the containers of pod to log: every container (init,
// regular, ephemeral) with --all-containers, else the one -c names, the
// default-container annotation's, or the first, saying which it defaulted
// to when the pod has more (upstream polymorphichelpers logsForObject).
func (s *session) logTargets(o *logsOptions, pod *corev1.Pod) ([]logTarget, error) {
	if o.allContainers {
		var out []logTarget
		for _, c := range pod.Spec.InitContainers {
			out = append(out, logTarget{pod, c.Name})
		}
		for _, c := range pod.Spec.Containers {
			out = append(out, logTarget{pod, c.Name})
		}
		for _, c := range pod.Spec.EphemeralContainers {
			out = append(out, logTarget{pod, c.Name})
		}
		return out, nil
	}
	container := o.container
	if container == "" {
		if d := pod.Annotations[defaultContainerAnnotation]; d != "" {
			if findContainer(pod, d) {
				container = d
			} else {
				fmt.Fprintf(s.errOut(), "Default container name %q not found in pod %s\n", d, pod.Name)
			}
		}
	}
	if container == "" {
		if len(pod.Spec.Containers) == 0 {
			return nil, fmt.Errorf("pod %s/%s does not have any containers", pod.Namespace, pod.Name)
		}
		container = pod.Spec.Containers[0].Name
		if len(pod.Spec.Containers) > 1 || len(pod.Spec.InitContainers) > 0 {
			fmt.Fprintf(s.errOut(), "Defaulted container %q out of: %s\n", container, allContainerNames(pod))
		}
	}
	if !findContainer(pod, container) {
		return nil, fmt.Errorf("container %s is not valid for pod %s out of: %s", container, pod.Name, allContainerNames(pod))
	}
	return []logTarget{{pod, container}}, nil
}

// streamLog copies one container's log to w, each line prefixed with
// "[pod/NAME/CONTAINER] " under --prefix.
func (s *session) streamLog(o *logsOptions, t logTarget, q url.Values, w io.Writer) error {
	pods, err := s.resolve("pods")
	if err != nil {
		return err
	}
	cq := url.Values{}
	for k, v := range q {
		cq[k] = v
	}
	cq.Set("container", t.container)
	resp, err := s.client.do(s.ctx, request{method: http.MethodGet, path: pods.path(t.pod.Namespace, t.pod.Name, "log"), query: cq, accept: "*/*"})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	prefix := ""
	if o.prefix {
		prefix = fmt.Sprintf("[pod/%s/%s] ", t.pod.Name, t.container)
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, rerr := r.ReadBytes('\n')
		if len(line) > 0 {
			if _, err := io.WriteString(w, prefix+string(line)); err != nil {
				return err
			}
		}
		if rerr != nil {
			if s.ctx.Err() != nil {
				return s.ctx.Err()
			}
			if rerr == io.EOF {
				return nil
			}
			return rerr
		}
	}
}

// followLogs follows several streams at once, writing whole lines as they
// come (upstream parallelConsumeRequest). The first error ends them all
// unless --ignore-errors.
func (s *session) followLogs(o *logsOptions, targets []logTarget, q url.Values) error {
	w := &lineWriter{w: s.out()}
	errc := make(chan error, len(targets))
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.streamLog(o, t, q, w); err != nil {
				if !o.ignoreErrors {
					errc <- err
					return
				}
				fmt.Fprintf(w, "error: %v\n", err)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case err := <-errc:
		return err
	case <-done:
		select {
		case err := <-errc:
			return err
		default:
			return nil
		}
	}
}

// lineWriter serialises writes from several streams, so lines never mix.
type lineWriter struct {
	// mu guards w.
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (s *session) getPod(pods apiResource, name string) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	if err := s.client.into(s.ctx, request{method: http.MethodGet, path: pods.path(s.namespace, name, "")}, pod); err != nil {
		return nil, err
	}
	return pod, nil
}

// firstPodOf picks the pod whose logs `kubectl logs deployment/web` shows:
// the pods matching the workload's selector, the most useful first (upstream
// polymorphichelpers GetFirstPod with podutils.ByLogging). With none yet, it
// waits up to timeout for one to appear.
func (s *session) firstPodOf(res apiResource, name string, timeout time.Duration) (*corev1.Pod, error) {
	obj, err := s.getObject(res, s.namespaceFor(res, false), name)
	if err != nil {
		return nil, err
	}
	sel, err := workloadSelector(obj)
	if err != nil {
		return nil, fmt.Errorf("cannot get the logs from %s: %v", res.kindName(), err)
	}
	return s.firstPodMatching(sel, timeout)
}

// firstPodMatching is the most useful pod matching the label selector sel
// (the order of loggingLess), waiting up to timeout for one to appear.
func (s *session) firstPodMatching(sel string, timeout time.Duration) (*corev1.Pod, error) {
	l, err := s.podsMatching(sel, timeout, false)
	if err != nil {
		return nil, err
	}
	return l[0], nil
}

// podsMatching lists the pods matching sel in the order of loggingLess,
// waiting up to timeout for one to appear; unless all, only the first.
func (s *session) podsMatching(sel string, timeout time.Duration, all bool) ([]*corev1.Pod, error) {
	pods, _ := s.resolve("pods")
	deadline := time.Now().Add(timeout)
	for {
		var list corev1.PodList
		q := listQuery(sel, "")
		if err := s.client.into(s.ctx, request{method: http.MethodGet, path: pods.path(s.namespace, "", ""), query: q}, &list); err != nil {
			return nil, err
		}
		if len(list.Items) > 0 {
			sort.SliceStable(list.Items, func(i, j int) bool { return loggingLess(&list.Items[i], &list.Items[j]) })
			if all {
				out := make([]*corev1.Pod, len(list.Items))
				for i := range list.Items {
					out[i] = &list.Items[i]
				}
				return out, nil
			}
			if len(list.Items) > 1 {
				fmt.Fprintf(s.errOut(), "Found %v pods, using pod/%v\n", len(list.Items), list.Items[0].Name)
			}
			return []*corev1.Pod{&list.Items[0]}, nil
		}
		if time.Now().After(deadline) {
			return nil, errors.New("timed out waiting for the condition")
		}
		// Wait for a pod to show up.
		q.Set("watch", "true")
		q.Set("resourceVersion", list.ResourceVersion)
		q.Set("timeoutSeconds", strconv.Itoa(int(time.Until(deadline).Seconds())+1))
		resp, err := s.client.do(s.ctx, request{method: http.MethodGet, path: pods.path(s.namespace, "", ""), query: q})
		if err != nil {
			return nil, err
		}
		var ev metav1.WatchEvent
		_ = json.NewDecoder(resp.Body).Decode(&ev)
		resp.Body.Close()
		if s.ctx.Err() != nil {
			return nil, s.ctx.Err()
		}
	}
}

// workloadSelector returns the label selector of a deployment, replica set
// (spec.selector) or Service (spec.selector, a map of labels) as a string.
func workloadSelector(obj map[string]any) (string, error) {
	sel := nestedMap(obj, "spec", "selector")
	if sel == nil {
		return "", errors.New("selector for the object is not supported")
	}
	if obj["kind"] == "Service" {
		set := labels.Set{}
		for k, v := range sel {
			str, ok := v.(string)
			if !ok {
				return "", fmt.Errorf("invalid selector label %q", k)
			}
			set[k] = str
		}
		return labels.SelectorFromSet(set).String(), nil
	}
	data, _ := json.Marshal(sel)
	var ls metav1.LabelSelector
	if err := json.Unmarshal(data, &ls); err != nil {
		return "", err
	}
	s, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}

// loggingLess orders pods for logs: scheduled before unscheduled, running
// before pending, ready before not ready, more restarts first, then the
// older one (upstream podutils.ByLogging).
func loggingLess(a, b *corev1.Pod) bool {
	if (a.Spec.NodeName != "") != (b.Spec.NodeName != "") {
		return a.Spec.NodeName != ""
	}
	rank := map[corev1.PodPhase]int{corev1.PodRunning: 0, corev1.PodPending: 1, corev1.PodUnknown: 2}
	ra, oka := rank[a.Status.Phase]
	rb, okb := rank[b.Status.Phase]
	if !oka {
		ra = 3
	}
	if !okb {
		rb = 3
	}
	if ra != rb {
		return ra < rb
	}
	if ready(a) != ready(b) {
		return ready(a)
	}
	if restarts(a) != restarts(b) {
		return restarts(a) > restarts(b)
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

func findContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// allContainerNames lists a pod's containers the way kubectl's messages do:
// "app, sidecar, init-db (init)".
func allContainerNames(pod *corev1.Pod) string {
	var names []string
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name+" (init)")
	}
	return strings.Join(names, ", ")
}
