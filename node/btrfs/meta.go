package btrfs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/baton-dr/baton/storage/backend"
)

// volumeMeta is what btrfs does not record of a volume, kept next to its
// subvolumes in volume.json. btrfs ties no clone to its origin (a snapshot
// with clones deletes like any other), so the pool records each clone's
// origin and enforces the contract's ErrBusy itself.
type volumeMeta struct {
	Provisioning string `json:"provisioning"` // "thin" or "thick"
	Origin       string `json:"origin,omitempty"`
	ReadOnly     bool   `json:"readOnly,omitempty"`
}

func (m volumeMeta) provisioning() backend.Provisioning {
	if m.Provisioning == backend.Thick.String() {
		return backend.Thick
	}
	return backend.Thin
}

// parseMeta reads volume.json.
func parseMeta(data []byte) (volumeMeta, error) {
	var m volumeMeta
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("volume.json: %w", err)
	}
	if m.Provisioning != backend.Thin.String() && m.Provisioning != backend.Thick.String() {
		return m, fmt.Errorf("volume.json: provisioning %q", m.Provisioning)
	}
	if m.Origin != "" {
		if _, _, ok := splitOrigin(m.Origin); !ok {
			return m, fmt.Errorf("volume.json: origin %q is not volume@snapshot", m.Origin)
		}
	}
	return m, nil
}

func readMeta(path string) (volumeMeta, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return volumeMeta{}, err
	}
	return parseMeta(data)
}

// writeMeta replaces volume.json whole: a crash leaves the old file or the
// new one, never a mix.
func writeMeta(path string, m volumeMeta) error {
	data, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("btrfs: volume.json of %+v: %v", m, err))
	}
	temporary := filepath.Join(filepath.Dir(path), "."+metaName+".new")
	f, err := os.OpenFile(temporary, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	return os.Rename(temporary, path)
}
