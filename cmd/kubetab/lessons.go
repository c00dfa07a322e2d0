package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubetab/kubetab/core/lesson"
	"github.com/kubetab/kubetab/wasm/images"
)

func init() { addCommand(newLessonsCommand) }

// newLessonsCommand is `kubetab lessons`: the course's files, read and
// verified against real clusters (core/lesson).
func newLessonsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lessons",
		Short: "List and verify the lessons (lessons/<nn>-<slug>/{en,ja}.md)",
	}
	cmd.AddCommand(newLessonsVerifyCommand(), newLessonsListCommand())
	return cmd
}

func newLessonsVerifyCommand() *cobra.Command {
	cfg := lesson.VerifyConfig{}
	cmd := &cobra.Command{
		Use:   "verify [DIR|FILE ...]",
		Short: "Play every lesson on a fresh cluster and check that each step's checks turn true because of it",
		Long: `Verify lessons: for each lesson and language, a fresh in-process cluster with
the lesson's nodes, its setup lines, then for each step: its files placed,
every check must not hold yet, the run and solution lines run in order, and
all checks must hold within --timeout. Both languages of a lesson must have
the same steps, commands and checks. Malformed files are reported as
file:line: message. Exits 1 if anything fails.

DIR is a folder of lessons (default ./lessons) or one lesson's folder; FILE
is one en.md or ja.md, verified alone.

  kubetab lessons verify
  kubetab lessons verify lessons/05-scheduler
  kubetab lessons verify lessons/05-scheduler/ja.md`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"lessons"}
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			lessons, ok := loadLessons(errOut, args)
			if len(lessons) == 0 {
				if ok {
					return fmt.Errorf("no lessons found in %s", strings.Join(args, " "))
				}
				return errMalformed
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Images = images.New()
			cfg.Progress = out
			start := time.Now()
			report := lesson.Verify(ctx, cfg, lessons)
			fmt.Fprintf(out, "%d lesson files verified in %.1fs, %d failed\n", len(report.Lessons), time.Since(start).Seconds(), report.Failed())
			switch {
			case !report.OK():
				return fmt.Errorf("%d of %d lesson files failed", report.Failed(), len(report.Lessons))
			case !ok:
				return errMalformed
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&cfg.Timeout, "timeout", 60*time.Second, "how long a step's checks may take to hold")
	cmd.Flags().DurationVar(&cfg.Poll, "poll", 200*time.Millisecond, "pause between evaluations of a step's checks")
	cmd.Flags().DurationVar(&cfg.LineTimeout, "line-timeout", 3*time.Minute, "how long one console line may run (a -w or -f that never ends)")
	cmd.Flags().IntVarP(&cfg.Workers, "jobs", "j", 2, "lessons verified at once, each on its own cluster")
	return cmd
}

func newLessonsListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list [DIR|FILE ...]",
		Short: "List the lessons: slug, language, minutes, steps, title",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"lessons"}
			}
			lessons, ok := loadLessons(cmd.ErrOrStderr(), args)
			if len(lessons) == 0 && ok {
				return fmt.Errorf("no lessons found in %s", strings.Join(args, " "))
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%-32s %-4s %7s %5s  %s\n", "LESSON", "LANG", "MINUTES", "STEPS", "TITLE")
			for _, l := range lessons {
				fmt.Fprintf(w, "%-32s %-4s %7d %5d  %s\n", l.Slug, l.Lang, l.Minutes, len(l.Steps), l.Title)
			}
			if !ok {
				return errMalformed
			}
			return nil
		},
	}
}

// errMalformed ends a command whose files had problems (printed above it).
var errMalformed = errors.New("some lesson files are malformed or missing (see above)")

// loadLessons reads each argument: a folder of lessons, one lesson's
// folder, or one file. Problems are printed as file:line: message; ok is
// false if there were any.
func loadLessons(errOut io.Writer, args []string) (lessons []*lesson.Lesson, ok bool) {
	ok = true
	report := func(err error) {
		fmt.Fprintln(errOut, err)
		ok = false
	}
	for _, arg := range args {
		info, err := os.Stat(arg)
		if err != nil {
			report(err)
			continue
		}
		if !info.IsDir() {
			data, err := os.ReadFile(arg)
			if err != nil {
				report(err)
				continue
			}
			l, err := lesson.Parse(arg, data)
			if err != nil {
				report(err)
				continue
			}
			lessons = append(lessons, l)
			continue
		}
		clean := filepath.Clean(arg)
		parent, base := filepath.Dir(clean), filepath.Base(clean)
		// Load reads paths relative to the folder it is given; name the
		// files as the user named the folder.
		ls, err := lesson.Load(os.DirFS(parent), base)
		for _, l := range ls {
			l.Path = filepath.Join(parent, filepath.FromSlash(l.Path))
		}
		if err != nil {
			var pe *lesson.ParseError
			if errors.As(err, &pe) {
				for i := range pe.Problems {
					pe.Problems[i].Path = filepath.Join(parent, filepath.FromSlash(pe.Problems[i].Path))
				}
			}
			report(err)
		}
		lessons = append(lessons, ls...)
	}
	return lessons, ok
}
