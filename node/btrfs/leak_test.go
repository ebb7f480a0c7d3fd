package btrfs

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/loop"
)

// loopDevicesUnder lists the loop devices whose backing file is under dir.
// Only those: other tests on the machine attach loop devices of their own.
func loopDevicesUnder(t testing.TB, dir string) []string {
	t.Helper()
	devices, err := loop.List(context.Background())
	if err != nil {
		t.Fatalf("listing loop devices: %v", err)
	}
	var under []string
	for _, d := range devices {
		if strings.HasPrefix(d.BackFile, dir+"/") {
			under = append(under, d.Name+" "+d.BackFile)
		}
	}
	return under
}
