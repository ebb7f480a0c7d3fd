package placement

import (
	"strings"
	"testing"
)

func TestCheckInvariants(t *testing.T) {
	config := Config{Default: DefaultRanges(), Nodes: map[string]Ranges{"small": narrow(7000, 7001, 1000, 1001)}}
	base := []Allocation{alloc("p", 7000, 1000, "a", "b"), alloc("q", 7001, 1001, "b", "small")}
	tests := []struct {
		name          string
		before, after []Allocation
		want          string // "" = no violation
	}{
		{name: "valid", before: base, after: base},
		{name: "a shared port on disjoint nodes is allowed", after: []Allocation{alloc("p", 7000, 1000, "a"), alloc("q", 7000, 1001, "b")}},
		{name: "replicas and resources may come and go", before: base, after: []Allocation{alloc("p", 7000, 1000, "a"), alloc("r", 7002, 1002, "c")}},
		{name: "port twice on a node", after: []Allocation{alloc("p", 7000, 1000, "a"), alloc("q", 7000, 1001, "a")}, want: `port 7000 used twice on node "a"`},
		{name: "minor twice on a node", after: []Allocation{alloc("p", 7000, 1000, "a"), alloc("q", 7001, 1000, "a")}, want: `minor 1000 used twice on node "a"`},
		{name: "node-id twice", after: []Allocation{{Resource: "p", Port: 7000, Minor: 1000, Replicas: []Replica{{"a", 3}, {"b", 3}}}}, want: "node-id 3"},
		{name: "node-id 16", after: []Allocation{{Resource: "p", Port: 7000, Minor: 1000, Replicas: []Replica{{"a", 16}}}}, want: "out of 0..15"},
		{name: "outside the node's range", after: []Allocation{alloc("p", 7002, 1000, "small")}, want: `outside ports 7000-7001, minors 1000-1001 of node "small"`},
		{name: "port moved", before: base, after: []Allocation{alloc("p", 7005, 1000, "a", "b"), base[1]}, want: `"p" moved from port 7000 minor 1000 to port 7005 minor 1000`},
		{name: "minor moved", before: base, after: []Allocation{alloc("p", 7000, 1005, "a", "b"), base[1]}, want: "to port 7000 minor 1005"},
		{name: "node-id moved", before: base,
			after: []Allocation{{Resource: "p", Port: 7000, Minor: 1000, Replicas: []Replica{{"a", 0}, {"b", 2}}}, base[1]},
			want:  `node-id of "b" moved from 1 to 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkInvariants(config, tt.before, tt.after)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("checkInvariants() = %v, want no violation", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("checkInvariants() = %v, want a violation saying %q", err, tt.want)
			}
		})
	}
}
