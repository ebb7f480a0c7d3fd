package chain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
)

// Each record a cluster could answer with that breaks a member rule is
// refused, and the refusal names the rule: an operator repairing the record
// reads which one.
func TestValidateRefusesEachBrokenRuleByName(t *testing.T) {
	c := moves(2) // A:v1 → B:v2 → A:v3
	tests := []struct {
		name   string
		mutate func(m *chain.Member)
		want   string
	}{
		// A clone that lost its root passes every other rule, and would sit
		// in no chain a resolution asks about.
		{"a clone without a root", func(m *chain.Member) { m.Root = chain.Ref{} }, "must both be set"},
		{"a clone without a ref", func(m *chain.Member) { m.Ref = chain.Ref{} }, "must both be set"},
		// Naming itself as successor is a loop of one member, not a hop to
		// the same site, though it is that too.
		{"a member that follows itself", func(m *chain.Member) { m.Successor = m.Ref }, "cannot follow itself"},
		{"a member cloned from itself", func(m *chain.Member) { m.Predecessor = m.Ref }, "cannot follow itself"},
	}
	for _, tt := range tests {
		m := c[1]
		tt.mutate(&m)
		err := m.Validate()
		if !errors.Is(err, chain.ErrInvalidMember) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate = %v, want ErrInvalidMember naming %q", tt.name, err, tt.want)
		}
	}
	for _, m := range c {
		if err := m.Validate(); err != nil {
			t.Errorf("a healthy chain's member %s: %v", m.Ref, err)
		}
	}
}
