package lang

import (
	"context"
	"testing"
)

func TestPick(t *testing.T) {
	for _, tc := range []struct {
		ctx  context.Context
		want string
	}{
		{context.Background(), "en"},
		{With(context.Background(), "ja"), "ja"},
		{With(context.Background(), "en"), "en"},
		{With(context.Background(), "fr"), "en"},
		{nil, "en"},
	} {
		if got := Pick(tc.ctx, "en", "ja"); got != tc.want {
			t.Errorf("Pick = %q, want %q", got, tc.want)
		}
	}
}
