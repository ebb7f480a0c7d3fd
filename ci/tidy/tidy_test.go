// Package tidy holds tests that keep the layers honest: the storage core stays
// pure Go, the simulation stays deterministic, and nothing reaches "up".
package tidy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/baton-dr/baton/"

// rule bans imports and calls in the non-test Go files under a directory.
type rule struct {
	dir     string
	why     string
	imports []string // exact paths, or prefixes ending in "/"
	calls   []string // "pkg.Func" selectors on an imported package
	noGo    bool     // no go statements
}

// wallClock are the calls that read or wait on the wall clock;
// globalRandomness those that draw from the process's unseeded source.
var (
	wallClock = []string{"time.Now", "time.Sleep", "time.After", "time.AfterFunc", "time.Tick",
		"time.NewTimer", "time.NewTicker", "time.Since", "time.Until"}
	globalRandomness = []string{"rand.Int", "rand.IntN", "rand.Int64", "rand.Uint64", "rand.Uint32", "rand.Float64",
		"rand.Perm", "rand.Shuffle", "rand.N"}
)

var rules = []rule{
	{
		dir: "storage",
		why: "the storage core is pure Go: no OS, network, wall clock, global randomness, Kubernetes or shell packages",
		imports: []string{"os", "os/", "net", "net/", "syscall", "math/rand", "math/rand/v2", "crypto/rand",
			"unsafe", "k8s.io/", "sigs.k8s.io/", "google.golang.org/grpc",
			module + "api/", module + "controllers/", module + "csi/", module + "node/", module + "sim/",
			module + "bed/", module + "scenarios/", module + "reports/", module + "cmd/",
			module + "storageapi", module + "workload", module + "sweep"},
		calls: wallClock,
		noGo:  true,
	},
	{
		dir: "sim",
		why: "the simulation is replayable from its seed: one goroutine, simulated time, seeded randomness, no I/O",
		imports: []string{"os", "os/", "net", "net/", "syscall", "math/rand", "crypto/rand", "unsafe",
			module + "controllers/", module + "csi/", module + "bed/", module + "scenarios/", module + "cmd/"},
		calls: append(wallClock, globalRandomness...),
		noGo:  true,
	},
	{
		dir:     "bed/sim",
		why:     "the simulation bed runs the production logic inside the deterministic world: one goroutine, simulated time, no I/O",
		imports: []string{"os", "os/", "net", "net/", "syscall", "math/rand", "crypto/rand", "unsafe"},
		calls:   wallClock,
		noGo:    true,
	},
	{
		dir: "workload",
		why: "the workload models run inside the simulation: seeded randomness, the time they are given, no I/O but the Device they write",
		imports: []string{"os", "os/", "net", "net/", "syscall", "math/rand", "crypto/rand", "unsafe",
			"k8s.io/", "sigs.k8s.io/", module + "sim/", module + "bed", module + "bed/", module + "scenarios",
			module + "sweep", module + "cmd/"},
		calls: append(wallClock, globalRandomness...),
		noGo:  true,
	},
	{
		dir: "scenarios",
		why: "scenarios talk only to the Bed interface (package bed), never to a bed's implementation or the shells beneath it",
		imports: []string{module + "bed/", module + "sweep", module + "sim", module + "sim/", module + "controllers/",
			module + "csi", module + "csi/", module + "node/", module + "storageapi", module + "cmd/"},
	},
	{
		dir:     "bed",
		why:     "a bed assembles a world for the scenarios; it never imports them or the drivers that run them",
		imports: []string{module + "scenarios", module + "scenarios/", module + "sweep", module + "cmd/"},
	},
	{
		dir: "bed/apps",
		why: "the applications' logic is every bed's: it asks its Platform for time and volumes, never a bed's implementation, the wall clock or a goroutine",
		imports: []string{module + "bed/sim", module + "bed/local", module + "bed/real", module + "sim", module + "sim/",
			module + "node/", module + "controllers/", module + "csi", module + "storageapi", "os", "os/", "net", "net/"},
		calls: wallClock,
		noGo:  true,
	},
	{
		dir: "bed/real/infra",
		why: "the real bed's infrastructure (clusters, images, devices, baton's and OCM's install) is beneath the bed the scenarios drive, never above it",
		imports: []string{module + "bed", module + "bed/real", module + "bed/real/webapps", module + "bed/apps", module + "bed/sim",
			module + "bed/local", module + "scenarios", module + "sweep", module + "reports", module + "cmd/"},
	},
	{
		dir:     "csi",
		why:     "the CSI driver speaks the storage API (package storageapi); the operator's controllers are another process",
		imports: []string{module + "controllers/", module + "bed/", module + "scenarios", module + "sim/", module + "cmd/"},
	},
	{
		dir: "storageapi",
		why: "the storage API is a wire protocol over the storage core, used by csi/, node/ and the operator alike",
		imports: []string{module + "controllers/", module + "csi", module + "node/", module + "bed/",
			module + "scenarios", module + "sim/", module + "cmd/"},
	},
}

func TestLayersStayTidy(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..", "..")
	for _, r := range rules {
		dir := filepath.Join(root, r.dir)
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			for _, problem := range check(path, r) {
				t.Errorf("%s: %s (%s)", rel, problem, r.why)
			}
			return nil
		})
		if err != nil && !strings.Contains(err.Error(), "no such file") {
			t.Fatal(err)
		}
	}
}

func check(path string, r rule) []string {
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	// Build-tagged test helpers (e.g. invariant checks) follow the same rules.
	names := map[string]string{} // local name -> import path
	for _, spec := range file.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		for _, banned := range r.imports {
			if p == banned || (strings.HasSuffix(banned, "/") && strings.HasPrefix(p, banned)) {
				problems = append(problems, "imports "+p)
			}
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if p == "math/rand/v2" {
			name = "rand"
		}
		if spec.Name != nil {
			name = spec.Name.Name
		}
		names[name] = p
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			if r.noGo {
				problems = append(problems, "starts a goroutine")
			}
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok {
				return true
			}
			p, imported := names[id.Name]
			if !imported {
				return true
			}
			short := p[strings.LastIndex(p, "/")+1:]
			if p == "math/rand/v2" {
				short = "rand"
			}
			for _, banned := range r.calls {
				if banned == short+"."+n.Sel.Name {
					problems = append(problems, "calls "+p+"."+n.Sel.Name)
				}
			}
		}
		return true
	})
	return problems
}
