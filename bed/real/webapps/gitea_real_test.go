package webapps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/workload"
)

type giteaBed struct {
	*dockerBed
	server string
}

// runGitea starts one site's Gitea (gitea-SITE) on the directories
// repositories and state.
func (d *dockerBed) runGitea(site, repositories, state string) *giteaBed {
	b := &giteaBed{dockerBed: d}
	b.server = d.run(container{name: "gitea-" + site, image: d.images["gitea"], caps: giteaCapabilities,
		env: map[string]string{"GITEA_ADMIN_USER": GiteaAdmin, "GITEA_ADMIN_PASSWORD": testAdminPassword,
			"GITEA_GIT": map[bool]string{false: "/usr/local/bin/gitea-git", true: "/usr/bin/git"}[stock]},
		volumes: map[string]string{repositories: "/data/repositories", state: "/data/state"}})
	return b
}

func (b *giteaBed) url() string { return "http://" + b.address(b.server) + ":3000" }

func newGiteaClient(t *testing.T, url string, seed uint64) *Gitea {
	g, err := NewGitea(Config{Name: "gitea", URL: url, User: GiteaAdmin, Password: testAdminPassword, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Setup(context.Background(), 5*time.Minute); err != nil {
		t.Fatalf("Gitea did not come up: %v", err)
	}
	return g
}

func startGitea(t *testing.T) (*giteaBed, *Gitea) {
	b := newDockerBed(t, "gitea").runGitea("a", "repositories", "state")
	return b, newGiteaClient(t, b.url(), 2)
}

// TestGiteaCrashKeepsAcknowledgedWrites kills Gitea with kill -9 while the
// driver commits and opens issues, twice, restarts it on the same
// directories, and reads everything back: every acknowledged commit must be
// on main with its file, every acknowledged issue there with its body.
func TestGiteaCrashKeepsAcknowledgedWrites(t *testing.T) {
	b, g := startGitea(t)
	ctx := context.Background()
	writeUntil(t, ctx, g, 12, 12)
	for i := 1; i <= 2; i++ {
		f := crashMidWrites(t, ctx, g, 6, 6, func() { b.kill(b.server) }, func() { b.start(b.server) })
		t.Logf("Gitea kill -9 #%d: %s", i, f)
	}
	readBackAll(t, g, time.Time{})
	updates := 0
	for _, w := range g.Journal().Writes() {
		if w.Operation == OpUpdateFile && w.Outcome == Acknowledged {
			updates++
		}
	}
	if updates == 0 {
		t.Fatal("no acknowledged update of a file: the contents API's update path went untested")
	}
}

// TestGiteaReadBackCatchesDamage rewrites an issue behind Gitea's back,
// resets main to before the last commits (a repository volume older than
// the database), and the read-back must name each; with Gitea gone it
// must say it did not come back.
func TestGiteaReadBackCatchesDamage(t *testing.T) {
	b, g := startGitea(t)
	ctx := context.Background()
	writeUntil(t, ctx, g, 16, 16)
	var issues, commits []Write
	for _, w := range g.Journal().Writes() {
		if w.Operation == OpIssue {
			issues = append(issues, w)
		} else {
			commits = append(commits, w)
		}
	}
	if len(issues) < 1 || len(commits) < 3 {
		t.Fatalf("seed 2 made %d issues and %d commits; the test needs 1 and 3", len(issues), len(commits))
	}
	sql := fmt.Sprintf("UPDATE issue SET content='tampered' WHERE \"index\"=%s;", issues[0].Ref)
	b.exec(b.server, "setpriv", "--reuid=git", "--regid=git", "--init-groups", "sqlite3", "/data/state/gitea.db", sql)
	// Roll main back by two commits, as a repository volume whose copy is
	// older than the database's would hold it.
	repo := "/data/repositories/" + GiteaAdmin + "/" + giteaRepository + ".git"
	keep := commits[len(commits)-3].Ref
	b.exec(b.server, "setpriv", "--reuid=git", "--regid=git", "--init-groups", "git", "--git-dir", repo, "update-ref", "refs/heads/main", keep)

	v, err := g.ReadBack(ctx, time.Time{}, time.Minute)
	if err != nil {
		t.Fatalf("read-back: %v", err)
	}
	repositories, database := v.Volumes[0], v.Volumes[1]
	if len(repositories.Lost) != 2 || repositories.Lost[1].Key != commits[len(commits)-1].Key || len(repositories.Holes) != 0 {
		t.Errorf("lost on the repositories %+v (holes %+v), want the last two commits, no hole", repositories.Lost, repositories.Holes)
	}
	if len(database.Corrupt) != 1 || database.Corrupt[0].Key != issues[0].Key {
		t.Errorf("corrupt on the database %+v, want %s", database.Corrupt, issues[0].Key)
	}
	t.Logf("after the damage:\n%s%s", v, strings.Join(v.Failures(true), "\n"))
	if vol, _ := v.Workload(g.Volumes()).Volume(workload.GiteaRepositories); vol.Lost.Acknowledged != 2 {
		t.Errorf("converted: %d lost", vol.Lost.Acknowledged)
	}

	b.kill(b.server)
	v, err = g.ReadBack(ctx, time.Time{}, 10*time.Second)
	if !errors.Is(err, ErrUnavailable) || v.Unavailable == "" {
		t.Fatalf("read-back with Gitea gone: %v (verdict %s), want ErrUnavailable", err, v)
	}
	t.Logf("with Gitea gone: %s", v.Failures(false)[0])
}

// TestGiteaFailoverFromCrashConsistentCopy is an unplanned fail-over of
// Gitea: both volumes snapshotted at one instant mid-writes, the old site
// acknowledging a few more commits and issues before it dies, Gitea started
// on the copy (SQLite rolls back its hot journal; git needs nothing). Every
// write acknowledged before the copy must read back.
func TestGiteaFailoverFromCrashConsistentCopy(t *testing.T) {
	d := newDockerBed(t, "gitea")
	p := newPool(t)
	p.site("site-a")
	a := d.runGitea("a", p.volume("site-a", "repositories"), p.volume("site-a", "state"))
	g := newGiteaClient(t, a.url(), 4)
	ctx := context.Background()
	if acked, _ := RunFor(ctx, g, 5*time.Second, 100*time.Millisecond); acked == 0 {
		t.Fatal("RunFor: nothing acknowledged in 5 s")
	}
	v := failOverTo(t, ctx, g, p, func() { d.kill(a.server) }, func() string {
		return d.runGitea("b", p.open("site-b", "repositories"), p.open("site-b", "state")).url()
	})
	// Every file main holds can be updated: the read-back relearned the
	// blobs, including those whose last update the fail-over lost.
	for _, path := range append([]string(nil), g.filePaths...) {
		acknowledged(t)(g.commit(ctx, path))
	}
	goOn(t, ctx, g, v)
}
