package infra

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// RetainEnv keeps what a failed bring-up made ("1"), for inspection;
// otherwise Up takes it away again, as kind's create does unless told to
// retain.
const RetainEnv = "BATON_REALBED_RETAIN"

// RetainFromEnv reads RetainEnv.
func RetainFromEnv() bool { return os.Getenv(RetainEnv) == "1" }

// Up brings up the bed's clusters: it checks the host's addressing, the
// private dockerd and the node image first, then makes the network and
// the clusters, all at once (an existing one is kept), and returns once
// every cluster answers and its system pods are Ready. It runs upActions
// in order, as kind's create runs its actions; when one fails, what this
// bring-up made -- never what it found -- is taken away again, newest
// first, unless Retain keeps it for inspection.
func (in *Infra) Up(ctx context.Context) error {
	return in.bringUp(ctx, in.upActions())
}

// An action is one step of a bring-up: it prints its own phases and
// records in made each thing it creates, with what takes it away.
type action func(ctx context.Context, made *made) error

// upActions are Up's steps, in their order.
func (in *Infra) upActions() []action {
	return []action{in.preflight, in.checkHost, in.makeNetwork, in.makeClusters}
}

// made is what one bring-up created, in the order it was made.
type made struct {
	mu     sync.Mutex // the clusters are made at once
	things []madeThing
}

// madeThing is one thing a bring-up made ("the cluster baton-hub") and
// what takes it away, saying how.
type madeThing struct {
	what string
	undo func(ctx context.Context) (string, error)
}

func (m *made) add(what string, undo func(ctx context.Context) (string, error)) {
	if what == "" || undo == nil {
		panic("infra: a made thing needs a name and its undo")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.things = append(m.things, madeThing{what, undo})
}

// cleanupLimit bounds taking away what a failed bring-up made: kind's
// deletion of three clusters, the network and the rule.
const cleanupLimit = 5 * time.Minute

// bringUp runs the actions in order; after the first that fails it takes
// away what they made (cleanUp) and returns the failure with any of the
// cleanup's.
func (in *Infra) bringUp(ctx context.Context, actions []action) error {
	made := &made{}
	for _, a := range actions {
		if err := a(ctx, made); err != nil {
			return errors.Join(err, in.cleanUp(ctx, made))
		}
	}
	return nil
}

// cleanUp takes away what a failed bring-up made, newest first, each a
// phase of its own, going on past a failure; with Retain it says what it
// keeps. It runs past the bring-up's cancellation (^C): what was made is
// taken away all the same.
func (in *Infra) cleanUp(ctx context.Context, m *made) error {
	if len(m.things) == 0 {
		return nil
	}
	if in.Retain {
		var kept []string
		for _, t := range m.things {
			kept = append(kept, t.what)
		}
		in.Printf("the bring-up failed; retained for inspection: %s (make realbed-down takes them away)", strings.Join(kept, ", "))
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupLimit)
	defer cancel()
	var errs []error
	for _, t := range slices.Backward(m.things) {
		errs = append(errs, in.phase("the bring-up failed: take away "+t.what, func() (string, error) { return t.undo(ctx) }))
	}
	return errors.Join(errs...)
}

// preflight names a kernel that cannot run the storage mode, before
// anything is made.
func (in *Infra) preflight(context.Context, *made) error {
	return in.phase("storage mode "+string(in.Storage), func() (string, error) { return in.Storage.Preflight(HostKernel()) })
}

// checkHost checks what the bed needs of the host and makes nothing of
// its own: the address ranges, the private dockerd, the inotify limits
// (raised where low), the node image.
func (in *Infra) checkHost(ctx context.Context, _ *made) error {
	if err := os.MkdirAll(in.Paths.Run(), 0o755); err != nil {
		return err
	}
	steps := []struct {
		name string
		f    func() (string, error)
	}{
		{"address ranges", func() (string, error) { return "no clash with the host's routes", CheckAddressing() }},
		{"private dockerd", func() (string, error) { return os.Getenv("DOCKER_HOST"), checkDockerd(ctx) }},
		{"inotify limits", raiseInotifyLimits},
		{"node image", func() (string, error) { return NodeImage, checkImage(ctx, NodeImage, "ci/realbed/images.sh") }},
	}
	for _, s := range steps {
		if err := in.phase(s.name, s.f); err != nil {
			return err
		}
	}
	return nil
}

// makeNetwork makes the bed's docker network and the firewall rule that
// lets its nodes reach each other, each unless it is there.
func (in *Infra) makeNetwork(ctx context.Context, m *made) error {
	return in.phase("network", func() (string, error) {
		network, err := ensureNetwork(ctx)
		if network {
			m.add("the network "+KindNetwork, func(ctx context.Context) (string, error) { return "removed", removeNetwork(ctx) })
		}
		if err != nil {
			return "", err
		}
		rule, err := ensureForwardRule(ctx)
		if rule {
			m.add("the firewall rule "+strings.Join(forwardRule, " "), func(ctx context.Context) (string, error) {
				removeForwardRule(ctx)
				return "removed", nil
			})
		}
		return KindNetwork + " on " + KindSubnet.String() + ", bridge " + KindBridge, err
	})
}

// makeClusters makes the clusters at once -- most of a cluster's creation
// is waiting (its node booting, kubeadm's phases), which overlaps -- each
// unless it exists, and waits until each is ready.
func (in *Infra) makeClusters(ctx context.Context, m *made) error {
	return in.each(Clusters(), func(c Cluster) error {
		if err := in.phase(c.Name, func() (string, error) {
			created, err := createCluster(c, in.Paths, in.Storage, in.Retain)
			if !created {
				return "exists", err
			}
			m.add("the cluster "+c.Name, func(context.Context) (string, error) {
				deleted, err := deleteClusters([]string{c.Name}, io.Discard)
				if len(deleted) == 0 {
					return "gone already", err
				}
				return "deleted", err
			})
			return fmt.Sprintf("created (pods %s, services %s)", c.PodSubnet, c.ServiceSubnet), err
		}); err != nil {
			return err
		}
		return in.phase(c.Name+" ready", func() (string, error) { return "", in.ready(ctx, c) })
	})
}
