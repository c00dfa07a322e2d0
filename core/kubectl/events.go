package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

var eventsResource = apiResource{Version: "v1", Name: "events", Kind: "Event", Namespaced: true}

// newEventsCommand is `kubectl events` (upstream pkg/cmd/events): the
// namespace's events, oldest first, as LAST SEEN TYPE REASON OBJECT MESSAGE;
// --for narrows them to one object with a field selector on
// involvedObject, and -w streams new ones.
func (s *session) newEventsCommand() *cobra.Command {
	var (
		forObject     string
		types         []string
		allNamespaces bool
		watch         bool
		noHeaders     bool
		output        string
	)
	cmd := &cobra.Command{
		Use:                   "events [(-o|--output=)json|yaml|name|go-template|go-template-file|template|templatefile|jsonpath|jsonpath-as-json|jsonpath-file] [--for TYPE/NAME] [--watch] [--types=Normal,Warning]",
		DisableFlagsInUseLine: true,
		Short:                 "List events",
		Long: `Display events.

 Prints a table of the most important information about events. You can request events for a namespace, for all namespace, or filtered to only those pertaining to a specified resource.`,
		Example: `  # List recent events in the default namespace
  kubectl events

  # List recent events in all namespaces
  kubectl events --all-namespaces

  # List recent events for the specified deployment, then wait for more events, listing them as they arrive
  kubectl events --for deployment/web --watch

  # List recent only events of type 'Warning' or 'Normal'
  kubectl events --types=Warning,Normal`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd, "unexpected args: %v", args)
			}
			for _, t := range types {
				if !strings.EqualFold(t, "Normal") && !strings.EqualFold(t, "Warning") {
					return errors.New("valid --types are Normal or Warning")
				}
			}
			var printer *objectPrinter
			if output != "" {
				if err := checkOutputFormat(output, objectOutputFormats...); err != nil {
					return err
				}
				var err error
				if printer, err = newObjectPrinter(output, printerOptions{allowMissing: true, readFile: s.cli.cfg.ReadFile}); err != nil {
					return err
				}
			}
			q := listQuery("", "")
			if forObject != "" {
				typ, name, ok := strings.Cut(forObject, "/")
				if !ok {
					return errors.New("--for must be in resource/name form")
				}
				if strings.Contains(name, "/") {
					return errors.New("arguments in resource/name form may not have more than one slash")
				}
				res, err := s.resolve(typ)
				if err != nil {
					return err
				}
				q.Set("fieldSelector", fmt.Sprintf("involvedObject.kind=%s,involvedObject.apiVersion=%s,involvedObject.name=%s", res.Kind, res.GroupVersion().String(), name))
			}
			ns := s.namespace
			if allNamespaces {
				ns = ""
			}
			keep := func(ev corev1.Event) bool {
				if len(types) == 0 {
					return true
				}
				for _, t := range types {
					if strings.EqualFold(t, ev.Type) {
						return true
					}
				}
				return false
			}
			ep := &eventPrinter{now: s.cli.cfg.Clock.Now(), allNamespaces: allNamespaces, noHeaders: noHeaders}
			if watch {
				return s.watchEvents(ns, q, keep, ep, printer)
			}
			var list corev1.EventList
			if err := s.client.into(s.ctx, request{method: http.MethodGet, path: eventsResource.path(ns, "", ""), query: q}, &list); err != nil {
				return err
			}
			var events []corev1.Event
			for _, ev := range list.Items {
				if keep(ev) {
					events = append(events, ev)
				}
			}
			if len(events) == 0 {
				if allNamespaces {
					fmt.Fprintln(s.errOut(), "No events found.")
				} else {
					fmt.Fprintf(s.errOut(), "No events found in %s namespace.\n", s.namespace)
				}
				return nil
			}
			sort.SliceStable(events, func(i, j int) bool { return eventTime(events[i]).Before(eventTime(events[j])) })
			if printer != nil {
				items := make([]map[string]any, len(events))
				for i := range events {
					events[i].APIVersion, events[i].Kind = "v1", "Event"
					m, _, err := toMap(&events[i])
					if err != nil {
						return err
					}
					items[i] = m
				}
				list := listOf(items)
				list["kind"] = "EventList"
				return printer.print(s.out(), list)
			}
			tw := newTabWriter(s.out())
			for _, ev := range events {
				ep.print(tw, ev)
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&forObject, "for", "", "Filter events to only those pertaining to the specified resource.")
	f.StringSliceVar(&types, "types", nil, "Output only events of given types.")
	f.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	f.BoolVarP(&watch, "watch", "w", false, "After listing the requested events, watch for more events.")
	f.BoolVar(&noHeaders, "no-headers", false, "When using the default output format, don't print headers.")
	f.StringVarP(&output, "output", "o", "", "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file).")
	return cmd
}

// watchEvents prints events as they arrive (new and updated ones; deleted
// ones are events expiring, not news).
func (s *session) watchEvents(ns string, q map[string][]string, keep func(corev1.Event) bool, ep *eventPrinter, printer *objectPrinter) error {
	query := listQuery("", "")
	for k, v := range q {
		query[k] = v
	}
	query.Set("watch", "true")
	resp, err := s.client.do(s.ctx, request{method: http.MethodGet, path: eventsResource.path(ns, "", ""), query: query})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	tw := newTabWriter(s.out())
	dec := json.NewDecoder(resp.Body)
	for {
		var we metav1.WatchEvent
		if err := dec.Decode(&we); err != nil {
			if s.ctx.Err() != nil {
				return s.ctx.Err()
			}
			if err == io.EOF {
				return nil
			}
			return nil
		}
		if we.Type == "DELETED" || we.Type == "BOOKMARK" || we.Type == "ERROR" {
			continue
		}
		var ev corev1.Event
		if err := json.Unmarshal(we.Object.Raw, &ev); err != nil || !keep(ev) {
			continue
		}
		if printer != nil {
			ev.APIVersion, ev.Kind = "v1", "Event"
			m, _, err := toMap(&ev)
			if err != nil {
				return err
			}
			if err := printer.print(s.out(), m); err != nil {
				return err
			}
			continue
		}
		ep.now = s.cli.cfg.Clock.Now()
		ep.print(tw, ev)
		tw.Flush()
	}
}

// eventPrinter is upstream's EventPrinter.
type eventPrinter struct {
	now            time.Time
	allNamespaces  bool
	noHeaders      bool
	headersPrinted bool
}

func (p *eventPrinter) print(w io.Writer, e corev1.Event) {
	if !p.noHeaders && !p.headersPrinted {
		if p.allNamespaces {
			fmt.Fprint(w, "NAMESPACE\t")
		}
		fmt.Fprintln(w, "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE")
		p.headersPrinted = true
	}
	if p.allNamespaces {
		fmt.Fprintf(w, "%v\t", e.Namespace)
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s/%s\t%v\n", p.interval(e), escapeTerminal(e.Type), escapeTerminal(e.Reason),
		escapeTerminal(e.InvolvedObject.Kind), escapeTerminal(e.InvolvedObject.Name), escapeTerminal(strings.TrimSpace(e.Message)))
}

// interval is LAST SEEN: "5s", or "5s (x3 over 2m)" for a repeated event.
func (p *eventPrinter) interval(e corev1.Event) string {
	since := func(t time.Time) string {
		if t.IsZero() {
			return "<unknown>"
		}
		return duration.HumanDuration(p.now.Sub(t))
	}
	first := since(e.EventTime.Time)
	if e.EventTime.IsZero() {
		first = since(e.FirstTimestamp.Time)
	}
	switch {
	case e.Series != nil:
		return fmt.Sprintf("%s (x%d over %s)", since(e.Series.LastObservedTime.Time), e.Series.Count, first)
	case e.Count > 1:
		return fmt.Sprintf("%s (x%d over %s)", since(e.LastTimestamp.Time), e.Count, first)
	}
	return first
}

// eventTime is when an event last happened, for sorting.
func eventTime(e corev1.Event) time.Time {
	if e.Series != nil {
		return e.Series.LastObservedTime.Time
	}
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}
