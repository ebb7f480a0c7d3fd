package discovery

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sitecontroller "github.com/baton-dr/baton/controllers/site"
)

// FuzzParseLsblk: whatever lsblk prints, the parser returns or refuses, and
// every candidate it lets through is a /dev path of a positive size.
func FuzzParseLsblk(f *testing.F) {
	for _, name := range []string{"lsblk-vm.json", "lsblk-server.json", "lsblk-old.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"blockdevices":[{"name":"sda","path":"/dev/sda","type":"disk","size":"1","ro":"1"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		devices, err := parseLsblk(data)
		if err != nil {
			return
		}
		for _, d := range devices {
			c, reason := candidate(d)
			if reason != "" {
				continue
			}
			if !strings.HasPrefix(c.Path, "/dev/") || c.SizeBytes <= 0 || c.Type != Disk || len(c.Model) > maxFieldBytes {
				t.Fatalf("candidate %+v of %+v", c, d)
			}
		}
	})
}

// FuzzParseList: the discovery list is read exactly as the operator reads
// it -- the same inputs accepted, the same entries -- and what it accepts
// survives a write and a read back.
func FuzzParseList(f *testing.F) {
	f.Add([]byte(`[{"name":"node-1","address":"10.0.0.11","devices":[{"path":"/dev/sdb","type":"Disk","sizeBytes":107374182400}]}]`))
	f.Add([]byte(`[{"name":"a"},{"name":"a"}]`))
	f.Add([]byte(`[{"name":"a","labels":{"x":"y"},"devices":[{"path":"rel","sizeBytes":-1}]}]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[] []`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ours, err := ParseList(data)
		theirs, theirErr := sitecontroller.ParseCandidates(data)
		if (err == nil) != (theirErr == nil) && len(data) <= maxListBytes {
			t.Fatalf("node: %v, operator: %v, on %q", err, theirErr, data)
		}
		if err != nil {
			return
		}
		ourJSON, _ := json.Marshal(ours)
		theirJSON, _ := json.Marshal(theirs)
		if string(ourJSON) != string(theirJSON) {
			t.Fatalf("node reads %s, operator reads %s", ourJSON, theirJSON)
		}
		again, err := ParseList(ourJSON)
		againJSON, _ := json.Marshal(again)
		if err != nil || string(againJSON) != string(ourJSON) {
			t.Fatalf("a list read back: %v, %s vs %s", err, againJSON, ourJSON)
		}
	})
}
