package workload

import (
	"math/rand/v2"
	"time"
)

// Gitea is a Gitea server: a repository volume ("repositories") and its
// database volume ("db"). Half the steps are a push, recorded afterwards in
// the database (the action feed, the repository's updated time); the other
// half are database transactions alone (issues, comments).
type Gitea struct {
	base
	repository *repository
	db         *database
}

// The volume names of a Gitea instance.
const (
	GiteaRepositories = "repositories"
	GiteaDatabase     = "db"
)

var _ Workload = (*Gitea)(nil)

// NewGitea builds a Gitea instance named name (at most 16 bytes, the name
// written into its blocks) that draws every random choice from rng.
func NewGitea(name string, rng *rand.Rand, opts ...Option) *Gitea {
	o := buildOptions(opts)
	g := &Gitea{
		repository: newRepository(name, GiteaRepositories, o.repository, rng),
		db:         newDatabase(name, GiteaDatabase, o.database, rng),
	}
	g.base = base{name: name, rng: rng, models: []volumeModel{g.repository, g.db}}
	return g
}

// Step runs one request.
func (g *Gitea) Step(now time.Time, devices Devices) (StepResult, error) {
	return g.step(now, devices, func() (string, error) {
		if g.rng.IntN(2) == 0 {
			return g.db.commit(now, devices[GiteaDatabase])
		}
		push, err := g.repository.push(now, devices[GiteaRepositories])
		if err != nil {
			return push, err
		}
		commit, err := g.db.commit(now, devices[GiteaDatabase])
		return push + "; " + commit, err
	})
}
