package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// MainManager runs a RunManager command until SIGINT or SIGTERM ends its
// context, and exits with the status run returns.
func MainManager(run func(ctx context.Context, args []string, stdout, stderr io.Writer) int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	status := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(status)
}

// RunManager is the whole of a command that parses its flags into O and then
// serves with a controller-runtime manager until ctx ends, logging JSON to
// stderr. It returns the exit status: 0 after -help or a clean shutdown, 2
// for bad flags, 1 when the command cannot serve.
func RunManager[O any](ctx context.Context, name string, args []string, stdout, stderr io.Writer,
	parse func([]string, io.Writer) (O, error), serve func(context.Context, O, logr.Logger) error) int {
	o, err := parse(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if errors.Is(err, ErrUsage) {
		return 2 // the flag set printed why
	}
	if err == nil {
		err = SeededBugs(name, stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return 2
	}
	log := logr.FromSlogHandler(slog.NewJSONHandler(stderr, nil))
	ctrl.SetLogger(log)
	if err := serve(ctx, o, log); err != nil {
		log.Error(err, name+" stops")
		return 1
	}
	return 0
}

// AddProbes answers /healthz and /readyz as long as the manager runs.
func AddProbes(m manager.Manager) error {
	if err := m.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("failed to add the health check: %w", err)
	}
	if err := m.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("failed to add the readiness check: %w", err)
	}
	return nil
}
