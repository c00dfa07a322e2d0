package images

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"testing"
)

// TestDigestTable: digests.txt (written by build.sh beside the modules it
// builds) names every embedded module, each with its content's sha256, and
// nothing else. A stale table would give an image a wrong digest; run
// wasm/images/build.sh, which writes both.
func TestDigestTable(t *testing.T) {
	known := knownDigests()
	files, err := fs.Glob(modules, "*/*.wasm")
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded modules: %v", err)
	}
	for _, f := range files {
		data, err := modules.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if want := "sha256:" + hex.EncodeToString(sum[:]); known[f] != want {
			t.Errorf("digests.txt says %s is %q; its content is %s (run wasm/images/build.sh)", f, known[f], want)
		}
		delete(known, f)
	}
	for f := range known {
		t.Errorf("digests.txt lists %s, which is not embedded", f)
	}
}
