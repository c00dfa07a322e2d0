package job

import "testing"

func TestOrderedIntervals(t *testing.T) {
	for _, tc := range []struct {
		in          string
		add         []int
		completions int32
		want        string
		total       int
	}{
		{"", nil, 5, "", 0},
		{"", []int{1}, 5, "1", 1},
		{"1", []int{0}, 5, "0,1", 2},
		{"0,1", []int{2}, 5, "0-2", 3},
		{"0-2", []int{4}, 5, "0-2,4", 4},
		{"1,3-5", []int{2}, 10, "1-5", 5},
		{"3-9", nil, 5, "3,4", 2}, // indexes past completions are dropped
		{"x,2", nil, 5, "2", 1},   // malformed parts are skipped
	} {
		got := parseIndexes(tc.in, tc.completions).with(tc.add)
		if got.String() != tc.want || got.total() != tc.total {
			t.Errorf("%q + %v = %q (%d), want %q (%d)", tc.in, tc.add, got.String(), got.total(), tc.want, tc.total)
		}
	}
}
