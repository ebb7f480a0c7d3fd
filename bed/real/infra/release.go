package infra

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/node/loop"
)

// Limits of the release, in wall time. A device nothing holds goes at
// once; one still held after releaseLimit is named with what holds it.
const (
	releaseLimit  = 2 * time.Minute
	releasePoll   = 250 * time.Millisecond
	releaseReport = 15 * time.Second
)

// ReleaseDevices detaches every loop device the bed's sites left
// attached (kubelet's maps, the volumes, the pools: see bedDevices), waits
// until the kernel let every one go, and looks again: it returns an error
// naming every device it could not release and what holds it. scratch is
// a directory for the pools' read-only mounts while it looks. Nothing
// attached: nil.
//
// Each detach asks the kernel to clear the attachment found, and no later
// one of its name (loop.Clear); one still held open -- a volume's device by
// kubelet's map over it, a pool's by its volumes' files -- is only marked
// to clear at its last close, so all of them are asked first, outermost
// first, and then waited for together: each goes when what held it went.
func ReleaseDevices(ctx context.Context, scratch string, sites []string, log func(string, ...any)) error {
	ctx, cancel := context.WithTimeout(ctx, releaseLimit)
	defer cancel()
	found, _, err := bedDevices(ctx, scratch, sites)
	if err != nil {
		// What was found is released all the same; the look after names
		// whatever stays.
		log("%v: releasing the devices found", err)
	}
	var errs []error
	var asked []loop.Device
	for _, d := range found.All() {
		if err := loop.Clear(d); err != nil {
			errs = append(errs, err)
			continue
		}
		asked = append(asked, d)
	}
	errs = append(errs, awaitGone(ctx, asked, log))
	// Look again, past the deadline if the wait used it up: what is left
	// must be named.
	found, unanswered, err := bedDevices(context.WithoutCancel(ctx), scratch, sites)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if len(unanswered) > 0 {
		errs = append(errs, fmt.Errorf("could not ask %s what backs them (their open blocks): they may be the bed's",
			strings.Join(unanswered, ", ")))
	}
	if left := found.All(); len(left) > 0 {
		var names []string
		for _, d := range left {
			names = append(names, d.String()+heldBy(d))
		}
		errs = append(errs, fmt.Errorf("still attached after teardown: %s", strings.Join(names, ", ")))
	}
	return errors.Join(errs...)
}

// awaitGone waits until none of devices is attached to what it was, from
// sysfs alone (nothing opened, no process started), logging each one as it
// goes and, every releaseReport, which are still there and why.
func awaitGone(ctx context.Context, devices []loop.Device, log func(string, ...any)) error {
	left := slices.Clone(devices)
	start, lastReport := time.Now(), time.Now()
	for {
		left = slices.DeleteFunc(left, func(d loop.Device) bool {
			if d.StillAttached() {
				return false
			}
			log("detached %s", d)
			return true
		})
		if len(left) == 0 {
			return nil
		}
		if time.Since(lastReport) >= releaseReport {
			lastReport = time.Now()
			log("waiting for the kernel to let go of %s", describe(left))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not released within %s: %s", time.Since(start).Round(time.Second), describe(left))
		case <-time.After(releasePoll):
		}
	}
}

func describe(devices []loop.Device) string {
	var out []string
	for _, d := range devices {
		out = append(out, d.String()+heldBy(d))
	}
	return strings.Join(out, ", ")
}

// heldBy says what keeps the device from going, as far as the host shows:
// loop devices attached over it, processes holding it open, block devices
// stacked on it, a live btrfs on it (/sys/fs/btrfs); none of these is
// another file system on it, or files open there.
func heldBy(d loop.Device) string {
	var holders []string
	if all, _, err := loop.Scan(context.Background()); err == nil {
		for _, m := range mapsOver(all, []loop.Device{d}) {
			holders = append(holders, "loop device "+m.String())
		}
	}
	holders = append(holders, processesHolding(d.Number)...)
	if entries, err := os.ReadDir(filepath.Join("/sys/block", filepath.Base(d.Name), "holders")); err == nil {
		for _, e := range entries {
			holders = append(holders, "block device "+e.Name())
		}
	}
	if fsid, err := liveBtrfsHolding(d.Number); err == nil && fsid != "" {
		holders = append(holders, "btrfs "+fsid+" (mounted or not: files open in it keep it)")
	}
	if len(holders) == 0 {
		return " [held by no process or device: a file system on it, or files open there]"
	}
	return " [held by " + strings.Join(holders, ", ") + "]"
}

// processesHolding names the processes with the block device rdev open.
func processesHolding(rdev uint64) []string {
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	var out []string
	seen := map[string]bool{}
	for _, fd := range fds {
		var st unix.Stat_t
		if unix.Stat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK || st.Rdev != rdev {
			continue
		}
		pid := strings.Split(fd, "/")[2]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm"))
		out = append(out, fmt.Sprintf("process %s (%s)", pid, strings.TrimSpace(string(comm))))
	}
	return out
}
