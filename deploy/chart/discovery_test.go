package chart_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/deploy/chart"
)

// A site deployed through the hub's flow has no storage cluster when its
// operator starts, so its node agent publishes no candidates yet: the
// chart carries the list the operator's discovery runs read, and the
// operator reads exactly what the values said.
func TestTheOperatorReadsTheDiscoveryTheValuesList(t *testing.T) {
	v := btrfsValues(t)
	v.StorageCluster.Create = false
	v.Operator.Discovery = []chart.DiscoveryNode{{Name: "baton-site-b-control-plane", Address: "10.250.0.4",
		Labels:  map[string]string{"storage.baton.dev/candidate": "true"},
		Devices: []v1.CandidateDevice{{Path: "/var/lib/baton-realbed/baton-site-b/pool/pool.img", Type: v1.DeviceTypeLoopFile, SizeBytes: 8 << 30}}}}
	r := render(t, v)
	var list corev1.ConfigMap
	find(t, r.Objects, "ConfigMap", "baton-discovery", &list)
	candidates, err := site.ParseCandidates([]byte(list.Data["discovery.json"]))
	if err != nil {
		t.Fatalf("the operator's parser refuses the rendered list: %v\n%s", err, list.Data["discovery.json"])
	}
	if len(candidates) != 1 || candidates[0].Name != "baton-site-b-control-plane" || candidates[0].Address != "10.250.0.4" ||
		candidates[0].Labels["storage.baton.dev/candidate"] != "true" || len(candidates[0].Devices) != 1 ||
		candidates[0].Devices[0] != v.Operator.Discovery[0].Devices[0] {
		t.Errorf("the operator reads %+v, the values said %+v", candidates, v.Operator.Discovery)
	}
	var operator appsv1.Deployment
	find(t, r.Objects, "Deployment", "baton-controller", &operator)
	c := container(t, operator.Spec.Template.Spec, "baton-controller")
	if !hasArg(c, "--discovery-file=/etc/baton/discovery/discovery.json") {
		t.Errorf("the operator's args %v do not name the list", c.Args)
	}
	mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == "discovery" && m.MountPath == "/etc/baton/discovery" && m.ReadOnly
	})
	backed := slices.ContainsFunc(operator.Spec.Template.Spec.Volumes, func(vol corev1.Volume) bool {
		return vol.Name == "discovery" && vol.ConfigMap != nil && vol.ConfigMap.Name == "baton-discovery"
	})
	if !mounted || !backed {
		t.Errorf("the list is not mounted from its ConfigMap: mounts %v, volumes %v", c.VolumeMounts, operator.Spec.Template.Spec.Volumes)
	}

	// Without a list: no ConfigMap, no flag -- the operator's runs fail
	// saying node-agent discovery has not landed.
	r = render(t, btrfsValues(t))
	if slices.Contains(kinds(r.Objects), "ConfigMap/baton-discovery") {
		t.Error("a ConfigMap baton-discovery without a list")
	}
	find(t, r.Objects, "Deployment", "baton-controller", &operator)
	for _, arg := range container(t, operator.Spec.Template.Spec, "baton-controller").Args {
		if strings.HasPrefix(arg, "--discovery-file") {
			t.Errorf("%s without a list", arg)
		}
	}
}

func TestABadDiscoveryListIsRefusedClearly(t *testing.T) {
	v := btrfsValues(t)
	v.Operator.Discovery = []chart.DiscoveryNode{
		{Name: "node-1", Devices: []v1.CandidateDevice{{Path: "relative.img"}}},
		{Name: "node-1"},
		{Devices: []v1.CandidateDevice{{Path: "/dev/sdb", SizeBytes: -1}}},
	}
	err := v.Validate()
	if !errors.Is(err, chart.ErrInvalidValues) {
		t.Fatalf("Validate: %v", err)
	}
	for _, want := range []string{`operator.discovery[0].devices[0]: "relative.img"`, `operator.discovery[1]: node name "node-1"`,
		`operator.discovery[2]: node name ""`, `operator.discovery[2].devices[0]: "/dev/sdb" of -1 bytes`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %s: %v", want, err)
		}
	}
}
