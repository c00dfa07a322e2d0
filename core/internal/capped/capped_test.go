package capped

import (
	"fmt"
	"testing"
)

func TestBuffer(t *testing.T) {
	b := &Buffer{Max: 5}
	for _, w := range []string{"abc", "defg", "hi", ""} {
		if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v: every write is reported whole", w, n, err)
		}
	}
	if got := fmt.Sprintf("%s/%d", b.String(), b.Dropped); got != "abcde/4" {
		t.Fatalf("kept/dropped = %s, want abcde/4", got)
	}
}
