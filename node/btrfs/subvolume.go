package btrfs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/baton-dr/baton/storage/chain"
)

// subvolume is what btrfs reports of one subvolume.
type subvolume struct {
	id           uint64
	generation   uint64 // the last transaction that changed the subvolume
	cgeneration  uint64 // the transaction that created it ("Gen at creation")
	parentUUID   string // the subvolume it is a snapshot of, "" for none
	receivedUUID string // the sent subvolume's identity, "" unless received
	uuid         string
	path         string // from the top level of the filesystem
	readOnly     bool   // only `subvolume show` reports it
}

// guid is the identity a snapshot keeps across pools: the received UUID of a
// received snapshot, the UUID of one taken here. `btrfs send` names a stream's
// subvolume and parent the same way, so a stream's base is found by it.
func (s subvolume) guid() string {
	if s.receivedUUID != "" {
		return s.receivedUUID
	}
	return s.uuid
}

// maxSubvolumes bounds a listing: a pool of a thousand volumes with a few
// dozen snapshots each stays far below it.
const maxSubvolumes = 1 << 20

// parseSubvolumeList reads `btrfs subvolume list -uqRcg` output, one line a
// subvolume:
//
//	ID 257 gen 11 cgen 8 top level 5 parent_uuid 9a07f09f-... received_uuid - uuid 97a268a3-... path volumes/v/snapshots/s1
//
// The path is the rest of the line and may hold spaces.
func parseSubvolumeList(out []byte) ([]subvolume, error) {
	var list []subvolume
	for n, line := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(list) == maxSubvolumes {
			return nil, fmt.Errorf("subvolume list: more than %d subvolumes", maxSubvolumes)
		}
		s, err := parseListLine(line)
		if err != nil {
			return nil, fmt.Errorf("subvolume list line %d: %w", n+1, err)
		}
		list = append(list, s)
	}
	return list, nil
}

// listKeys are the line's keys in the order btrfs prints them.
var listKeys = []string{"ID", "gen", "cgen", "top level", "parent_uuid", "received_uuid", "uuid", "path"}

func parseListLine(line string) (subvolume, error) {
	var s subvolume
	rest := line
	for _, key := range listKeys {
		var ok bool
		if rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t"), key+" "); !ok {
			return s, fmt.Errorf("want %q in %q", key, line)
		}
		if key == "path" {
			s.path = rest
			break
		}
		rest = strings.TrimLeft(rest, " \t")
		end := strings.IndexAny(rest, " \t")
		if end < 0 {
			return s, fmt.Errorf("no value after %q in %q", key, line)
		}
		if err := s.set(key, rest[:end]); err != nil {
			return s, err
		}
		rest = rest[end:]
	}
	if s.path == "" || s.uuid == "" {
		return s, fmt.Errorf("no path or uuid in %q", line)
	}
	return s, nil
}

// set stores one reported value; keys are those of list and show.
func (s *subvolume) set(key, value string) error {
	number := func(into *uint64) error {
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		*into = n
		return nil
	}
	uuid := func(into *string) error {
		if value == "-" {
			*into = ""
			return nil
		}
		// btrfs prints UUIDs in the canonical lowercase form.
		if !chain.IsUUID(value) {
			return fmt.Errorf("%s: %q is not a UUID", key, value)
		}
		*into = value
		return nil
	}
	switch key {
	case "ID", "Subvolume ID":
		return number(&s.id)
	case "gen", "Generation":
		return number(&s.generation)
	case "cgen", "Gen at creation":
		return number(&s.cgeneration)
	case "parent_uuid", "Parent UUID":
		return uuid(&s.parentUUID)
	case "received_uuid", "Received UUID":
		return uuid(&s.receivedUUID)
	case "uuid", "UUID":
		if value == "-" {
			return fmt.Errorf("uuid: a subvolume without one")
		}
		return uuid(&s.uuid)
	case "Flags":
		s.readOnly = strings.Contains(value, "readonly")
	}
	return nil
}

// parseSubvolumeShow reads `btrfs subvolume show <path>`: the path on the
// first line, then "Key: value" lines. Values may hold colons (times).
func parseSubvolumeShow(out []byte) (subvolume, error) {
	var s subvolume
	lines := strings.Split(string(out), "\n")
	s.path = strings.TrimSpace(lines[0])
	seen := map[string]bool{}
	for _, line := range lines[1:] {
		if strings.TrimSpace(line) == "Snapshot(s):" {
			break // then the paths of the subvolume's snapshots, one a line
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if err := s.set(key, value); err != nil {
			return s, fmt.Errorf("subvolume show: %w", err)
		}
		seen[key] = true
	}
	for _, key := range []string{"UUID", "Subvolume ID", "Generation", "Gen at creation", "Flags"} {
		if !seen[key] {
			return s, fmt.Errorf("subvolume show: no %q in %q", key, out)
		}
	}
	if s.path == "" {
		return s, fmt.Errorf("subvolume show: no path in %q", out)
	}
	return s, nil
}
