package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubetab/kubetab/site"
)

func init() { addCommand(newServeCommand) }

func newServeCommand() *cobra.Command {
	var addr, lessons string
	var kiosk bool
	var idle time.Duration
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the kubetab web app (embedded in this binary; no network needed)",
		Long: `Serve the kubetab web app from this binary. The whole cluster runs in each
visitor's browser tab; this server only hands out files, so it needs no network
beyond the visitors' own connection to it.

--lessons DIR serves the lessons of DIR (lessons/<nn>-<slug>/en.md and ja.md)
instead of the embedded course, parsed once at start: a lesson author sees
their lessons in the player as the page shows them. A malformed lesson stops
serve with its file:line messages.

--kiosk serves a classroom: every page shows a "New student" button that wipes
the browser's kubetab state (the cluster, lesson progress, console history)
for the next student, the same happens after --kiosk-idle without input (with
a warning first), and links that lead off this machine are disabled. To serve
the kiosks of a room from the teacher's machine, listen beyond loopback
(--addr 0.0.0.0:8080): serve prints the addresses to share.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if idle < time.Minute {
				return fmt.Errorf("--kiosk-idle must be at least 1m, not %v", idle)
			}
			var k *kioskConfig
			if kiosk {
				k = &kioskConfig{IdleSeconds: int(idle / time.Second)}
			}
			return serve(ctx, addr, lessons, k, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on (host:port)")
	cmd.Flags().StringVar(&lessons, "lessons", "", "serve the lessons of this folder instead of the embedded ones")
	cmd.Flags().BoolVar(&kiosk, "kiosk", false, "classroom kiosks: a New student button and an idle reset wipe each browser's state; no links off this machine")
	cmd.Flags().DurationVar(&idle, "kiosk-idle", 10*time.Minute, "with --kiosk: reset a kiosk after this long without input")
	return cmd
}

// kioskConfig is kiosk.json, which the page fetches at start (site/src/kiosk.js):
// its presence turns the page into a classroom kiosk.
type kioskConfig struct {
	IdleSeconds int `json:"idleSeconds"`
}

func serve(ctx context.Context, addr, lessons string, kiosk *kioskConfig, out io.Writer) error {
	if !site.Built() {
		fmt.Fprintln(os.Stderr, site.NotBuiltMessage)
	}
	fsys := site.FS()
	if lessons != "" {
		files, err := site.LessonFiles(os.DirFS(lessons), ".")
		if err != nil {
			return fmt.Errorf("lessons in %s:\n%w", lessons, err)
		}
		fsys = site.WithLessons(fsys, files)
		fmt.Fprintf(os.Stderr, "kubetab: serving the lessons of %s (%d lesson files)\n", lessons, len(files)-1)
	}
	if kiosk != nil {
		data, err := json.Marshal(kiosk)
		if err != nil {
			return err
		}
		fsys = site.WithFile(fsys, "kiosk.json", data)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: site.Handler(fsys), ReadHeaderTimeout: 10 * time.Second}
	tcp := ln.Addr().(*net.TCPAddr)
	local := tcp.String()
	if tcp.IP.IsUnspecified() {
		local = net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	fmt.Fprintf(out, "kubetab: serving the web app on http://%s/\n", local)
	if kiosk != nil {
		fmt.Fprintf(out, "kubetab: kiosk mode: New student button, reset after %v without input, no links off this machine\n", time.Duration(kiosk.IdleSeconds)*time.Second)
	}
	for _, u := range shareURLs(tcp) {
		fmt.Fprintf(out, "kubetab: on this network, open %s\n", u)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
}

// shareURLs are the addresses other machines reach a listener on: none for
// loopback; for an unspecified address (0.0.0.0, ::) every up interface's
// non-loopback IPv4 address; else the address itself.
func shareURLs(tcp *net.TCPAddr) []string {
	url := func(ip net.IP) string { return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port)) + "/" }
	if tcp.IP.IsLoopback() {
		return nil
	}
	if !tcp.IP.IsUnspecified() {
		return []string{url(tcp.IP)}
	}
	var urls []string
	ifaces, _ := net.Interfaces()
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := iface.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				urls = append(urls, url(n.IP.To4()))
			}
		}
	}
	return urls
}
