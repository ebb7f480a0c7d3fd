package btrfs

import (
	"fmt"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// maxNameBytes is the longest name a btrfs directory entry takes (BTRFS_NAME_LEN).
const maxNameBytes = 255

// checkName applies the rules of a volume or snapshot name: a ZFS dataset
// component's characters, so that a name works on every backend, and a
// single path component of at most maxNameBytes, because the name is a
// directory or subvolume name here. It returns why a bad name is bad.
func checkName(name string) (string, bool) {
	switch {
	case name == "":
		return "empty name", false
	case len(name) > maxNameBytes:
		return fmt.Sprintf("name is longer than %d bytes", maxNameBytes), false
	case name == "." || name == "..":
		return "self reference, '.' is found in name", false
	case strings.Contains(name, "@"):
		return "snapshot delimiter '@' is not expected here", false
	}
	for i := 0; i < len(name); i++ {
		if !backend.IsNameChar(name[i]) {
			return fmt.Sprintf("invalid character '%c' in name", name[i]), false
		}
	}
	return "", true
}

// splitOrigin splits "volume@snapshot"; ok is false for anything else.
func splitOrigin(s string) (volume, snapshot string, ok bool) {
	volume, snapshot, ok = strings.Cut(s, "@")
	return volume, snapshot, ok && volume != "" && snapshot != ""
}
