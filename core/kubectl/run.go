package kubectl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// `kubectl run` is upstream's pkg/cmd/run/run.go with the BasicPod
// generator of pkg/generate/versioned/run.go (kubectl v1.32): it POSTs one
// bare Pod, labelled run=NAME, with one container named NAME. No
// controller owns that pod: nothing recreates it when it is deleted, which
// is the difference from `kubectl create deployment`.
//
// With --attach (or -i) it waits for the pod to run and attaches to the
// container's own process (attach.go): -i sends what is typed or piped to
// its stdin (the pod's spec says stdin: true), -t puts the console's
// terminal in raw mode for the container's terminal (tty: true), so
// `kubectl run -it --rm debug --image=busybox --restart=Never -- sh` is a
// shell in the pod. Where attach fails, kubectl says so and streams the
// container's log instead, as upstream does.
//
//	kubectl run -it --rm debug --image=busybox --restart=Never -- sh
//	  POST pods ─▶ wait (watch) until Running and Ready ─▶ POST pods/debug/attach (the streams)
//	  ─▶ sh exits ─▶ wait (watch) until Succeeded or Failed ─▶ exit with the container's code
//	  ─▶ --rm: DELETE pods/debug

var podsResource = apiResource{Version: "v1", Name: "pods", Kind: "Pod", Namespaced: true}

// imageReference is the grammar of an image reference that kubectl run
// checks before it sends anything: [host[:port]/]path[/path...][:tag][@digest].
// It is the distribution project's ReferenceRegexp
// (github.com/distribution/reference, regexp.go), written out here because
// that package would be a new dependency for one regular expression.
var imageReference = regexp.MustCompile(func() string {
	const (
		alnum           = `[a-z0-9]+`
		separator       = `(?:[._]|__|[-]+)`
		pathComponent   = alnum + `(?:` + separator + alnum + `)*`
		domainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
		host            = `(?:` + domainComponent + `(?:\.` + domainComponent + `)*|\[(?:[a-fA-F0-9:]+)\])`
		name            = `(?:` + host + `(?::[0-9]+)?/)?` + pathComponent + `(?:/` + pathComponent + `)*`
		tag             = `[\w][\w.-]{0,127}`
		digest          = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`
	)
	return `^` + name + `(?::` + tag + `)?(?:@` + digest + `)?$`
}())

// errPodCompleted is upstream run's ErrPodCompleted: the pod ended before
// it was seen running and ready.
var errPodCompleted = errors.New("pod ran to completion")

// runOptions are the flags of `kubectl run`.
type runOptions struct {
	image, port, labels, restart, pullPolicy string
	env, annotations                         []string

	command, stdin, tty, attach, leaveStdinOpen bool
	rm, expose, quiet, privileged               bool

	podTimeout   time.Duration
	fieldManager string
	overrides    overrideFlags
	print        printFlags
}

// runCreated is an object run made, for --rm to delete.
type runCreated struct {
	res  apiResource
	name string
}

func (s *session) newRunCommand() *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:                   `run NAME --image=image [--env="key=value"] [--port=port] [--dry-run=server|client] [--overrides=inline-json] [--command] -- [COMMAND] [args...]`,
		DisableFlagsInUseLine: true,
		Short:                 "Run a particular image on the cluster",
		Long: `Create and run a particular image in a pod.

 kubectl POSTs one Pod, labelled run=NAME, with one container named NAME; the scheduler binds it to a node and that node's kubelet starts it. No controller owns the pod, so nothing recreates it once it is deleted.

 With --attach or -i, kubectl waits for the pod to run and attaches to its container: its output appears as it comes, -i sends your input to it, and -t gives it a terminal (kubectl run -it --rm debug --image=busybox --restart=Never -- sh is a shell in the pod).`,
		Example: `  # Start a hello pod
  kubectl run hello --image=hello

  # Start a web pod and let the container expose port 8080
  kubectl run site --image=web --port=8080

  # Start a config pod and set environment variables "MODE=fast" and "LEVEL=3" in the container
  kubectl run settings --image=config --env="MODE=fast" --env="LEVEL=3"

  # Start a hello pod and set labels "app=hello" and "env=prod" on the pod
  kubectl run hello --image=hello --labels="app=hello,env=prod"

  # Dry run; print the corresponding API objects without creating them
  kubectl run hello --image=hello --dry-run=client -o yaml

  # Start a hello pod, but overload the spec with a partial set of values parsed from JSON
  kubectl run hello --image=hello --overrides='{ "apiVersion": "v1", "spec": { "nodeName": "node-2" } }'

  # Start a hello pod in the foreground, don't restart it when it exits, and delete it afterwards
  kubectl run -i --rm once --image=hello --restart=Never -- --ticks=3

  # Start the hello pod using the default command, but use custom arguments (arg1 .. argN) for that command
  kubectl run hello --image=hello -- <arg1> <arg2> ... <argN>

  # Start a web pod and a ClusterIP service for it on port 8080
  kubectl run site --image=web --port=8080 --expose`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("attach") && o.stdin {
				o.attach = true
			}
			return s.runRun(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.annotations, "annotations", nil, "Annotations to apply to the pod.")
	f.StringVar(&o.image, "image", "", "The image for the container to run.")
	_ = cmd.MarkFlagRequired("image")
	f.StringVar(&o.pullPolicy, "image-pull-policy", "", "The image pull policy for the container.  If left empty, this value will not be specified by the client and defaulted by the server.")
	f.BoolVar(&o.rm, "rm", false, "If true, delete the pod after it exits.  Only valid when attaching to the container, e.g. with '--attach' or with '-i/--stdin'.")
	f.StringArrayVar(&o.env, "env", nil, "Environment variables to set in the container.")
	f.StringVar(&o.port, "port", "", "The port that this container exposes.")
	f.StringVarP(&o.labels, "labels", "l", "", "Comma separated labels to apply to the pod. Will override previous values.")
	f.BoolVarP(&o.stdin, "stdin", "i", false, "Keep stdin open on the container in the pod, even if nothing is attached.")
	f.BoolVarP(&o.tty, "tty", "t", false, "Allocate a TTY for the container in the pod.")
	f.BoolVar(&o.attach, "attach", false, "If true, wait for the Pod to start running, and then attach to the Pod as if 'kubectl attach ...' were called.  Default false, unless '-i/--stdin' is set, in which case the default is true. With '--restart=Never' the exit code of the container process is returned.")
	f.BoolVar(&o.leaveStdinOpen, "leave-stdin-open", false, "If the pod is started in interactive mode or with stdin, leave stdin open after the first attach completes. By default, stdin will be closed after the first attach completes.")
	f.StringVar(&o.restart, "restart", "Always", "The restart policy for this Pod.  Legal values [Always, OnFailure, Never].")
	f.BoolVar(&o.command, "command", false, "If true and extra arguments are present, use them as the 'command' field in the container, rather than the 'args' field which is the default.")
	f.BoolVar(&o.expose, "expose", false, "If true, create a ClusterIP service associated with the pod.  Requires --port.")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "If true, suppress prompt messages.")
	f.BoolVar(&o.privileged, "privileged", false, "If true, run the container in privileged mode.")
	f.DurationVar(&o.podTimeout, "pod-running-timeout", time.Minute, "The length of time (like 5s, 2m, or 3h, higher than zero) to wait until at least one pod is running")
	f.StringVar(&o.fieldManager, "field-manager", "kubectl-run", "Name of the manager used to track field ownership.")
	o.overrides.add(cmd)
	o.print.add(cmd)
	return cmd
}

// runRun checks the flags in upstream's order, so that a command line with
// several mistakes reports the same one first, then creates the pod (and
// with --expose its service) and attaches or prints.
func (s *session) runRun(cmd *cobra.Command, o *runOptions, args []string) error {
	dr, err := parseDryRun(o.print.dryRun)
	if err != nil {
		return err
	}
	if err := checkOutputFormat(o.print.output, objectOutputFormats...); err != nil {
		return err
	}
	if len(args) == 0 || cmd.ArgsLenAtDash() == 0 {
		return usageErrorf(cmd, "NAME is required for run")
	}
	if o.podTimeout <= 0 {
		return usageErrorf(cmd, "--pod-running-timeout must be higher than zero")
	}
	if o.image == "" {
		return errors.New("--image is required")
	}
	if !imageReference.MatchString(o.image) {
		return fmt.Errorf("Invalid image name %q: invalid reference format", o.image)
	}
	if o.tty && !o.stdin {
		return usageErrorf(cmd, "-i/--stdin is required for containers with -t/--tty=true")
	}
	if o.expose && o.port == "" {
		return usageErrorf(cmd, "--port must be set when exposing a service")
	}
	// The policy kubectl waits by; the pod gets the flag as given (an
	// empty --restart with -i waits as OnFailure but runs as Always, as
	// upstream).
	restart := corev1.RestartPolicy(o.restart)
	switch restart {
	case "":
		restart = corev1.RestartPolicyAlways
		if o.stdin {
			restart = corev1.RestartPolicyOnFailure
		}
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	default:
		return usageErrorf(cmd, "invalid restart policy: %s", o.restart)
	}
	if !o.attach && o.rm {
		return usageErrorf(cmd, "--rm should only be used for attached containers")
	}
	if o.attach && dr != "none" {
		return usageErrorf(cmd, "--dry-run=[server|client] can't be used with attached containers options (--attach, --stdin, or --tty)")
	}
	switch corev1.PullPolicy(o.pullPolicy) {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		return usageErrorf(cmd, "invalid image pull policy: %s", o.pullPolicy)
	}

	name := args[0]
	pod, err := newRunPod(name, o, args[1:])
	if err != nil {
		return err
	}
	selector := pod.Labels // --expose selects these, whatever --overrides does
	if pod, err = applyOverrides(&o.overrides, pod); err != nil {
		return err
	}
	podObj, err := s.sendGenerated(o.fieldManager, podsResource, pod, dr)
	if err != nil {
		return err
	}
	created := []runCreated{{podsResource, pod.Name}}

	// --expose: the service is created after the pod but printed before
	// it, and a failure to create it does not undo the pod (upstream's
	// order). -o yaml then prints "---" twice: once from run, once from
	// the YAML printer.
	printed := 0
	show := func(res apiResource, obj map[string]any) error {
		if o.print.output == "yaml" && printed > 0 {
			fmt.Fprintln(s.out(), "---")
		}
		printed++
		return s.printCreated(res, obj, o.print.output, "created"+dr.suffix())
	}
	var errs multiError
	if o.expose {
		svc := newRunService(name, selector, o)
		if svcObj, err := s.sendGenerated(o.fieldManager, servicesResource, svc, dr); err != nil {
			errs = append(errs, err)
		} else {
			if err := show(servicesResource, svcObj); err != nil {
				return err
			}
			if o.print.output == "yaml" {
				fmt.Fprintln(s.out(), "---")
			}
			created = append(created, runCreated{servicesResource, svc.Name})
		}
	}

	if o.attach {
		return s.attachRun(o, pod.Name, restart, created)
	}
	if err := show(podsResource, podObj); err != nil {
		return err
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// sendGenerated POSTs a generated object, or with --dry-run=client only
// returns it, as the JSON map the printers take.
func (s *session) sendGenerated(fieldManager string, res apiResource, obj metav1.Object, dr dryRun) (map[string]any, error) {
	if s.explicitNamespace() {
		obj.SetNamespace(s.namespace)
	}
	m, body, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	out, err := s.createAs(fieldManager, res, s.namespace, body, dr)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = m
	}
	return out, nil
}

// newRunPod is upstream's BasicPod generator. Its errors come in the
// generator's order: env, annotations, labels, port.
func newRunPod(name string, o *runOptions, args []string) (*corev1.Pod, error) {
	env, err := parseRunEnv(o.env)
	if err != nil {
		return nil, err
	}
	annotations, err := parsePairs(o.annotations, "annotations")
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"run": name}
	if o.labels != "" {
		if labels, err = parseLabelSpec(o.labels); err != nil {
			return nil, err
		}
	}
	restart := corev1.RestartPolicy(o.restart)
	if restart == "" {
		restart = corev1.RestartPolicyAlways
	}
	c := corev1.Container{
		Name:            name,
		Image:           o.image,
		Env:             env,
		ImagePullPolicy: corev1.PullPolicy(o.pullPolicy),
		Stdin:           o.stdin,
		StdinOnce:       o.stdin && !o.leaveStdinOpen,
		TTY:             o.tty,
	}
	if o.privileged {
		c.SecurityContext = &corev1.SecurityContext{Privileged: ptrTo(true)}
	}
	if len(args) > 0 {
		if o.command {
			c.Command = args
		} else {
			c.Args = args
		}
	}
	if o.port != "" {
		port, err := strconv.Atoi(o.port)
		if err != nil {
			return nil, err
		}
		c.Ports = []corev1.ContainerPort{{ContainerPort: int32(port)}}
	}
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			Containers:    []corev1.Container{c},
			DNSPolicy:     corev1.DNSClusterFirst,
			RestartPolicy: restart,
		},
	}, nil
}

// newRunService is the service of --expose (upstream's ServiceGeneratorV2
// as run calls it): it selects the pod's labels, carries only the labels
// given with --labels, and forwards --port to the same port over TCP.
// The port was checked when the pod was generated.
func newRunService(name string, selector map[string]string, o *runOptions) *corev1.Service {
	port, _ := strconv.Atoi(o.port)
	var labels map[string]string
	if o.labels != "" {
		labels, _ = parseLabelSpec(o.labels)
	}
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.ServiceSpec{
			Selector: selector,
			Ports:    []corev1.ServicePort{{Port: int32(port), Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(int32(port))}},
		},
	}
}

// attachRun is --attach: wait for the pod to run, show the container's
// output, wait for the exit code when the pod does not restart, and with
// --rm delete what run created.
func (s *session) attachRun(o *runOptions, name string, restart corev1.RestartPolicy, created []runCreated) error {
	if o.rm {
		defer s.removeRunObjects(created, o.quiet)
	}
	pod, err := s.waitForPod(s.namespace, name, o.podTimeout, podRunningAndReady)
	switch {
	case errors.Is(err, errPodCompleted):
		// Already over: its log is all there is to see.
		if err := s.runLogs(&logsOptions{tail: -1}, name); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		// upstream's handleAttachPod: attach, or say why not and show the
		// log instead.
		ao := &attachOptions{streamOptions: streamOptions{stdin: o.stdin, tty: o.tty, quiet: o.quiet}, podTimeout: o.podTimeout}
		if err := s.attach(pod, ao); err != nil {
			if s.ctx.Err() != nil {
				return err
			}
			fmt.Fprintf(s.errOut(), "warning: couldn't attach to pod/%s, falling back to streaming logs: %v\n", name, err)
			if err := s.runLogs(&logsOptions{tail: -1, follow: true}, name); err != nil {
				return err
			}
		}
	}

	// With a pod that restarts its container there is no exit code to
	// wait for: the output ended, so is the command.
	if o.leaveStdinOpen || restart == corev1.RestartPolicyAlways {
		return nil
	}
	done := podCompleted
	if restart == corev1.RestartPolicyOnFailure {
		done = podSucceeded // a failed container is restarted: wait for success
	}
	if pod, err = s.waitForPod(s.namespace, name, o.podTimeout, done); err != nil {
		return err
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return nil
	case corev1.PodFailed:
		unknown := fmt.Errorf("pod %s/%s failed with unknown exit code", pod.Namespace, pod.Name)
		if len(pod.Status.ContainerStatuses) == 0 || pod.Status.ContainerStatuses[0].State.Terminated == nil {
			return unknown
		}
		t := pod.Status.ContainerStatuses[0].State.Terminated
		if t.ExitCode == 0 {
			return unknown
		}
		return &exitCodeError{code: int(t.ExitCode), err: verbatimError(fmt.Sprintf("pod %s/%s terminated (%s)\n%s", pod.Namespace, pod.Name, t.Reason, t.Message))}
	}
	return fmt.Errorf("pod %s/%s left in phase %s", pod.Namespace, pod.Name, pod.Status.Phase)
}

// removeRunObjects is --rm: delete what run created, printing
// `pod "once" deleted`, without waiting for it to be gone. It runs after
// Ctrl-C too (the console's Ctrl-C ends the command, not the container), so
// it does not use the command's context.
func (s *session) removeRunObjects(created []runCreated, quiet bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 30*time.Second)
	defer cancel()
	background := metav1.DeletePropagationBackground
	body, _ := json.Marshal(&metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}, PropagationPolicy: &background})
	for _, c := range created {
		var status map[string]any
		err := s.client.into(ctx, request{method: http.MethodDelete, path: c.res.path(s.namespace, c.name, ""), body: body, contentType: "application/json"}, &status)
		if apierrors.IsNotFound(err) {
			continue // already gone
		}
		if err != nil {
			return // upstream drops this error too
		}
		if !quiet {
			fmt.Fprintf(s.out(), "%s %q deleted\n", c.res.kindName(), c.name)
		}
	}
}

// waitForPod watches one pod until done says so or returns an error, for
// at most timeout (upstream run's waitForPod: a list, then a watch from
// the list's resourceVersion, of metadata.name=NAME). A deleted pod is a
// NotFound error, as upstream.
func (s *session) waitForPod(namespace, name string, timeout time.Duration, done func(*corev1.Pod) (bool, error)) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()
	failed := func(err error) (*corev1.Pod, error) {
		switch {
		case s.ctx.Err() != nil:
			return nil, s.ctx.Err()
		case ctx.Err() != nil:
			return nil, errors.New("timed out waiting for the condition")
		}
		return nil, err
	}
	path := podsResource.path(namespace, "", "")
	for {
		var list corev1.PodList
		if err := s.client.into(ctx, request{method: http.MethodGet, path: path, query: listQuery("", "metadata.name="+name)}, &list); err != nil {
			return failed(err)
		}
		for i := range list.Items {
			if ok, err := done(&list.Items[i]); ok || err != nil {
				return &list.Items[i], err
			}
		}
		q := listQuery("", "metadata.name="+name)
		q.Set("watch", "true")
		q.Set("resourceVersion", list.ResourceVersion)
		resp, err := s.client.do(ctx, request{method: http.MethodGet, path: path, query: q})
		if err != nil {
			return failed(err)
		}
		dec := json.NewDecoder(resp.Body)
		for {
			var ev struct {
				Type   string          `json:"type"`
				Object json.RawMessage `json:"object"`
			}
			if dec.Decode(&ev) != nil || ev.Type == "ERROR" {
				break // the watch ended or expired: list again
			}
			if ev.Type == "DELETED" {
				resp.Body.Close()
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "")
			}
			var p corev1.Pod
			if err := json.Unmarshal(ev.Object, &p); err != nil {
				continue
			}
			if ok, err := done(&p); ok || err != nil {
				resp.Body.Close()
				return &p, err
			}
		}
		resp.Body.Close()
		if ctx.Err() != nil {
			return failed(ctx.Err())
		}
	}
}

// podRunningAndReady: the pod runs and is ready; errPodCompleted when it
// already ended.
func podRunningAndReady(p *corev1.Pod) (bool, error) {
	switch p.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false, errPodCompleted
	case corev1.PodRunning:
		return ready(p), nil
	}
	return false, nil
}

// podCompleted: the pod ended, either way (--restart=Never).
func podCompleted(p *corev1.Pod) (bool, error) {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
}

// podSucceeded: the pod ended well (--restart=OnFailure, which restarts a
// failed container).
func podSucceeded(p *corev1.Pod) (bool, error) {
	return p.Status.Phase == corev1.PodSucceeded, nil
}

// parseRunEnv reads --env NAME=VALUE (upstream's parseEnvs).
func parseRunEnv(specs []string) ([]corev1.EnvVar, error) {
	var env []corev1.EnvVar
	for _, spec := range specs {
		name, value, ok := strings.Cut(spec, "=")
		if !ok || name == "" || len(validation.IsEnvVarName(name)) != 0 {
			return nil, fmt.Errorf("invalid env: %v", spec)
		}
		env = append(env, corev1.EnvVar{Name: name, Value: value})
	}
	return env, nil
}

// parsePairs reads KEY=VALUE arguments such as --annotations (upstream's
// cmdutil.ParsePairs without removals): every malformed one is named in
// one error.
func parsePairs(args []string, what string) (map[string]string, error) {
	pairs := map[string]string{}
	var invalid []string
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			invalid = append(invalid, a)
			continue
		}
		pairs[k] = v
	}
	if len(invalid) > 0 {
		return nil, fmt.Errorf("invalid %s format: %s", what, strings.Join(invalid, ", "))
	}
	return pairs, nil
}

// parseLabelSpec reads "key=value,key=value" (upstream's
// generate.ParseLabels): --labels of run and expose, --selector of expose.
// Only equality is supported; "a=b=c" and "a" are errors.
func parseLabelSpec(spec string) (map[string]string, error) {
	if spec == "" {
		return nil, errors.New("no label spec passed")
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(spec, ",") {
		parts := strings.Split(kv, "=")
		if len(parts) != 2 {
			return nil, fmt.Errorf("unexpected label spec: %s", kv)
		}
		if parts[0] == "" {
			return nil, errors.New("unexpected empty label key")
		}
		labels[parts[0]] = parts[1]
	}
	return labels, nil
}
