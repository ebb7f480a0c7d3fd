package webapps

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
)

// Copy returns a client of a copy of app's instance serving at url -- the
// application started on clones of its volumes, as a drill starts it --
// that reads back as app would: against the operations app's journal holds
// now, with app's keys and credentials. The copy shares nothing app goes on
// changing (journal, Gitea's token and files), so app may go on writing
// while the copy is read back; call Copy between two of app's operations.
func Copy(app App, url string) (App, error) {
	switch a := app.(type) {
	case *WordPress:
		c, err := a.copyAt(url)
		if err != nil {
			return nil, err
		}
		return &WordPress{client: c}, nil // its auth is the application password's, a value
	case *Gitea:
		c, err := a.copyAt(url)
		if err != nil {
			return nil, err
		}
		g := &Gitea{client: c, user: a.user, password: a.password, repository: a.repository, token: a.token,
			files: maps.Clone(a.files), filePaths: slices.Clone(a.filePaths)}
		g.api.auth = g.authorize // the copy's own token: one it makes stays its own
		return g, nil
	}
	return nil, fmt.Errorf("webapps: no copy of a %T", app)
}

// copyAt is c at another address with a copy of its journal.
func (c *client) copyAt(url string) (client, error) {
	api, err := newEndpoint(url, c.api.client)
	if err != nil {
		return client{}, err
	}
	api.auth = c.api.auth
	// Its own draws: the original's generator goes on with the original.
	rng := rand.New(rand.NewPCG(uint64(c.journal.Len()), 0x636f7079))
	return client{name: c.name, api: api, journal: c.journal.clone(), keys: c.keys, rng: rng, now: c.now}, nil
}
