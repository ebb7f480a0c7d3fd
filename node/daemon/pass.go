package daemon

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/baton-dr/baton/storage/core"
)

// PassResult is what one pass did.
type PassResult struct {
	// Reconciled: a spec came and the agent converged on it (as far as it
	// could: see Problems).
	Reconciled bool
	// Reported: the site took the node's report.
	Reported bool
	// Volumes is the number of volumes in the spec.
	Volumes int
	// Problems are what the agent and the device links could not do, as
	// reported to the site.
	Problems []string
	// Sent are the finished streams the report carried (or, when it failed,
	// will carry).
	Sent []core.SendResult
	// Err is why the pass fetched no spec or its report failed.
	Err error
	// Duration is how long the pass took, API calls included.
	Duration time.Duration
}

// maxUnreported bounds the finished streams kept for a report that gets
// through: a site away for long only needs the newest of each pairing, and a
// node ships a few streams per pairing per interval.
const maxUnreported = 1024

// Pass runs one pass: Spec, Reconcile, Report. Run calls it every interval;
// tests and benchmarks call it directly on a daemon that is not running.
// Passes must not overlap.
func (d *Daemon) Pass(ctx context.Context) PassResult {
	started := time.Now()
	result := d.pass(ctx)
	result.Duration = time.Since(started)
	d.metrics.observe(result)
	d.logPass(result)
	return result
}

func (d *Daemon) pass(ctx context.Context) PassResult {
	spec, err := d.config.API.Spec(ctx, d.config.Node)
	if err != nil {
		return PassResult{Err: fmt.Errorf("failed to fetch the node's spec, keeping what the node has: %w", err)}
	}
	if spec.Node != d.config.Node {
		return PassResult{Err: fmt.Errorf("the site answered with the spec of node %q, not %q", spec.Node, d.config.Node)}
	}
	var linkProblems []string
	if d.links != nil {
		// Before the agent: a volume to destroy must not be held open.
		linkProblems = d.links.release(spec)
	}
	status := d.agent.Reconcile(spec)
	if d.links != nil {
		linkProblems = append(linkProblems, d.links.publish(spec, status)...)
	}
	status.Errors = append(status.Errors, linkProblems...)
	status.Sent = append(d.unreported, status.Sent...)
	if len(status.Sent) > maxUnreported {
		status.Sent = status.Sent[len(status.Sent)-maxUnreported:]
	}
	result := PassResult{Reconciled: true, Volumes: len(spec.Volumes), Problems: status.Errors, Sent: status.Sent}
	if err := d.config.API.Report(ctx, status); err != nil {
		d.unreported = slices.Clone(status.Sent)
		result.Err = fmt.Errorf("failed to report the node's status: %w", err)
		return result
	}
	d.unreported = nil
	result.Reported = true
	return result
}

// logPass logs what changed: a failure, problems that appear or clear, and
// every finished stream. A pass like the one before logs only at debug level.
func (d *Daemon) logPass(r PassResult) {
	log := d.log.With("node", d.config.Node)
	if r.Err != nil {
		log.Warn("pass failed", "error", r.Err.Error(), "duration", r.Duration)
	}
	if r.Reconciled && !slices.Equal(r.Problems, d.problems) {
		if len(r.Problems) == 0 {
			log.Info("the node converged on its spec")
		} else {
			log.Warn("the node cannot converge on its spec", "problems", r.Problems)
		}
		d.problems = slices.Clone(r.Problems)
	}
	if r.Reported {
		for _, s := range r.Sent {
			attrs := []any{"dataset", s.Dataset, "snapshot", s.Snapshot, "target", string(s.Target),
				"bytes", s.Bytes, "duration", s.Finished.Sub(s.Started)}
			if s.Error != "" {
				log.Warn("a stream failed", append(attrs, "error", s.Error, "noBase", s.NoBase)...)
			} else {
				log.Info("shipped a snapshot", attrs...)
			}
		}
	}
	log.Debug("pass", "reconciled", r.Reconciled, "reported", r.Reported, "volumes", r.Volumes,
		"problems", len(r.Problems), "duration", r.Duration)
}
