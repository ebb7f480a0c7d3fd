package drbd

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/localdevice"
	"github.com/baton-dr/baton/storage/backend"
)

// Options configure a Replicator.
type Options struct {
	// Cmder runs drbdadm, drbdsetup and the file commands that write resource
	// files: on this machine (exec.Local), in a guest, or a test double.
	Cmder exec.Cmder
	// Node is this node's name as resource configurations name it. drbdadm
	// finds its own section of a resource file by `uname -n`: they must agree.
	Node string
	// Backing maps a pool volume to the block device DRBD attaches, e.g.
	// (*zfs.Pool).DevicePath.
	Backing func(volume string) string
	// ConfigDir holds baton's resource files, one <resource>.conf each, which
	// drbdadm reads with -c; empty means DefaultConfigDir. They are baton's
	// own, outside /etc/drbd.d: drbdadm parses every file drbd.conf includes
	// and refuses them all when two reuse a minor or port, as the file of a
	// resource long gone and a new one given its minor would.
	ConfigDir string
	// Devices reaches the resources' devices where Cmder runs; the zero
	// value reaches this machine's.
	localdevice.Devices
	// CommandTimeout bounds each command; zero means DefaultCommandTimeout.
	CommandTimeout time.Duration
	// SharedKernel names the node's resources and minors apart from those of
	// the other nodes on its kernel (kind's); the zero value is a kernel of
	// the node's own.
	SharedKernel SharedKernel
}

// DefaultConfigDir is where resource files go unless Options say otherwise.
const DefaultConfigDir = "/var/lib/baton/drbd"

// DefaultCommandTimeout bounds one drbdadm or drbdsetup run. drbdsetup waits
// for a state change to settle; two minutes is far beyond its own timeouts.
const DefaultCommandTimeout = 2 * time.Minute

// Replicator is backend.Replicator over the drbdadm and drbdsetup of one node.
// It keeps nothing in memory: the kernel's state (`drbdsetup show`, `status`)
// and the resource files are the record, so a restarted agent adopts what
// runs.
type Replicator struct {
	options Options
	version Version
}

var _ backend.Replicator = (*Replicator)(nil)

// New reads the DRBD module's version from /proc/drbd (the module must be
// loaded) and returns a Replicator for it.
func New(options Options) (*Replicator, error) {
	if options.Cmder == nil || options.Node == "" || options.Backing == nil {
		return nil, errors.New("drbd: a Cmder, a node name and a backing-device mapping are required")
	}
	if err := options.SharedKernel.Check(); err != nil {
		return nil, err
	}
	if options.ConfigDir == "" {
		options.ConfigDir = DefaultConfigDir
	}
	if options.CommandTimeout == 0 {
		options.CommandTimeout = DefaultCommandTimeout
	}
	options.Devices = options.Devices.OrThisMachine()
	r := &Replicator{options: options}
	proc, err := r.output(nil, "cat", "/proc/drbd")
	if err != nil {
		return nil, fmt.Errorf("failed to read /proc/drbd (is the drbd module loaded?): %w", err)
	}
	if r.version, err = parseProcVersion(proc); err != nil {
		return nil, err
	}
	return r, nil
}

// Version is the DRBD module's version.
func (r *Replicator) Version() Version { return r.version }

// output runs one command to its end, feeding it stdin, and returns its stdout;
// a refusal comes back classified.
func (r *Replicator) output(stdin []byte, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.options.CommandTimeout)
	defer cancel()
	cmd := r.options.Cmder.Command(ctx, name, args...)
	if stdin != nil {
		cmd.SetStdin(strings.NewReader(string(stdin)))
	}
	out, err := exec.Output(cmd)
	if err != nil {
		return nil, classify(err)
	}
	return out, nil
}

func (r *Replicator) run(name string, args ...string) error {
	_, err := r.output(nil, name, args...)
	return err
}

func (r *Replicator) resourceFile(resource string) string {
	return path.Join(r.options.ConfigDir, resource+".conf")
}

// drbdadm runs drbdadm on the resource's own file.
func (r *Replicator) drbdadm(stdin []byte, command, resource string) ([]byte, error) {
	return r.output(stdin, "drbdadm", "-c", r.resourceFile(resource), command, resource)
}

// writeConfig writes the resource file, whole or not at all (a temporary file
// renamed over the old one). Only a resource that is not up gets its file
// written: a running resource keeps the file it was brought up with.
func (r *Replicator) writeConfig(config backend.ResourceConfig) error {
	file := r.resourceFile(config.Name)
	text := renderResource84(config, r.options.Backing)
	if r.version == V9 {
		text = renderResource9(config, r.options.Backing)
	}
	if err := r.run("mkdir", "-p", r.options.ConfigDir); err != nil {
		return fmt.Errorf("failed to make %s: %w", r.options.ConfigDir, err)
	}
	if _, err := r.output([]byte(text), "tee", file+".tmp"); err != nil {
		return fmt.Errorf("failed to write %s: %w", file, err)
	}
	if err := r.run("mv", file+".tmp", file); err != nil {
		return fmt.Errorf("failed to write %s: %w", file, err)
	}
	return nil
}

// live reports what the kernel runs for a resource; up is false when DRBD
// does not know it.
func (r *Replicator) live(resource string) (live liveConfig, up bool, err error) {
	if !safeName.MatchString(resource) {
		return liveConfig{}, false, backend.Refusal(backend.ErrInvalid, "drbdsetup", "%q: invalid resource name", resource)
	}
	out, err := r.output(nil, "drbdsetup", "show", resource)
	if errors.Is(err, backend.ErrNotFound) || (err == nil && strings.TrimSpace(string(out)) == "") {
		return liveConfig{}, false, nil
	}
	if err != nil {
		return liveConfig{}, false, err
	}
	parse := parseShow84
	if r.version == V9 {
		parse = parseShow9
	}
	live, err = parse(string(out))
	if err != nil {
		return liveConfig{}, false, fmt.Errorf("drbdsetup show %s: %w", resource, err)
	}
	return live, true, nil
}

// upMinor is the kernel's name and the minor of a core resource that must be
// up.
func (r *Replicator) upMinor(resource string) (name, minor string, err error) {
	name, err = r.kernelName(resource)
	if err != nil {
		return "", "", err
	}
	live, up, err := r.live(name)
	if err != nil {
		return "", "", err
	}
	if !up {
		return "", "", noSuchResource(name)
	}
	return name, strconv.FormatUint(uint64(live.minor), 10), nil
}

func noSuchResource(resource string) error {
	return backend.Refusal(backend.ErrNotFound, "drbdsetup", "%s: No such resource", resource)
}

// Down disconnects, detaches and deletes the resource from the kernel; its
// file, data and metadata stay. A resource DRBD does not know is down already.
func (r *Replicator) Down(resource string) error {
	resource, err := r.kernelName(resource)
	if err != nil {
		return err
	}
	if _, up, err := r.live(resource); err != nil || !up {
		return err
	}
	err = r.run("drbdsetup", "down", resource)
	if errors.Is(err, backend.ErrNotFound) {
		return nil
	}
	return err
}

// Primary promotes the node (8.4: `drbdsetup primary <minor> [--force]`; 9,
// whose role is the resource's: `drbdsetup primary <resource> [--force]`);
// DRBD refuses a second primary, and promotion without good data unless
// forced.
func (r *Replicator) Primary(resource string, force bool) error {
	target, err := r.roleTarget(resource)
	if err != nil {
		return err
	}
	args := []string{"primary", target}
	if force {
		args = append(args, "--force")
	}
	return r.run("drbdsetup", args...)
}

// Secondary demotes the node; DRBD refuses while the device is open.
func (r *Replicator) Secondary(resource string) error {
	target, err := r.roleTarget(resource)
	if err != nil {
		return err
	}
	return r.run("drbdsetup", "secondary", target)
}

// roleTarget is what drbdsetup's primary and secondary name, of a core resource
// that must be up: DRBD 8.4's drbdsetup takes the device's minor, DRBD 9's
// the resource (drbdsetup primary and secondary are CTX_RESOURCE commands in
// drbd-utils' user/v9/drbdsetup.c; new-current-uuid stays CTX_MINOR).
func (r *Replicator) roleTarget(resource string) (string, error) {
	name, minor, err := r.upMinor(resource)
	if err != nil || r.version != V9 {
		return minor, err
	}
	return name, nil
}

// NewCurrentUUID starts a new data generation; with clearBitmap on connected,
// just-created replicas it declares them identical and UpToDate without a
// sync.
func (r *Replicator) NewCurrentUUID(resource string, clearBitmap bool) error {
	_, minor, err := r.upMinor(resource)
	if err != nil {
		return err
	}
	args := []string{"new-current-uuid", minor}
	if clearBitmap {
		args = append(args, "--clear-bitmap")
	}
	return r.run("drbdsetup", args...)
}

// Open opens the resource's device, /dev/drbd<minor>. DRBD 8.4 refuses to
// open a Secondary's device (ErrRefused), and so does DRBD 9 with the
// auto-promote no that baton's resource file sets.
func (r *Replicator) Open(resource string) (backend.Device, error) {
	_, minor, err := r.upMinor(resource)
	if err != nil {
		return nil, err
	}
	devicePath := "/dev/drbd" + minor
	f, err := r.options.OpenDevice(devicePath, true)
	if err != nil {
		return nil, deviceError(err, devicePath)
	}
	return &backend.ErrnoDevice{Device: f, Path: devicePath, Classify: deviceError}, nil
}
