package main

import (
	"strings"
	"testing"
)

func TestGetPrintsKubectlColumns(t *testing.T) {
	kubeconfig, now := sites(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"get", "clusters"}, `NAME     CLUSTER ID                             BACKEND    PHASE    NODES   READY   AGE
site-a   aaaaaaaa-0000-4000-8000-00000000000a   zfs-drbd   <none>   0       0       120m
`},
		{[]string{"get", "nodes"}, `NAME   CLUSTER   NODE       ADDRESS     REACHABLE   READY     AGE
a1     site-a    worker-1   10.0.0.11   false       Unknown   120m
`},
		{[]string{"get", "volumes"}, `NAME                                   ROOT                                                                        GEN   STATE       SIZE         MODE    CSI NAME   AGE
a0000000-0000-4000-8000-000000000001   aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000001   0     Tombstone   1073741824   Block   pvc-vm     120m
a0000000-0000-4000-8000-000000000003   aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000001   2     Active      1073741824   Block   <none>     120m
`},
		{[]string{"get", "replications"}, `NAME                                   SOURCE                                                                      TARGET                                 ENABLED   PHASE      LAST SYNC   AGE
a0000000-0000-4000-8000-000000000001   aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000001   bbbbbbbb-0000-4000-8000-00000000000b   false     Disabled   60m         120m
a0000000-0000-4000-8000-000000000003   aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000003   bbbbbbbb-0000-4000-8000-00000000000b   true      InSync     6m30s       120m
`},
		{[]string{"get", "volume", "--context", "site-b"}, `NAME                                   ROOT                                                                        GEN   STATE     SIZE         MODE    CSI NAME   AGE
b0000000-0000-4000-8000-000000000002   aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000001   1     Demoted   1073741824   Block   <none>     120m
`},
		{[]string{"get", "volumes", "-n", "nowhere"}, "No resources found in nowhere namespace.\n"},
	}
	for _, c := range cases {
		out, err := runBatonctl(t, now, append(c.args, "--kubeconfig", kubeconfig)...)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		check(t, strings.Join(c.args, " "), out, c.want)
	}
}

func TestGetRefusesWhatItCannotList(t *testing.T) {
	kubeconfig, now := sites(t)
	if _, err := runBatonctl(t, now, "get", "pods", "--kubeconfig", kubeconfig); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("get pods: %v", err)
	}
	_, err := runBatonctl(t, now, "get", "volumes", "--context", "site-c", "--kubeconfig", kubeconfig, "--request-timeout", "5s")
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("get from a site nothing answers at: %v", err)
	}
	if _, err := runBatonctl(t, now, "get", "volumes", "--context", "site-z", "--kubeconfig", kubeconfig); err == nil {
		t.Error("get from a context the kubeconfig lacks succeeded")
	}
}
