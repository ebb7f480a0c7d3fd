package btrfs

import (
	"fmt"
	"strconv"
	"strings"
)

// fsUsage is what `btrfs filesystem usage -b` reports of the whole filesystem.
type fsUsage struct {
	deviceBytes uint64 // "Device size": the loop device, so the image's size
	freeBytes   uint64 // "Free (statfs, df)": what data can still take
}

// parseUsage reads the "Overall:" section of `btrfs filesystem usage -b`:
//
//	Overall:
//	    Device size:		        1073741824
//	    ...
//	    Free (estimated):		         949616640	(min: 479002624)
//	    Free (statfs, df):		         948568064
//
// Free (statfs, df) is taken over Free (estimated) because it stays put when
// btrfs turns unallocated space into a data chunk; the estimate moves by the
// first MiB of the device, which btrfs never allocates.
func parseUsage(out []byte) (fsUsage, error) {
	var u fsUsage
	found := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		var into *uint64
		switch key {
		case "Device size":
			into = &u.deviceBytes
		case "Free (statfs, df)":
			into = &u.freeBytes
		default:
			continue
		}
		if found[key] {
			return u, fmt.Errorf("filesystem usage: %q twice", key)
		}
		fields := strings.Fields(value)
		if len(fields) == 0 {
			return u, fmt.Errorf("filesystem usage: no value for %q", key)
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return u, fmt.Errorf("filesystem usage: %q: %w", key, err)
		}
		*into = n
		found[key] = true
	}
	if !found["Device size"] || !found["Free (statfs, df)"] {
		return u, fmt.Errorf("filesystem usage: no device size or free space in %q", out)
	}
	return u, nil
}
