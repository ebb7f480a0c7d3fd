package main

import (
	"strings"
	"testing"
)

// TestChainShowWalksEveryReachableSite: the handle A:v1 resolves across both
// sites to A:v3, each hop with its site, state, generation and last sync; a
// context nothing answers at is listed, not fatal.
func TestChainShowWalksEveryReachableSite(t *testing.T) {
	kubeconfig, now := sites(t)
	out, err := runBatonctl(t, now, "chain", "show", v1Ref.String(), "--kubeconfig", kubeconfig, "--request-timeout", "5s")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "chain show", out, `chain of aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000001: 3 members, end aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000003 (Active)
GEN    SITE     STATE       MEMBER                                                                      LAST SYNC
0      site-a   Tombstone   aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000001   60m ago to site-b (Disabled)
-> 1   site-b   Demoted     bbbbbbbb-0000-4000-8000-00000000000b:b0000000-0000-4000-8000-000000000002   not replicated
-> 2   site-a   Active      aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000003   6m ago to site-b (InSync)
unreachable context: site-c (dial connect: connection refused)
`)
}

// TestChainShowFromOneSite: with site B out of reach (rule 6) the chain still
// resolves from A's records, B's member placed by its neighbours, and the end
// is marked unconfirmed.
func TestChainShowFromOneSite(t *testing.T) {
	kubeconfig, now := sites(t)
	out, err := runBatonctl(t, now, "chain", "show", v1Ref.String(), "--contexts", "site-a", "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "chain show from site-a", out, `chain of aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000001: 3 members, end aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000003 (Active)
the end is not confirmed: a site that did not answer may hold a later member
GEN    SITE     STATE       MEMBER                                                                      LAST SYNC
0      site-a   Tombstone   aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000001   60m ago to bbbbbbbb-0000-4000-8000-00000000000b (Disabled)
-> 1   ?        Unknown     bbbbbbbb-0000-4000-8000-00000000000b:b0000000-0000-4000-8000-000000000002   ?
-> 2   site-a   Active      aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000003   6m ago to bbbbbbbb-0000-4000-8000-00000000000b (InSync)
unreachable cluster: bbbbbbbb-0000-4000-8000-00000000000b
`)
}

func TestChainShowRefusesAMalformedHandle(t *testing.T) {
	kubeconfig, now := sites(t)
	if _, err := runBatonctl(t, now, "chain", "show", "pvc-1234", "--kubeconfig", kubeconfig); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("chain show pvc-1234: %v", err)
	}
}
