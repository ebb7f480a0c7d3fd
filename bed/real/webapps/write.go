package webapps

import (
	"fmt"
	"maps"
	"time"
)

// Outcome is how the application answered one operation.
type Outcome uint8

const (
	// Pending: recorded, not yet answered.
	Pending Outcome = iota
	// Acknowledged: a 2xx answer naming the object; the application promised
	// the write is durable.
	Acknowledged
	// Refused: a 4xx answer; the write did not happen.
	Refused
	// Unknown: no answer, or a 5xx; the write may or may not have happened.
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case Pending:
		return "pending"
	case Acknowledged:
		return "acknowledged"
	case Refused:
		return "refused"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Operation names what an operation does.
type Operation string

// The operations of the two applications.
const (
	OpPost       Operation = "post"        // WordPress: a post (database)
	OpMedia      Operation = "media"       // WordPress: an upload (uploads) and its row (database)
	OpCreateFile Operation = "create-file" // Gitea: a commit adding a file (repositories)
	OpUpdateFile Operation = "update-file" // Gitea: a commit rewriting a file (repositories)
	OpIssue      Operation = "issue"       // Gitea: an issue (database)
)

// Part is what one operation writes to one volume: the evidence the
// read-back looks for, under the operation's key.
type Part struct {
	Volume string // the workload's volume name ("db", "uploads", "repositories")
	SHA256 string // hex SHA-256 of the content the read-back must find
	Bytes  int
	// Discarded: a fail-over lost this part and the application went on
	// without it (Journal.Resume); it is no longer expected, and finding it
	// again -- the old site's diverged tail come back -- is a violation.
	Discarded bool
}

// Write is one operation, as the Journal records it.
type Write struct {
	Seq       uint64 // 1, 2, ... in issue order; one operation at a time
	Key       string // the idempotency key, unique in the run
	Operation Operation
	Path      string // the file a Gitea commit writes, or a media item's file path on the site
	Parts     []Part
	Issued    time.Time
	Answered  time.Time // when the answer came (or the call gave up)
	Outcome   Outcome
	Ref       string // the application's name for it: a post id, a commit SHA
	Detail    string // the answer's status or error, for reports
}

// Journal is every operation a client issued, in order. It is not safe for
// concurrent use: a client performs one operation at a time.
type Journal struct {
	writes []Write
	keys   map[string]int
}

// NewJournal returns an empty journal.
func NewJournal() *Journal { return &Journal{keys: map[string]int{}} }

// Begin records an operation before it is sent and returns its sequence
// number. A key used before is a programmer error.
func (j *Journal) Begin(w Write) uint64 {
	if _, dup := j.keys[w.Key]; dup || w.Key == "" {
		panic(fmt.Sprintf("webapps: idempotency key %q reused or empty", w.Key))
	}
	if len(w.Parts) == 0 {
		panic(fmt.Sprintf("webapps: operation %s writes nothing", w.Key))
	}
	w.Seq = uint64(len(j.writes)) + 1
	w.Outcome = Pending
	j.keys[w.Key] = len(j.writes)
	j.writes = append(j.writes, w)
	return w.Seq
}

// Finish records the answer to operation seq.
func (j *Journal) Finish(seq uint64, outcome Outcome, answered time.Time, ref, detail string) {
	if seq == 0 || seq > uint64(len(j.writes)) {
		panic(fmt.Sprintf("webapps: finish of unknown operation %d", seq))
	}
	w := &j.writes[seq-1]
	if w.Outcome != Pending || outcome == Pending {
		panic(fmt.Sprintf("webapps: operation %s answered twice (%s, then %s)", w.Key, w.Outcome, outcome))
	}
	w.Outcome, w.Answered, w.Ref, w.Detail = outcome, answered, ref, detail
}

// setPath records where the server put the operation's file (WordPress
// picks an upload's directory).
func (j *Journal) setPath(seq uint64, path string) {
	if seq == 0 || seq > uint64(len(j.writes)) {
		panic(fmt.Sprintf("webapps: path of unknown operation %d", seq))
	}
	j.writes[seq-1].Path = path
}

// Resume continues the journal from what a verdict found: every part the
// verdict found missing on its volume -- acknowledged or not -- is discarded,
// as the application, restarted on the copy, goes on without it. Give it the
// verdict of the DR step just taken, before the next operation.
func (j *Journal) Resume(v Verdict) error {
	if v.Unavailable != "" {
		return fmt.Errorf("resume from a verdict that read nothing back: %s", v.Unavailable)
	}
	for _, vol := range v.Volumes {
		for _, seq := range vol.Missing {
			if seq == 0 || seq > uint64(len(j.writes)) {
				return fmt.Errorf("resume: verdict names operation %d of %d", seq, len(j.writes))
			}
			parts := j.writes[seq-1].Parts
			for i := range parts {
				if parts[i].Volume == vol.Volume {
					parts[i].Discarded = true
				}
			}
		}
	}
	return nil
}

// Writes returns a copy of every operation, in issue order.
func (j *Journal) Writes() []Write {
	out := make([]Write, len(j.writes))
	for i, w := range j.writes {
		w.Parts = append([]Part(nil), w.Parts...)
		out[i] = w
	}
	return out
}

// clone is a copy of the journal that shares nothing with it.
func (j *Journal) clone() *Journal { return &Journal{writes: j.Writes(), keys: maps.Clone(j.keys)} }

// Len is the number of operations issued.
func (j *Journal) Len() int { return len(j.writes) }

// Last returns the newest operation.
func (j *Journal) Last() (Write, bool) {
	if len(j.writes) == 0 {
		return Write{}, false
	}
	return j.writes[len(j.writes)-1], true
}

// Lookup finds an operation by key.
func (j *Journal) Lookup(key string) (Write, bool) {
	i, ok := j.keys[key]
	if !ok {
		return Write{}, false
	}
	return j.writes[i], true
}
