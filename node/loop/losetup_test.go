package loop

import (
	"context"
	"errors"
	"testing"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/exec/exectest"
)

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

func FuzzParseShow(f *testing.F) {
	f.Add([]byte("/dev/loop0\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		if name, err := ParseShow(out); err == nil && name[:5] != "/dev/" {
			t.Fatalf("ParseShow(%q) = %q", out, name)
		}
	})
}

// A device that is not attached any more (a name no host has, so that the
// real listing Detach reads never shows it) -- or that the kernel is tearing
// down, already unlisted -- is detached: losetup's ENXIO is success there,
// and any other refusal is not.
func TestDetachOfADeviceNoLongerAttached(t *testing.T) {
	enxio := exectest.Reply{ExitCode: 1, Stderr: "losetup: /dev/loop99992: detach failed: No such device or address\n"}
	f := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"losetup --detach /dev/loop99992": enxio,
		"losetup --detach /dev/loop99993": {ExitCode: 1, Stderr: "losetup: /dev/loop99993: detach failed: Permission denied\n"},
	}}
	l := Losetup{Cmder: f}
	if err := l.Detach(context.Background(), "/dev/loop99992"); err != nil {
		t.Fatalf("detaching a device no longer attached: %v", err)
	}
	if err := l.Detach(context.Background(), "/dev/loop99993"); err == nil {
		t.Fatal("a refused detach passed for success")
	}
}
