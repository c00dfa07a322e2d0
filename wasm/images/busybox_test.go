package images_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/wasm/images"
)

// busyboxContainer runs a busybox container (sleep 3600) with an emptyDir
// at /data and the kubelet's files, and returns its runtime and ID.
func busyboxContainer(t *testing.T, image string) (*cri.Runtime, string) {
	t.Helper()
	ctx := context.Background()
	cache := cri.NewCompileCache()
	t.Cleanup(func() { cache.Close(ctx) })
	rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	if _, err := rt.PullImage(ctx, image); err != nil {
		t.Fatal(err)
	}
	id, err := rt.CreateContainer(ctx, cri.ContainerConfig{Name: "c", Image: image, PodName: "bb-1", PodNamespace: "default",
		Command: []string{"sleep", "3600"},
		Env:     []cri.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "10.96.0.1"}},
		Files: []cri.File{{Path: "/etc/hostname", Data: []byte("bb-1\n")},
			{Path: "/etc/resolv.conf", Data: []byte("search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n")}},
		Mounts: []cri.Mount{{ContainerPath: "/data", Mem: cri.NewMemDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	return rt, id
}

// TestShell runs the userland's shell and applets the way kubectl exec
// does, one command line each (sh -c), in a container of every image kind.
func TestShell(t *testing.T) {
	rt, id := busyboxContainer(t, "busybox:1.36")
	tests := []struct {
		cmd  string
		out  string
		code int32
	}{
		{`echo hello world`, "hello world\n", 0},
		{`echo $HOSTNAME && env | grep KUBERNETES_SERVICE_HOST`, "bb-1\nKUBERNETES_SERVICE_HOST=10.96.0.1\n", 0},
		{`cat /etc/hostname`, "bb-1\n", 0},
		{`hostname`, "bb-1\n", 0},
		{`false; echo $?`, "1\n", 0},
		{`false || echo alt && echo and`, "alt\nand\n", 0},
		{`true && false`, "", 1},
		{`X=1; Y="a b"; echo "$X-$Y" '$X' \$X ${X}x ${NOPE:-def}`, "1-a b $X $X 1x def\n", 0},
		{`echo one two three | wc -w`, "3\n", 0},
		{`printf=no; echo a > /tmp/f; echo b >> /tmp/f; cat /tmp/f | wc -l`, "2\n", 0},
		{`cat < /tmp/f`, "a\nb\n", 0},
		{`mkdir -p /data/x/y && touch /data/x/y/z && ls /data/x/y`, "z\n", 0},
		{`cd /data/x && pwd && ls`, "/data/x\ny\n", 0},
		{`for i in 1 2 3; do echo n$i; done`, "n1\nn2\nn3\n", 0},
		{`i=x; while [ $i != xxx ]; do i=${i}x; echo $i; done; echo end`, "xx\nxxx\nend\n", 0},
		{`until true; do echo never; done; echo after`, "after\n", 0},
		{`if [ -f /etc/hostname ]; then echo yes; else echo no; fi`, "yes\n", 0},
		{`if test -d /nope; then echo yes; elif [ 1 = 1 ]; then echo elif; fi`, "elif\n", 0},
		{`echo $(hostname)-$(echo x)`, "bb-1-x\n", 0},
		{`nope`, "sh: nope: not found\n", 127},
		{`exit 3`, "", 3},
		{`echo -n a; echo b`, "ab\n", 0},
		{`seq 3 | tail -n 1`, "3\n", 0},
		{`seq 5 | head -n 2`, "1\n2\n", 0},
		{`grep -c root /etc/passwd`, "1\n", 0},
		{`grep nope /etc/passwd`, "", 1},
		{`echo abc | grep -q b && echo found`, "found\n", 0},
		{`cp /etc/hostname /data/h && mv /data/h /data/h2 && cat /data/h2 && rm /data/h2 && ls /data/h2`, "bb-1\nls: /data/h2: No such file or directory\n", 1},
		{`ls /etc`, "group\nhostname\npasswd\nresolv.conf\n", 0},
		{`id`, "uid=0(root) gid=0(root) groups=0(root),10(wheel)\n", 0},
		{`ps | head -n 1`, "PID   USER     TIME  COMMAND\n", 0},
		{`ps | head -n 2 | tail -n 1`, "    1 root      0:00 sleep 3600\n", 0},
		{`echo "unterminated`, "sh: syntax error: unexpected end of file\n", 2},
		{`ls /bin | wc -l`, "38\n", 0},
		{`ln -s /etc/hostname /data/link`, "ln: /data/link: Function not implemented\n", 1},
		{`echo a 2>&1 >/dev/null; echo b`, "b\n", 0},
		{`cat /nope 2>/dev/null || echo failed`, "failed\n", 0},
		{`tar cf /tmp/t.tar /etc/hostname && mkdir /tmp/x && tar -xf /tmp/t.tar -C /tmp/x && cat /tmp/x/etc/hostname`, "bb-1\ntar: removing leading '/' from member names\n", 0},
		{`kill -0 1 && echo alive; kill -9 999`, "alive\nkill: can't kill pid 999: No such process\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			out, errOut, code, err := rt.ExecSync(context.Background(), id, []string{"sh", "-c", tt.cmd}, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := string(out) + string(errOut)
			if got != tt.out || code != tt.code {
				t.Errorf("sh -c %q = %d %q, want %d %q", tt.cmd, code, got, tt.code, tt.out)
			}
		})
	}
}

// TestSpawn: the shell runs a program that is not an applet (the image's
// own) through the runtime, in a pipeline too.
func TestSpawn(t *testing.T) {
	rt, id := busyboxContainer(t, "hello")
	for _, tt := range []struct{ cmd, out string }{
		{`hello --ticks=0 | grep -c Hello`, "1\n"},
		{`echo from-stdin | hello --stdin --ticks=0`, "hello: stdin: from-stdin\n"},
		{`/usr/local/bin/hello --ticks=0 --exit=4; echo $?`, "4\n"},
	} {
		out, errOut, _, err := rt.ExecSync(context.Background(), id, []string{"sh", "-c", tt.cmd}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(out) + string(errOut); !strings.Contains(got, tt.out) {
			t.Errorf("sh -c %q = %q, want it to contain %q", tt.cmd, got, tt.out)
		}
	}
}

// TestTerminal: sh on a terminal (kubectl exec -it) prompts, the runtime's
// line discipline echoes and edits what is typed, output lines end in
// "\r\n", and exit ends the session with its code.
func TestTerminal(t *testing.T) {
	rt, id := busyboxContainer(t, "busybox")
	// Type each line once the shell prompts for it, as a learner does.
	keys, typing := io.Pipe()
	screen := &syncBuilder{b: &strings.Builder{}, prompted: make(chan struct{}, 10)}
	go func() {
		for _, line := range []string{"echo hx\x7fi\r", "echo $TERM\r", "exit 3\r"} {
			<-screen.prompted
			typing.Write([]byte(line))
		}
	}()
	code, err := rt.ExecTTY(context.Background(), id, []string{"sh"}, keys, screen, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "/ # echo hx\b \bi\r\nhi\r\n/ # echo $TERM\r\nxterm\r\n/ # exit 3\r\n"
	if got := screen.String(); code != 3 || got != want {
		t.Errorf("ExecTTY = %d\n%q\nwant 3\n%q", code, got, want)
	}
}

type syncBuilder struct {
	mu       sync.Mutex
	b        *strings.Builder
	prompted chan struct{} // a prompt was written
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.HasSuffix(string(p), "# ") {
		s.prompted <- struct{}{}
	}
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
