package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dr/baton/internal/command"
	"github.com/baton-dr/baton/node/drbd"

	"github.com/baton-dr/baton/storage/chain"
)

// asMain makes the test binary run main() with its arguments: the tests
// start the node agent as its own process, to stop it with a real SIGTERM.
const asMain = "BATON_NODE_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestHelpSaysWhatItDoes(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"node agent", "storage API", "adopted", "SIGTERM", "never carry a",
		"-node", "-cluster-endpoint", "-secret-file", "-ca-file", "-backend", "-pool-dir", "-pool-size-bytes",
		"-device-dir", "-stream-address", "-stream-cert", "-stream-key", "-peer-ca-file", "-advertise-address",
		"-interval", "-metrics-bind-address", "-discovery-file", "-v"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestBadFlagsAreRefused(t *testing.T) {
	valid := []string{"--node", "n1", "--secret-file", "/s", "--backend", "btrfs", "--pool-dir", "/p"}
	zfs := []string{"--node", "n1", "--secret-file", "/s", "--backend", "zfs", "--zfs-dataset", "n1/volumes"}
	for _, c := range []struct {
		args []string
		want string // in what the refusal prints
	}{
		{args: []string{"--secret-file", "/s", "--backend", "btrfs", "--pool-dir", "/p"}, want: "--node"},
		{args: []string{"--node", "n1", "--backend", "btrfs", "--pool-dir", "/p"}, want: "--secret-file"},
		{args: []string{"--node", "n1", "--secret-file", "/s"}, want: `--backend ""`},
		{args: append(valid, "--backend", "ext4"), want: `--backend "ext4"`},
		{args: append(valid, "--pool-dir", "relative"), want: "--pool-dir"},
		{args: append(valid, "--device-dir", "devices"), want: "--device-dir"},
		{args: append(valid, "--interval", "0s"), want: "--interval"},
		{args: append(valid, "--cluster-id", "SITE-A"), want: "--cluster-id"},
		{args: append(valid, "--stream-address", ":7443", "--advertise-address", "10.0.0.1:7443"), want: "--stream-cert"},
		{args: append(valid, "--stream-address", ":7443", "--stream-cert", "c", "--stream-key", "k"), want: "--advertise-address"},
		{args: append(valid, "--stream-address", ":7443", "--stream-cert", "c", "--stream-key", "k", "--advertise-address", "0.0.0.0:7443"), want: "no host"},
		{args: append(valid, "--advertise-address", "10.0.0.1:7443"), want: "go with --stream-address"},
		{args: append(valid, "--drbd-resource-suffix", "n1"), want: "go with --backend zfs"},
		{args: append(zfs, "--drbd-minor-offset", "1000"), want: "needs a resource-name suffix"},
		{args: append(zfs, "--drbd-resource-suffix", "a:b"), want: `suffix "a:b"`},
		{args: append(zfs, "--drbd-resource-suffix", "n1", "--drbd-minor-offset", "-1"), want: "not a number"},
		{args: append(zfs, "--drbd-resource-suffix", "n1", "--drbd-minor-offset", "n0=0,n2=5"), want: "no entry for this node, n1"},
		{args: append(zfs, "--drbd-resource-suffix", "n1", "--drbd-minor-offset", "n1=x"), want: `entry "n1=x"`},
		{args: append(zfs, "--drbd-resource-suffix", "n1", "--drbd-minor-offset", "2000000"), want: "last minor"},
		{args: append(valid, "--no-such-flag"), want: "not defined"},
		{args: append(valid, "extra"), want: "no arguments"},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), c.args, &out); !errors.Is(err, command.ErrUsage) {
			t.Errorf("%v: %v, want a usage error", c.args, err)
			continue
		}
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("%v printed %q, want it to say %q", c.args, out.String(), c.want)
		}
	}
}

func TestZFSNeedsItsDataset(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--node", "n1", "--secret-file", "/nonexistent", "--backend", "zfs"}, &out)
	if err == nil || !strings.Contains(err.Error()+out.String(), "--backend zfs needs --zfs-dataset") {
		t.Fatalf("--backend zfs without a dataset: %v (%s)", err, out.String())
	}
	err = run(context.Background(), []string{"--node", "n1", "--secret-file", "/nonexistent", "--backend", "zfs",
		"--zfs-dataset", "tank/baton", "--zfs-pool-file", "relative.img"}, &out)
	if err == nil || !strings.Contains(err.Error()+out.String(), "is not an absolute path") {
		t.Fatalf("a relative pool file: %v (%s)", err, out.String())
	}
}

// TestSharedKernelFlags: a kind node's suffix and minor offset reach node/drbd.
func TestSharedKernelFlags(t *testing.T) {
	var out bytes.Buffer
	o, err := parseFlags([]string{"--node", "site-a-worker2", "--secret-file", "/s", "--backend", "zfs", "--zfs-dataset", "site-a-worker2/volumes",
		"--drbd-resource-suffix", "site-a-worker2", "--drbd-minor-offset", "100000"}, &out)
	if err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if want := (drbd.SharedKernel{Suffix: "site-a-worker2", MinorOffset: 100000}); o.drbdShared != want {
		t.Errorf("parsed %+v, want %+v", o.drbdShared, want)
	}
	// The chart's form: every node's offset, of which the node takes its own.
	o, err = parseFlags([]string{"--node", "site-a-worker2", "--secret-file", "/s", "--backend", "zfs", "--zfs-dataset", "site-a-worker2/volumes",
		"--drbd-resource-suffix", "site-a-worker2", "--drbd-minor-offset", "site-a-worker=0,site-a-worker2=50000"}, &out)
	if err != nil || o.drbdShared.MinorOffset != 50000 {
		t.Errorf("from the chart's list: %+v, %v (%s); want offset 50000", o.drbdShared, err, out.String())
	}
	o, err = parseFlags([]string{"--node", "n1", "--secret-file", "/s", "--backend", "zfs", "--zfs-dataset", "n1/volumes"}, &out)
	if err != nil || o.drbdShared != (drbd.SharedKernel{}) {
		t.Errorf("without the flags: %+v, %v; want a kernel of the node's own", o.drbdShared, err)
	}
}

const (
	clusterA chain.ClusterID = "aaaaaaaa-0000-4000-8000-00000000000a"
	clusterB chain.ClusterID = "bbbbbbbb-0000-4000-8000-00000000000b"
)

// TestTheSecretFileNamesTheLocalCluster: the node serves the local cluster of
// the clusters document -- the only one, or the one --cluster-id names --
// at its own endpoint unless --cluster-endpoint says otherwise; errors never
// quote a secret.
func TestTheSecretFileNamesTheLocalCluster(t *testing.T) {
	write := func(doc string) string {
		path := filepath.Join(t.TempDir(), "clusters")
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	entry := func(id chain.ClusterID, local bool) string {
		l := "false"
		if local {
			l = "true"
		}
		return `{"cluster_id":"` + string(id) + `","cluster_endpoint":"https://` + string(id[:8]) + `.example:8443","cluster_secret":"s3cret-` + string(id[:8]) + `","local":` + l + `}`
	}
	oneLocal := write(`{"clusters":[` + entry(clusterA, true) + `,` + entry(clusterB, false) + `]}`)
	twoLocal := write(`{"clusters":[` + entry(clusterA, true) + `,` + entry(clusterB, true) + `]}`)
	for _, c := range []struct {
		file, id, endpoint string
		want               chain.ClusterID
		wantEndpoint       string
		wantErr            string
	}{
		{file: oneLocal, want: clusterA, wantEndpoint: "https://aaaaaaaa.example:8443"},
		{file: oneLocal, endpoint: "https://baton-controller.baton-system.svc:8443", want: clusterA,
			wantEndpoint: "https://baton-controller.baton-system.svc:8443"},
		{file: oneLocal, id: string(clusterB), wantErr: "no local cluster"},
		{file: twoLocal, wantErr: "choose one with --cluster-id"},
		{file: twoLocal, id: string(clusterB), want: clusterB, wantEndpoint: "https://bbbbbbbb.example:8443"},
		{file: write(`{"clusters":[{"cluster_id":"s3cret-in-the-wrong-place","cluster_endpoint":"x","cluster_secret":"s3cret-x"}]}`),
			wantErr: "invalid clusters secret"},
		{file: "/nonexistent", wantErr: "no such file"},
	} {
		got, err := localCluster(options{secretFile: c.file, clusterID: c.id, clusterEndpoint: c.endpoint})
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%+v: %v, want an error saying %q and no secret", c, err, c.wantErr)
			}
		case err != nil || got.ID != c.want || got.Endpoint != c.wantEndpoint || got.Secret != "s3cret-"+string(c.want[:8]):
			t.Errorf("%+v: %v %v", c, got, err)
		}
	}
}
