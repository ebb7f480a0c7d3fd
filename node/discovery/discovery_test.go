package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/node/exec/exectest"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCandidatesOfAServer: of a server's devices, only blank whole disks are
// candidates; everything else is left out with its reason.
func TestCandidatesOfAServer(t *testing.T) {
	devices, err := parseLsblk(readTestdata(t, "lsblk-server.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"/dev/loop0":    "type loop",
		"/dev/sda":      "has partitions or holders",
		"/dev/sdb":      "",
		"/dev/sdc":      "holds zfs_member",
		"/dev/sdd":      "read-only or removable",
		"/dev/sde":      "read-only or removable",
		"/dev/sdf":      "has partitions or holders",
		"/dev/sr0":      "type rom",
		"/dev/zd0":      "a device the node makes itself",
		"/dev/drbd1000": "a device the node makes itself",
		"/dev/nvme0n1":  "",
	}
	if len(devices) != len(want) {
		t.Fatalf("parsed %d devices, want %d", len(devices), len(want))
	}
	for _, d := range devices {
		c, reason := candidate(d)
		if reason != want[d.Path] {
			t.Errorf("%s: reason %q, want %q", d.Path, reason, want[d.Path])
		}
		if reason == "" && (c.Path != d.Path || c.Type != Disk || c.SizeBytes != int64(d.Size) || c.Model == "") {
			t.Errorf("%s: candidate %+v", d.Path, c)
		}
	}
}

// TestOlderLsblkPrintsStrings: util-linux before 2.33 prints sizes and flags
// as strings; they read the same.
func TestOlderLsblkPrintsStrings(t *testing.T) {
	devices, err := parseLsblk(readTestdata(t, "lsblk-old.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c, reason := candidate(devices[0]); reason != "" || c.SizeBytes != 107374182400 || c.Model != "VBOX HARDDISK" {
		t.Errorf("sda: %+v %q", c, reason)
	}
	if _, reason := candidate(devices[1]); reason != "read-only or removable" {
		t.Errorf("sdb: %q", reason)
	}
}

func TestParseLsblkRefuses(t *testing.T) {
	for _, bad := range []string{
		`{"blockdevices":[{"name":"sda","path":"sda","type":"disk"}]}`,
		`{"blockdevices":[{"name":"","path":"/dev/sda","type":"disk"}]}`,
		`{"blockdevices":[{"name":"x","path":"/dev/../etc/passwd","type":"disk"}]}`,
		`{"blockdevices":[{"name":"sda","path":"/dev/sda","type":"disk","size":-1}]}`,
		`{"blockdevices":[{"name":"sda","path":"/dev/sda","type":"disk","ro":"maybe"}]}`,
		`{"blockdevices":[]} {}`,
		`not json`,
	} {
		if _, err := parseLsblk([]byte(bad)); err == nil {
			t.Errorf("parseLsblk accepted %s", bad)
		}
	}
	if devices, err := parseLsblk(nil); err != nil || devices != nil {
		t.Errorf("no output: %v %v, want no device", devices, err)
	}
}

// TestDiscoverProbesEachCandidate: a disk lsblk shows blank but blkid finds a
// signature on is left out; the pool's loop file is reported as it is.
func TestDiscoverProbesEachCandidate(t *testing.T) {
	image := filepath.Join(t.TempDir(), "pool.img")
	if err := os.WriteFile(image, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"lsblk --json --bytes --output NAME,PATH,TYPE,SIZE,MODEL,RO,RM,FSTYPE,MOUNTPOINT": {Stdout: string(readTestdata(t, "lsblk-server.json"))},
		"blkid -p /dev/sdb":     {ExitCode: 2},
		"blkid -p /dev/nvme0n1": {Stdout: "/dev/nvme0n1: PTUUID=\"x\" PTTYPE=\"gpt\"\n"},
	}}
	node, skipped, err := Discover(context.Background(), Options{Node: "node-1", Address: "10.0.0.11",
		LoopFiles: []string{image, "/nonexistent/pool.img"}, Cmder: f})
	if err != nil {
		t.Fatal(err)
	}
	want := []Device{
		{Path: "/dev/sdb", Type: Disk, SizeBytes: 214748364800, Model: "QEMU HARDDISK"},
		{Path: image, Type: LoopFile, SizeBytes: 4096},
	}
	if image < "/dev/sdb" {
		want[0], want[1] = want[1], want[0]
	}
	if !reflect.DeepEqual(node.Devices, want) || node.Name != "node-1" || node.Address != "10.0.0.11" {
		t.Fatalf("discovered %+v, want devices %+v", node, want)
	}
	if len(skipped) != 10 {
		t.Errorf("skipped %d devices, want 10: %+v", len(skipped), skipped)
	}
	f = &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"lsblk": {ExitCode: 1, Stderr: "lsblk: failed to access sysfs directory"}}}
	if _, _, err := Discover(context.Background(), Options{Node: "node-1", Cmder: f}); err == nil {
		t.Fatal("a failing lsblk discovered something")
	}
}

// TestTheOperatorReadsWhatNodesPublish: the list the nodes publish into is
// what the operator's --discovery-file parser reads, entry for entry.
func TestTheOperatorReadsWhatNodesPublish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "discovery.json")
	nodes := []Node{
		{Name: "node-2", Address: "10.0.0.12", Devices: []Device{{Path: "/var/lib/baton/pool/pool.img", Type: LoopFile, SizeBytes: 1 << 30}}},
		{Name: "node-1", Address: "10.0.0.11", Devices: []Device{{Path: "/dev/sdb", Type: Disk, SizeBytes: 100 << 30, Model: "QEMU HARDDISK"}}},
	}
	for _, n := range nodes {
		if err := Publish(path, n); err != nil {
			t.Fatal(err)
		}
	}
	nodes[1].Address = "10.0.0.21" // node-1 restarts elsewhere: its entry is replaced
	if err := Publish(path, nodes[1]); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	read, err := sitecontroller.ParseCandidates(data)
	if err != nil {
		t.Fatalf("the operator refuses the published list: %v\n%s", err, data)
	}
	want := []sitecontroller.NodeCandidates{
		{Name: "node-1", Address: "10.0.0.21", Devices: []v1.CandidateDevice{{Path: "/dev/sdb", Type: v1.DeviceTypeDisk, SizeBytes: 100 << 30, Model: "QEMU HARDDISK"}}},
		{Name: "node-2", Address: "10.0.0.12", Devices: []v1.CandidateDevice{{Path: "/var/lib/baton/pool/pool.img", Type: v1.DeviceTypeLoopFile, SizeBytes: 1 << 30}}},
	}
	if !reflect.DeepEqual(read, want) {
		t.Fatalf("the operator reads %+v, want %+v", read, want)
	}
}

// TestPublishersKeepEachOthersEntries: nodes publishing at once into one file
// lose no entry.
func TestPublishersKeepEachOthersEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "discovery.json")
	const nodes = 16
	var wg sync.WaitGroup
	errs := make(chan error, nodes)
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- Publish(path, Node{Name: fmt.Sprintf("node-%02d", i)})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	list, err := ParseList(data)
	if err != nil || len(list) != nodes {
		t.Fatalf("%d entries (%v), want %d", len(list), err, nodes)
	}
}

// TestDeviceTypesAreTheAPIs: the values this package writes are the CRD's.
func TestDeviceTypesAreTheAPIs(t *testing.T) {
	if string(Disk) != string(v1.DeviceTypeDisk) || string(LoopFile) != string(v1.DeviceTypeLoopFile) {
		t.Fatalf("device types %s %s differ from the API's %s %s", Disk, LoopFile, v1.DeviceTypeDisk, v1.DeviceTypeLoopFile)
	}
	a, _ := json.Marshal(Device{Path: "/p", Type: Disk, SizeBytes: 1, Model: "m"})
	b, _ := json.Marshal(v1.CandidateDevice{Path: "/p", Type: v1.DeviceTypeDisk, SizeBytes: 1, Model: "m"})
	if string(a) != string(b) {
		t.Fatalf("a device encodes as %s, the API's as %s", a, b)
	}
}
