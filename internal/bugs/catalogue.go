// Package bugs is the catalogue of seeded bugs: every bug the seed documents
// report (../shared/seeds), re-introduced behind one switch so that the beds
// can show they would catch it if it came back.
//
// The switch has two parts. The build tag baton_bugs compiles the bugs in;
// a default build carries none of them (each package's bugs_off.go holds
// the correct code alone, bugs_on.go adds the bug beside it) and refuses a
// selection. The selector names the bugs a process switches on: the
// environment variable BATON_BUG (comma-separated names), which the
// binaries the local and real beds start inherit, or Switch for the runs of
// one process (the simulation's matrix and tests). A tagged build with no
// selection behaves as a default build.
//
// Each bug lives in one place, named by its Where; its catalogue entry says
// which sentence of which seed it comes from and which scenarios should
// catch it (batonctl bugs list, batonctl bugs matrix).
package bugs

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Name names a seeded bug.
type Name string

// The seeded bugs.
const (
	DemoteEnd          Name = "demote-end"
	ReapedNotFound     Name = "reaped-notfound"
	ResyncLocal        Name = "resync-local"
	PromoteLocal       Name = "promote-local"
	FsTypeExt4         Name = "fstype-ext4"
	BubbleNoVolumeMode Name = "bubble-no-volumemode"
	Walk8              Name = "walk-8"
	ReprovisionMissing Name = "reprovision-missing"
)

// Env is the environment variable that selects the bugs a process switches
// on: comma-separated names.
const Env = "BATON_BUG"

// Tag is the build tag that compiles the bugs in.
const Tag = "baton_bugs"

// Bug is one seeded bug.
type Bug struct {
	Name Name
	// Does says what the code does with the bug on.
	Does string
	// Rule is the rule of ARCHITECTURE.md it breaks: a resolution rule of §3,
	// or §4's adoption.
	Rule string
	// Seed is the seed document and the commit the sentence is from;
	// Sentence is the seed's own words.
	Seed, Sentence string
	// Where is the one place in the code the bug lives.
	Where string
	// Scenarios are the stories that should catch it.
	Scenarios []string
}

const (
	seedOperator  = "000_11a9be67cfc8aa7b (operator PR #620)"
	seedBlockstor = "003_f4dd0d934171b963 (cozystack website PR #667)"
)

var catalogue = []Bug{
	{Name: DemoteEnd, Rule: "rule 1",
		Does:  "Demote and Disable act on the chain's end, not its last local member",
		Seed:  seedOperator + ", commit 280662f",
		Where: "csi/bugs_on.go demoteTarget",
		Sentence: "DemoteVolume (and DisableVolumeReplication on VR deletion) on site A resolved to the chain's end -- " +
			"the NEW primary on site B -- and demoted it",
		Scenarios: []string{"gitea/failover", "wordpress/failover"}},
	{Name: ReapedNotFound, Rule: "rule 2",
		Does:  "a demote or detach of a reaped chain member answers NotFound",
		Seed:  seedOperator + ", commit 18c0824",
		Where: "csi/bugs_on.go goneIsDone",
		Sentence: "Resolved to that member, the demote and the detach got a 404 and the VR stayed Degraded " +
			"(live 2026-10-02, site A, 80e3e748)",
		Scenarios: []string{"gitea/failover", "wordpress/failover"}},
	{Name: ResyncLocal, Rule: "rule 4",
		Does: "Resync and the status read go to the local (demoted or reaped) member, " +
			"not to the active end with the local cluster as fail-back source",
		Seed:  seedOperator + ", commit 2b6e428",
		Where: "csi/bugs_on.go resyncTarget",
		Sentence: "Addressed to the local member -- the demoted or reaped old primary -- it configured nothing for the live " +
			"clone: after the unplanned fail-over of Gitea the clones on A had no replication and lastGroupSyncTime stayed empty",
		Scenarios: []string{"gitea/failover", "wordpress/failover"}},
	{Name: PromoteLocal, Rule: "rule 3",
		Does:  "Promote addresses the local member, not the active end",
		Seed:  seedOperator + ", commit bede3dd",
		Where: "csi/bugs_on.go promoteTarget",
		Sentence: "The local member on the promoting site is the volume being replaced -- demoted, or already reaped: " +
			"on 2026-10-02 the fail-back promote on site A hit the reaped 80e3e748 and 404ed while the live primary on B held the data",
		Scenarios: []string{"gitea/relocate", "wordpress/relocate"}},
	{Name: FsTypeExt4, Rule: "rule 7",
		Does:  "an empty fsType becomes ext4 before the device is looked at",
		Seed:  seedOperator + ", commit 8988179",
		Where: "csi/bugs_on.go askedFilesystem",
		Sentence: "A PersistentVolume without fsType ... gave the node plugin an empty fsType, which it turned into \"ext4\" " +
			"before the device was looked at; the filesystem layer then refused every such XFS volume",
		Scenarios: []string{"gitea/drill", "wordpress/drill"}},
	{Name: BubbleNoVolumeMode, Rule: "rule 8",
		Does:  "the drill's bubble PV and PVC omit the source's volumeMode",
		Seed:  seedOperator + ", commit 599a741",
		Where: "controllers/site/bugs_on.go bubbleVolumeMode",
		Sentence: "The drill's bubble PV and PVC omitted the mode, defaulted to Filesystem, and the kubelet asked the node " +
			"plugin to mount the raw guest disk (mount: exit status 32); the bubble VM never started",
		Scenarios: []string{"gitea/drill", "wordpress/drill"}},
	{Name: Walk8, Rule: "rule 5",
		Does:  "chain walks stop after 8 hops: the ninth move is out of reach",
		Seed:  seedOperator + ", commit e356b56",
		Where: "storage/chain/bugs_on.go stopsShort",
		Sentence: "Both walks ... stopped after 8 hops; the ninth move of a volume -- an unplanned fail-over on 2026-10-03 -- " +
			"left its clone one hop out of reach",
		Scenarios: []string{"gitea/moves", "wordpress/moves"}},
	{Name: ReprovisionMissing, Rule: "§4 Adoption (a volume the control plane cannot find is never re-provisioned)",
		Does: "CreateVolume does not find a volume whose record lacks its DRBD values while the control plane is " +
			"replaced, and creates it anew: a fresh volume on freshly allocated ports, minors and node-ids, not initialized",
		Seed:  seedBlockstor + ", the commit on linstor-csi",
		Where: "storage/core/bugs_on.go findsUndecided",
		Sentence: "linstor-csi keeps reconciling while the control plane is being replaced, and a volume it cannot find " +
			"is a volume it re-provisions: it creates a fresh resource definition through the LINSTOR-compatible API, " +
			"carrying newly allocated DRBD minors and ports and a different node ID, for a volume that already exists and holds data",
		Scenarios: []string{"gitea/replace", "wordpress/replace"}},
}

// Catalogue lists the seeded bugs, in the order the seeds tell them.
func Catalogue() []Bug {
	out := slices.Clone(catalogue)
	for i := range out {
		out[i].Scenarios = slices.Clone(out[i].Scenarios)
	}
	return out
}

// Find returns the bug of that name.
func Find(name string) (Bug, error) {
	for _, b := range Catalogue() {
		if string(b.Name) == name {
			return b, nil
		}
	}
	var names []string
	for _, b := range catalogue {
		names = append(names, string(b.Name))
	}
	return Bug{}, fmt.Errorf("no seeded bug %q (batonctl bugs list: %s)", name, strings.Join(names, ", "))
}

// Strings spells names as strings.
func Strings(names []Name) []string {
	out := make([]string, 0, len(names))
	for _, name := range names {
		out = append(out, string(name))
	}
	return out
}

// Replay is a replay command that switches the bugs on again: the
// environment's selection before the command.
func Replay(names []string, command string) string {
	if len(names) == 0 {
		return command
	}
	return Env + "=" + strings.Join(names, ",") + " " + command
}

// Parse reads a selection: comma-separated names, each in the catalogue.
func Parse(selection string) ([]Name, error) {
	var names []Name
	for _, field := range strings.Split(selection, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		b, err := Find(field)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(names, b.Name) {
			names = append(names, b.Name)
		}
	}
	return names, nil
}

// FromEnv is the selection of the environment (Env): the bugs this process
// switches on. A name the catalogue lacks is an error, and so is any
// selection in a build that carries no bug (Carried): a process started
// with a bug it cannot switch on must not run believing it does.
func FromEnv() ([]Name, error) {
	value := os.Getenv(Env)
	names, err := Parse(value)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", Env, value, err)
	}
	if len(names) > 0 && !Carried {
		return nil, fmt.Errorf("%s=%s: %w", Env, value, errNotCarried)
	}
	return names, nil
}

// errNotCarried: a bug asked of a build without the tag.
var errNotCarried = fmt.Errorf("this binary was built without -tags %s and carries no seeded bug", Tag)
