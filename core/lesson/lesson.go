// Package lesson reads kubetab's lessons and checks them against a live
// cluster: the format (lessons/README.md), the parser, the checks, and the
// verifier behind `kubetab lessons verify`.
//
// A lesson is Markdown with YAML front matter; each `## heading` is a step,
// and fenced blocks say what a step does:
//
//	---                              ┐
//	title: Your first Deployment     │ front matter: title, summary, minutes,
//	minutes: 10                      │ setup (console lines), nodes
//	---                              ┘
//	## Create the Deployment         ← a step
//	```run                           ← lines with a Run button
//	kubectl create deployment web --image=hello --replicas=3
//	```
//	```check                         ← what must hold when the step is done
//	kubectl get deploy web -o jsonpath={.spec.replicas} == 3
//	```
//
// The same Lesson value drives the page's player (as JSON, in the worker) and
// the verifier (natively): checks are console lines run by core/session, so
// what the verifier proves is what a learner sees.
//
// Upstream counterpart: none in Kubernetes. Killercoda's scenarios
// (markdown steps with a verify.sh each) and Learn Git Branching's levels
// (goals checked live) are the closest kin.
package lesson

import (
	"fmt"
	"regexp"
	"strings"
)

// Lesson is one lesson in one language, as parsed from lessons/<slug>/<lang>.md.
type Lesson struct {
	// Slug is the lesson's folder name, "02-first-deployment".
	Slug string `json:"slug"`
	// Lang is "en" or "ja", from the file name.
	Lang string `json:"lang"`
	// Path is the file it was read from, for messages.
	Path    string `json:"path"`
	Title   string `json:"title"`
	Summary string `json:"summary"`
	Minutes int    `json:"minutes"`
	// Setup are console lines run on a fresh cluster before step 1.
	Setup []string `json:"setup,omitempty"`
	// Nodes are the cluster's nodes; empty means the default three.
	Nodes []Node `json:"nodes,omitempty"`
	// Intro is the text before the first step, rendered to HTML.
	Intro string `json:"intro,omitempty"`
	Steps []Step `json:"steps"`

	// setupLines are the file's line of each Setup entry (for messages).
	setupLines []int
}

// Node is one node of a lesson's cluster.
type Node struct {
	Name   string            `json:"name"`
	CPU    string            `json:"cpu,omitempty"`    // a quantity, "4" when empty
	Memory string            `json:"memory,omitempty"` // a quantity, "8Gi" when empty
	Labels map[string]string `json:"labels,omitempty"`
	Taints []string          `json:"taints,omitempty"` // key=value:Effect or key:Effect
}

// Step is one `## heading` and what follows it.
type Step struct {
	// N is the step's number, from 1.
	N     int    `json:"n"`
	Title string `json:"title"`
	// Line is the heading's line in the file.
	Line int `json:"line"`
	// Blocks are the step's contents in order: prose, run, solution, file
	// and hint blocks (checks and sources are kept apart, below).
	Blocks []Block `json:"blocks"`
	Checks []Check `json:"checks"`
	// Sources are the code the step teaches: upstream and here.
	Sources []Source `json:"sources,omitempty"`
}

// Block kinds.
const (
	KindText     = "text"     // prose, HTML
	KindRun      = "run"      // Lines, with a Run button
	KindSolution = "solution" // Lines, hidden behind "Show solution"
	KindFile     = "file"     // File and Content: a manifest placed in the console's files
	KindHint     = "hint"     // HTML, revealed one at a time
	KindCode     = "code"     // an example to read: Lang and Content
)

// Block is one part of a step.
type Block struct {
	Kind string `json:"kind"`
	// Line is where the block starts in the file.
	Line int `json:"line"`
	// HTML is a text or hint block, rendered from Markdown.
	HTML string `json:"html,omitempty"`
	// Lines are a run or solution block's console lines.
	Lines []string `json:"lines,omitempty"`
	// File is a file block's name ("web.yaml"); Content its text (and a
	// code block's).
	File    string `json:"file,omitempty"`
	Content string `json:"content,omitempty"`
	// Lang is a code or file block's language, the first word of its info
	// string ("yaml", "text" ...).
	Lang string `json:"lang,omitempty"`

	// lineNos are the file's line of each of Lines (for messages).
	lineNos []int
}

// Check operators.
const (
	OpEqual    = "=="
	OpMatch    = "=~"
	OpNotEqual = "!="
	OpSucceeds = "" // a bare command: it must exit 0
)

// Check is one line of a check block.
type Check struct {
	Line    int    `json:"line"`
	Command string `json:"command"`
	Op      string `json:"op"`
	Want    string `json:"want,omitempty"`

	re *regexp.Regexp // Want compiled, for OpMatch
}

// Source is one line of a source block.
type Source struct {
	// Where is "upstream" (kubernetes/kubernetes) or "kubetab".
	Where string `json:"where"`
	Path  string `json:"path"`
}

// Problem is one thing wrong with a lesson file.
type Problem struct {
	Path string `json:"path"`
	Line int    `json:"line"` // from 1; 0 when the problem is the whole file
	Msg  string `json:"msg"`
}

func (p Problem) String() string {
	if p.Line <= 0 {
		return fmt.Sprintf("%s: %s", p.Path, p.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Msg)
}

// ParseError is every problem found in one or more lesson files, in the
// order of the files and their lines. Error prints one "path:line: msg" a
// line, the way compilers do, so editors can jump to each.
type ParseError struct {
	Problems []Problem `json:"problems"`
}

func (e *ParseError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}
