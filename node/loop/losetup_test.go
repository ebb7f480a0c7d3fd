package loop

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/exec/exectest"
)

// realList is what `losetup --list --json --output
// NAME,BACK-FILE,BACK-INO,BACK-MAJ:MIN,DIO,RO` printed on this machine
// (util-linux 2.38.1), padding of the number pairs included.
const realList = `{
   "loopdevices": [
      {
         "name": "/dev/loop1",
         "back-file": "/tmp/bx/p2.img",
         "back-ino": 9977964,
         "back-maj:min": "     254:0  ",
         "dio": false,
         "ro": false
      },{
         "name": "/dev/loop2",
         "back-file": "/tmp/bx/mnt/volumes/v w/head/data",
         "back-ino": 257,
         "back-maj:min": "       0:773",
         "dio": true,
         "ro": true
      }
   ]
}
`

func TestParseList(t *testing.T) {
	for _, c := range []struct {
		name    string
		out     string
		want    []Device
		wantErr bool
	}{
		{"real", realList, []Device{
			// stat gives 254:0 as st_dev 65024, and 0:773 as 3145733 (glibc's
			// encoding puts minor bits above 8 at bit 20).
			{Name: "/dev/loop1", BackFile: "/tmp/bx/p2.img", BackDevice: 65024, BackInode: 9977964},
			{Name: "/dev/loop2", BackFile: "/tmp/bx/mnt/volumes/v w/head/data", BackDevice: 3145733, BackInode: 257,
				DirectIO: true, ReadOnly: true},
		}, false},
		{"an older losetup without the identity columns", `{"loopdevices":[{"name":"/dev/loop0","back-file":"/x"}]}`,
			[]Device{{Name: "/dev/loop0", BackFile: "/x"}}, false},
		{"a device number that is none", `{"loopdevices":[{"name":"/dev/loop0","back-file":"/x","back-maj:min":"254"}]}`, nil, true},
		{"no devices: losetup prints nothing", "", nil, false},
		{"not json", "/dev/loop0: []: (/x)", nil, true},
		{"a name that is no device", `{"loopdevices":[{"name":"loop0","back-file":"/x"}]}`, nil, true},
	} {
		got, err := ParseList([]byte(c.out))
		if (err != nil) != c.wantErr || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, %v; want %+v (error %v)", c.name, got, err, c.want, c.wantErr)
		}
	}
}

func TestParseShow(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"/dev/loop7\n", "/dev/loop7"}, {"", ""}, {"loop7", ""}, {"/dev/loop7\n/dev/loop8\n", ""},
	} {
		out, want := c.out, c.want
		got, err := ParseShow([]byte(out))
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ParseShow(%q) = %q, %v; want %q", out, got, err, want)
		}
	}
}

func TestAttachAsksForDirectIOAndReturnsTheDevice(t *testing.T) {
	f := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"losetup --find --show --direct-io=on /p/data": {Stdout: "/dev/loop4\n"},
		"blockdev --setrw /dev/loop4":                  {},
		"losetup --find --show /p/missing": {ExitCode: 1,
			Stderr: "losetup: /p/missing: failed to set up loop device: No such file or directory\n"},
	}}
	l := Losetup{Cmder: f}
	device, err := l.Attach(context.Background(), "/p/data", true)
	if err != nil || device != "/dev/loop4" {
		t.Fatalf("Attach: %q, %v", device, err)
	}
	_, err = l.Attach(context.Background(), "/p/missing", false)
	var run *exec.RunError
	if !errors.As(err, &run) || run.Words() != "losetup: /p/missing: failed to set up loop device: No such file or directory" {
		t.Fatalf("a failed attach: %v, want losetup's words in a RunError", err)
	}
}

func FuzzParseList(f *testing.F) {
	f.Add([]byte(realList))
	f.Add([]byte(`{"loopdevices":[]}`))
	f.Fuzz(func(t *testing.T, out []byte) {
		devices, err := ParseList(out)
		for _, d := range devices {
			if err != nil || len(d.Name) < len("/dev/") {
				t.Fatalf("ParseList returned %+v with error %v", devices, err)
			}
		}
	})
}

func FuzzParseShow(f *testing.F) {
	f.Add([]byte("/dev/loop0\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		if name, err := ParseShow(out); err == nil && name[:5] != "/dev/" {
			t.Fatalf("ParseShow(%q) = %q", out, name)
		}
	})
}

// A device that is not attached any more -- or that the kernel is tearing
// down, already unlisted -- is detached: losetup's ENXIO is success there,
// and any other refusal is not.
func TestDetachOfADeviceNoLongerAttached(t *testing.T) {
	enxio := exectest.Reply{ExitCode: 1, Stderr: "losetup: /dev/loop2: detach failed: No such device or address\n"}
	f := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"losetup --list --json --output NAME,BACK-FILE,BACK-INO,BACK-MAJ:MIN,DIO,RO": {},
		"losetup --detach /dev/loop2": enxio,
		"losetup --detach /dev/loop3": {ExitCode: 1, Stderr: "losetup: /dev/loop3: detach failed: Permission denied\n"},
	}}
	l := Losetup{Cmder: f}
	if err := l.Detach(context.Background(), "/dev/loop2"); err != nil {
		t.Fatalf("detaching a device no longer attached: %v", err)
	}
	if err := l.Detach(context.Background(), "/dev/loop3"); err == nil {
		t.Fatal("a refused detach passed for success")
	}
}
