package workload

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/baton-dr/baton/workload/workloadtest"
)

var epoch = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// stepInterval spaces the steps of a test run, so that ages are exact.
const stepInterval = time.Second

// smallLayouts make the rings wrap within a few dozen steps: checkpoints,
// evictions and block reuse happen early.
func smallLayouts() []Option {
	return []Option{
		WithDatabase(DatabaseLayout{LogBlocks: 24, PageBlocks: 32}),
		WithUploads(UploadsLayout{DirectoryBlocks: 1, DataBlocks: 48}),
		WithRepository(RepositoryLayout{ObjectBlocks: 20000, Refs: []string{"a/main", "a/dev", "b/main"}}),
	}
}

// model is a workload with its test-only handles.
type model struct {
	name string
	make func(seed uint64, opts ...Option) Workload
}

var models = []model{
	{"wordpress", func(seed uint64, opts ...Option) Workload {
		return NewWordPress("wordpress", rand.New(rand.NewPCG(seed, 1)), opts...)
	}},
	{"gitea", func(seed uint64, opts ...Option) Workload {
		return NewGitea("gitea", rand.New(rand.NewPCG(seed, 2)), opts...)
	}},
}

// onEachModel runs test as a subtest on each model's workload, made from
// seed with small layouts.
func onEachModel(t *testing.T, seed uint64, test func(t *testing.T, w Workload)) {
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) { test(t, m.make(seed, smallLayouts()...)) })
	}
}

func pcg(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

// site is one site's set of devices for a workload.
type site map[string]*workloadtest.Device

func newSite(w Workload) site {
	s := site{}
	for _, spec := range w.Volumes() {
		s[spec.Name] = workloadtest.NewDevice(int64(spec.SizeBytes))
	}
	return s
}

func (s site) devices() Devices {
	d := Devices{}
	for name, dev := range s {
		d[name] = dev
	}
	return d
}

// withBlock is the site's devices with one block of volume overwritten by
// data, on a copy: the site itself is left as it is.
func (s site) withBlock(volume string, block int64, data []byte) Devices {
	damaged := s.devices()
	dev := s[volume].Copy()
	dev.SetBlock(block, data)
	damaged[volume] = dev
	return damaged
}

// snapshot copies every device as it is now, synced or not.
func (s site) snapshot() site {
	c := site{}
	for name, dev := range s {
		c[name] = dev.Copy()
	}
	return c
}

func (s site) names() []string {
	var names []string
	for name := range s {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// run steps a workload n times, stepInterval apart from start, and fails the
// test on any error. It returns the time of the next step.
func run(t testing.TB, w Workload, s site, start time.Time, n int) time.Time {
	t.Helper()
	now := start
	for range n {
		if _, err := w.Step(now, s.devices()); err != nil {
			t.Fatalf("step at %s: %v", now, err)
		}
		now = now.Add(stepInterval)
	}
	return now
}

func requireConsistent(t testing.TB, v Verdict) {
	t.Helper()
	if !v.Consistent() {
		t.Fatalf("verdict has violations:\n%s", v)
	}
}

// kinds lists the kinds of a volume's violations.
func kinds(vv VolumeVerdict) map[ViolationKind]int {
	k := map[ViolationKind]int{}
	for _, v := range vv.Violations {
		k[v.Kind]++
	}
	return k
}

func volumeVerdict(t testing.TB, v Verdict, name string) VolumeVerdict {
	t.Helper()
	vv, ok := v.Volume(name)
	if !ok {
		t.Fatalf("no verdict for volume %s", name)
	}
	return vv
}

// recordingSite is a site whose devices record every write, so that any
// prefix of a run can be rebuilt.
func recordingSite(w Workload) site {
	s := newSite(w)
	for _, dev := range s {
		dev.Record(true)
	}
	return s
}

// replay builds a device holding the first n writes of a recorded log: the
// state a crash or a snapshot at that point leaves.
func replay(log []workloadtest.Write, n int, sizeBytes uint64) *workloadtest.Device {
	d := workloadtest.NewDevice(int64(sizeBytes))
	for _, w := range log[:n] {
		if _, err := d.WriteAt(w.Data, w.Offset); err != nil {
			panic(err)
		}
	}
	if err := d.Sync(); err != nil {
		panic(err)
	}
	return d
}

func specOf(t testing.TB, w Workload, volume string) VolumeSpec {
	t.Helper()
	for _, spec := range w.Volumes() {
		if spec.Name == volume {
			return spec
		}
	}
	t.Fatalf("no volume %s", volume)
	return VolumeSpec{}
}

// historyOf reaches into a model's history: tests use it to find a write of a
// given kind, never to compute what Verify should say.
func historyOf(t testing.TB, w Workload, volume string) *history {
	t.Helper()
	var b *base
	switch w := w.(type) {
	case *WordPress:
		b = &w.base
	case *Gitea:
		b = &w.base
	}
	for _, m := range b.models {
		if m.spec().Name == volume {
			return m.hist()
		}
	}
	t.Fatalf("no volume %s", volume)
	return nil
}
