package placement

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

const gib = uint64(1) << 30

// thin is an empty thin pool of poolBytes.
func thin(node string, poolBytes uint64) Candidate {
	return Candidate{Node: node, SizeBytes: poolBytes, FreeBytes: poolBytes, Provisioning: backend.Thin, Schedulable: true}
}

// thinHolding is a thin pool of poolBytes holding volumes of provisionedBytes
// in all, usedBytes of them written.
func thinHolding(node string, poolBytes, provisionedBytes, usedBytes uint64) Candidate {
	c := thin(node, poolBytes)
	c.ProvisionedBytes, c.FreeBytes = provisionedBytes, poolBytes-usedBytes
	return c
}

// thick is a thick pool with freeBytes left (a larger pool: the rules read
// only what is free).
func thick(node string, freeBytes uint64) Candidate {
	return Candidate{Node: node, SizeBytes: 2 * freeBytes, FreeBytes: freeBytes, Provisioning: backend.Thick, Schedulable: true}
}

func thickVolume(r Request) Request { r.Provisioning = backend.Thick; return r }

func withOvercommit(r Request, percent uint64) Request { r.ThinOvercommitPercent = percent; return r }

func holding(c Candidate) Candidate { c.HasReplica = true; return c }

func cordoned(c Candidate) Candidate { c.Schedulable = false; return c }

func request(placeCount int, sizeBytes uint64) Request {
	return Request{Volume: "pvc-1", SizeBytes: sizeBytes, PlaceCount: placeCount, ThinOvercommitPercent: 100, AddReplicas: true}
}

func TestPlace(t *testing.T) {
	tests := []struct {
		name       string
		request    Request
		candidates []Candidate
		keep, add  []string
		missing    int
		rejected   []Rejection
		err        error
	}{
		{
			name:       "new volume takes the most free space first",
			request:    request(2, 10*gib),
			candidates: []Candidate{thin("a", 50*gib), thin("b", 90*gib), thin("c", 70*gib)},
			keep:       []string{}, add: []string{"b", "c"},
		},
		{
			name:       "equal free space falls back to name",
			request:    request(2, 10*gib),
			candidates: []Candidate{thin("c", 50*gib), thin("a", 50*gib), thin("b", 50*gib)},
			keep:       []string{}, add: []string{"a", "b"},
		},
		{
			name:    "existing replicas are kept even unschedulable and full, never moved",
			request: request(3, 10*gib),
			candidates: []Candidate{holding(cordoned(thick("z", 0))), thin("a", 20*gib), thin("b", 80*gib),
				holding(thin("c", 1*gib))},
			keep: []string{"c", "z"}, add: []string{"b"},
		},
		{
			name:       "a thick pool needs the full size free: exactly enough fits",
			request:    request(1, 10*gib),
			candidates: []Candidate{thick("a", 10*gib-1), thick("b", 10*gib)},
			keep:       []string{}, add: []string{"b"},
			rejected: []Rejection{{Node: "a", Reason: ReasonThickPoolFull, FreeBytes: 10*gib - 1}},
		},
		{
			name:       "an empty thin pool takes a volume up to its size times the overcommit ratio",
			request:    withOvercommit(request(2, 30*gib), 300),
			candidates: []Candidate{thin("a", 10*gib), thin("b", 10*gib-1), thin("c", 11*gib)},
			keep:       []string{}, add: []string{"c", "a"},
			rejected: []Rejection{{Node: "b", Reason: ReasonThinPoolOvercommitted, FreeBytes: 10*gib - 1,
				PoolBytes: 10*gib - 1, OvercommitPercent: 300}},
		},
		{
			// The sanity run's pool: 2 GiB, 1 GiB volumes, nothing written.
			name:       "a thin pool reserves nothing: a second volume fits as long as the ratio allows",
			request:    withOvercommit(request(1, gib), 400),
			candidates: []Candidate{thinHolding("a", 2*gib, gib, 0)},
			keep:       []string{}, add: []string{"a"},
		},
		{
			name:       "the ratio reached exactly still fits",
			request:    withOvercommit(request(1, gib), 400),
			candidates: []Candidate{thinHolding("a", 2*gib, 7*gib, 0)},
			keep:       []string{}, add: []string{"a"},
		},
		{
			name:       "one byte past the ratio is refused, however little is written",
			request:    withOvercommit(request(1, gib+1), 400),
			candidates: []Candidate{thinHolding("a", 2*gib, 7*gib, 0), thinHolding("b", 2*gib, 0, 0)},
			keep:       []string{}, add: []string{"b"},
			rejected: []Rejection{{Node: "a", Reason: ReasonThinPoolOvercommitted, FreeBytes: 2 * gib,
				ProvisionedBytes: 7 * gib, PoolBytes: 2 * gib, OvercommitPercent: 400}},
		},
		{
			name:       "a thick volume on a thin pool reserves its size: it needs it free",
			request:    withOvercommit(thickVolume(request(1, gib)), 400),
			candidates: []Candidate{thinHolding("a", 2*gib, gib, gib+1), thinHolding("b", 2*gib, 7*gib, gib)},
			keep:       []string{}, add: []string{"b"},
			rejected: []Rejection{{Node: "a", Reason: ReasonThickPoolFull, FreeBytes: gib - 1}},
		},
		{
			name:       "a thick pool reserves a thin volume's size too, whatever the ratio",
			request:    withOvercommit(request(1, 10*gib), 400),
			candidates: []Candidate{thick("a", 10*gib-1)},
			err:        ErrNotEnoughNodes,
		},
		{
			name:       "without overcommit a thin pool is as strict as a thick one",
			request:    request(1, 10*gib),
			candidates: []Candidate{thin("a", 9*gib)},
			err:        ErrNotEnoughNodes,
		},
		{
			name:       "over-replicated volumes keep every replica",
			request:    request(2, gib),
			candidates: []Candidate{holding(thin("a", gib)), holding(thin("b", gib)), holding(thin("c", gib)), thin("d", 9*gib)},
			keep:       []string{"a", "b", "c"}, add: []string{},
		},
		{
			name:       "not enough eligible nodes is an error, not a partial plan",
			request:    request(3, 10*gib),
			candidates: []Candidate{holding(thin("a", gib)), cordoned(thin("b", 99*gib)), thick("c", gib), thin("d", 20*gib)},
			err:        ErrNotEnoughNodes,
		},
		{name: "placeCount zero", request: request(0, gib), err: ErrInvalidInput},
		{name: "placeCount beyond DRBD's 16 node-ids", request: request(17, gib), err: ErrInvalidInput},
		{name: "no size", request: request(1, 0), err: ErrInvalidInput},
		{
			name:    "overcommit below 100%",
			request: func() Request { r := request(1, gib); r.ThinOvercommitPercent = 99; return r }(),
			err:     ErrInvalidInput,
		},
		{name: "duplicate candidate", request: request(1, gib), candidates: []Candidate{thin("a", gib), thin("a", gib)}, err: ErrInvalidInput},
		{name: "unnamed candidate", request: request(1, gib), candidates: []Candidate{thin("", gib)}, err: ErrInvalidInput},
		{name: "unnamed volume", request: Request{SizeBytes: 1, PlaceCount: 1, ThinOvercommitPercent: 100}, err: ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := Place(tt.request, tt.candidates)
			if !errors.Is(err, tt.err) || (err != nil) != (tt.err != nil) {
				t.Fatalf("Place() error = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if !reflect.DeepEqual(plan.Keep, tt.keep) || !reflect.DeepEqual(plan.Add, tt.add) || plan.MissingReplicas != tt.missing {
				t.Errorf("Place() keep %q add %q missing %d, want keep %q add %q missing %d",
					plan.Keep, plan.Add, plan.MissingReplicas, tt.keep, tt.add, tt.missing)
			}
			if !reflect.DeepEqual(plan.Rejected, tt.rejected) {
				t.Errorf("Place() rejected %v, want %v", plan.Rejected, tt.rejected)
			}
		})
	}
}

func TestNotEnoughNodesNamesWhatWasMissing(t *testing.T) {
	candidates := []Candidate{holding(thin("a", gib)), cordoned(thin("b", 99*gib)), thick("c", gib), thin("d", 20*gib)}
	_, err := Place(request(4, 10*gib), candidates)
	var short *NotEnoughNodesError
	if !errors.As(err, &short) {
		t.Fatalf("Place() error = %v, want a *NotEnoughNodesError", err)
	}
	if short.Placed != 2 || short.PlaceCount != 4 || len(short.Rejected) != 2 {
		t.Errorf("error counts placed %d of %d with %d rejections, want 2 of 4 with 2", short.Placed, short.PlaceCount, len(short.Rejected))
	}
	for _, want := range []string{`"pvc-1"`, "needs 4 replicas, found room for 2", "b: unschedulable", "c: thick pool full (1073741824 bytes free)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// The migration's lesson: a controller that tops up every under-replicated
// volume as soon as it starts surprised operators. Place adds only when asked.
func TestTopUpOnlyWhenAsked(t *testing.T) {
	candidates := []Candidate{holding(thin("a", gib)), thin("b", 50*gib), thin("c", 40*gib)}
	reconcile := request(3, gib)
	reconcile.AddReplicas = false
	plan, err := Place(reconcile, candidates)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Add) != 0 || plan.MissingReplicas != 2 {
		t.Errorf("unasked Place() adds %q and reports %d missing, want nothing added and 2 missing", plan.Add, plan.MissingReplicas)
	}
	plan, err = Place(request(3, gib), candidates)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plan.Add, []string{"b", "c"}) || plan.MissingReplicas != 0 {
		t.Errorf("asked Place() adds %q, missing %d, want [b c] and 0", plan.Add, plan.MissingReplicas)
	}
}

func TestNoTopUpWhileAdopting(t *testing.T) {
	candidates := []Candidate{holding(thin("a", gib)), thin("b", 50*gib), thin("c", 40*gib)}
	adopting := request(3, gib)
	adopting.Adopting = true
	if _, err := Place(adopting, candidates); !errors.Is(err, ErrAdopting) {
		t.Errorf("asked top-up while adopting: error = %v, want ErrAdopting", err)
	}
	adopting.AddReplicas = false
	plan, err := Place(adopting, candidates)
	if err != nil || len(plan.Add) != 0 || plan.MissingReplicas != 2 {
		t.Errorf("reconcile while adopting: plan %+v, error %v; want no additions and 2 missing", plan, err)
	}
	// A fully replicated volume needs no addition, so adopting forbids nothing.
	full := request(1, gib)
	full.Adopting = true
	if plan, err := Place(full, candidates); err != nil || len(plan.Add) != 0 {
		t.Errorf("complete volume while adopting: plan %+v, error %v; want keep only", plan, err)
	}
}

func TestPlaceIgnoresCandidateOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var candidates []Candidate
		for i := range 8 {
			c := thin(string(rune('a'+i)), uint64(rng.IntN(4))*gib)
			if rng.IntN(3) == 0 {
				c.Provisioning = backend.Thick
			}
			c.Schedulable = rng.IntN(5) != 0
			c.HasReplica = rng.IntN(6) == 0
			candidates = append(candidates, c)
		}
		req := request(1+rng.IntN(4), gib)
		want, wantErr := Place(req, candidates)
		rng.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
		got, gotErr := Place(req, candidates)
		if !reflect.DeepEqual(got, want) || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("round %d: shuffled candidates changed the plan: %+v (%v) vs %+v (%v)", round, got, gotErr, want, wantErr)
		}
	}
}

func TestRoomDoesNotOverflow(t *testing.T) {
	tests := []struct {
		poolBytes, provisionedBytes, percent uint64
		room                                 uint64
	}{
		{math.MaxUint64, 0, 100, math.MaxUint64},
		{math.MaxUint64, 0, 10000, math.MaxUint64},
		{math.MaxUint64 / 2, 0, 199, 18354510353341003855}, // (2^63-1)*199/100, rounded down
		{math.MaxUint64, math.MaxUint64, 400, 0},
		{1, 0, math.MaxUint64, math.MaxUint64 / 100},
		{1, 2, 300, 1},
		{1, 3, 300, 0},
		{1, 4, 300, 0},
	}
	for _, tt := range tests {
		c := Candidate{Node: "a", SizeBytes: tt.poolBytes, ProvisionedBytes: tt.provisionedBytes, Provisioning: backend.Thin}
		if got := Room(c, backend.Thin, tt.percent); got != tt.room {
			t.Errorf("Room(pool %d, provisioned %d, %d%%) = %d, want %d", tt.poolBytes, tt.provisionedBytes, tt.percent, got, tt.room)
		}
	}
}

// TestOvercommitRefusalNamesTheRatio: what a CSI caller reads when the ratio
// refuses a volume says which bound it hit and how to raise it.
func TestOvercommitRefusalNamesTheRatio(t *testing.T) {
	_, err := Place(withOvercommit(request(1, gib), 400), []Candidate{thinHolding("a", 2*gib, 8*gib, 0)})
	want := "a: thin pool overcommitted (8589934592 of 8589934592 bytes provisioned: pool 2147483648 bytes x overcommit ratio 4 (thinOvercommitPercent 400))"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Place() error = %v, want it to say %q", err, want)
	}
	_, err = Place(withOvercommit(request(1, gib), 150), []Candidate{thinHolding("a", 2*gib, 3*gib, 0)})
	if err == nil || !strings.Contains(err.Error(), "overcommit ratio 1.5 (thinOvercommitPercent 150)") {
		t.Fatalf("Place() error = %v, want it to name ratio 1.5", err)
	}
}

func TestRejectReasonString(t *testing.T) {
	for reason, want := range map[RejectReason]string{ReasonUnschedulable: "unschedulable", ReasonThickPoolFull: "thick pool full",
		ReasonThinPoolOvercommitted: "thin pool overcommitted", 0: "RejectReason(0)"} {
		if got := reason.String(); got != want {
			t.Errorf("RejectReason(%d).String() = %q, want %q", reason, got, want)
		}
	}
}
