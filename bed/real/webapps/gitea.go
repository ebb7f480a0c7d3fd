package webapps

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/baton-dr/baton/workload"
)

// Gitea drives a Gitea server through its API, as the workload model does:
// half the operations are commits through the contents API (the repository
// volume) -- two in three add a file, one rewrites a file an earlier
// acknowledged commit wrote -- and half are issues (the database volume).
// Setup makes an access token with the account's password and the
// repository; every operation authenticates with the token.
type Gitea struct {
	client
	user, password string
	repository     string
	token          string
	// files are the paths whose last commit was acknowledged, with the blob
	// SHA it wrote: the ones an update may rewrite (the contents API wants
	// the current SHA, which an unanswered commit leaves unknown).
	files     map[string]string
	filePaths []string
}

var _ App = (*Gitea)(nil)

// giteaHealth answers 200 once Gitea reaches its database.
const giteaHealth = "/api/healthz"

// giteaRepository is the repository the driver commits to.
const giteaRepository = "baton"

// giteaPageItems is Gitea's default MAX_RESPONSE_ITEMS: a listing's page size.
const giteaPageItems = 50

// NewGitea returns a client of the Gitea server at c.URL; c.User and
// c.Password are an account's, which owns the repository.
func NewGitea(c Config) (*Gitea, error) {
	base, err := newClient(c)
	if err != nil {
		return nil, err
	}
	g := &Gitea{client: base, user: c.User, password: c.Password, repository: giteaRepository, files: map[string]string{}}
	g.api.auth = g.authorize
	return g, nil
}

// authorize authenticates a request with g's token, once it has one.
func (g *Gitea) authorize(r *http.Request) {
	if g.token != "" {
		r.Header.Set("Authorization", "token "+g.token)
	}
}

// Volumes are the workload's: the repositories, then the database.
func (g *Gitea) Volumes() []string {
	return []string{workload.GiteaRepositories, workload.GiteaDatabase}
}

func (g *Gitea) repoPath() string {
	return "/api/v1/repos/" + url.PathEscape(g.user) + "/" + url.PathEscape(g.repository)
}

// Setup waits for Gitea, makes a token (again after a fail-over that lost
// the first: a token is a row in the database) and the repository.
func (g *Gitea) Setup(ctx context.Context, limit time.Duration) error {
	if err := g.api.waitReady(ctx, giteaHealth, limit); err != nil {
		return err
	}
	if err := g.ensureToken(ctx); err != nil {
		return err
	}
	return g.ensureRepository(ctx)
}

// ensureToken checks the token still authenticates and makes one if not.
func (g *Gitea) ensureToken(ctx context.Context) error {
	if g.token != "" {
		a, err := g.api.read(ctx, request{method: "GET", path: "/api/v1/user"}, 401)
		if err != nil {
			return err
		}
		if a.status == 401 {
			g.token = ""
		}
	}
	if g.token == "" {
		return g.makeToken(ctx)
	}
	return nil
}

func (g *Gitea) makeToken(ctx context.Context) error {
	body, _ := json.Marshal(map[string]any{
		"name":   fmt.Sprintf("%s%d", g.keys.prefix, g.journal.Len()),
		"scopes": []string{"write:repository", "write:issue", "write:user"}, // write:user: POST /user/repos
	})
	user, password := g.user, g.password
	a, err := g.api.call(ctx, request{
		method: "POST", path: "/api/v1/users/" + url.PathEscape(user) + "/tokens", body: body,
		header: map[string]string{"Content-Type": "application/json"},
		auth:   func(r *http.Request) { r.SetBasicAuth(user, password) },
	})
	if err != nil {
		return fmt.Errorf("%s: making a token: %w", g.name, err)
	}
	if a.status != http.StatusCreated {
		return a.errorf(g.name + ": making a token")
	}
	g.token, err = decodeGiteaToken(a.body)
	return err
}

func (g *Gitea) ensureRepository(ctx context.Context) error {
	a, err := g.api.read(ctx, request{method: "GET", path: g.repoPath()}, 404)
	if err != nil {
		return err
	}
	if a.status != 404 {
		return nil
	}
	body, _ := json.Marshal(map[string]any{"name": g.repository, "auto_init": true, "default_branch": "main", "private": false})
	a, err = g.api.call(ctx, request{method: "POST", path: "/api/v1/user/repos", body: body,
		header: map[string]string{"Content-Type": "application/json"}})
	if err != nil {
		return fmt.Errorf("%s: creating repository %s: %w", g.name, g.repository, err)
	}
	if a.status != http.StatusCreated && a.status != http.StatusConflict {
		return a.errorf(g.name + ": creating repository " + g.repository)
	}
	return nil
}

// Step commits a file or opens an issue.
func (g *Gitea) Step(ctx context.Context) (Write, error) {
	switch {
	case g.rng.IntN(2) == 0:
		return g.issue(ctx)
	case len(g.filePaths) > 0 && g.rng.IntN(3) == 0:
		return g.commit(ctx, g.filePaths[g.rng.IntN(len(g.filePaths))])
	}
	return g.commit(ctx, "")
}

// commit adds a new file (path empty) or rewrites path, whose last commit
// was acknowledged; the commit's message is the key.
func (g *Gitea) commit(ctx context.Context, path string) (Write, error) {
	key := g.nextKey()
	op, method, blob := OpUpdateFile, "PUT", g.files[path]
	if path == "" {
		op, method, path = OpCreateFile, "POST", "baton/"+key+".txt"
	}
	content := textContent(g.rng, key, postLines)
	fields := map[string]string{"content": base64.StdEncoding.EncodeToString(content), "message": key, "branch": "main"}
	if blob != "" {
		fields["sha"] = blob
	}
	body, _ := json.Marshal(fields)
	// Until it is answered the file's SHA is unknown: no update picks it.
	g.forget(path)
	write := Write{Key: key, Operation: op, Path: path, Parts: []Part{
		{Volume: workload.GiteaRepositories, SHA256: sha256Hex(content), Bytes: len(content)},
	}}
	done, err := g.perform(ctx, write, request{
		method: method, path: g.repoPath() + "/contents/" + escapePath(path), body: body,
		header: map[string]string{"Content-Type": "application/json"},
	}, func(a answer) (string, string, error) {
		f, err := decodeGiteaFile(a.body)
		if err != nil {
			return "", "", err
		}
		if want := gitBlobSHA(content); f.Content.SHA != want {
			return f.Commit.SHA, "", fmt.Errorf("answered blob %s for content whose blob is %s", f.Content.SHA, want)
		}
		g.remember(path, f.Content.SHA)
		return f.Commit.SHA, "", nil
	})
	return done, err
}

func (g *Gitea) remember(path, blob string) {
	if _, known := g.files[path]; !known {
		g.filePaths = append(g.filePaths, path)
	}
	g.files[path] = blob
}

// relearn replaces what the client knows of the files with what main holds.
func (g *Gitea) relearn(current map[string]string) {
	g.files, g.filePaths = map[string]string{}, nil
	for _, op := range g.journal.Writes() { // journal order: a stable order of paths
		if blob, ok := current[op.Path]; ok && op.Path != "" {
			if _, known := g.files[op.Path]; !known {
				g.remember(op.Path, blob)
			}
		}
	}
}

func (g *Gitea) forget(path string) {
	if _, known := g.files[path]; !known {
		return
	}
	delete(g.files, path)
	for i, p := range g.filePaths {
		if p == path {
			g.filePaths = append(g.filePaths[:i], g.filePaths[i+1:]...)
			break
		}
	}
}

// issue opens an issue titled with the key.
func (g *Gitea) issue(ctx context.Context) (Write, error) {
	key := g.nextKey()
	content := textContent(g.rng, key, postLines)
	body, _ := json.Marshal(map[string]string{"title": key, "body": string(content)})
	write := Write{Key: key, Operation: OpIssue, Parts: []Part{
		{Volume: workload.GiteaDatabase, SHA256: sha256Hex(content), Bytes: len(content)},
	}}
	return g.perform(ctx, write, request{
		method: "POST", path: g.repoPath() + "/issues", body: body,
		header: map[string]string{"Content-Type": "application/json"},
	}, func(a answer) (string, string, error) {
		i, err := decodeGiteaIssue(a.body)
		if err != nil {
			return "", "", err
		}
		return strconv.FormatInt(i.Number, 10), "", nil
	})
}

// ReadBack makes a token if the one it has no longer authenticates (it
// creates nothing else: a repository the database lost stays lost), walks
// main's history -- relearning each file's current blob, so that updates
// after a fail-over start from what survived --, reads the file each commit of the run
// wrote at that commit, and lists every issue.
func (g *Gitea) ReadBack(ctx context.Context, recoveryPoint time.Time, limit time.Duration) (Verdict, error) {
	return g.readBack(ctx, g.Volumes(), giteaHealth, recoveryPoint, limit, func(ctx context.Context, obs *Observation) error {
		if err := g.ensureToken(ctx); err != nil {
			return err
		}
		current := map[string]string{}
		if err := g.gatherCommits(ctx, obs, current); err != nil {
			return err
		}
		g.relearn(current)
		return g.gatherIssues(ctx, obs)
	})
}

func (g *Gitea) gatherCommits(ctx context.Context, obs *Observation, current map[string]string) error {
	commits, err := g.listCommits(ctx)
	if err != nil {
		return err
	}
	// The run's commits that an operation made: their files are read at
	// them, all at once (readEach), and judged in the listing's order.
	var made []giteaCommit
	var paths []string // the file each of made's operations wrote
	var reads []request
	for _, c := range commits {
		key := c.subject()
		if !g.keys.ours(key) {
			continue
		}
		op, known := g.journal.Lookup(key)
		if !known || op.Path == "" {
			obs.Add(workload.GiteaRepositories, key, "", c.SHA)
			continue
		}
		made = append(made, c)
		paths = append(paths, op.Path)
		reads = append(reads, request{method: "GET", path: g.repoPath() + "/raw/" + escapePath(op.Path),
			query: url.Values{"ref": {c.SHA}}})
	}
	files, err := g.api.readEach(ctx, reads, 404)
	if err != nil {
		return err
	}
	for i, c := range made {
		gatherCommit(obs, c, paths[i], files[i], current)
	}
	return nil
}

// listCommits lists main's commits, newest first; none when there is no
// repository or no main (every commit is lost).
func (g *Gitea) listCommits(ctx context.Context) ([]giteaCommit, error) {
	var all []giteaCommit
	for page := 1; page <= maxPages; page++ {
		q := url.Values{"sha": {"main"}, "limit": {strconv.Itoa(giteaPageItems)}, "page": {strconv.Itoa(page)},
			"stat": {"false"}, "verification": {"false"}, "files": {"false"}}
		a, err := g.api.read(ctx, request{method: "GET", path: g.repoPath() + "/commits", query: q}, 404)
		if err != nil {
			return nil, err
		}
		if a.status == 404 {
			return nil, nil
		}
		commits, err := decodeGiteaCommits(a.body)
		if err != nil {
			return nil, err
		}
		all = append(all, commits...)
		if len(commits) < giteaPageItems {
			return all, nil
		}
	}
	return nil, fmt.Errorf("%s: main has more than %d pages of commits", g.name, maxPages)
}

// gatherCommit records one of the run's commits with the file its
// operation wrote at path, as read at that commit (file). The listing runs
// newest first, so the first commit seen for a path gives its current blob
// (into current).
func gatherCommit(obs *Observation, c giteaCommit, path string, file answer, current map[string]string) {
	sum := "" // the commit is there, its file is not: a mismatch
	if file.status != 404 {
		sum = sha256Hex(file.body)
		if _, seen := current[path]; !seen {
			current[path] = gitBlobSHA(file.body)
		}
	}
	obs.Add(workload.GiteaRepositories, c.subject(), sum, c.SHA)
}

func (g *Gitea) gatherIssues(ctx context.Context, obs *Observation) error {
	for page := 1; page <= maxPages; page++ {
		q := url.Values{"state": {"all"}, "type": {"issues"}, "limit": {strconv.Itoa(giteaPageItems)}, "page": {strconv.Itoa(page)}}
		a, err := g.api.read(ctx, request{method: "GET", path: g.repoPath() + "/issues", query: q}, 404)
		if err != nil {
			return err
		}
		if a.status == 404 { // no repository: every issue is lost
			return nil
		}
		issues, err := decodeGiteaIssues(a.body)
		if err != nil {
			return err
		}
		for _, i := range issues {
			if g.keys.ours(i.Title) {
				obs.Add(workload.GiteaDatabase, i.Title, sha256Hex([]byte(i.Body)), strconv.FormatInt(i.Number, 10))
			}
		}
		if len(issues) < giteaPageItems {
			return nil
		}
	}
	return fmt.Errorf("%s: more than %d pages of issues", g.name, maxPages)
}
