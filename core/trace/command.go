package trace

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/kubetab/kubetab/core/lang"
)

// IOStreams are the console command's streams.
type IOStreams struct {
	Out, ErrOut io.Writer
}

const usage = `Show how requests travel through the cluster: every hop between kubectl,
the API server, etcd, the controllers, the scheduler and the kubelets.

Usage:
  trace [NAME | TYPE/NAME] [flags]

Examples:
  # The last 50 hops
  trace

  # Everything about the deployment web and what it made (web-5d9c7b8f6, web-5d9c7b8f6-x2x7k ...),
  # from the request that created it
  trace web

  # Only pods, and follow new hops (Ctrl-C ends)
  trace pods -f

  # Requests and writes only, no watch events
  trace web --kind=request,response,write

Flags:
`

// usageJA and flagUsagesJA are the help for a learner who reads Japanese.
const usageJA = `リクエストがクラスターの中をどう進むかを表示します: kubectl、API サーバー、
etcd、コントローラー、スケジューラー、kubelet の間の経路（ホップ）をすべて示します。

使い方:
  trace [NAME | TYPE/NAME] [flags]

例:
  # 最新の 50 ホップ
  trace

  # Deployment web と、それが作ったもの（web-5d9c7b8f6、web-5d9c7b8f6-x2x7k ...）のすべてを、
  # それを作成したリクエストから
  trace web

  # Pod だけを表示し、新しいホップを追いかけます（Ctrl-C で終わります）
  trace pods -f

  # リクエストと書き込みだけ。watch のイベントは表示しません
  trace web --kind=request,response,write

Flags:
`

const flagUsagesJA = `  -f, --follow         ホップが起きるたびに表示し続けます（Ctrl-C で終わります）
  -h, --help           trace のヘルプです
      --kind strings   これらの種類のホップだけ: request、response、write、watch、call、decision
      --tail int       最初に表示する一致したホップの数です。-1 は保持しているすべて（NAME を指定したときは、指定しない限り作成からのすべて） (default 50)
`

// Run is the console's trace command. It reads rec, never changes anything,
// and returns the exit code.
func Run(ctx context.Context, rec *Recorder, args []string, s IOStreams) int {
	fs := pflag.NewFlagSet("trace", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	follow := fs.BoolP("follow", "f", false, "Keep printing hops as they happen (Ctrl-C ends)")
	tail := fs.Int("tail", 50, "How many of the latest matching hops to print first; -1 for all that are kept (with a NAME: every hop since its creation unless set)")
	kinds := fs.StringSlice("kind", nil, "Only these kinds of hop: request, response, write, watch, call, decision")
	help := fs.BoolP("help", "h", false, "Help for trace")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(s.ErrOut, "error: %v\nSee 'trace --help' for usage.\n", err)
		return 1
	}
	if *help {
		if lang.Of(ctx) == lang.Japanese {
			fmt.Fprint(s.Out, usageJA+flagUsagesJA)
		} else {
			fmt.Fprint(s.Out, usage+fs.FlagUsages())
		}
		return 0
	}
	f, err := newFilter(fs.Args(), *kinds)
	if err != nil {
		fmt.Fprintf(s.ErrOut, "error: %v\nSee 'trace --help' for usage.\n", err)
		return 1
	}
	if rec == nil {
		fmt.Fprintln(s.ErrOut, lang.Pick(ctx, "error: this cluster records no trace", "error: このクラスターはトレースを記録していません"))
		return 1
	}

	hops, seq, lost := rec.Since(0)
	hops = slices.DeleteFunc(hops, func(h Hop) bool { return !f.match(h) })
	fromCreation := false
	if f.name != "" && !fs.Changed("tail") {
		// A named object's story starts where it was created (its latest
		// life, if it was created more than once): every hop from there,
		// not the last few, which are mostly its pods' kubelet events.
		if i := lastCreation(hops, f); i >= 0 {
			hops, lost, fromCreation = hops[i:], 0, true
		}
	}
	lines := fanIn(hops)
	if !fromCreation && *tail >= 0 && len(lines) > *tail {
		lines = lines[len(lines)-*tail:]
		lost = 0 // older hops were left out on purpose
	}
	tw := tabwriter.NewWriter(s.Out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tFROM\t\tTO\tWHAT")
	if lost > 0 {
		fmt.Fprintf(tw, lang.Pick(ctx, "...\t%d older hops are no longer kept\t\t\t\n", "...\tこれより古い %d 件のホップはもう残っていません\t\t\t\n"), lost)
	}
	for _, l := range lines {
		l.write(tw)
	}
	tw.Flush()
	if !*follow {
		return 0
	}
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-rec.Wait(seq):
		}
		var more []Hop
		more, seq, lost = rec.Since(seq)
		if lost > 0 {
			fmt.Fprintf(tw, lang.Pick(ctx, "...\t%d hops went by too fast to show\t\t\t\n", "...\t%d 件のホップは速すぎて表示できませんでした\t\t\t\n"), lost)
		}
		for _, h := range more {
			if f.match(h) {
				line{hop: h, to: []string{h.To}}.write(tw)
			}
		}
		tw.Flush()
	}
}

// lastCreation is the index of the latest request that created the object
// f names (the object itself, not one of its family), or -1 if the trace no
// longer holds it.
func lastCreation(hops []Hop, f filter) int {
	for i := len(hops) - 1; i >= 0; i-- {
		h := hops[i]
		if h.Kind == Request && h.Verb == "create" && h.Name == f.name && !strings.Contains(h.Resource, "/") {
			return i
		}
	}
	return -1
}

// line is one printed line: a hop, or one change delivered to several
// watchers.
type line struct {
	hop Hop
	to  []string
}

// fanIn folds the watch hops that deliver one change (same event, object
// and revision) into the line of the first: one write reaches every
// component that watches its kind, and ten lines saying so would bury the
// path. trace -f prints each hop as it comes.
func fanIn(hops []Hop) []line {
	type change struct {
		verb, resource, namespace, name string
		rev                             int64
	}
	var lines []line
	first := map[change]int{}
	for _, h := range hops {
		if h.Kind == Watch {
			k := change{h.Verb, h.Resource, h.Namespace, h.Name, h.Revision}
			if i, ok := first[k]; ok {
				lines[i].to = append(lines[i].to, h.To)
				continue
			}
			first[k] = len(lines)
		}
		lines = append(lines, line{hop: h, to: []string{h.To}})
	}
	return lines
}

func (l line) write(w io.Writer) {
	h := l.hop
	arrow, to, what := "→", h.To, What(h)
	switch {
	case len(l.to) > 1:
		to = strconv.Itoa(len(l.to)) + " watchers"
		what += ": " + strings.Join(l.to, ", ")
	case to == "":
		arrow = ""
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", h.Time.Format("15:04:05.000"), h.From, arrow, to, what)
}

// What is the hop's description, as the trace command prints it:
//
//	POST deployments.apps default/web
//	put /registry/deployments/default/web (rev 512)
//	201 Created
//	ADDED deployments.apps default/web (rev 512)
func What(h Hop) string {
	var b strings.Builder
	switch h.Kind {
	case Response:
		b.WriteString(strconv.Itoa(h.Code))
		if t := http.StatusText(h.Code); t != "" {
			b.WriteString(" " + t)
		}
		if h.Resource != "" {
			b.WriteString(" " + h.Resource)
		}
	case Write:
		b.WriteString(h.Verb + " " + h.Key)
	default:
		if h.Verb != "" {
			b.WriteString(h.Verb)
		}
		if h.Resource != "" {
			b.WriteString(" " + h.Resource)
		}
	}
	if h.Kind != Write {
		switch {
		case h.Namespace != "" && h.Name != "":
			b.WriteString(" " + h.Namespace + "/" + h.Name)
		case h.Name != "":
			b.WriteString(" " + h.Name)
		case h.Namespace != "":
			b.WriteString(" -n " + h.Namespace)
		}
	}
	if h.Detail != "" {
		b.WriteString(": " + h.Detail)
	}
	if h.Revision != 0 {
		b.WriteString(" (rev " + strconv.FormatInt(h.Revision, 10) + ")")
	}
	return strings.TrimSpace(b.String())
}

// filter selects hops by object and kind.
type filter struct {
	resource string // "pods", or "" for any
	name     string // the name or the prefix of a family ("web" matches web-5d9c7b8f6-x2x7k), or ""
	kinds    map[Kind]bool
}

// resourceNames maps what a learner may type to the resource hops carry.
var resourceNames = map[string]string{
	"po": "pods", "pod": "pods", "pods": "pods",
	"deploy": "deployments.apps", "deployment": "deployments.apps", "deployments": "deployments.apps",
	"rs": "replicasets.apps", "replicaset": "replicasets.apps", "replicasets": "replicasets.apps",
	"svc": "services", "service": "services", "services": "services",
	"no": "nodes", "node": "nodes", "nodes": "nodes",
	"ns": "namespaces", "namespace": "namespaces", "namespaces": "namespaces",
	"ev": "events", "event": "events", "events": "events",
	"ep": "endpoints", "endpoints": "endpoints",
	"cm": "configmaps", "configmap": "configmaps", "configmaps": "configmaps",
	"job": "jobs.batch", "jobs": "jobs.batch",
	"lease": "leases.coordination.k8s.io", "leases": "leases.coordination.k8s.io",
}

func newFilter(args, kinds []string) (filter, error) {
	f := filter{}
	if len(args) > 1 {
		return f, fmt.Errorf("at most one NAME or TYPE/NAME, got %d arguments", len(args))
	}
	if len(args) == 1 {
		typ, name, typed := strings.Cut(args[0], "/")
		if !typed {
			if r, ok := resourceNames[typ]; ok {
				f.resource = r // "trace pods": every pod
			} else {
				f.name = typ
			}
		} else {
			r, ok := resourceNames[strings.ToLower(typ)]
			if !ok {
				return f, fmt.Errorf("unknown resource type %q (try pods, deployments, replicasets, services, nodes, events, jobs)", typ)
			}
			f.resource, f.name = r, name
		}
	}
	if len(kinds) > 0 {
		f.kinds = map[Kind]bool{}
		for _, k := range kinds {
			switch kk := Kind(strings.ToLower(k)); kk {
			case Request, Response, Write, Watch, Call, Decision:
				f.kinds[kk] = true
			default:
				return f, fmt.Errorf("unknown kind %q: want request, response, write, watch, call or decision", k)
			}
		}
	}
	return f, nil
}

func (f filter) match(h Hop) bool {
	if f.kinds != nil && !f.kinds[h.Kind] {
		return false
	}
	if f.resource != "" {
		base, _, _ := strings.Cut(h.Resource, "/") // pods/binding is about a pod
		if base != f.resource {
			return false
		}
	}
	if f.name != "" && h.Name != f.name && !strings.HasPrefix(h.Name, f.name+"-") {
		return false
	}
	return true
}
