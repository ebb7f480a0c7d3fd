package discovery

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// ErrMalformedList reports a discovery file that does not parse or breaks
// the operator's rules.
var ErrMalformedList = errors.New("malformed discovery list")

// maxListBytes bounds the discovery file: a node's entry takes a few hundred
// bytes, and a site has at most a few hundred nodes.
const maxListBytes = 4 << 20

// ParseList reads a discovery list by the rules the operator reads it with
// (controllers/site.ParseCandidates): a JSON list, no unknown field, names
// unique and non-empty, device paths absolute, sizes not negative.
func ParseList(data []byte) ([]Node, error) {
	if len(data) > maxListBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrMalformedList, len(data), maxListBytes)
	}
	var nodes []Node
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&nodes); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedList, err)
	}
	if decoder.More() {
		return nil, fmt.Errorf("%w: trailing data after the list", ErrMalformedList)
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		if n.Name == "" || seen[n.Name] {
			return nil, fmt.Errorf("%w: node name %q is empty or repeated", ErrMalformedList, clip(n.Name))
		}
		seen[n.Name] = true
		for _, d := range n.Devices {
			if !strings.HasPrefix(d.Path, "/") || d.SizeBytes < 0 {
				return nil, fmt.Errorf("%w: node %s: device %q of %d bytes", ErrMalformedList, clip(n.Name), clip(d.Path), d.SizeBytes)
			}
		}
	}
	return nodes, nil
}

// Publish puts node's entry into the discovery list at path, replacing the
// entry of the same name and keeping the others, sorted by name. The nodes
// sharing the file take an exclusive lock on path.lock around the whole
// read-modify-write, and the list is replaced by a rename, so the operator
// never reads half a list and no node loses another's entry.
func Publish(path string, node Node) error {
	if node.Name == "" {
		return errors.New("discovery: publishing a node without a name")
	}
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("failed to lock %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	nodes, err := readList(path)
	if err != nil {
		return err
	}
	nodes = slices.DeleteFunc(nodes, func(n Node) bool { return n.Name == node.Name })
	nodes = append(nodes, node)
	slices.SortFunc(nodes, func(a, b Node) int { return cmp.Compare(a.Name, b.Name) })
	data, err := json.MarshalIndent(nodes, "", "  ")
	if err != nil {
		return err
	}
	return replaceFile(path, append(data, '\n'))
}

// readList reads the list at path; a missing or empty file is an empty list.
func readList(path string) ([]Node, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(bytes.TrimSpace(data)) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	nodes, err := ParseList(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return nodes, nil
}

// replaceFile writes data beside path and renames it over path.
func replaceFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return errors.Join(err, os.Remove(tmp.Name()))
	}
	return nil
}
