package cri_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// toolsRegistry serves image "tools": the sleep testdata guest as its
// program, the escape guest at /bin/escape and a data file, with a config.
type toolsRegistry struct{ registry }

func (r toolsRegistry) Fetch(ctx context.Context, ref string) (cri.Image, error) {
	p, err := cri.ParseRef(ref)
	if err != nil || p.Name != "tools" {
		return r.registry.Fetch(ctx, ref)
	}
	img := cri.Image{
		Ref: p.String(), Module: r.registry["loop"], ModulePath: "/usr/local/bin/loop",
		Files: []cri.File{
			{Path: "/bin/escape", Mode: 0o755, Data: r.registry["escape"]},
			{Path: "/etc/motd", Data: []byte("welcome\n")},
			{Path: "/bin/notaprogram", Mode: 0o755, Data: []byte("#!/bin/sh\n")},
			{Path: "/bin/notexecutable", Mode: 0o644, Data: []byte("not a program\n")},
		},
		Config: cri.ImageConfig{Entrypoint: []string{"loop"}, Env: []string{"PATH=/usr/local/bin:/bin", "FROM_IMAGE=yes"}, WorkingDir: "/srv"},
	}
	img.Digest = cri.ImageDigest(img)
	return img, nil
}

func exec(t *testing.T, n *node, id string, cmd ...string) (string, int32) {
	t.Helper()
	out, errOut, code, err := n.ExecSync(context.Background(), id, cmd, 0)
	if err != nil {
		t.Fatalf("exec %q: %v", cmd, err)
	}
	return string(out) + string(errOut), code
}

// TestRootFS: a container sees its image's files and the kubelet's in its
// own root; execs share that root; a new container of the image starts from
// the image again; a command is looked up on PATH as runc does, with its
// errors and exit codes.
func TestRootFS(t *testing.T) {
	n := newNode(t, nil, toolsRegistry{testRegistry(t)})
	cfg := cri.ContainerConfig{Name: "c", Image: "tools", PodName: "p",
		Files:  []cri.File{{Path: "/etc/hostname", Data: []byte("p\n")}},
		Mounts: []cri.Mount{{ContainerPath: "/data", Mem: cri.NewMemDir()}}}
	id := n.run(t, cfg)
	st, _ := n.ContainerStatus(id)
	if st.State != cri.ContainerRunning {
		t.Fatalf("container: %+v", st)
	}
	for _, tt := range []struct {
		cmd  []string
		code int32
		out  string
	}{
		{[]string{"nope"}, 127, `OCI runtime exec failed: exec failed: unable to start container process: exec: "nope": executable file not found in $PATH: unknown` + "\n"},
		{[]string{"/bin/nope"}, 127, `exec: "/bin/nope": stat /bin/nope: no such file or directory`},
		{[]string{"notexecutable"}, 127, `exec: "notexecutable": executable file not found in $PATH`},
		{[]string{"/bin/notexecutable"}, 126, `exec: "/bin/notexecutable": permission denied`},
		{[]string{"/etc"}, 126, `exec: "/etc": permission denied`},
		{[]string{"notaprogram"}, 126, `exec: "notaprogram": exec format error`},
		{[]string{"escape", "/data/x", "/etc/motd"}, 0, "read /data/x: No such file or directory"},
	} {
		out, code := exec(t, n, id, tt.cmd...)
		if code != tt.code || !strings.Contains(out, tt.out) {
			t.Errorf("exec %q = %d %q, want %d and %q", tt.cmd, code, out, tt.code, tt.out)
		}
	}
	// ReadFile reads the container's files, in its root or a volume.
	if b, err := n.ReadFile(id, "/etc/hostname", 0); err != nil || string(b) != "p\n" {
		t.Errorf("ReadFile /etc/hostname = %q %v", b, err)
	}
	if b, err := n.ReadFile(id, "/etc/motd", 3); err != nil || string(b) != "me\n" {
		t.Errorf("ReadFile /etc/motd tail 3 = %q %v", b, err)
	}
	if _, err := n.ReadFile(id, "/data/none", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v", err)
	}
	// The working directory exists; a second container starts clean.
	if _, err := n.ReadFile(id, "/srv", 0); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile /srv (a directory): %v", err)
	}
}

// TestNoEscapeThroughSymlinks is issue #15's filesystem escape: a guest
// that links to the host's /etc/hostname and to a directory outside its
// volume reads and writes nothing outside the container. (Before, an
// emptyDir was a host directory and wazero followed links inside it.)
func TestNoEscapeThroughSymlinks(t *testing.T) {
	host, err := os.ReadFile("/etc/hostname")
	if err != nil || len(strings.TrimSpace(string(host))) == 0 {
		host = nil
	}
	outside := t.TempDir()
	if err := os.WriteFile(outside+"/etc", []byte("host file"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := newNode(t, nil, toolsRegistry{testRegistry(t)})
	data := cri.NewMemDir()
	id := n.run(t, cri.ContainerConfig{Name: "c", Image: "tools", PodName: "p",
		Mounts: []cri.Mount{{ContainerPath: "/data", Mem: data}}})
	// Absolute targets, and relative ones that climb out of the volume (with
	// a host directory as the emptyDir these read the host's /etc/hostname
	// and wrote /escaped on the host: checked against the code before).
	out, code := exec(t, n, id, "escape", "/data/h", "/etc/hostname", "/data/up", "/", "/data/out", outside,
		"/data/rh", "../../../../../../../../etc/hostname", "/data/rup", "../../../../../../../..")
	if code != 0 {
		t.Fatalf("escape exited %d: %s", code, out)
	}
	t.Logf("escape:\n%s", out)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "symlink") && !strings.HasSuffix(line, "Function not implemented") ||
			strings.Contains(line, "read ") && strings.Contains(line, "bytes") ||
			strings.Contains(line, "written") {
			t.Errorf("escape: %s", line)
		}
	}
	if host != nil && strings.Contains(out, strings.TrimSpace(string(host))) {
		t.Errorf("the guest read the host's /etc/hostname:\n%s", out)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("the host directory changed: %v", entries)
	}
	if _, err := os.Stat("/escaped"); err == nil {
		t.Errorf("the guest wrote /escaped on the host")
	}
}
