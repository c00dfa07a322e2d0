package lesson

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestCheckEval evaluates each operator against commands with a known
// answer (a Runner that prints what it is told: the operators' semantics,
// apart from any cluster; TestVerify runs checks against real ones).
func TestCheckEval(t *testing.T) {
	// echo prints its line's words after "echo"; fail N ... exits N,
	// printing the rest to stderr.
	run := func(ctx context.Context, line string, _ io.Reader, stdout, stderr io.Writer) int {
		cmd, rest, _ := strings.Cut(line, " ")
		switch cmd {
		case "echo":
			fmt.Fprintf(stdout, "  %s\n\n", rest)
			return 0
		case "fail":
			var code int
			fmt.Sscan(rest, &code)
			fmt.Fprintln(stderr, "line 1\nError from server (NotFound): pods \"x\" not found")
			return code
		case "big":
			fmt.Fprint(stdout, strings.Repeat("x", 3*MaxOutput))
			return 0
		}
		return 127
	}
	tests := []struct {
		check  string
		ok     bool
		code   int
		output string
	}{
		{"echo 3 == 3", true, 0, "3"},
		{"echo 3 == 4", false, 0, "3"},
		{"echo a b  c == a b  c", true, 0, "a b  c"},
		{"echo Running Running =~ ^(Running ?){2}$", true, 0, "Running Running"},
		{"echo Running Pending =~ ^(Running ?){2}$", false, 0, "Running Pending"},
		{"echo Running =~ unn", true, 0, "Running"},
		{"echo 3 != 2", true, 0, "3"},
		{"echo 2 != 2", false, 0, "2"},
		{"echo ==", true, 0, ""},
		{"echo x ==", false, 0, "x"},
		{"echo x", true, 0, "x"},
		{"fail 1", false, 1, "line 1\nError from server (NotFound): pods \"x\" not found"},
		{"fail 1 ==", true, 1, "line 1\nError from server (NotFound): pods \"x\" not found"},
		{"fail 1 != 2", false, 1, "line 1\nError from server (NotFound): pods \"x\" not found"},
		{"fail 3 =~ Error from server", false, 3, "line 1\nError from server (NotFound): pods \"x\" not found"},
		{"fail 3 =~ ^$", true, 3, "line 1\nError from server (NotFound): pods \"x\" not found"},
		{"fail 0", true, 0, "line 1\nError from server (NotFound): pods \"x\" not found"},
		{"nothing", false, 127, ""},
		{"big != x", true, 0, strings.Repeat("x", MaxOutput) + " …"},
	}
	for _, tt := range tests {
		t.Run(tt.check, func(t *testing.T) {
			c, ok, err := parseCheck(tt.check)
			if err != nil || !ok {
				t.Fatalf("parseCheck: %v, %v", ok, err)
			}
			got := c.Eval(context.Background(), run)
			if got.OK != tt.ok || got.Code != tt.code || got.Output != tt.output {
				t.Errorf("Eval = %+v, want {OK:%v Code:%d Output:%q}", got, tt.ok, tt.code, tt.output)
			}
			c.re = nil // as a Check decoded from JSON
			if again := c.Eval(context.Background(), run); again != got {
				t.Errorf("Eval without the compiled regexp = %+v, want %+v", again, got)
			}
		})
	}
}
