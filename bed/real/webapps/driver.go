package webapps

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// App is one application instance the driver writes to and reads back.
// An App is not safe for concurrent use: it performs one operation at a time.
type App interface {
	// Name is the instance's name, part of every key it makes.
	Name() string
	// Volumes are the application's volume names, in the workload's order.
	Volumes() []string
	// Setup makes first contact: waits, for at most limit, until the
	// application answers, and creates what the operations need (Gitea's
	// token and repository). Idempotent: call it again after a DR step.
	Setup(ctx context.Context, limit time.Duration) error
	// Step performs one operation and records it in the journal; the error
	// says why it was not acknowledged (it is recorded either way).
	Step(ctx context.Context) (Write, error)
	// ReadBack waits, for at most limit, until the application answers,
	// lists everything through its API and judges it against the journal.
	// An application that cannot be read back gives a verdict saying why
	// (Unavailable) and the error: one wrapping ErrUnavailable when it did
	// not answer, or answered 5xx, for longer than the limit (a database
	// that does not recover); another when its answers do not parse.
	ReadBack(ctx context.Context, recoveryPoint time.Time, limit time.Duration) (Verdict, error)
	// Journal is every operation the instance performed.
	Journal() *Journal
	// Retarget points the client at another address of the application:
	// after a fail-over or relocate it answers on the other site.
	Retarget(url string) error
}

// Config is what a client needs to reach its application.
type Config struct {
	// Name is the instance's name (a-z, 0-9, -), part of every key.
	Name string
	// URL is the application's base URL, e.g. http://172.18.0.3:30080.
	URL string
	// User and Password authenticate: for WordPress an application
	// password, for Gitea the account's password (the client makes a token
	// with it).
	User, Password string
	// Seed draws every choice and every byte of content.
	Seed uint64
	// Now is the clock writes are stamped with; nil is time.Now. A bed gives
	// its own, so verdicts and recovery points share one clock.
	Now func() time.Time
	// HTTP is the client to use; nil is one with a 30 s timeout per call.
	HTTP *http.Client
}

// client is what both applications' clients share.
type client struct {
	name    string
	api     endpoint
	journal *Journal
	keys    keys
	rng     *rand.Rand
	now     func() time.Time
}

func newClient(c Config) (client, error) {
	if err := checkName(c.Name); err != nil {
		return client{}, err
	}
	if c.User == "" || c.Password == "" {
		return client{}, fmt.Errorf("%s: no user or password", c.Name)
	}
	api, err := newEndpoint(c.URL, c.HTTP)
	if err != nil {
		return client{}, err
	}
	now := c.Now
	if now == nil {
		now = time.Now
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x7765626170707321))
	return client{name: c.Name, api: api, journal: NewJournal(), keys: newKeys(c.Name, rng), rng: rng, now: now}, nil
}

func (c *client) Name() string      { return c.name }
func (c *client) Journal() *Journal { return c.journal }

func (c *client) Retarget(raw string) error {
	e, err := newEndpoint(raw, c.api.client)
	if err != nil {
		return err
	}
	c.api.base = e.base
	return nil
}

// nextKey is the key of the operation about to begin.
func (c *client) nextKey() string { return c.keys.key(uint64(c.journal.Len()) + 1) }

// perform records w, sends r, and records the answer; accept reads a 2xx
// answer's reference (an id, a commit SHA) and, when the server chose it,
// the written file's path (empty: keep w.Path). A 2xx
// whose body does not parse is still acknowledged -- the application
// promised -- with the parse error as its detail.
func (c *client) perform(ctx context.Context, w Write, r request, accept func(answer) (ref, path string, err error)) (Write, error) {
	w.Issued = c.now()
	seq := c.journal.Begin(w)
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	a, err := c.api.call(ctx, r)
	outcome := outcomeOf(a, err)
	var ref, detail string
	var failure error
	switch {
	case err != nil:
		detail, failure = err.Error(), err
	case outcome == Acknowledged:
		detail = fmt.Sprintf("HTTP %d", a.status)
		var path string
		var perr error
		if ref, path, perr = accept(a); perr != nil {
			detail += "; " + perr.Error()
		}
		if path != "" {
			c.journal.setPath(seq, path)
		}
	default:
		failure = a.errorf(fmt.Sprintf("%s %s", w.Operation, w.Key))
		detail = failure.Error()
	}
	c.journal.Finish(seq, outcome, c.now(), ref, detail)
	done, _ := c.journal.Lookup(w.Key)
	return done, failure
}

// readBack is the frame both clients' ReadBack share: wait for the
// application, gather an observation, judge it.
func (c *client) readBack(ctx context.Context, volumes []string, health string, recoveryPoint time.Time, limit time.Duration,
	gather func(context.Context, *Observation) error) (Verdict, error) {
	if err := c.api.waitReady(ctx, health, limit); err != nil {
		return Verdict{App: c.name, At: c.now(), RecoveryPoint: recoveryPoint, Unavailable: err.Error()}, err
	}
	obs := NewObservation()
	if err := gather(ctx, obs); err != nil {
		err = fmt.Errorf("%s: reading back: %w", c.name, err)
		return Verdict{App: c.name, At: c.now(), RecoveryPoint: recoveryPoint, Unavailable: err.Error()}, err
	}
	return Judge(c.name, volumes, c.journal.Writes(), obs, recoveryPoint, c.now()), nil
}

// RunFor keeps app writing for d, one operation every period (the next
// starts at once when one took longer), as a bed's Run lets time pass while
// the applications write; it returns how many operations were acknowledged
// and how many not. The operation in flight when d ends is let finish (an
// operation cut short would be unknown for no reason); ctx ending stops it.
func RunFor(ctx context.Context, app App, d, period time.Duration) (acknowledged, unacknowledged int) {
	if period <= 0 {
		panic("webapps: RunFor needs a positive period")
	}
	end := time.Now().Add(d)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for ctx.Err() == nil && time.Now().Before(end) {
		if w, _ := app.Step(ctx); w.Outcome == Acknowledged {
			acknowledged++
		} else {
			unacknowledged++
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	return acknowledged, unacknowledged
}
