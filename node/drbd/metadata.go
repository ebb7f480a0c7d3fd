package drbd

import (
	"errors"
	"regexp"
	"strings"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/storage/backend"
)

// noMetadata is drbdmeta's verdict on a volume without DRBD metadata.
var noMetadata = regexp.MustCompile(`No valid meta.?data found`)

// declineAll answers every question drbdmeta asks "no": create-md asks
// before it overwrites existing metadata or data it recognises (a file
// system), and baton never lets it. drbdmeta does not even wait for an answer
// on a stdin that is no terminal ("stdin not a TTY, not waiting for
// confirmation ... Operation cancelled."); the answers keep it so if that
// changes.
var declineAll = []byte(strings.Repeat("no\n", 8))

// HasMetadata probes the node's backing volume with `drbdadm dump-md`. A
// resource that is up with the volume attached has metadata in use; a
// diskless node has none. No metadata ("No valid meta data found") is false,
// never an error; metadata a Primary left with an activity log to replay
// (dump-md refuses it as "unclean") is true.
func (r *Replicator) HasMetadata(config backend.ResourceConfig) (bool, error) {
	config, self, err := r.ownConfig(config)
	if err != nil || self.Volume == "" {
		return false, err
	}
	live, up, err := r.live(config.Name)
	if err != nil {
		return false, err
	}
	if up && live.disk == r.options.Backing(self.Volume) {
		return true, nil
	}
	if !up {
		if err := r.writeConfig(config); err != nil {
			return false, err
		}
	}
	_, err = r.drbdadm(nil, "dump-md", config.Name)
	var run *exec.RunError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &run) && noMetadata.Match(run.Stderr):
		return false, nil
	case errors.Is(err, backend.ErrRefused):
		// "Device is configured!" (attached since we looked), or metadata
		// left "unclean" by a shutdown, which drbdadm up replays.
		return true, nil
	}
	return false, err
}

// CreateMetadata writes fresh internal metadata with `drbdadm create-md`,
// answering no to every question: drbdmeta asks before it overwrites
// metadata or recognised data, so both are refused in its words
// ("Operation canceled.", ErrRefused). On an up resource drbdmeta would
// refuse with "Device '<minor>' is configured!"; baton says so without
// touching the resource file the running resource was brought up with.
func (r *Replicator) CreateMetadata(config backend.ResourceConfig) error {
	config, self, err := r.ownConfig(config)
	if err != nil {
		return err
	}
	if self.Volume == "" {
		return backend.Refusal(backend.ErrInvalid, "drbdadm", "%s: no disk on %s to create meta-data on", config.Name, r.options.Node)
	}
	live, up, err := r.live(config.Name)
	if err != nil {
		return err
	}
	if up {
		return backend.Refusal(backend.ErrRefused, "drbdmeta", "Device '%d' is configured!", live.minor)
	}
	if err := r.writeConfig(config); err != nil {
		return err
	}
	_, err = r.drbdadm(declineAll, "create-md", config.Name)
	return err
}
