package chain_test

import (
	"cmp"
	"errors"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
)

func TestParseRef(t *testing.T) {
	const c, v = "aaaaaaaa-0000-4000-8000-000000000001", "0f0e0d0c-0b0a-4000-8000-000000000002"
	tests := []struct {
		in   string
		ok   bool
		want string // a word the error must contain
	}{
		{c + ":" + v, true, ""},
		{"", false, "want <cluster-uuid>:<volume-uuid>"},
		{c, false, "want <cluster-uuid>:<volume-uuid>"},
		{c + ":", false, "volume part"},
		{":" + v, false, "cluster part"},
		{strings.ToUpper(c) + ":" + v, false, "cluster part"},
		{c + ":" + v + ":x", false, "volume part"},
		{c + ":" + strings.ReplaceAll(v, "-", ""), false, "volume part"},
		{c + " :" + v, false, "cluster part"},
		{c + ":{" + v[1:], false, "volume part"},
		{strings.Repeat("x", 10000), false, "…"},
	}
	for _, tt := range tests {
		got, err := chain.ParseRef(tt.in)
		if tt.ok {
			if err != nil || got.String() != tt.in {
				t.Errorf("ParseRef(%q) = %v, %v; want it back", tt.in, got, err)
			}
			continue
		}
		if !errors.Is(err, chain.ErrMalformedRef) || !strings.Contains(err.Error(), tt.want) || !got.IsZero() {
			t.Errorf("ParseRef(%q) = %v, %v; want ErrMalformedRef mentioning %q", clipped(tt.in), got, err, tt.want)
		}
		if len(err.Error()) > 200 {
			t.Errorf("ParseRef error of %d bytes: hostile input must not be echoed whole", len(err.Error()))
		}
	}
}

func clipped(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func FuzzParseRef(f *testing.F) {
	f.Add("aaaaaaaa-0000-4000-8000-000000000001:0f0e0d0c-0b0a-4000-8000-000000000002")
	f.Add("x:y")
	f.Add(":")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := chain.ParseRef(s)
		if err != nil {
			if !errors.Is(err, chain.ErrMalformedRef) || !r.IsZero() {
				t.Fatalf("ParseRef(%q) = %v, %v: a refusal must be ErrMalformedRef and zero", s, r, err)
			}
			return
		}
		if r.String() != s {
			t.Fatalf("ParseRef(%q).String() = %q: one volume, one spelling", s, r.String())
		}
	})
}

func TestMemberValidate(t *testing.T) {
	root := chain.Ref{Cluster: siteA, Volume: volume(1)}
	onB := chain.Ref{Cluster: siteB, Volume: volume(2)}
	onA := chain.Ref{Cluster: siteA, Volume: volume(3)}
	tests := []struct {
		name string
		m    chain.Member
		ok   bool
	}{
		{"root", chain.Member{Ref: root, Root: root, State: chain.Active}, true},
		{"clone", chain.Member{Ref: onB, Root: root, Generation: 1, Predecessor: root, State: chain.Active}, true},
		{"clone that knows its successor", chain.Member{Ref: onB, Root: root, Generation: 1, Predecessor: root, Successor: onA, State: chain.Demoted}, true},
		{"no state", chain.Member{Ref: root, Root: root}, false},
		{"no root", chain.Member{Ref: root, State: chain.Active}, false},
		{"root with predecessor", chain.Member{Ref: root, Root: root, Predecessor: onB, State: chain.Active}, false},
		{"clone without predecessor", chain.Member{Ref: onB, Root: root, Generation: 1, State: chain.Active}, false},
		{"clone claiming generation 0", chain.Member{Ref: onB, Root: root, Predecessor: root, State: chain.Active}, false},
		{"hop within one site", chain.Member{Ref: onA, Root: root, Generation: 1, Predecessor: root, State: chain.Active}, false},
		{"successor on the same site", chain.Member{Ref: onB, Root: root, Generation: 1, Predecessor: root, Successor: chain.Ref{Cluster: siteB, Volume: volume(4)}, State: chain.Active}, false},
		{"follows itself", chain.Member{Ref: onB, Root: root, Generation: 1, Predecessor: root, Successor: onB, State: chain.Active}, false},
	}
	for _, tt := range tests {
		err := tt.m.Validate()
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, chain.ErrInvalidMember)) {
			t.Errorf("%s: Validate() = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestStateStrings(t *testing.T) {
	for s, want := range map[chain.State]string{chain.Unknown: "Unknown", chain.Active: "Active",
		chain.Demoted: "Demoted", chain.Tombstone: "Tombstone", chain.State(9): "State(9)"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", s, s.String(), want)
		}
	}
}

// Every lowercase hex digit is part of a canonical UUID: a handle refused
// for a '9' or an 'f' is a volume no node can ever attach.
func TestParseRefAcceptsEveryHexDigit(t *testing.T) {
	for _, handle := range []string{
		"01234567-89ab-4cde-8f00-000000000000:99999999-9999-4999-8999-999999999999",
		"ffffffff-ffff-4fff-afff-ffffffffffff:aaaaaaaa-0000-4000-8000-000000000009",
	} {
		if r, err := chain.ParseRef(handle); err != nil || r.String() != handle {
			t.Errorf("ParseRef(%q) = %v, %v; want it back", handle, r, err)
		}
	}
}

// A refused handle is quoted whole up to 80 bytes, so an operator sees what
// was asked; beyond that it is cut, so hostile input is not echoed.
func TestParseRefQuotesTheHandleUpTo80Bytes(t *testing.T) {
	whole := strings.Repeat("x", 80)
	if _, err := chain.ParseRef(whole); err == nil || !strings.Contains(err.Error(), `"`+whole+`"`) {
		t.Errorf("ParseRef of 80 bytes: %v, want the handle quoted whole", err)
	}
	if _, err := chain.ParseRef(whole + "y"); err == nil || !strings.Contains(err.Error(), `"`+whole+`…"`) {
		t.Errorf("ParseRef of 81 bytes: %v, want it cut after 80 with …", err)
	}
}

// CompareRefs orders by cluster, then by volume within a cluster: stores
// list their records in this order, and a listing whose order depended on
// map iteration would make a seed's replay differ from its run.
func TestCompareRefsOrdersByClusterThenVolume(t *testing.T) {
	ordered := []chain.Ref{
		{Cluster: siteA, Volume: volume(1)},
		{Cluster: siteA, Volume: volume(2)},
		{Cluster: siteB, Volume: volume(0)},
		{Cluster: siteB, Volume: volume(3)},
	}
	for i, a := range ordered {
		for j, b := range ordered {
			want := cmp.Compare(i, j)
			if got := chain.CompareRefs(a, b); got != want {
				t.Errorf("CompareRefs(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
}
