package clientgo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoClientGoInWasm: client-go is for these tests only; it must never
// reach the browser build, where every package costs download size.
func TestNoClientGoInWasm(t *testing.T) {
	goBin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	cmd := exec.Command(goBin, "list", "-deps", "github.com/kubetab/kubetab/wasm")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		if _, lookErr := exec.LookPath(goBin); lookErr != nil {
			t.Skipf("no go command to list the wasm build's packages: %v", lookErr)
		}
		t.Fatalf("go list -deps ./wasm: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/client-go") {
			t.Errorf("the wasm build imports %s", pkg)
		}
	}
}
