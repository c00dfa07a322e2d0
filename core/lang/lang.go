// Package lang carries the learner's language (the page's English or
// Japanese switch) to the console's commands in their context, so that
// kubetab's own commands (help, trace, node, ssh, scheduling explain) speak
// it while kubectl's upstream output stays as upstream prints it.
//
// Upstream counterpart: the LANG/LC_MESSAGES environment variables a shell
// hands its commands, read by gettext (kubectl itself translates a few
// messages that way, k8s.io/kubectl/pkg/util/i18n; kubetab does not).
//
//	ctx = lang.With(ctx, "ja")
//	fmt.Fprintln(w, lang.Pick(ctx, "Usage:", "使い方:"))
package lang

import "context"

// The languages the page offers.
const (
	English  = "en"
	Japanese = "ja"
)

type key struct{}

// With returns ctx carrying the language code l ("en" or "ja"; anything
// else is English).
func With(ctx context.Context, l string) context.Context {
	return context.WithValue(ctx, key{}, l)
}

// Of is ctx's language: "ja" or "en" (the default).
func Of(ctx context.Context) string {
	if ctx != nil {
		if l, _ := ctx.Value(key{}).(string); l == Japanese {
			return Japanese
		}
	}
	return English
}

// Pick returns ja when ctx's language is Japanese, en otherwise.
func Pick(ctx context.Context, en, ja string) string {
	if Of(ctx) == Japanese {
		return ja
	}
	return en
}
