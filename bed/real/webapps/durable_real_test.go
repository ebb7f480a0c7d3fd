package webapps

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The durability tests take the crash-consistent copy the instant an
// operation is acknowledged, before anything else writes: whatever the
// application answered must already be on the volumes, not in a page cache
// or a journal transaction that a later fsync or timer would have
// committed. One test per application, each operation kind once, the
// riskiest last: WordPress's upload (a new file, fsynced by the image's
// plugin), Gitea's commit (a ref renamed into place, synced by gitea-git).

func TestWordPressAcknowledgedIsDurableAtOnce(t *testing.T) {
	d := newDockerBed(t, "mariadb", "wordpress")
	p := newPool(t)
	p.site("site-a")
	a := d.runWordPress("a", p.volume("site-a", "mysql"), p.volume("site-a", "uploads"))
	w := newWordPressClient(t, a.url(), 5)
	ctx := context.Background()
	acknowledged(t)(w.post(ctx))
	acknowledged(t)(w.upload(ctx))
	recoveryPoint := time.Now()
	p.snapshot("site-a", "site-b")
	d.kill(a.web)
	d.kill(a.db)
	b := d.runWordPress("b", p.open("site-b", "mysql"), p.open("site-b", "uploads"))
	if err := w.Retarget(b.url()); err != nil {
		t.Fatal(err)
	}
	readBackAll(t, w, recoveryPoint)
}

func TestGiteaAcknowledgedIsDurableAtOnce(t *testing.T) {
	d := newDockerBed(t, "gitea")
	p := newPool(t)
	p.site("site-a")
	a := d.runGitea("a", p.volume("site-a", "repositories"), p.volume("site-a", "state"))
	g := newGiteaClient(t, a.url(), 6)
	ctx := context.Background()
	acknowledged(t)(g.issue(ctx))
	acknowledged(t)(g.commit(ctx, ""))
	recoveryPoint := time.Now()
	p.snapshot("site-a", "site-b")
	d.kill(a.server)
	b := d.runGitea("b", p.open("site-b", "repositories"), p.open("site-b", "state"))
	if err := g.Retarget(b.url()); err != nil {
		t.Fatal(err)
	}
	readBackAll(t, g, recoveryPoint)
}

// acknowledged(t)(op()) fails the test unless the operation was acknowledged.
func acknowledged(t *testing.T) func(Write, error) {
	return func(w Write, err error) {
		t.Helper()
		if w.Outcome != Acknowledged {
			t.Fatalf("%s %s: %s: %v", w.Operation, w.Key, w.Outcome, err)
		}
	}
}

// readBackAll reads back (from a copy taken at recoveryPoint, or zero)
// and fails the test unless every acknowledged write is there, intact, on
// every volume, and every volume had some: a crash or a copy of a durable
// application loses nothing it acknowledged. It returns the verdict.
func readBackAll(t *testing.T, app App, recoveryPoint time.Time) Verdict {
	t.Helper()
	v, err := app.ReadBack(context.Background(), recoveryPoint, 5*time.Minute)
	if err != nil {
		t.Fatalf("%s: read-back: %v", app.Name(), err)
	}
	t.Logf("read back:\n%s", v)
	if f := v.Failures(true); len(f) > 0 {
		t.Fatalf("acknowledged writes lost or changed:\n%s", strings.Join(f, "\n"))
	}
	for i, volume := range app.Volumes() {
		if want := countAcknowledged(app.Journal(), volume); v.Volumes[i].Intact != want || want == 0 {
			t.Fatalf("%s: %d acknowledged writes intact, want %d (and some)", volume, v.Volumes[i].Intact, want)
		}
	}
	return v
}
