package kubectl

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/liggitt/tabwriter"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	sigsjson "sigs.k8s.io/json"
)

// newTabWriter is cli-runtime's GetNewTabWriter: columns are at least 6
// wide, padded with 3 spaces, and (RememberWidths) a column never shrinks
// between flushes, so the rows of `get -w` stay aligned under the header.
// github.com/liggitt/tabwriter is the fork of text/tabwriter kubectl uses
// for that flag.
func newTabWriter(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 6, 4, 3, ' ', tabwriter.RememberWidths)
}

// tableOptions are the display choices of `kubectl get`.
type tableOptions struct {
	Wide          bool     // -o wide: also the columns with priority > 0
	NoHeaders     bool     // --no-headers
	WithNamespace bool     // -A: a NAMESPACE column first
	ShowLabels    bool     // --show-labels: a LABELS column last
	LabelColumns  []string // -L app,tier: a column per label key, before LABELS
	Kind          string   // set when several kinds print: names become "pod/web"
	EventType     bool     // --output-watch-events: an EVENT column first
}

// tablePrinter is cli-runtime's HumanReadablePrinter for server-side tables:
// it prints the header once for a run of tables with the same columns (the
// pages of a list, the events of a watch) and each row's cells, tab
// separated, into a tabwriter that aligns them.
type tablePrinter struct {
	opts           tableOptions
	lastColumns    []metav1.TableColumnDefinition
	printedHeaders bool
}

// decodeTable decodes a Table answer. Integer cells stay int64 (a RESTARTS
// of 3 prints "3", not "3e+00").
func decodeTable(data []byte) (*metav1.Table, error) {
	t := &metav1.Table{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, t); err != nil {
		return nil, fmt.Errorf("decoding table: %w", err)
	}
	if t.Kind != "Table" {
		return nil, fmt.Errorf("server returned a %q, not a Table", t.Kind)
	}
	return t, nil
}

// rowMeta returns the object metadata the server attached to a row.
func rowMeta(row metav1.TableRow) *metav1.PartialObjectMetadata {
	if len(row.Object.Raw) == 0 {
		return nil
	}
	m := &metav1.PartialObjectMetadata{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(row.Object.Raw, m); err != nil {
		return nil
	}
	return m
}

// print writes table's rows; eventType is the watch event type for
// --output-watch-events.
func (p *tablePrinter) print(w io.Writer, table *metav1.Table, eventType string) {
	opts := p.opts
	if p.printedHeaders && (len(table.ColumnDefinitions) == 0 || reflect.DeepEqual(table.ColumnDefinitions, p.lastColumns)) {
		opts.NoHeaders = true
	}
	columns := table.ColumnDefinitions
	if len(columns) == 0 {
		columns = p.lastColumns // watch events may omit them
	} else if !reflect.DeepEqual(columns, p.lastColumns) {
		p.lastColumns = columns
		p.printedHeaders = false
	}
	if len(table.Rows) == 0 {
		return // no header for an empty table
	}
	p.printedHeaders = true

	visible := func(c metav1.TableColumnDefinition) bool { return opts.Wide || c.Priority == 0 }
	if !opts.NoHeaders {
		var header []string
		if opts.EventType && eventType != "" {
			header = append(header, "EVENT")
		}
		if opts.WithNamespace {
			header = append(header, "NAMESPACE")
		}
		for _, c := range columns {
			if visible(c) {
				header = append(header, strings.ToUpper(c.Name))
			}
		}
		for _, l := range opts.LabelColumns {
			parts := strings.Split(l, "/")
			header = append(header, strings.ToUpper(parts[len(parts)-1]))
		}
		if opts.ShowLabels {
			header = append(header, "LABELS")
		}
		fmt.Fprintln(w, strings.Join(header, "\t"))
	}
	for _, row := range table.Rows {
		var cells []string
		meta := rowMeta(row)
		if opts.EventType && eventType != "" {
			cells = append(cells, formatEventType(eventType))
		}
		if opts.WithNamespace {
			ns := ""
			if meta != nil {
				ns = meta.Namespace
			}
			cells = append(cells, ns)
		}
		for i, c := range columns {
			if !visible(c) {
				continue
			}
			var cell any
			if i < len(row.Cells) {
				cell = row.Cells[i]
			}
			s := cellString(cell)
			if opts.Kind != "" && c.Format == "name" && c.Type == "string" {
				s = opts.Kind + "/" + s
			}
			cells = append(cells, s)
		}
		var rowLabels map[string]string
		if meta != nil {
			rowLabels = meta.Labels
		}
		for _, l := range opts.LabelColumns {
			cells = append(cells, rowLabels[l])
		}
		if opts.ShowLabels {
			cells = append(cells, labels.FormatLabels(rowLabels))
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
}

// cellString prints one cell: strings as they are (cut at the first line
// break, with "..."), numbers and booleans with fmt, nil as nothing.
func cellString(cell any) string {
	switch v := cell.(type) {
	case nil:
		return ""
	case string:
		if i := strings.IndexAny(v, "\f\n\r"); i >= 0 {
			return escapeTerminal(v[:i]) + "..."
		}
		return escapeTerminal(v)
	default:
		return fmt.Sprint(v)
	}
}

// escapeTerminal keeps text from the server from driving the learner's
// terminal: an escape character prints visibly as ^[ (upstream
// printers.WriteEscaped).
func escapeTerminal(s string) string {
	return strings.ReplaceAll(s, "\x1b", "^[")
}

var formattedEventType = map[string]string{
	"ADDED": "ADDED   ", "MODIFIED": "MODIFIED", "DELETED": "DELETED ", "ERROR": "ERROR   ",
}

func formatEventType(t string) string {
	if f, ok := formattedEventType[t]; ok {
		return f
	}
	return t
}
