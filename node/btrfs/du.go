package btrfs

import (
	"fmt"
	"strconv"
	"strings"
)

// parseDu reads `btrfs filesystem du -s --raw <file>...`: a header, then per
// file its total, exclusive and shared bytes and its name, which may hold
// spaces:
//
//	  Total   Exclusive  Set shared  Filename
//	4329472        8192     4321280  /pool/mnt/volumes/v/head/data
//
// It returns the exclusive bytes by file name: extents no other file
// references, neither a snapshot nor a clone.
func parseDu(out []byte) (map[string]uint64, error) {
	exclusive := map[string]uint64{}
	lines := strings.Split(string(out), "\n")
	if len(strings.Fields(lines[0])) < 4 || strings.Fields(lines[0])[0] != "Total" {
		return nil, fmt.Errorf("filesystem du: no header in %q", out)
	}
	for _, line := range lines[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		rest := line
		var numbers [3]uint64
		for i := range numbers {
			rest = strings.TrimLeft(rest, " \t")
			end := strings.IndexAny(rest, " \t")
			if end < 0 {
				return nil, fmt.Errorf("filesystem du: short line %q", line)
			}
			n, err := strconv.ParseUint(rest[:end], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("filesystem du: %q: %w", line, err)
			}
			numbers[i] = n
			rest = rest[end:]
		}
		name := strings.TrimLeft(rest, " \t")
		if name == "" {
			return nil, fmt.Errorf("filesystem du: no file name in %q", line)
		}
		if _, dup := exclusive[name]; dup {
			return nil, fmt.Errorf("filesystem du: %q twice", name)
		}
		exclusive[name] = numbers[1]
	}
	return exclusive, nil
}
