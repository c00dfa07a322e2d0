package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubetab/kubetab/site"
)

func init() { addCommand(newServeCommand) }

func newServeCommand() *cobra.Command {
	var addr, lessons string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the kubetab web app (embedded in this binary; no network needed)",
		Long: `Serve the kubetab web app from this binary. The whole cluster runs in each
visitor's browser tab; this server only hands out files, so it needs no network
beyond the visitors' own connection to it.

--lessons DIR serves the lessons of DIR (lessons/<nn>-<slug>/en.md and ja.md)
instead of the embedded course, parsed once at start: a lesson author sees
their lessons in the player as the page shows them. A malformed lesson stops
serve with its file:line messages.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, addr, lessons, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on (host:port)")
	cmd.Flags().StringVar(&lessons, "lessons", "", "serve the lessons of this folder instead of the embedded ones")
	return cmd
}

func serve(ctx context.Context, addr, lessons string, out io.Writer) error {
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
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: site.Handler(fsys), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "kubetab: serving the web app on http://%s/\n", ln.Addr())
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
