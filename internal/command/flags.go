// Package command holds what baton's binaries do alike on their way in and
// out: the flag set and its usage text, exit statuses, the kubeconfig, the
// manager's probes and CA bundles. Each binary keeps its own flags and wiring.
package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// ErrUsage reports flags that did not parse or do not fit together; the
// reason was already printed to the flag set's output.
var ErrUsage = errors.New("usage")

// NewFlagSet is a flag set that returns its errors (never exits) and whose
// -help prints usage, then every flag with its default.
func NewFlagSet(name, usage string, output io.Writer) *flag.FlagSet {
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(output)
	flags.Usage = func() {
		fmt.Fprint(flags.Output(), usage)
		flags.PrintDefaults()
	}
	return flags
}

// Parse parses args into flags, which take no positional arguments. It
// returns flag.ErrHelp for -help, ErrUsage for anything that did not parse
// (the flag package, or Parse, printed why), else nil.
func Parse(flags *flag.FlagSet, args []string) error {
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return ErrUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(flags.Output(), "%s takes no arguments, got %q\n", flags.Name(), flags.Args())
		return ErrUsage
	}
	return nil
}

// Problems prints every problem found in the flags, each behind the command's
// name, and returns ErrUsage if there was one.
func Problems(output io.Writer, name string, problems []string) error {
	for _, p := range problems {
		fmt.Fprintln(output, name+":", p)
	}
	if len(problems) > 0 {
		return ErrUsage
	}
	return nil
}

// Main runs a command until SIGINT or SIGTERM ends its context, then exits
// with the status of its error (Exit).
func Main(name string, run func(ctx context.Context, args []string, stderr io.Writer) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := SeededBugs(name, os.Stderr)
	if err == nil {
		err = run(ctx, os.Args[1:], os.Stderr)
	}
	stop()
	Exit(name, err)
}

// Exit ends the process with the status of run's error: 0 for none or -help,
// 2 for ErrUsage (already explained), 1 with the error on stderr otherwise.
func Exit(name string, err error) {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, ErrUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}
