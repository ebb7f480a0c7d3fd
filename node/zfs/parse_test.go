package zfs

import (
	"strings"
	"testing"
)

func TestParseVolumes(t *testing.T) {
	out := "tank/a-first\t33554432\t0\t12288\t-\toff\n" +
		"tank/c\t33554432\t0\t8192\ttank/v@s\toff\n" +
		"tank/thick\t33554432\t34656256\t12288\t-\ton\n"
	rows, err := parseVolumes([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []volumeRow{
		{dataset: "tank/a-first", sizeBytes: 32 << 20, usedBytes: 12288},
		{dataset: "tank/c", sizeBytes: 32 << 20, usedBytes: 8192, origin: "tank/v@s"},
		{dataset: "tank/thick", sizeBytes: 32 << 20, refreservationBytes: 34656256, usedBytes: 12288, readOnly: true},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %d rows, want %d", len(rows), len(want))
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], want[i])
		}
	}
}

func TestParseRefusesBrokenOutput(t *testing.T) {
	for name, c := range map[string]struct {
		out   string
		parse func([]byte) error
	}{
		"short row":           {"tank/a\t1\t0\t0\t-\n", func(b []byte) error { _, err := parseVolumes(b); return err }},
		"name with a space":   {"tank/a\t1 0\t0\t0\t-\toff\n", func(b []byte) error { _, err := parseVolumes(b); return err }},
		"readonly maybe":      {"tank/a\t1\t0\t0\t-\tmaybe\n", func(b []byte) error { _, err := parseVolumes(b); return err }},
		"human size":          {"tank/a\t32M\t0\t0\t-\toff\n", func(b []byte) error { _, err := parseVolumes(b); return err }},
		"snapshot without @":  {"tank/a\t1\t2\t3\n", func(b []byte) error { _, err := parseSnapshots(b); return err }},
		"snapshot empty name": {"tank/a@\t1\t2\t3\n", func(b []byte) error { _, err := parseSnapshots(b); return err }},
		"snapshot guid zero":  {"tank/a@s\t0\t2\t3\n", func(b []byte) error { _, err := parseSnapshots(b); return err }},
		"negative used":       {"-1\t5\n", func(b []byte) error { _, err := parseSpace(b); return err }},
		"two space rows":      {"1\t5\n2\t6\n", func(b []byte) error { _, err := parseSpace(b); return err }},
		"no space row":        {"", func(b []byte) error { _, err := parseSpace(b); return err }},
	} {
		if err := c.parse([]byte(c.out)); err == nil {
			t.Errorf("%s: %q parsed without an error", name, c.out)
		}
	}
}

func TestParseSnapshotsKeepsZfsOrder(t *testing.T) {
	out := "tank/v@zz\t11111\t40\t0\ntank/v@aa\t22222\t41\t8192\ntank/v@mm\t33333\t45\t0\n"
	rows, err := parseSnapshots([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.name)
	}
	if strings.Join(names, ",") != "zz,aa,mm" || rows[1].guid != 22222 || rows[1].createTxg != 41 || rows[1].usedBytes != 8192 {
		t.Fatalf("parsed %+v", rows)
	}
}

func TestParseSpace(t *testing.T) {
	s, err := parseSpace([]byte("1048576\t268435456\n"))
	if err != nil || s.usedBytes != 1<<20 || s.availableBytes != 256<<20 {
		t.Fatalf("parseSpace = %+v, %v", s, err)
	}
}

// The parsers take whatever a zfs binary prints: they must never panic, and
// what they accept must be what the format allows.
func FuzzParseVolumes(f *testing.F) {
	f.Add([]byte("tank/a\t33554432\t0\t12288\t-\toff\ntank/c\t1\t2\t3\ttank/v@s\ton\n"))
	f.Add([]byte("\t\t\t\t\t\n"))
	f.Add([]byte("tank/a\t-\t-\t-\t-\t-\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		rows, err := parseVolumes(out)
		if err != nil {
			return
		}
		for _, r := range rows {
			if strings.ContainsAny(r.dataset, "\t\n") || strings.ContainsAny(r.origin, "\t\n") {
				t.Fatalf("a field holds a separator: %+v", r)
			}
		}
	})
}

func FuzzParseSnapshots(f *testing.F) {
	f.Add([]byte("tank/v@zz\t11111\t40\t0\ntank/v@aa\t22222\t41\t8192\n"))
	f.Add([]byte("@\t1\t1\t1\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		rows, err := parseSnapshots(out)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.dataset == "" || r.name == "" || r.guid == 0 || strings.ContainsAny(r.dataset+r.name, "\t\n") {
				t.Fatalf("accepted a snapshot row zfs cannot print: %+v", r)
			}
		}
	})
}

func FuzzParseSpace(f *testing.F) {
	f.Add([]byte("1048576\t268435456\n"))
	f.Add([]byte("-\t-\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		_, _ = parseSpace(out)
	})
}
