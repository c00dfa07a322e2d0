package eventloop

import (
	"testing"
	"time"
)

func TestTurn(t *testing.T) {
	defer SetTurn(nil)
	turns := 0
	SetTurn(func() { turns++ })
	if !Enabled() {
		t.Fatal("Enabled() = false with a turn set")
	}
	Turn()
	if turns != 1 {
		t.Fatalf("Turn ran the hook %d times, want 1", turns)
	}
	// Right after a turn none is due.
	MaybeTurn()
	if turns != 1 {
		t.Fatalf("MaybeTurn right after a turn ran the hook (%d turns)", turns)
	}
	time.Sleep(Slice + time.Millisecond)
	if !Due() {
		t.Fatalf("no turn due %v after the last", Slice)
	}
	MaybeTurn()
	if turns != 2 {
		t.Fatalf("MaybeTurn after %v ran the hook %d times, want 2 in all", Slice, turns)
	}
}

func TestDefault(t *testing.T) {
	SetTurn(func() {})
	SetTurn(nil)
	if got, want := Enabled(), defaultTurn() != nil; got != want {
		t.Fatalf("after SetTurn(nil): Enabled() = %v, want %v (the platform's default)", got, want)
	}
	Turn() // the default: nothing natively, a 1 ms sleep on js
}
