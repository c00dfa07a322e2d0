package kubectl

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// Tab completion, as kubectl's bash completion does it. Upstream, `source
// <(kubectl completion bash)` installs a shell function that runs
//
//	kubectl __complete logs web-
//
// and reads the candidates it prints, one a line, then ":DIRECTIVE" (cobra's
// ShellCompDirective: no space after it, no file names ...). The candidates
// come from the commands' ValidArgsFunction and their flags' completion
// functions, which ask the cluster (k8s.io/kubectl/pkg/util/completion:
// ResourceTypeAndNameCompletionFunc lists the served resource types, then
// the names of the objects of the type typed, in the namespace of -n). This
// file attaches the same kinds of functions to kubetab's commands and runs
// cobra's own __complete, so a learner's Tab here answers what it answers
// against a real cluster.

// Completion is what Tab offers for the word being typed.
type Completion struct {
	// Candidates are the words that may replace the word being typed, each
	// whole (a flag's `--output=` included), in order.
	Candidates []string
	// NoSpace: a unique candidate is not finished (TYPE/, --flag=).
	NoSpace bool
	// Files: the word may be a file name, in addition to the candidates
	// (cobra's default directive); Exts limits them to those extensions
	// (-f: .yaml, .yml, .json) and directories.
	Files bool
	Exts  []string
}

// cobra's ShellCompDirective bits, as __complete prints them.
const (
	dirError         = 1
	dirNoSpace       = 2
	dirNoFileComp    = 4
	dirFilterFileExt = 8
	dirFilterDirs    = 16
)

// Complete answers Tab for `kubectl ARGS... TOCOMPLETE`: args are the
// words before the one being typed (without "kubectl"), toComplete that
// word's start (maybe empty).
func (c *CLI) Complete(ctx context.Context, args []string, toComplete string) Completion {
	var out bytes.Buffer
	s := &session{cli: c, ctx: ctx, streams: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: io.Discard}, namespace: c.cfg.Namespace}
	s.client = newRESTClient(c.cfg.Transport, c.server)
	root := s.rootCommand()
	s.addCompletions(root)
	root.SetArgs(append(append([]string{cobra.ShellCompRequestCmd}, args...), toComplete))
	root.SetIn(s.streams.In)
	root.SetOut(&out)
	root.SetErr(io.Discard)
	func() {
		defer func() { recover() }() // a completion must never take the console down
		root.ExecuteContext(ctx)
	}()

	var comp Completion
	directive := 0
	sc := bufio.NewScanner(&out)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if n := len(lines); n > 0 && strings.HasPrefix(lines[n-1], ":") {
		directive, _ = strconv.Atoi(lines[n-1][1:])
		lines = lines[:n-1]
	}
	if directive&dirError != 0 {
		return Completion{}
	}
	// --flag=VALUE: cobra completes the value; the word is the whole.
	prefix, value := "", toComplete
	if strings.HasPrefix(toComplete, "-") {
		if i := strings.IndexByte(toComplete, '='); i >= 0 {
			prefix, value = toComplete[:i+1], toComplete[i+1:]
		}
	}
	seen := map[string]bool{}
	for _, l := range lines {
		cand, _, _ := strings.Cut(l, "\t") // the description
		if cand == "" || seen[cand] || !strings.HasPrefix(cand, value) {
			continue
		}
		seen[cand] = true
		comp.Candidates = append(comp.Candidates, prefix+cand)
	}
	comp.NoSpace = directive&dirNoSpace != 0
	switch {
	case directive&dirFilterFileExt != 0:
		comp.Files, comp.Exts = true, lines
		comp.Candidates = nil
	case directive&dirFilterDirs != 0:
		comp.Files, comp.Exts = true, []string{"/"}
		comp.Candidates = nil
	case directive&dirNoFileComp == 0 && len(comp.Candidates) == 0:
		comp.Files = true
	}
	if comp.Files && prefix != "" {
		comp.Files = false // the shell completes whole words; --filename=<TAB> is rare
	}
	return comp
}

// completeFunc is a cobra ValidArgsFunction.
type completeFunc = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective)

// The resource types that become pods (logs, exec, attach, port-forward
// take TYPE/NAME of these: kubectl's polymorphichelpers).
var podOwnerTypes = []string{"daemonsets", "deployments", "jobs", "pods", "replicasets", "replicationcontrollers", "services", "statefulsets"}

// addCompletions attaches the completion functions to root's commands, by
// their names, as upstream's commands register theirs.
func (s *session) addCompletions(root *cobra.Command) {
	typeAndName := s.completeTypeAndName(nil)
	byPath := map[string]completeFunc{
		"get": typeAndName, "describe": typeAndName, "delete": typeAndName, "edit": typeAndName,
		"label": typeAndName, "annotate": typeAndName, "patch": typeAndName, "wait": typeAndName,
		"set image": typeAndName, "set env": typeAndName, "set resources": typeAndName,
		"explain":            s.completeTypes(nil, false),
		"logs":               s.completePods(true),
		"exec":               s.completePods(false),
		"attach":             s.completePods(false),
		"port-forward":       s.completePods(false),
		"cordon":             s.completeNames("nodes"),
		"uncordon":           s.completeNames("nodes"),
		"drain":              s.completeNames("nodes"),
		"top node":           s.completeNames("nodes"),
		"top pod":            s.completeNames("pods"),
		"scheduling explain": s.completeNames("pods"),
		"taint":              s.completeTypeAndName([]string{"node"}),
		"scale":              s.completeTypeAndName([]string{"deployment", "replicaset", "replicationcontroller", "statefulset"}),
		"expose":             s.completeTypeAndName([]string{"pod", "service", "replicationcontroller", "deployment", "replicaset"}),
		"autoscale":          s.completeTypeAndName([]string{"deployment", "replicaset", "replicationcontroller", "statefulset"}),
	}
	for _, sub := range []string{"status", "history", "undo", "restart", "pause", "resume"} {
		byPath["rollout "+sub] = s.completeTypeAndName([]string{"deployment", "daemonset", "statefulset"})
	}
	var walk func(c *cobra.Command, path string)
	walk = func(c *cobra.Command, path string) {
		if fn, ok := byPath[path]; ok && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = fn
		} else if c.ValidArgsFunction == nil && c.Runnable() && path != "" {
			// create deployment NAME, run NAME ...: a new name, not a file.
			c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
		}
		s.addFlagCompletions(c)
		for _, sub := range c.Commands() {
			p := sub.Name()
			if path != "" {
				p = path + " " + sub.Name()
			}
			walk(sub, p)
		}
	}
	walk(root, "")
	root.RegisterFlagCompletionFunc("namespace", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return s.objectNames("namespaces", ""), cobra.ShellCompDirectiveNoFileComp
	})
}

// oneOf reads a flag's allowed values from its usage: "Output format. One
// of: (json, yaml, name, wide)." gives json, yaml, name, wide.
var oneOf = regexp.MustCompile(`(?i)(?:one of:?|valid values are:?)\s*\(?([a-z0-9-]+(?:\s*[,|]\s*(?:or\s+)?[a-z0-9-]+)+)\)?`)

// addFlagCompletions: -o from its usage's list of formats, -f files,
// -c the pod's containers.
func (s *session) addFlagCompletions(c *cobra.Command) {
	if f := c.LocalNonPersistentFlags().Lookup("output"); f != nil {
		var formats []string
		if m := oneOf.FindStringSubmatch(f.Usage); m != nil {
			for _, v := range regexp.MustCompile(`[a-z0-9-]+`).FindAllString(m[1], -1) {
				if v != "or" {
					formats = append(formats, v)
				}
			}
		} else if q := regexp.MustCompile(`'([a-z]+)'`).FindAllStringSubmatch(f.Usage, -1); q != nil {
			for _, v := range q {
				formats = append(formats, v[1])
			}
		}
		if len(formats) > 0 {
			c.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return formats, cobra.ShellCompDirectiveNoFileComp
			})
		}
	}
	if c.LocalNonPersistentFlags().Lookup("filename") != nil {
		c.MarkFlagFilename("filename", "json", "yaml", "yml")
	}
	if c.LocalNonPersistentFlags().Lookup("container") != nil {
		c.RegisterFlagCompletionFunc("container", func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return s.containerNames(args[0]), cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// completeTypes lists the resource types whose names start as typed: the
// served resources' plural names, group-qualified outside the core group
// (`kubectl api-resources -o name`), with their short names; only those
// in allowed when it is set. slash adds each type's "TYPE/" form.
func (s *session) completeTypes(allowed []string, slash bool) completeFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		all, err := s.discover()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, r := range all {
			if allowed != nil {
				if !contains(allowed, r.Singular) && !contains(allowed, r.Name) {
					continue
				}
				out = append(out, r.Singular)
				continue
			}
			name := r.Name
			if r.Group != "" {
				name += "." + r.Group
			}
			out = append(out, name)
			for _, sn := range r.ShortNames {
				if toComplete != "" && strings.HasPrefix(sn, toComplete) {
					out = append(out, sn)
				}
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeTypeAndName is upstream's ResourceTypeAndNameCompletionFunc (and,
// with allowed, SpecifiedResourceTypeAndNameCompletionFunc): first a type,
// or TYPE/NAME once a "/" is typed; after a type, the names of its objects
// not already given.
func (s *session) completeTypeAndName(allowed []string) completeFunc {
	types := s.completeTypes(allowed, false)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			if typ, _, ok := strings.Cut(toComplete, "/"); ok {
				if allowed != nil && !s.isOneOf(typ, allowed) {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				var out []string
				for _, n := range s.objectNames(typ, "") {
					out = append(out, typ+"/"+n)
				}
				return out, cobra.ShellCompDirectiveNoFileComp
			}
			return types(cmd, args, toComplete)
		}
		if strings.Contains(args[0], "/") || strings.Contains(args[0], ",") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if allowed != nil && len(args) > 1 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, n := range s.objectNames(args[0], "") {
			if !contains(args[1:], n) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completePods is upstream's PodResourceNameCompletionFunc: the pods'
// names, and TYPE/NAME of what has pods; with containers (logs), a second
// word is one of the pod's containers.
func (s *session) completePods(containers bool) completeFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 1 && containers {
			return s.containerNames(args[0]), cobra.ShellCompDirectiveNoFileComp
		}
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if typ, _, ok := strings.Cut(toComplete, "/"); ok {
			var out []string
			for _, n := range s.objectNames(typ, "") {
				out = append(out, typ+"/"+n)
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		out := s.objectNames("pods", "")
		if len(out) == 0 || toComplete != "" && !anyHasPrefix(out, toComplete) {
			// nothing of that name: offer the TYPE/ forms
			for _, t := range podOwnerTypes {
				out = append(out, t+"/")
			}
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func anyHasPrefix(list []string, prefix string) bool {
	for _, l := range list {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// completeNames completes the names of one resource type's objects.
func (s *session) completeNames(typ string) completeFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, n := range s.objectNames(typ, "") {
			if !contains(args, n) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// isOneOf reports whether typ names one of the resources in list.
func (s *session) isOneOf(typ string, list []string) bool {
	r, err := s.resolve(typ)
	return err == nil && (contains(list, r.Singular) || contains(list, r.Name))
}

// objectNames lists the names of typ's objects in -n's namespace (or the
// configured one), sorted; nothing on any error.
func (s *session) objectNames(typ, namespace string) []string {
	res, err := s.resolve(typ)
	if err != nil || !contains(res.Verbs, "list") {
		return nil
	}
	if namespace == "" && res.Namespaced {
		namespace = s.namespace
		if s.namespaceFlag != "" {
			namespace = s.namespaceFlag
		}
	}
	items, _, err := s.listObjects(res, namespace, url.Values{})
	if err != nil {
		return nil
	}
	var out []string
	for _, it := range items {
		if n := nestedString(it, "metadata", "name"); n != "" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// containerNames lists a pod's containers (init containers too), for logs
// POD <TAB> and -c.
func (s *session) containerNames(pod string) []string {
	if strings.Contains(pod, "/") {
		return nil
	}
	res, err := s.resolve("pods")
	if err != nil {
		return nil
	}
	ns := s.namespace
	if s.namespaceFlag != "" {
		ns = s.namespaceFlag
	}
	obj, err := s.getObject(res, ns, pod)
	if err != nil {
		return nil
	}
	var out []string
	for _, field := range []string{"initContainers", "containers"} {
		list, _ := nestedMap(obj, "spec")[field].([]any)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				if n, _ := m["name"].(string); n != "" {
					out = append(out, n)
				}
			}
		}
	}
	return out
}
