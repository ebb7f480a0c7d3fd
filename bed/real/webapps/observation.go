package webapps

import "sort"

// Observation is what a read-back found through an application's API: for
// each volume, the keys found there and what each one's content hashes to.
type Observation struct {
	found map[string]map[string]Found
	// duplicates are keys found more than once on a volume: an operation
	// that happened twice although it was sent once.
	duplicates map[string][]string
}

// Found is one object a read-back found.
type Found struct {
	SHA256 string
	Ref    string // the application's name for it (a post id, a commit SHA)
}

// NewObservation returns an empty observation.
func NewObservation() *Observation {
	return &Observation{found: map[string]map[string]Found{}, duplicates: map[string][]string{}}
}

// Add records that key was found on volume with content hashing to sha256.
// A key found twice on one volume is kept once and reported as a duplicate.
func (o *Observation) Add(volume, key, sha256, ref string) {
	keys := o.found[volume]
	if keys == nil {
		keys = map[string]Found{}
		o.found[volume] = keys
	}
	if _, seen := keys[key]; seen {
		o.duplicates[volume] = append(o.duplicates[volume], key)
		return
	}
	keys[key] = Found{SHA256: sha256, Ref: ref}
}

// Lookup tells what was found under key on volume.
func (o *Observation) Lookup(volume, key string) (Found, bool) {
	f, ok := o.found[volume][key]
	return f, ok
}

// Keys lists the keys found on volume, sorted.
func (o *Observation) Keys(volume string) []string {
	keys := make([]string, 0, len(o.found[volume]))
	for k := range o.found[volume] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Duplicates lists the keys found more than once on volume, sorted.
func (o *Observation) Duplicates(volume string) []string {
	d := append([]string(nil), o.duplicates[volume]...)
	sort.Strings(d)
	return d
}
