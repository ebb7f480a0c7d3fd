package btrfs

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
)

// The files in testdata are what the real tools printed on this machine
// (btrfs-progs 6.2, util-linux 2.38.1) for a pool with a volume "v 1" (a
// space in its name) holding snapshots s1 and "s:2", and a replica r
// received from v 1@s1.

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// wantRefused checks that parse refuses each of bad.
func wantRefused[T any](t *testing.T, parse func([]byte) (T, error), bad ...string) {
	t.Helper()
	for _, b := range bad {
		if got, err := parse([]byte(b)); err == nil {
			t.Errorf("%q parsed as %+v", b, got)
		}
	}
}

func TestParseSubvolumeList(t *testing.T) {
	got, err := parseSubvolumeList(readTestdata(t, "subvolume-list.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []subvolume{
		{id: 256, generation: 8, cgeneration: 7, uuid: "3d3aa96c-965e-5348-8c73-dd7657983ad1", path: "volumes/v 1/head"},
		{id: 257, generation: 7, cgeneration: 7, parentUUID: "3d3aa96c-965e-5348-8c73-dd7657983ad1",
			uuid: "afe65b23-8679-eb49-89b0-8bb724f5f4db", path: "volumes/v 1/snapshots/s1"},
		{id: 258, generation: 8, cgeneration: 8, parentUUID: "3d3aa96c-965e-5348-8c73-dd7657983ad1",
			uuid: "95d1e735-f30f-4548-86cd-093d6d992276", path: "volumes/v 1/snapshots/s:2"},
		{id: 259, generation: 11, cgeneration: 9, receivedUUID: "afe65b23-8679-eb49-89b0-8bb724f5f4db",
			uuid: "3d0b5fbe-8d36-4e4c-a6b1-c9fb6d26a5a7", path: "volumes/r/snapshots/s1"},
		{id: 260, generation: 11, cgeneration: 11, parentUUID: "3d0b5fbe-8d36-4e4c-a6b1-c9fb6d26a5a7",
			uuid: "4ab7c194-5b15-bc48-a389-522c2b0ee2c4", path: "volumes/r/head"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
	if got[3].guid() != got[1].guid() || got[1].guid() != got[1].uuid {
		t.Fatal("a received snapshot's GUID is not the UUID of the snapshot it was sent from")
	}
}

func TestParseSubvolumeListRefusesMalformedLines(t *testing.T) {
	good := "ID 256 gen 8 cgen 7 top level 5 parent_uuid - received_uuid - uuid 3d3aa96c-965e-5348-8c73-dd7657983ad1 path v"
	if _, err := parseSubvolumeList([]byte(good)); err != nil {
		t.Fatalf("a good line: %v", err)
	}
	wantRefused(t, parseSubvolumeList,
		strings.Replace(good, "gen 8", "gen x", 1),
		strings.Replace(good, " path v", "", 1),
		strings.Replace(good, "uuid 3d3aa96c", "uuid 3D3AA96C", 1),
		strings.Replace(good, "uuid 3d3aa96c-965e-5348-8c73-dd7657983ad1", "uuid -", 1),
		strings.Replace(good, "cgen 7 ", "", 1),
		strings.Replace(good, "path v", "path ", 1),
		"ID 256",
	)
}

func TestParseSubvolumeShow(t *testing.T) {
	for _, c := range []struct {
		file string
		want subvolume
	}{
		{"subvolume-show-head.txt", subvolume{id: 256, generation: 8, cgeneration: 7,
			uuid: "3d3aa96c-965e-5348-8c73-dd7657983ad1", path: "volumes/v 1/head"}},
		{"subvolume-show-received.txt", subvolume{id: 259, generation: 11, cgeneration: 9, readOnly: true,
			receivedUUID: "afe65b23-8679-eb49-89b0-8bb724f5f4db", uuid: "3d0b5fbe-8d36-4e4c-a6b1-c9fb6d26a5a7",
			path: "volumes/r/snapshots/s1"}},
	} {
		got, err := parseSubvolumeShow(readTestdata(t, c.file))
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.file, got, err, c.want)
		}
	}
	if _, err := parseSubvolumeShow([]byte("volumes/x\n\tName: x\n")); err == nil {
		t.Error("a show without UUID or generations parsed")
	}
}

func TestParseUsage(t *testing.T) {
	got, err := parseUsage(readTestdata(t, "usage.txt"))
	if want := (fsUsage{deviceBytes: 1073741824, freeBytes: 939982848}); err != nil || got != want {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	wantRefused(t, parseUsage, "", "Overall:\n    Device size: 10\n", "    Device size: x\n    Free (statfs, df): 1\n",
		"    Device size: 1\n    Device size: 1\n    Free (statfs, df): 1\n")
}

func TestParseDu(t *testing.T) {
	got, err := parseDu(readTestdata(t, "du.txt"))
	want := map[string]uint64{
		"/tmp/bx4/mnt/volumes/v 1/head/data":         0,
		"/tmp/bx4/mnt/volumes/v 1/snapshots/s1/data": 0,
		"/tmp/bx4/mnt/volumes/r/head/data":           0,
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v", got, err)
	}
	got, err = parseDu([]byte("     Total   Exclusive  Set shared  Filename\n   4329472        8192     4321280  /a b/data\n"))
	if err != nil || got["/a b/data"] != 8192 {
		t.Fatalf("got %v, %v; want 8192 exclusive bytes for /a b/data", got, err)
	}
	wantRefused(t, parseDu, "", "1 2 3 /x", "     Total   Exclusive  Set shared  Filename\n 1 2 /x\n",
		"     Total   Exclusive  Set shared  Filename\n 1 2 3\n")
}

func TestParseBlkid(t *testing.T) {
	for _, c := range []struct {
		out, want string
		ok        bool
	}{
		{string(readTestdata(t, "blkid-btrfs.txt")), "btrfs", true},
		{"DEVNAME=/dev/loop0\nPTUUID=x\nPTTYPE=gpt\n", "partition table gpt", true},
		{"DEVNAME=/dev/loop0\n", "", false},
		{"garbage\n", "", false},
	} {
		got, err := parseBlkid([]byte(c.out))
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("parseBlkid(%q) = %q, %v; want %q", c.out, got, err, c.want)
		}
	}
}

func TestParseFindmnt(t *testing.T) {
	got, err := parseFindmnt(readTestdata(t, "findmnt.json"))
	if want := (mounted{source: "/dev/loop0", fsType: "btrfs"}); err != nil || got != want {
		t.Fatalf("got %+v, %v", got, err)
	}
	stacked := `{"filesystems":[{"source":"/dev/loop0","fstype":"btrfs"},{"source":"tmpfs","fstype":"tmpfs"}]}`
	if got, err := parseFindmnt([]byte(stacked)); err != nil || got.fsType != "tmpfs" {
		t.Fatalf("stacked mounts: got %+v, %v; want the top one", got, err)
	}
	wantRefused(t, parseFindmnt, "", "{}", `{"filesystems":[{"source":""}]}`)
}

func TestParseMeta(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"provisioning":"thick","origin":"v@s","readOnly":true}`, true},
		{`{"provisioning":"thin"}`, true},
		{`{"provisioning":"fat"}`, false},
		{`{"provisioning":"thin","origin":"v"}`, false},
		{`not json`, false},
	} {
		if _, err := parseMeta([]byte(c.in)); (err == nil) != c.ok {
			t.Errorf("parseMeta(%s): %v", c.in, err)
		}
	}
}

func FuzzParseSubvolumeList(f *testing.F) {
	f.Add(readTestdata(f, "subvolume-list.txt"))
	f.Fuzz(func(t *testing.T, out []byte) {
		list, err := parseSubvolumeList(out)
		for _, s := range list {
			if err != nil || s.path == "" || !chain.IsUUID(s.uuid) {
				t.Fatalf("parsed %+v with error %v", s, err)
			}
		}
	})
}

func FuzzParseSubvolumeShow(f *testing.F) {
	f.Add(readTestdata(f, "subvolume-show-head.txt"))
	f.Add(readTestdata(f, "subvolume-show-received.txt"))
	f.Fuzz(func(t *testing.T, out []byte) {
		if s, err := parseSubvolumeShow(out); err == nil && (s.path == "" || !chain.IsUUID(s.uuid)) {
			t.Fatalf("parsed %+v", s)
		}
	})
}

func FuzzParseUsage(f *testing.F) {
	f.Add(readTestdata(f, "usage.txt"))
	f.Fuzz(func(t *testing.T, out []byte) {
		_, _ = parseUsage(out)
	})
}

func FuzzParseDu(f *testing.F) {
	f.Add(readTestdata(f, "du.txt"))
	f.Fuzz(func(t *testing.T, out []byte) {
		exclusive, _ := parseDu(out)
		for name := range exclusive {
			if name == "" || name[0] == ' ' || name[0] == '\t' {
				t.Fatalf("a file name %q", name)
			}
		}
	})
}

func FuzzParseBlkid(f *testing.F) {
	f.Add(readTestdata(f, "blkid-btrfs.txt"))
	f.Fuzz(func(t *testing.T, out []byte) {
		if kind, err := parseBlkid(out); err == nil && kind == "" {
			t.Fatalf("no type and no error for %q", out)
		}
	})
}

func FuzzParseFindmnt(f *testing.F) {
	f.Add(readTestdata(f, "findmnt.json"))
	f.Fuzz(func(t *testing.T, out []byte) {
		if m, err := parseFindmnt(out); err == nil && (m.source == "" || m.fsType == "") {
			t.Fatalf("parsed %+v", m)
		}
	})
}

func FuzzParseMeta(f *testing.F) {
	f.Add([]byte(`{"provisioning":"thick","origin":"v@s","readOnly":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := parseMeta(data); err == nil && m.provisioning().String() != m.Provisioning {
			t.Fatalf("parsed %+v", m)
		}
	})
}
