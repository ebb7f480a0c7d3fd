package workload

import (
	"math/rand/v2"
	"time"
)

// WordPress is a WordPress site: a MySQL database volume ("db") and an uploads
// volume ("uploads"). Three steps in four are a database transaction (a post,
// a comment, an option); one in four uploads a media file and then records it
// in the database.
type WordPress struct {
	base
	db      *database
	uploads *uploads
}

// The volume names of a WordPress instance.
const (
	WordPressDatabase = "db"
	WordPressUploads  = "uploads"
)

var _ Workload = (*WordPress)(nil)

// NewWordPress builds a WordPress instance named name (at most 16 bytes, the
// name written into its blocks) that draws every random choice from rng.
func NewWordPress(name string, rng *rand.Rand, opts ...Option) *WordPress {
	o := buildOptions(opts)
	w := &WordPress{
		db:      newDatabase(name, WordPressDatabase, o.database, rng),
		uploads: newUploads(name, WordPressUploads, o.uploads, rng),
	}
	w.base = base{name: name, rng: rng, models: []volumeModel{w.db, w.uploads}}
	return w
}

// Step runs one request.
func (w *WordPress) Step(now time.Time, devices Devices) (StepResult, error) {
	return w.step(now, devices, func() (string, error) {
		if w.rng.IntN(4) != 0 {
			return w.db.commit(now, devices[WordPressDatabase])
		}
		upload, err := w.uploads.upload(now, devices[WordPressUploads])
		if err != nil {
			return upload, err
		}
		commit, err := w.db.commit(now, devices[WordPressDatabase])
		return upload + "; " + commit, err
	})
}
