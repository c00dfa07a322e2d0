package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubetab/kubetab/core/apiserver"
	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/wasm/images"
)

func init() { addCommand(newClusterCommand) }

// newClusterCommand is `kubetab cluster`: the control plane and its nodes in
// this process, serving the Kubernetes API over HTTP for the real kubectl.
func newClusterCommand() *cobra.Command {
	var (
		addr       string
		kubeconfig string
		nodes      int
		dataDir    string
		// kube-controller-manager's flag of the same name.
		hpaDownscale time.Duration
	)
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Run a cluster natively and serve its API to the real kubectl",
		Long: `Run the kubetab control plane (store, API server, controllers, scheduler)
and its nodes (kubelets running WebAssembly containers) in this process, serve
the Kubernetes API over HTTPS on --addr, and write a kubeconfig for kubectl:
the API's self-signed certificate and the administrator's token, both made
at start.

  kubetab cluster --kubeconfig /tmp/kubetab.yaml &
  KUBECONFIG=/tmp/kubetab.yaml kubectl get nodes

With --data-dir the store is kept on disk, as etcd keeps it: stop the cluster
(or lose the machine's power) and start it again with the same directory, and
every object whose write kubectl saw succeed is there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkLoopbackAddr(addr); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			server := "https://" + ln.Addr().String()
			host, _, _ := net.SplitHostPort(ln.Addr().String())
			cert, certPEM, err := selfSignedCert(host, time.Now())
			if err != nil {
				ln.Close()
				return err
			}
			c, err := cluster.New(cluster.Config{Nodes: nodes, Images: images.New(), ExternalAddress: ln.Addr().String(), DataDir: dataDir, HPADownscaleStabilization: hpaDownscale})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := c.Start(ctx); err != nil {
				return err
			}
			if kubeconfig != "" {
				if err := writeKubeconfig(kubeconfig, server, c.AdminToken(), certPEM); err != nil {
					return err
				}
			}
			// The API server itself: every request is authenticated (the
			// kubeconfig's token is the administrator; none is anonymous).
			srv := &http.Server{Handler: apiserver.LoopbackOnly(c.API, ln.Addr().String()), ReadHeaderTimeout: 10 * time.Second,
				TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
			errc := make(chan error, 1)
			go func() { errc <- srv.ServeTLS(ln, "", "") }()
			fmt.Fprintf(cmd.OutOrStdout(), "kubetab cluster ready: %d nodes, API at %s", nodes, server)
			if kubeconfig != "" {
				fmt.Fprintf(cmd.OutOrStdout(), ", kubeconfig %s", kubeconfig)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			select {
			case err := <-errc:
				return err
			case <-ctx.Done():
			}
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:6443", "address to serve the Kubernetes API on (loopback by default)")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "write a kubeconfig for this cluster to this path")
	cmd.Flags().IntVar(&nodes, "nodes", 3, "number of nodes")
	cmd.Flags().DurationVar(&hpaDownscale, "horizontal-pod-autoscaler-downscale-stabilization", 5*time.Minute, "kube-controller-manager's flag: the period for which the horizontal pod autoscaler looks backwards and does not scale down below any recommendation it made during that period")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "keep the cluster's store in this directory (a write-ahead log synced before each write is acknowledged, and snapshots), so a restart keeps every object; empty keeps it in memory")
	return cmd
}

// checkLoopbackAddr refuses an --addr beyond loopback: kubetab cluster is
// a sandbox for one learner; whoever holds the kubeconfig's token owns the
// cluster and can run code on this machine through it, and its
// certificate names only loopback addresses. A loopback address is an IP in
// 127.0.0.0/8 or ::1, or "localhost".
func checkLoopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	shown := host
	if host == "" || host == "0.0.0.0" || host == "::" {
		shown = host + " (every interface)"
	}
	return fmt.Errorf("--addr %s: refusing to serve on %s: kubetab cluster is a sandbox for the learner on this machine, "+
		"so it listens on loopback only (127.0.0.1, ::1 or localhost), where only programs on this machine can reach it", addr, shown)
}

// writeKubeconfig writes a kubeconfig with one cluster, user and context,
// all named kubetab, pointing at server, whose certificate is caPEM; the
// user is the administrator, by its bearer token.
func writeKubeconfig(path, server, token string, caPEM []byte) error {
	const tmpl = `apiVersion: v1
kind: Config
clusters:
- name: kubetab
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: kubetab
  user:
    token: %s
contexts:
- name: kubetab
  context:
    cluster: kubetab
    user: kubetab
    namespace: default
current-context: kubetab
`
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(path, []byte(fmt.Sprintf(tmpl, server, base64.StdEncoding.EncodeToString(caPEM), token)), 0o600)
}
