//go:build js && wasm

// Package worker connects kubetab's control plane to the Web Worker it runs
// in. It is glue only, in the spirit of tailscale's cmd/tsconnect/wasm: every
// decision lives in an ordinary package (wasm/bridge for HTTP, core/console
// for the shell, core/ for Kubernetes); this package moves bytes between
// those and JS.
//
// The page and the worker talk by messages (site/src/worker.js documents
// them). On the Go side there are two doors:
//
//	context.binding.handleRequest(Request) → Promise<Response>
//	    registered by syumai/workers; every API request of the page (the live
//	    node and pod lists, anything a lesson fetches) enters here and reaches
//	    the kube-apiserver handler through bridge.Serve.
//	context.binding.runCommand(id, line, stdin?, cols?, rows?) / cancelCommand(id)
//	    registered here; a console line runs in console.Shell with its output
//	    sent back in chunks (kubetabHost.output) and its exit code last
//	    (kubetabHost.exit). cancelCommand is the terminal's Ctrl-C. Without
//	    stdin but with a size, the line's stdin is the page's terminal
//	    (console.Terminal): kubetabHost.ttyMode(id, mode) tells the page how
//	    to handle keys ('raw' for kubectl exec -it, 'cooked' while a
//	    command reads a line, '' otherwise); stdinData(id, text, eof) brings
//	    what was typed and resizeTerminal(id, cols, rows) its size.
//	context.binding.listImages() / addImage(id, name, tag, u8)
//	    registered here (images.go); the image registry the kubelets pull
//	    from, listed for the page, and a learner's own .wasm added to it
//	    (answered by kubetabHost.imageAdded or kubetabHost.imageError).
//	context.binding.tabComplete(id, before), setLang(code), dumpFiles()
//	    registered here (console.go); Tab, the page's language, and the
//	    console's files for the page to keep across a reload.
//	context.binding.parseLesson, resetLesson, putFiles, watchChecks,
//	unwatchChecks
//	    registered here (lessons.go); the lesson player's: a picked lesson
//	    file parsed, a fresh cluster for a lesson, a step's files, and the
//	    live checks, evaluated here through the session's shell.
//	context.binding.listFiles, readFile, removeFile, editDone
//	    registered here (editor.go); the Editor tab's: the console's files,
//	    and kubectl edit's editor (Edit, session.Config's Editor), which
//	    opens the file in the page (kubetabHost.openEditor) and waits for
//	    editDone.
//	context.binding.flushSave, resetCluster, exportSnapshot, importSnapshot,
//	shareLink, openLink
//	    registered here (persist.go); the page's cluster saved to IndexedDB
//	    after changes (kubetabHost.save), reset, exported to a file,
//	    imported, and carried in a share link.
//
// Every JS callback and every goroutine started for JS recovers panics and
// reports them to the page (kubetabHost.panic).
package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/hack-pad/safejs"
	"github.com/syumai/workers"

	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/session"
)

// Serve registers the session's API server as the handler for page
// requests, its shell as the console, catalog as the page's image registry
// and the lesson player's door, then tells the worker's JS that Go is ready.
// It returns at once; the caller keeps the Go program alive (select {}).
func Serve(sess *session.Session, catalog Images, restored Restored) error {
	api, shell := sess.Handler(), sess.Shell()
	h, err := newHost()
	if err != nil {
		return err
	}
	workers.ServeNonBlock(apiHandler{h: h, api: api})
	binding, err := safejs.Global().Get("context")
	if err == nil {
		binding, err = binding.Get("binding")
	}
	if err != nil || binding.IsUndefined() {
		return errors.New("globalThis.context.binding is not defined: load the wasm from site/src/worker.js")
	}
	c := &commands{h: h, shell: shell, running: map[int]context.CancelFunc{}, terms: map[int]*console.Terminal{}}
	run, err := h.callback("runCommand", c.run)
	if err != nil {
		return err
	}
	cancel, err := h.callback("cancelCommand", c.cancel)
	if err != nil {
		return err
	}
	d := &imageDoor{h: h, images: catalog}
	listImages, err := h.callback("listImages", d.list)
	if err != nil {
		return err
	}
	addImage, err := h.callback("addImage", d.add)
	if err != nil {
		return err
	}
	fns := map[string]safejs.Func{
		"runCommand": run, "cancelCommand": cancel, "listImages": listImages, "addImage": addImage,
	}
	for name, fn := range map[string]func([]safejs.Value) any{"stdinData": c.stdin, "resizeTerminal": c.resize} {
		if fns[name], err = h.callback(name, fn); err != nil {
			return err
		}
	}
	editors.mu.Lock()
	editors.h = h
	editors.mu.Unlock()
	fd := &filesDoor{h: h, files: sess.Files()}
	for name, fn := range map[string]func([]safejs.Value) any{
		"listFiles": fd.list, "readFile": fd.read, "removeFile": fd.remove, "editDone": editors.done,
	} {
		if fns[name], err = h.callback(name, fn); err != nil {
			return err
		}
	}
	cd := &consoleDoor{h: h, shell: shell, files: sess.Files()}
	for name, fn := range map[string]func([]safejs.Value) any{
		"tabComplete": cd.tab, "setLang": cd.setLang, "dumpFiles": cd.dumpFiles,
	} {
		if fns[name], err = h.callback(name, fn); err != nil {
			return err
		}
	}
	p := newPersistDoor(h, sess, restored.Lesson)
	l := &lessonDoor{h: h, sess: sess, persist: p}
	for name, fn := range map[string]func([]safejs.Value) any{
		"parseLesson": l.parse, "resetLesson": l.reset, "putFiles": l.putFiles,
		"watchChecks": l.watchChecks, "unwatchChecks": l.unwatchChecks,
		"flushSave": p.flush, "resetCluster": p.resetCluster, "exportSnapshot": p.exportSnapshot,
		"importSnapshot": p.importSnapshot, "shareLink": p.shareLink, "openLink": p.openLink,
	} {
		if fns[name], err = h.callback(name, fn); err != nil {
			return err
		}
	}
	for name, fn := range fns {
		if err := binding.Set(name, fn.Value()); err != nil {
			return err
		}
	}
	h.call("restored", mustJSON(restored))
	go p.run(context.Background())
	workers.Ready()
	return nil
}

// ReportFatal tells the page that the program cannot start.
func ReportFatal(err error) {
	if h, herr := newHost(); herr == nil {
		h.call("panic", "start", err.Error(), "")
	}
}

// commands runs console lines, one goroutine each.
type commands struct {
	h     *host
	shell *console.Shell

	mu      sync.Mutex // guards running and terms
	running map[int]context.CancelFunc
	terms   map[int]*console.Terminal // the lines whose stdin is the page's terminal
}

// run is runCommand(id, line, stdin?). It returns at once; the command runs
// in its own goroutine because a JS callback must not block.
func (c *commands) run(args []safejs.Value) any {
	if len(args) < 2 {
		panic(fmt.Sprintf("runCommand(id, line, stdin?) called with %d arguments", len(args)))
	}
	id, err := args[0].Int()
	if err != nil {
		panic(fmt.Sprintf("runCommand: id: %v", err))
	}
	line, err := args[1].String()
	if err != nil {
		panic(fmt.Sprintf("runCommand: line: %v", err))
	}
	var in io.Reader = strings.NewReader("")
	var term *console.Terminal
	if len(args) > 2 && args[2].Type() == safejs.TypeString {
		stdin, _ := args[2].String()
		in = strings.NewReader(stdin)
	} else if len(args) > 4 && args[3].Type() == safejs.TypeNumber {
		cols, _ := args[3].Int()
		rows, _ := args[4].Int()
		term = console.NewTerminal(uint16(cols), uint16(rows), func(mode string) {
			c.h.call("ttyMode", id, mode) // posts a message; never calls back into Go
		})
		in = term
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	c.running[id] = cancel
	if term != nil {
		c.terms[id] = term
	}
	c.mu.Unlock()
	go func() {
		code := 1 // if the command panics
		defer func() {
			c.mu.Lock()
			delete(c.running, id)
			delete(c.terms, id)
			c.mu.Unlock()
			if term != nil {
				term.Close()
			}
			cancel()
			c.h.call("exit", id, code)
		}()
		defer c.h.recoverTo("command " + line)
		code = c.shell.Run(ctx, line, console.Streams{
			In:     in,
			Out:    &output{h: c.h, id: id, fd: 1},
			ErrOut: &output{h: c.h, id: id, fd: 2},
		})
	}()
	return nil
}

// cancel is cancelCommand(id): Ctrl-C. Cancelling a finished command does nothing.
func (c *commands) cancel(args []safejs.Value) any {
	if len(args) < 1 {
		return nil
	}
	id, err := args[0].Int()
	if err != nil {
		return nil
	}
	c.mu.Lock()
	cancel := c.running[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}

// terminal is the page's terminal of a running line, or nil.
func (c *commands) terminal(args []safejs.Value) *console.Terminal {
	if len(args) < 1 {
		return nil
	}
	id, err := args[0].Int()
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.terms[id]
}

// stdin is stdinData(id, text, eof): keys typed (raw mode) or a line
// (cooked mode), or Ctrl-D on an empty cooked line.
func (c *commands) stdin(args []safejs.Value) any {
	t := c.terminal(args)
	if t == nil || len(args) < 3 {
		return nil
	}
	if text, err := args[1].String(); err == nil && text != "" {
		t.Type([]byte(text))
	}
	if eof, err := args[2].Bool(); err == nil && eof {
		t.EOF()
	}
	return nil
}

// resize is resizeTerminal(id, cols, rows): the page's terminal changed size.
func (c *commands) resize(args []safejs.Value) any {
	t := c.terminal(args)
	if t == nil || len(args) < 3 {
		return nil
	}
	cols, err1 := args[1].Int()
	rows, err2 := args[2].Int()
	if err1 == nil && err2 == nil && cols > 0 && rows > 0 {
		t.Resize(uint16(cols), uint16(rows))
	}
	return nil
}

// output is a command's stdout (fd 1) or stderr (fd 2): each Write goes to
// the page as one chunk of bytes. xterm.js decodes UTF-8 across chunks.
type output struct {
	h  *host
	id int
	fd int
}

func (o *output) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	u8, err := o.h.bytes(p)
	if err != nil {
		return 0, err
	}
	if _, err := o.h.obj.Call("output", o.id, o.fd, u8); err != nil {
		return 0, err
	}
	return len(p), nil
}
