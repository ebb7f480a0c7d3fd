package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// commit is the revision batonctl was built from, when the build says so
// with -ldflags "-X main.commit=..." -- the Makefile does, for go run, which
// stamps no version control information of its own.
var commit string

// builtFrom is the commit batonctl was built from: the -ldflags stamp, else
// Go's build info (go build in a git checkout records vcs.revision, and
// vcs.modified for uncommitted changes, shown as "-dirty"), else "" -- a
// build outside git, or go run without the Makefile's stamp.
func builtFrom(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if info == nil {
		return ""
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision != "" && modified == "true" {
		revision += "-dirty"
	}
	return revision
}

// revision is this binary's builtFrom.
func revision() string {
	info, _ := debug.ReadBuildInfo()
	return builtFrom(commit, info)
}

// versionLine is what batonctl version prints.
func versionLine(stamped string, info *debug.BuildInfo) string {
	version := "(unknown)"
	if info != nil {
		version = info.Main.Version
	}
	from := builtFrom(stamped, info)
	if from == "" {
		from = "an unknown commit (built outside git, or by go run without the Makefile's -ldflags)"
	}
	return fmt.Sprintf("batonctl %s, commit %s", version, from)
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version and the commit batonctl was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, _ := debug.ReadBuildInfo()
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine(commit, info))
			return err
		},
	}
}
