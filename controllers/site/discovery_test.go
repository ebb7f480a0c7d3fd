package site

import (
	"errors"
	"fmt"
	"testing"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

func TestDiscoveryFiltersAndGroups(t *testing.T) {
	disk := func(path string, gib int64) v1.CandidateDevice {
		return v1.CandidateDevice{Path: path, Type: v1.DeviceTypeDisk, SizeBytes: gib << 30}
	}
	candidates := []NodeCandidates{
		{Name: "node-2", Labels: map[string]string{"role": "storage"}, Address: "10.0.0.12",
			Devices: []v1.CandidateDevice{disk("/dev/sdc", 100), disk("/dev/sdb", 100), disk("/dev/nvme0n1", 500)}},
		{Name: "node-1", Labels: map[string]string{"role": "storage"}, Address: "10.0.0.11",
			Devices: []v1.CandidateDevice{disk("/dev/sdb", 100), disk("/dev/sdc", 100)}},
		{Name: "node-3", Labels: map[string]string{"role": "storage"}, Address: "10.0.0.13",
			Devices: []v1.CandidateDevice{disk("/dev/sdb", 1)}},
		{Name: "node-4", Labels: map[string]string{"role": "compute"}, Address: "10.0.0.14",
			Devices: []v1.CandidateDevice{disk("/dev/sdb", 100)}},
		{Name: "node-5", Labels: map[string]string{"role": "storage"},
			Devices: []v1.CandidateDevice{{Path: "/var/lib/baton/pool0.img", Type: v1.DeviceTypeLoopFile, SizeBytes: 1 << 40}}},
	}
	cases := []struct {
		name string
		spec v1.OperatorOpsSpec
		want string
	}{
		{"every node, every real device", v1.OperatorOpsSpec{},
			"node-1[/dev/sdb /dev/sdc] node-2[/dev/nvme0n1 /dev/sdb /dev/sdc] node-3[/dev/sdb] node-4[/dev/sdb] | set-1{node-1}[/dev/sdb /dev/sdc] set-2{node-2}[/dev/nvme0n1 /dev/sdb /dev/sdc] set-3{node-3 node-4}[/dev/sdb]"},
		{"selector, paths and size", v1.OperatorOpsSpec{NodeSelector: map[string]string{"role": "storage"},
			Devices: v1.DeviceFilter{Paths: []string{"/dev/sd*"}, MinSizeBytes: 10 << 30}},
			"node-1[/dev/sdb /dev/sdc] node-2[/dev/sdb /dev/sdc] | set-1{node-1 node-2}[/dev/sdb /dev/sdc]"},
		{"loop files where nothing fits", v1.OperatorOpsSpec{NodeSelector: map[string]string{"role": "storage"},
			Devices: v1.DeviceFilter{MinSizeBytes: 10 << 30, Paths: []string{"/dev/nvme*"}, AllowLoopFiles: true}},
			"node-1[/var/lib/baton/pool0.img] node-2[/dev/nvme0n1] node-3[/var/lib/baton/pool0.img] node-5[/var/lib/baton/pool0.img] | set-1{node-1 node-3 node-5}[/var/lib/baton/pool0.img] set-2{node-2}[/dev/nvme0n1]"},
		{"named nodes only", v1.OperatorOpsSpec{NodeNames: []string{"node-4", "node-9"}},
			"node-4[/dev/sdb] | set-1{node-4}[/dev/sdb]"},
		{"nothing matches", v1.OperatorOpsSpec{NodeSelector: map[string]string{"role": "gpu"}}, " | "},
	}
	for _, c := range cases {
		nodes := discover(c.spec, candidates)
		got := ""
		for _, n := range nodes {
			got += fmt.Sprintf("%s%v ", n.Name, devicePaths(n))
		}
		got += "|"
		for _, s := range nodeSets(nodes) {
			got += fmt.Sprintf(" %s{%s}%v", s.Name, joinSpace(s.Nodes), s.Devices)
		}
		if want := c.want; got != want && !(want == " | " && got == "|") {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
}

func devicePaths(n v1.DiscoveredNode) []string {
	var out []string
	for _, d := range n.Devices {
		out = append(out, d.Path)
	}
	return out
}

func joinSpace(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}

func TestParseCandidates(t *testing.T) {
	good := `[{"name":"node-1","labels":{"storage":"yes"},"address":"10.0.0.11","devices":[{"path":"/dev/sdb","type":"Disk","sizeBytes":1073741824}]},{"name":"node-2"}]`
	nodes, err := ParseCandidates([]byte(good))
	if err != nil || len(nodes) != 2 || nodes[0].Devices[0].SizeBytes != 1<<30 || nodes[0].Labels["storage"] != "yes" {
		t.Fatalf("%+v, %v", nodes, err)
	}
	for _, bad := range []string{
		``, `{}`, `[{"name":""}]`, `[{"name":"a"},{"name":"a"}]`, `[{"name":"a","devices":[{"path":"sdb"}]}]`,
		`[{"name":"a","devices":[{"path":"/dev/sdb","sizeBytes":-1}]}]`, `[{"name":"a","disks":[]}]`, `[] []`,
	} {
		if _, err := ParseCandidates([]byte(bad)); !errors.Is(err, ErrMalformedCandidates) {
			t.Errorf("%q: %v, want ErrMalformedCandidates", bad, err)
		}
	}
}

func FuzzParseCandidates(f *testing.F) {
	f.Add([]byte(`[{"name":"node-1","address":"10.0.0.11","devices":[{"path":"/dev/sdb","sizeBytes":1}]}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"name":"a"},{"name":"a"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, err := ParseCandidates(data)
		if err != nil {
			if !errors.Is(err, ErrMalformedCandidates) {
				t.Fatalf("an error of another kind: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, n := range nodes {
			if n.Name == "" || seen[n.Name] {
				t.Fatalf("accepted node name %q twice or empty", n.Name)
			}
			seen[n.Name] = true
		}
		// What parses discovers without panicking, whatever the filters.
		discover(v1.OperatorOpsSpec{Devices: v1.DeviceFilter{AllowLoopFiles: true, Paths: []string{"/dev/*"}}}, nodes)
	})
}
