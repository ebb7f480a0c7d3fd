package mutants

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Tree is a digest of every file of the module (tracked or not, but not
// ignored; prose aside) as it is now, so a verdict can say what it was
// judged against.
type Tree struct {
	files map[string]string // path from the root -> sha256 of its content
	paths []string
}

// readTree hashes the module's files, as git lists them.
func (r *Runner) readTree(ctx context.Context) (Tree, error) {
	list, err := r.output(ctx, "git", "ls-files", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return Tree{}, err
	}
	t := Tree{files: map[string]string{}}
	for _, p := range strings.Split(strings.TrimSpace(list), "\n") {
		// Prose changes no verdict: docs/mutants.md gains an equivalent
		// mutant without every survival being judged again.
		if p == "" || strings.HasSuffix(p, ".md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(r.Root, p))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, still in the index
		}
		if err != nil {
			return Tree{}, err
		}
		sum := sha256.Sum256(data)
		t.files[p] = hex.EncodeToString(sum[:])
		t.paths = append(t.paths, p)
	}
	slices.Sort(t.paths)
	return t, nil
}

// Without is the digest of the tree but the file named: what judges a mutant
// of that file besides the mutated file itself.
func (t Tree) Without(file string) string {
	h := sha256.New()
	for _, p := range t.paths {
		if p != file {
			fmt.Fprintf(h, "%s %s\n", p, t.files[p])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Cache keeps verdicts under Dir by the mutated file's hash, so a rerun judges
// only what changed. A kill (or a failed build) is kept whatever else
// changed: tests and stories only grow, and a mutant once killed is taken as
// killed. A survival is kept only while the rest of the tree is what it was
// judged against: a new test or story elsewhere may kill it.
type Cache struct {
	Dir string
}

type cached struct {
	Judgement Judgement `json:"judgement"`
	// Rest is Tree.Without(the mutated file) when it was judged.
	Rest string `json:"rest"`
}

// key names one judge's verdict on one mutated file.
func cacheKey(judge, plan, file string, mutated []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", judge, plan, file)
	h.Write(mutated)
	return hex.EncodeToString(h.Sum(nil))
}

func (c Cache) path(key string) string {
	return filepath.Join(c.Dir, "verdicts", key[:2], key+".json")
}

// Get returns the verdict kept under key, if it still holds for rest.
func (c Cache) Get(key, rest string) (Judgement, bool) {
	if c.Dir == "" {
		return Judgement{}, false
	}
	data, err := os.ReadFile(c.path(key))
	if err != nil {
		return Judgement{}, false
	}
	var v cached
	if json.Unmarshal(data, &v) != nil {
		return Judgement{}, false
	}
	if !v.Judgement.Verdict.final() && v.Rest != rest {
		return Judgement{}, false
	}
	v.Judgement.Cached = true
	return v.Judgement, true
}

// Put keeps j under key.
func (c Cache) Put(key, rest string, j Judgement) error {
	if c.Dir == "" {
		return nil
	}
	data, err := json.Marshal(cached{Judgement: j, Rest: rest})
	if err != nil {
		return err
	}
	p := c.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}
