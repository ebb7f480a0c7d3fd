package infra

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dr/baton/internal/steplog"
)

// bringUpDouble is an Infra whose bring-up runs actions that only record:
// what each made, what was taken away (in order), and with which context.
type bringUpDouble struct {
	in    *Infra
	log   strings.Builder
	taken []string
	ran   []string
}

func newBringUpDouble(retain bool) *bringUpDouble {
	d := &bringUpDouble{}
	d.in = &Infra{Retain: retain, progress: steplog.New(&d.log, "realbed")}
	return d
}

// makes is an action named name that makes things, each taken away by
// recording its name; a thing named "stuck" fails to go.
func (d *bringUpDouble) makes(name string, things ...string) action {
	return func(ctx context.Context, m *made) error {
		d.ran = append(d.ran, name)
		for _, thing := range things {
			m.add(thing, func(ctx context.Context) (string, error) {
				if ctx.Err() != nil {
					return "", ctx.Err()
				}
				d.taken = append(d.taken, thing)
				if thing == "stuck" {
					return "", errors.New("stuck stays")
				}
				return "deleted", nil
			})
		}
		return nil
	}
}

func (d *bringUpDouble) fails(err error) action {
	return func(context.Context, *made) error {
		d.ran = append(d.ran, "failing")
		return err
	}
}

var errNotReady = errors.New("baton-site-b: not ready within 3m0s")

// A bring-up that fails takes away what its actions made, newest first,
// past one that will not go, and nothing an action found (it records
// nothing); the actions after the failure do not run.
func TestAFailedBringUpTakesAwayWhatItMadeNewestFirst(t *testing.T) {
	d := newBringUpDouble(false)
	err := d.in.bringUp(context.Background(), []action{
		d.makes("network", "the network"),
		d.makes("checks"),
		d.makes("clusters", "the cluster baton-hub", "stuck", "the cluster baton-site-a"),
		d.fails(errNotReady),
		d.makes("after", "never"),
	})
	if !errors.Is(err, errNotReady) || !strings.Contains(err.Error(), "stuck stays") {
		t.Errorf("error %v, want the failure and the cleanup's", err)
	}
	if want := []string{"the cluster baton-site-a", "stuck", "the cluster baton-hub", "the network"}; !slices.Equal(d.taken, want) {
		t.Errorf("took away %v, want %v", d.taken, want)
	}
	if want := []string{"network", "checks", "clusters", "failing"}; !slices.Equal(d.ran, want) {
		t.Errorf("ran %v, want %v", d.ran, want)
	}
	for _, line := range []string{"the bring-up failed: take away the cluster baton-site-a: deleted", "the bring-up failed: take away stuck: failed"} {
		if !strings.Contains(d.log.String(), line) {
			t.Errorf("the log lacks %q:\n%s", line, d.log.String())
		}
	}
}

// With Retain nothing is taken away: the log names what stays.
func TestARetainedBringUpKeepsWhatItMade(t *testing.T) {
	d := newBringUpDouble(true)
	err := d.in.bringUp(context.Background(), []action{d.makes("clusters", "the cluster baton-hub", "the cluster baton-site-a"), d.fails(errNotReady)})
	if !errors.Is(err, errNotReady) {
		t.Errorf("error %v, want %v", err, errNotReady)
	}
	if len(d.taken) > 0 {
		t.Errorf("took away %v of a retained bring-up", d.taken)
	}
	if !strings.Contains(d.log.String(), "retained for inspection: the cluster baton-hub, the cluster baton-site-a") {
		t.Errorf("the log does not say what it kept:\n%s", d.log.String())
	}
}

// A bring-up that succeeds keeps all it made; one interrupted (^C cancels
// its context) still takes away what it made.
func TestOnlyAFailedBringUpIsTakenAway(t *testing.T) {
	d := newBringUpDouble(false)
	if err := d.in.bringUp(context.Background(), []action{d.makes("network", "the network"), d.makes("clusters", "the cluster baton-hub")}); err != nil {
		t.Fatal(err)
	}
	if len(d.taken) > 0 || d.log.Len() > 0 {
		t.Errorf("a bring-up that succeeded took away %v, printed %q", d.taken, d.log.String())
	}
	d = newBringUpDouble(false)
	ctx, cancel := context.WithCancel(context.Background())
	interrupted := func(ctx context.Context, m *made) error {
		cancel()
		return ctx.Err()
	}
	err := d.in.bringUp(ctx, []action{d.makes("network", "the network"), interrupted})
	if !errors.Is(err, context.Canceled) || !slices.Equal(d.taken, []string{"the network"}) {
		t.Errorf("an interrupted bring-up: %v, took away %v; want the network taken away", err, d.taken)
	}
}
