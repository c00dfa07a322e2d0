package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
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
			switch len(args) {
			case 1:
			case 2:
				if o.containerSet {
					return errors.New("only one of -c or an inline [CONTAINER] arg is allowed")
				}
				o.container = args[1]
			default:
				return usageErrorf(cmd, "expected POD_NAME or TYPE/NAME")
			}
			return s.runLogs(o, args[0])
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
	return cmd
}

func (s *session) runLogs(o *logsOptions, arg string) error {
	if o.limitBytes < 0 {
		return errors.New("--limit-bytes must be greater than 0")
	}
	if o.tail < -1 {
		return errors.New("--tail must be greater than or equal to -1")
	}
	pods, err := s.resolve("pods")
	if err != nil {
		return err
	}
	var pod *corev1.Pod
	typ, name, isTyped := strings.Cut(arg, "/")
	if !isTyped {
		name = arg
	}
	if !isTyped || typ == "pod" || typ == "pods" || typ == "po" {
		pod, err = s.getPod(pods, name)
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("error from server (NotFound): %w in namespace %q", err, s.namespace)
		}
		if err != nil {
			return err
		}
	} else {
		res, err := s.resolve(typ)
		if err != nil {
			return err
		}
		pod, err = s.firstPodOf(res, name, o.podTimeout)
		if err != nil {
			return err
		}
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
			return fmt.Errorf("pod %s/%s does not have any containers", pod.Namespace, pod.Name)
		}
		container = pod.Spec.Containers[0].Name
		if len(pod.Spec.Containers) > 1 || len(pod.Spec.InitContainers) > 0 {
			fmt.Fprintf(s.errOut(), "Defaulted container %q out of: %s\n", container, allContainerNames(pod))
		}
	}
	if !findContainer(pod, container) {
		return fmt.Errorf("container %s is not valid for pod %s out of: %s", container, pod.Name, allContainerNames(pod))
	}

	q := url.Values{"container": {container}}
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
	if o.limitBytes > 0 {
		q.Set("limitBytes", strconv.FormatInt(o.limitBytes, 10))
	}
	resp, err := s.client.do(s.ctx, request{method: http.MethodGet, path: pods.path(pod.Namespace, pod.Name, "log"), query: q, accept: "*/*"})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(s.out(), resp.Body)
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	return err
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
			if len(list.Items) > 1 {
				fmt.Fprintf(s.errOut(), "Found %v pods, using pod/%v\n", len(list.Items), list.Items[0].Name)
			}
			return &list.Items[0], nil
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
