// Package tty carries a terminal request from the API server to the
// kubelet: `kubectl exec -t` asks pods/exec for a TTY, and its resize
// messages (the channel protocol's channel 4) follow the session. Upstream
// the request's tty=true travels to the kubelet's streaming server and on to
// the runtime's Exec (CRI ExecRequest.Tty), and resizes through
// remotecommand's TerminalSizeQueue; here the API server calls the kubelet
// in-process, with a Terminal in the context.
package tty

import "context"

// Size is a terminal's size in characters.
type Size struct {
	Width, Height uint16
}

// Terminal is a terminal the client has: Resize brings its sizes (the
// first one soon after the session starts), and is closed at its end.
type Terminal struct {
	Resize <-chan Size
}

type key struct{}

// With returns ctx carrying t.
func With(ctx context.Context, t *Terminal) context.Context { return context.WithValue(ctx, key{}, t) }

// From returns the Terminal in ctx, or nil when the client has none.
func From(ctx context.Context) *Terminal {
	t, _ := ctx.Value(key{}).(*Terminal)
	return t
}
