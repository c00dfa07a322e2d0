package etcdctl

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/kubetab/kubetab/core/store"
)

// printKV is etcdctl's printKV: the key on a line, then the value on a line
// (with unprintable bytes as dots: see printable).
func printKV(w io.Writer, valueOnly bool, key string, value []byte) {
	if !valueOnly {
		fmt.Fprintln(w, key)
	}
	w.Write(printable(value))
	fmt.Fprintln(w)
}

// printable is value with every control byte but tab and newline, and every
// byte that is not part of valid UTF-8, shown as '.', the way hexdump -C
// shows bytes it cannot print. kube-apiserver stores objects as protobuf, so
// values are mostly binary with readable strings; raw, their escape bytes
// would drive the console's terminal instead of showing. The exact bytes are
// in -w json (base64).
func printable(value []byte) []byte {
	out := make([]byte, 0, len(value))
	for len(value) > 0 {
		r, size := utf8.DecodeRune(value)
		switch {
		case r == utf8.RuneError && size <= 1, r < 0x20 && r != '\t' && r != '\n', r == 0x7f, r >= 0x80 && r < 0xa0:
			out = append(out, '.')
		default:
			out = append(out, value[:size]...)
		}
		value = value[size:]
	}
	return out
}

// The JSON shapes below are the protobuf messages etcdctl marshals with
// encoding/json, with their JSON names; []byte fields come out in base64,
// as in etcdctl's output.

type headerJSON struct {
	Revision int64 `json:"revision,omitempty"`
}

type keyValueJSON struct {
	Key            []byte `json:"key,omitempty"`
	CreateRevision int64  `json:"create_revision,omitempty"`
	ModRevision    int64  `json:"mod_revision,omitempty"`
	Version        int64  `json:"version,omitempty"`
	Value          []byte `json:"value,omitempty"`
}

type rangeResponseJSON struct {
	Header *headerJSON     `json:"header,omitempty"`
	KVs    []*keyValueJSON `json:"kvs,omitempty"`
	More   bool            `json:"more,omitempty"`
	Count  int64           `json:"count,omitempty"`
}

// eventJSON is mvccpb.Event: type 0 (PUT) is omitted, DELETE is 1.
type eventJSON struct {
	Type   int           `json:"type,omitempty"`
	KV     *keyValueJSON `json:"kv,omitempty"`
	PrevKV *keyValueJSON `json:"prev_kv,omitempty"`
}

// watchResponseJSON is clientv3.WatchResponse, whose fields have no JSON tags.
type watchResponseJSON struct {
	Header          headerJSON
	Events          []*eventJSON
	CompactRevision int64
	Canceled        bool
	Created         bool
}

func kvJSON(kv store.KeyValue) *keyValueJSON {
	return &keyValueJSON{Key: []byte(kv.Key), CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision, Version: kv.Version, Value: kv.Value}
}

func kvsJSON(kvs []store.KeyValue) []*keyValueJSON {
	var out []*keyValueJSON
	for _, kv := range kvs {
		out = append(out, kvJSON(kv))
	}
	return out
}

func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	fmt.Fprintln(w, string(b))
	return nil
}

// printTable draws etcdctl's -w table: headers centered, rows aligned right,
// in an ASCII box. (etcdctl uses olekukonko/tablewriter; one small table does
// not justify the dependency in the browser build.)
func printTable(w io.Writer, header []string, rows [][]string) {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = len(h)
	}
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	line := func() {
		var b strings.Builder
		for _, wd := range widths {
			b.WriteString("+" + strings.Repeat("-", wd+2))
		}
		fmt.Fprintln(w, b.String()+"+")
	}
	cells := func(row []string, center bool) {
		var b strings.Builder
		for i, cell := range row {
			pad := widths[i] - len(cell)
			left := pad
			if center {
				left = pad / 2
			}
			b.WriteString("| " + strings.Repeat(" ", left) + cell + strings.Repeat(" ", pad-left) + " ")
		}
		fmt.Fprintln(w, b.String()+"|")
	}
	line()
	upper := make([]string, len(header))
	for i, h := range header {
		upper[i] = strings.ToUpper(h)
	}
	cells(upper, true)
	line()
	for _, row := range rows {
		cells(row, false)
	}
	line()
}
