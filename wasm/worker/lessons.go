//go:build js && wasm

package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/hack-pad/safejs"

	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/lesson"
	"github.com/kubetab/kubetab/core/session"
)

// lessonDoor serves the lesson player (site/src/worker.js documents the
// messages; site/src/lessons/ is the player):
//
//	context.binding.parseLesson(id, path, text)
//	    a lesson file an author picked, parsed by core/lesson as the
//	    verifier parses it; kubetabHost.lessonParsed(id, json Lesson) or
//	    kubetabHost.lessonErrors(id, json ["path:line: message"...])
//	context.binding.resetLesson(id, json {nodes, setup})
//	    a fresh cluster with the lesson's nodes, then its setup lines in
//	    order; kubetabHost.lessonReset(id, json {setup: [{line, code,
//	    output}], error}) once done (error: the first failure)
//	context.binding.putFiles(id, json [{name, content}])
//	    the step's manifests into the console's files; kubetabHost.
//	    filesPut(id, error) (error '' when every file was written)
//	context.binding.watchChecks(id, json [[check...]...]) / unwatchChecks(id)
//	    evaluates each group of checks (one group a step) whenever the
//	    store's revision moved (looked at every 250 ms), and every 3 s in
//	    any case (a check on logs changes without a write); kubetabHost.
//	    checks(id, json [{ok, results: [{ok, code, output}]}]) each time a
//	    result changes. A new watchChecks replaces the last.
//
// Checks run here, in the worker, through the session's shell: the very
// commands the verifier runs. The page's main thread never evaluates one.
type lessonDoor struct {
	h    *host
	sess *session.Session

	mu    sync.Mutex // guards watch
	watch context.CancelFunc
}

// How often the checks look at the store's revision, and how often they run
// whatever the revision. A check takes one or more in-process kubectl calls
// (about a millisecond each natively, a few in the tab); an evaluation
// taking long makes the next wait four times as long, so the checks never
// use more than a fifth of the worker.
const (
	checkPoll  = 250 * time.Millisecond
	checkEvery = 3 * time.Second
)

// nodesAndSetup is resetLesson's argument: the parts of a lesson.Lesson
// that make its cluster.
type nodesAndSetup struct {
	Nodes []lesson.Node `json:"nodes"`
	Setup []string      `json:"setup"`
}

// ranLine is a setup line and what it printed.
type ranLine struct {
	Line   string `json:"line"`
	Code   int    `json:"code"`
	Output string `json:"output"`
}

func jsonArg(args []safejs.Value, i int, fn string, v any) {
	if len(args) <= i {
		panic(fmt.Sprintf("%s: argument %d missing", fn, i))
	}
	s, err := args[i].String()
	if err != nil {
		panic(fmt.Sprintf("%s: argument %d: %v", fn, i, err))
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		panic(fmt.Sprintf("%s: argument %d: %v", fn, i, err))
	}
}

func idArg(args []safejs.Value, fn string) int {
	if len(args) < 1 {
		panic(fmt.Sprintf("%s: no id", fn))
	}
	id, err := args[0].Int()
	if err != nil {
		panic(fmt.Sprintf("%s: id: %v", fn, err))
	}
	return id
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("json: %v", err)) // plain structs of strings and ints always encode
	}
	return string(b)
}

// goReport runs fn in a goroutine that reports a panic to the page.
func (d *lessonDoor) goReport(where string, fn func()) {
	go func() {
		defer func() {
			if v := recover(); v != nil {
				d.h.reportPanic(where, v, debug.Stack())
			}
		}()
		fn()
	}()
}

func (d *lessonDoor) parse(args []safejs.Value) any {
	id := idArg(args, "parseLesson")
	if len(args) < 3 {
		panic("parseLesson(id, path, text) called with too few arguments")
	}
	path, err := args[1].String()
	if err != nil {
		panic(fmt.Sprintf("parseLesson: path: %v", err))
	}
	text, err := args[2].String()
	if err != nil {
		panic(fmt.Sprintf("parseLesson: text: %v", err))
	}
	l, err := lesson.Parse(path, []byte(text))
	if err != nil {
		var pe *lesson.ParseError
		msgs := []string{err.Error()}
		if errors.As(err, &pe) {
			msgs = strings.Split(strings.TrimSpace(pe.Error()), "\n")
		}
		d.h.call("lessonErrors", id, mustJSON(msgs))
		return nil
	}
	d.h.call("lessonParsed", id, mustJSON(l))
	return nil
}

func (d *lessonDoor) reset(args []safejs.Value) any {
	id := idArg(args, "resetLesson")
	var in nodesAndSetup
	jsonArg(args, 1, "resetLesson", &in)
	d.goReport("resetLesson", func() {
		out := struct {
			Setup []ranLine `json:"setup"`
			Error string    `json:"error,omitempty"`
		}{Setup: []ranLine{}}
		defer func() { d.h.call("lessonReset", id, mustJSON(out)) }()
		specs, err := lesson.NodeSpecs(in.Nodes)
		if err != nil {
			out.Error = err.Error()
			return
		}
		ctx := context.Background()
		if err := d.sess.Reset(ctx, specs); err != nil {
			out.Error = err.Error()
			return
		}
		for _, line := range in.Setup {
			var buf bytes.Buffer
			code := d.sess.Run(ctx, line, console.Streams{Out: &buf, ErrOut: &buf})
			out.Setup = append(out.Setup, ranLine{Line: line, Code: code, Output: capOutput(buf.String())})
			if code != 0 {
				out.Error = fmt.Sprintf("setup: %s: exit code %d", line, code)
				return
			}
		}
	})
	return nil
}

// capOutput keeps what the page shows of a command's output.
func capOutput(s string) string {
	const max = 16 << 10
	if len(s) > max {
		return s[:max] + "\n…"
	}
	return s
}

type fileJSON struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

func (d *lessonDoor) putFiles(args []safejs.Value) any {
	id := idArg(args, "putFiles")
	var files []fileJSON
	jsonArg(args, 1, "putFiles", &files)
	var errs []string
	for _, f := range files {
		if err := d.sess.Files().WriteFile(f.Name, []byte(f.Content)); err != nil {
			errs = append(errs, err.Error())
		}
	}
	d.h.call("filesPut", id, strings.Join(errs, "\n"))
	return nil
}

// groupResult is one step's checks: ok when every one holds.
type groupResult struct {
	OK      bool          `json:"ok"`
	Results []checkResult `json:"results"`
}

type checkResult struct {
	OK     bool   `json:"ok"`
	Code   int    `json:"code"`
	Output string `json:"output"`
}

func (d *lessonDoor) watchChecks(args []safejs.Value) any {
	id := idArg(args, "watchChecks")
	var groups [][]lesson.Check
	jsonArg(args, 1, "watchChecks", &groups)
	ctx, cancel := context.WithCancel(context.Background())
	d.mu.Lock()
	if d.watch != nil {
		d.watch()
	}
	d.watch = cancel
	d.mu.Unlock()
	d.goReport("watchChecks", func() { d.runChecks(ctx, id, groups) })
	return nil
}

func (d *lessonDoor) unwatchChecks(args []safejs.Value) any {
	d.mu.Lock()
	if d.watch != nil {
		d.watch()
		d.watch = nil
	}
	d.mu.Unlock()
	return nil
}

// runChecks evaluates the groups until ctx ends, posting the results each
// time they differ from the last posted.
func (d *lessonDoor) runChecks(ctx context.Context, id int, groups [][]lesson.Check) {
	run := func(ctx context.Context, line string, stdin io.Reader, stdout, stderr io.Writer) int {
		// Checks match English output, whatever the page's language (the
		// verifier runs them so).
		ctx = console.WithLang(ctx, "en")
		return d.sess.Run(ctx, line, console.Streams{In: stdin, Out: stdout, ErrOut: stderr})
	}
	var (
		lastPosted string
		lastRev    int64 = -1
		lastStore  any
		lastEval   time.Time
		wait       = checkPoll
	)
	for {
		c := d.sess.Cluster()
		rev := c.Store.Revision()
		if rev != lastRev || any(c.Store) != lastStore || time.Since(lastEval) >= checkEvery {
			lastRev, lastStore = rev, any(c.Store)
			start := time.Now()
			results := make([]groupResult, len(groups))
			for i, g := range groups {
				results[i] = groupResult{OK: true, Results: make([]checkResult, len(g))}
				for j, ch := range g {
					r := ch.Eval(ctx, run)
					results[i].Results[j] = checkResult{OK: r.OK, Code: r.Code, Output: capOutput(r.Output)}
					results[i].OK = results[i].OK && r.OK
				}
			}
			lastEval = time.Now()
			wait = max(checkPoll, 4*lastEval.Sub(start))
			if ctx.Err() != nil {
				return
			}
			if s := mustJSON(results); s != lastPosted {
				lastPosted = s
				d.h.call("checks", id, s)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
