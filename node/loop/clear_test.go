package loop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClearTakesOnlyTheAttachmentItRecorded: a record of an attachment
// whose device was detached and given to another file clears nothing (a
// test cleanup's blind `losetup --detach` once emptied a pool's volume
// this way); the record of the live attachment clears it, its fence
// lifted, and while someone holds the device open only at that close.
func TestClearTakesOnlyTheAttachmentItRecorded(t *testing.T) {
	l, first, device := attachTemp(t, "first.img", false)
	ctx := context.Background()
	old, err := Attachment(device)
	if err != nil {
		t.Fatal(err)
	}
	if old.Name != device || old.BackFile != first {
		t.Fatalf("Attachment(%s) = %+v, want %s attached", device, old, first)
	}
	if err := l.Detach(ctx, device); err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(filepath.Dir(first), "second.img")
	if err := os.WriteFile(second, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.Cmder.Command(ctx, "losetup", device, second).Run(); err != nil {
		t.Skipf("%s was taken before this test could attach to it again: %v", device, err)
	}
	hold(t, device)
	now, err := Attachment(device)
	if err != nil {
		t.Fatal(err)
	}

	if err := Clear(old); err != nil {
		t.Fatalf("Clear of a gone attachment: %v", err)
	}
	if !now.StillAttached() {
		t.Fatalf("Clear of %s's earlier attachment detached %s", device, second)
	}

	f, err := os.OpenFile(device, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := SetReadOnly(f, true); err != nil {
		t.Fatal(err)
	}
	if err := Clear(now); err != nil {
		t.Fatal(err)
	}
	if !now.StillAttached() {
		t.Fatal("held open, the device went at the Clear, not at its last close")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, detachWait)
	defer cancel()
	if left := AwaitCleared(wait, 10*time.Millisecond, now); len(left) > 0 {
		t.Fatalf("%s still attached %s after its last close", device, detachWait)
	}
	if again, err := Attachment(device); err == nil && again.DiskSeq == now.DiskSeq {
		t.Fatalf("Attachment(%s) after the clear: %+v", device, again)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Attachment(%s) of a free device: %v, want os.ErrNotExist", device, err)
	}
	if ro, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(device), "ro")); err == nil && strings.TrimSpace(string(ro)) != "0" {
		if _, err := Attachment(device); errors.Is(err, os.ErrNotExist) {
			t.Errorf("the fence outlived the clear: %s is read-only", device)
		}
	}
}
