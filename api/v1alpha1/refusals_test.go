package v1alpha1_test

import (
	"maps"
	"slices"
	"strings"
)

// The table of refusals: every validation the CRDs declare, with a patch that
// breaks it. TestEveryValidationIsExercised keeps the table and the schemas in
// step, so a marker without a case here (or a case for a marker that is gone)
// fails the build.

// Keywords of OpenAPI validations, as a refusal's rule; any other rule is the
// message of a CEL rule.
const (
	minimum   = "minimum"
	maximum   = "maximum"
	pattern   = "pattern"
	enum      = "enum"
	minLength = "minLength"
	minItems  = "minItems"
)

// CEL messages, as the markers declare them.
const (
	rangeInverted     = "the range's min must not exceed its max"
	intervalPositive  = "the interval must be positive"
	clusterImmutable  = "clusterID is immutable"
	notOwnPeer        = "a cluster is not its own peer"
	endpointHTTPS     = "the endpoint must be an https URL"
	loopFileSize      = "a loop file needs sizeBytes"
	addressIP         = "address must be an IP address"
	volumeIDImmutable = "volumeID is immutable"
	neverShrinks      = "a volume never shrinks"
	modeImmutable     = "volumeMode is immutable"
	rootImmutable     = "rootHandle is immutable"
	genImmutable      = "generation is immutable"
	rootHasNoPred     = "the root (generation 0) has no predecessor and every later member has one"
	predImmutable     = "predecessor is immutable"
	originImmutable   = "originSnapshot is immutable"
	successorInactive = "a member that knows its successor is not Active"
	csiNameImmutable  = "csiName is immutable"
	replicaSource     = "a replica's source is immutable"
	clonedIntoFixed   = "clonedInto never changes once set"
	portFixed         = "drbdPort never changes once set"
	minorFixed        = "drbdMinor never changes once set"
	initializedStays  = "initialized never reverts to false"
	successorFixed    = "successor never changes once learned"
	tombstoneStays    = "a tombstone never becomes active again"
	snapshotImmutable = "a Snapshot's spec is immutable"
	sourceImmutable   = "sourceVolume is immutable"
	notOwnCluster     = "a replication cannot target its source's own cluster"
	opsImmutable      = "an OperatorOps spec is immutable: a changed discovery is a new OperatorOps (a new run)"
	noNodeSets        = "a draft without node sets cannot be approved"
	noSizing          = "a draft without sizing cannot be approved"
	draftFrozen       = "an approved draft is frozen: a changed deployment is a new draft"
	approvalOneWay    = "approval is one-way: approved cannot go back to false"
	siteImmutable     = "site is immutable: another site is another request"
	siteNSImmutable   = "siteNamespace is immutable"
	requestNoSizing   = "a request without sizing cannot be approved"
	requestFrozen     = "an approved request is frozen: a changed deployment is a new request"
)

// refusal is one change the API server must refuse.
type refusal struct {
	kind  string
	field string // the field the refusal names, lists as "[]": "spec.peers[].id"
	rule  string // an OpenAPI keyword above, or a CEL rule's message
	// status sends setup and patch to the status subresource.
	status bool
	// transition marks a rule that compares with the old object: it can only
	// be broken by an update, so the case is not also tried as a create.
	transition bool
	setup      string // a JSON merge patch applied (and accepted) first
	patch      string // the JSON merge patch that must be refused
}

// userSnapshot is a Volume's user snapshot entry, valid but for field,
// which holds value.
func userSnapshot(field, value string) string {
	entry := map[string]string{"snapshotID": `"` + volume3 + `"`, "member": `"` + handleA3 + `"`, "root": `"` + handleA3 + `"`}
	entry[field] = value
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(entry)) {
		parts = append(parts, `"`+k+`":`+entry[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func spec(fragment string) string   { return `{"spec":` + fragment + `}` }
func status(fragment string) string { return `{"status":` + fragment + `}` }
func sizing(fragment string) string { return `{"spec":{"sizing":` + fragment + `}}` }
func drill(fragment string) string  { return `{"spec":{"drill":` + fragment + `}}` }

const (
	badUUID   = `"0A0A0A0A-0000-4000-8000-00000000000A"` // upper case: not canonical
	badHandle = `"` + clusterA + `"`                     // a cluster without its volume
	clusterC  = "0c0c0c0c-0000-4000-8000-00000000000c"
)

// layoutRefusals are StorageLayout's refusals under prefix, wrapped into a
// patch by wrap: the StorageCluster's spec and the draft's sizing refuse alike.
func layoutRefusals(kind, prefix string, wrap func(string) string) []refusal {
	r := func(field, rule, fragment string) refusal {
		return refusal{kind: kind, field: prefix + field, rule: rule, patch: wrap(fragment)}
	}
	return []refusal{
		r("pool.name", pattern, `{"pool":{"name":"-pool"}}`),
		r("pool.provisioning", enum, `{"pool":{"provisioning":"sparse"}}`),
		r("pool.backend", enum, `{"pool":{"backend":"ceph"}}`),
		r("placeCount", minimum, `{"placeCount":0}`),
		r("placeCount", maximum, `{"placeCount":17}`),
		r("drbdPorts.min", minimum, `{"drbdPorts":{"min":0,"max":7999}}`),
		r("drbdPorts.min", maximum, `{"drbdPorts":{"min":65536,"max":65535}}`),
		r("drbdPorts.max", minimum, `{"drbdPorts":{"min":1,"max":0}}`),
		r("drbdPorts.max", maximum, `{"drbdPorts":{"min":7000,"max":65536}}`),
		r("drbdPorts", rangeInverted, `{"drbdPorts":{"min":8000,"max":7999}}`),
		r("drbdMinors.min", minimum, `{"drbdMinors":{"min":-1,"max":49999}}`),
		r("drbdMinors.min", maximum, `{"drbdMinors":{"min":1048576,"max":1048575}}`),
		r("drbdMinors.max", minimum, `{"drbdMinors":{"min":0,"max":-1}}`),
		r("drbdMinors.max", maximum, `{"drbdMinors":{"min":1000,"max":1048576}}`),
		r("drbdMinors", rangeInverted, `{"drbdMinors":{"min":2000,"max":1999}}`),
		r("replicationInterval", pattern, `{"replicationInterval":"5 minutes"}`),
		r("replicationInterval", intervalPositive, `{"replicationInterval":"0s"}`),
		r("snapshotRetention", minimum, `{"snapshotRetention":1}`),
		r("snapshotRetention", maximum, `{"snapshotRetention":65}`),
		r("pool.thinOvercommitPercent", minimum, `{"pool":{"thinOvercommitPercent":99}}`),
		r("pool.thinOvercommitPercent", maximum, `{"pool":{"thinOvercommitPercent":10001}}`),
	}
}

func refusals() []refusal {
	var r []refusal
	add := func(cases ...refusal) { r = append(r, cases...) }

	const sc = "StorageCluster"
	add(layoutRefusals(sc, "spec.", spec)...)
	add(
		refusal{kind: sc, field: "spec.clusterID", rule: pattern, patch: spec(`{"clusterID":` + badUUID + `}`)},
		refusal{kind: sc, field: "spec.clusterID", rule: clusterImmutable, transition: true, patch: spec(`{"clusterID":"` + clusterC + `"}`)},
		refusal{kind: sc, field: "spec.peers[].id", rule: pattern, patch: spec(`{"peers":[{"id":"site-b","endpoint":"https://b.example"}]}`)},
		refusal{kind: sc, field: "spec.peers[].endpoint", rule: endpointHTTPS, patch: spec(`{"peers":[{"id":"` + clusterB + `","endpoint":"http://b.example"}]}`)},
		refusal{kind: sc, field: "spec.peers[].endpoint", rule: endpointHTTPS, patch: spec(`{"peers":[{"id":"` + clusterB + `","endpoint":"site b"}]}`)},
		refusal{kind: sc, field: "spec.peers", rule: notOwnPeer, patch: spec(`{"peers":[{"id":"` + clusterA + `","endpoint":"https://a.example"}]}`)},
		refusal{kind: sc, field: "status.phase", rule: enum, status: true, patch: status(`{"phase":"Online"}`)},
		refusal{kind: sc, field: "status.nodeCount", rule: minimum, status: true, patch: status(`{"nodeCount":-1}`)},
		refusal{kind: sc, field: "status.readyNodeCount", rule: minimum, status: true, patch: status(`{"readyNodeCount":-1}`)},
		refusal{kind: sc, field: "status.capacity.sizeBytes", rule: minimum, status: true, patch: status(`{"capacity":{"sizeBytes":-1}}`)},
		refusal{kind: sc, field: "status.capacity.allocatedBytes", rule: minimum, status: true, patch: status(`{"capacity":{"allocatedBytes":-1}}`)},
		refusal{kind: sc, field: "status.capacity.freeBytes", rule: minimum, status: true, patch: status(`{"capacity":{"freeBytes":-1}}`)},
	)

	const sn = "StorageNode"
	add(
		refusal{kind: sn, field: "spec.cluster", rule: minLength, patch: spec(`{"cluster":""}`)},
		refusal{kind: sn, field: "spec.nodeName", rule: minLength, patch: spec(`{"nodeName":""}`)},
		refusal{kind: sn, field: "spec.devices[].path", rule: pattern, patch: spec(`{"devices":[{"path":"dev/sdb"}]}`)},
		refusal{kind: sn, field: "spec.devices[].type", rule: enum, patch: spec(`{"devices":[{"path":"/dev/sdb","type":"Tape"}]}`)},
		refusal{kind: sn, field: "spec.devices[].sizeBytes", rule: minimum, patch: spec(`{"devices":[{"path":"/pool.img","type":"LoopFile","sizeBytes":0}]}`)},
		refusal{kind: sn, field: "spec.devices[].sizeBytes", rule: loopFileSize, patch: spec(`{"devices":[{"path":"/pool.img","type":"LoopFile"}]}`)},
		refusal{kind: sn, field: "spec.address", rule: addressIP, patch: spec(`{"address":"node-1.example"}`)},
		refusal{kind: sn, field: "spec.provisioning", rule: enum, patch: spec(`{"provisioning":"sparse"}`)},
		refusal{kind: sn, field: "status.role", rule: enum, status: true, patch: status(`{"role":"Controller"}`)},
		refusal{kind: sn, field: "status.pool.sizeBytes", rule: minimum, status: true, patch: status(`{"pool":{"sizeBytes":-1}}`)},
		refusal{kind: sn, field: "status.pool.allocatedBytes", rule: minimum, status: true, patch: status(`{"pool":{"allocatedBytes":-1}}`)},
		refusal{kind: sn, field: "status.pool.freeBytes", rule: minimum, status: true, patch: status(`{"pool":{"freeBytes":-1}}`)},
		refusal{kind: sn, field: "status.resources[].name", rule: minLength, status: true, patch: status(`{"resources":[{"name":""}]}`)},
		refusal{kind: sn, field: "status.resources[].volume", rule: pattern, status: true, patch: status(`{"resources":[{"name":"r","volume":` + badHandle + `}]}`)},
		refusal{kind: sn, field: "status.resources[].drbdPort", rule: minimum, status: true, patch: status(`{"resources":[{"name":"r","drbdPort":0}]}`)},
		refusal{kind: sn, field: "status.resources[].drbdPort", rule: maximum, status: true, patch: status(`{"resources":[{"name":"r","drbdPort":65536}]}`)},
		refusal{kind: sn, field: "status.resources[].drbdMinor", rule: minimum, status: true, patch: status(`{"resources":[{"name":"r","drbdMinor":-1}]}`)},
		refusal{kind: sn, field: "status.resources[].drbdMinor", rule: maximum, status: true, patch: status(`{"resources":[{"name":"r","drbdMinor":1048576}]}`)},
		refusal{kind: sn, field: "status.resources[].nodeID", rule: minimum, status: true, patch: status(`{"resources":[{"name":"r","nodeID":-1}]}`)},
		refusal{kind: sn, field: "status.resources[].nodeID", rule: maximum, status: true, patch: status(`{"resources":[{"name":"r","nodeID":16}]}`)},
		refusal{kind: sn, field: "status.resources[].diskState", rule: enum, status: true, patch: status(`{"resources":[{"name":"r","diskState":"Healthy"}]}`)},
	)

	const vol = "Volume"
	add(
		refusal{kind: vol, field: "spec.volumeID", rule: pattern, patch: spec(`{"volumeID":` + badUUID + `}`)},
		refusal{kind: vol, field: "spec.volumeID", rule: volumeIDImmutable, transition: true, patch: spec(`{"volumeID":"` + volume3 + `"}`)},
		refusal{kind: vol, field: "spec.sizeBytes", rule: minimum, patch: spec(`{"sizeBytes":-1073741824}`)},
		refusal{kind: vol, field: "spec.sizeBytes", rule: minimum, patch: spec(`{"sizeBytes":0}`)},
		refusal{kind: vol, field: "spec.sizeBytes", rule: neverShrinks, transition: true, patch: spec(`{"sizeBytes":1073741824}`)},
		refusal{kind: vol, field: "spec.placeCount", rule: minimum, patch: spec(`{"placeCount":0}`)},
		refusal{kind: vol, field: "spec.placeCount", rule: maximum, patch: spec(`{"placeCount":17}`)},
		refusal{kind: vol, field: "spec.provisioning", rule: enum, patch: spec(`{"provisioning":"sparse"}`)},
		refusal{kind: vol, field: "spec.fsType", rule: pattern, patch: spec(`{"fsType":"ext4,ro"}`)},
		refusal{kind: vol, field: "spec.volumeMode", rule: enum, patch: spec(`{"volumeMode":"Raw"}`)},
		refusal{kind: vol, field: "spec.volumeMode", rule: modeImmutable, transition: true, patch: spec(`{"volumeMode":"Filesystem"}`)},
		refusal{kind: vol, field: "spec.rootHandle", rule: pattern, patch: spec(`{"rootHandle":` + badHandle + `}`)},
		refusal{kind: vol, field: "spec.rootHandle", rule: rootImmutable, transition: true, patch: spec(`{"rootHandle":"` + handleA3 + `"}`)},
		refusal{kind: vol, field: "spec.generation", rule: minimum, patch: spec(`{"generation":-1}`)},
		refusal{kind: vol, field: "spec.generation", rule: genImmutable, transition: true, patch: spec(`{"generation":2}`)},
		refusal{kind: vol, field: "spec.predecessor", rule: pattern, patch: spec(`{"predecessor":` + badHandle + `}`)},
		refusal{kind: vol, field: "spec.predecessor", rule: rootHasNoPred, patch: spec(`{"predecessor":null}`)},
		refusal{kind: vol, field: "spec.predecessor", rule: rootHasNoPred, patch: spec(`{"generation":0}`)},
		refusal{kind: vol, field: "spec.predecessor", rule: predImmutable, transition: true, patch: spec(`{"predecessor":"` + handleA3 + `"}`)},
		refusal{kind: vol, field: "spec.originSnapshot", rule: originImmutable, transition: true, patch: spec(`{"originSnapshot":{"name":"baton-2"}}`)},
		refusal{kind: vol, field: "spec.originSnapshot", rule: originImmutable, transition: true, patch: spec(`{"originSnapshot":null}`)},
		refusal{kind: vol, field: "spec.originSnapshot.volume", rule: pattern, patch: spec(`{"originSnapshot":{"volume":` + badHandle + `}}`)},
		refusal{kind: vol, field: "spec.originSnapshot.name", rule: minLength, patch: spec(`{"originSnapshot":{"name":""}}`)},
		refusal{kind: vol, field: "spec.csiName", rule: csiNameImmutable, transition: true, setup: spec(`{"csiName":"pvc-1"}`), patch: spec(`{"csiName":"pvc-2"}`)},
		refusal{kind: vol, field: "status.snapshots[].name", rule: minLength, status: true, patch: status(`{"snapshots":[{"name":""}]}`)},
		refusal{kind: vol, field: "status.userSnapshots[].snapshotID", rule: pattern, status: true,
			patch: status(`{"userSnapshots":[` + userSnapshot("snapshotID", badUUID) + `]}`)},
		refusal{kind: vol, field: "status.userSnapshots[].member", rule: pattern, status: true,
			patch: status(`{"userSnapshots":[` + userSnapshot("member", badHandle) + `]}`)},
		refusal{kind: vol, field: "status.userSnapshots[].root", rule: pattern, status: true,
			patch: status(`{"userSnapshots":[` + userSnapshot("root", badHandle) + `]}`)},
		refusal{kind: vol, field: "status.userSnapshots[].sizeBytes", rule: minimum, status: true,
			patch: status(`{"userSnapshots":[` + userSnapshot("sizeBytes", "-1") + `]}`)},
		refusal{kind: vol, field: "status.state", rule: enum, status: true, patch: status(`{"state":"Primary"}`)},
		refusal{kind: vol, field: "status.state", rule: successorInactive, status: true, patch: status(`{"state":"Active","successor":"` + handleA3 + `"}`)},
		refusal{kind: vol, field: "status.successor", rule: pattern, status: true, patch: status(`{"successor":` + badHandle + `}`)},
		refusal{kind: vol, field: "status.replicas[].node", rule: minLength, status: true, patch: status(`{"replicas":[{"node":"","nodeID":0}]}`)},
		refusal{kind: vol, field: "status.replicas[].nodeID", rule: minimum, status: true, patch: status(`{"replicas":[{"node":"node-1","nodeID":-1}]}`)},
		refusal{kind: vol, field: "status.replicas[].nodeID", rule: maximum, status: true, patch: status(`{"replicas":[{"node":"node-1","nodeID":16}]}`)},
		refusal{kind: vol, field: "status.replicas[].diskState", rule: enum, status: true, patch: status(`{"replicas":[{"node":"node-1","nodeID":0,"diskState":"Synced"}]}`)},
		refusal{kind: vol, field: "status.drbdPort", rule: minimum, status: true, patch: status(`{"drbdPort":0}`)},
		refusal{kind: vol, field: "status.drbdPort", rule: maximum, status: true, patch: status(`{"drbdPort":65536}`)},
		refusal{kind: vol, field: "status.drbdMinor", rule: minimum, status: true, patch: status(`{"drbdMinor":-1}`)},
		refusal{kind: vol, field: "status.drbdMinor", rule: maximum, status: true, patch: status(`{"drbdMinor":1048576}`)},
		refusal{kind: vol, field: "status.fsType", rule: pattern, status: true, patch: status(`{"fsType":"XFS"}`)},
		// The chain's transition rules: fixed once set, whether changed or removed.
		refusal{kind: vol, field: "status.drbdPort", rule: portFixed, status: true, transition: true, setup: status(`{"drbdPort":7000}`), patch: status(`{"drbdPort":7001}`)},
		refusal{kind: vol, field: "status.drbdPort", rule: portFixed, status: true, transition: true, setup: status(`{"drbdPort":7000}`), patch: status(`{"drbdPort":null}`)},
		refusal{kind: vol, field: "status.drbdMinor", rule: minorFixed, status: true, transition: true, setup: status(`{"drbdMinor":1000}`), patch: status(`{"drbdMinor":1001}`)},
		refusal{kind: vol, field: "status.drbdMinor", rule: minorFixed, status: true, transition: true, setup: status(`{"drbdMinor":1000}`), patch: status(`{"drbdMinor":null}`)},
		refusal{kind: vol, field: "status.initialized", rule: initializedStays, status: true, transition: true, setup: status(`{"initialized":true}`), patch: status(`{"initialized":false}`)},
		refusal{kind: vol, field: "status.initialized", rule: initializedStays, status: true, transition: true, setup: status(`{"initialized":true}`), patch: status(`{"initialized":null}`)},
		refusal{kind: vol, field: "status.initialized", rule: initializedStays, status: true, transition: true, setup: status(`{"initialized":true}`), patch: `{"status":null}`},
		refusal{kind: vol, field: "status.successor", rule: successorFixed, status: true, transition: true, setup: status(`{"state":"Demoted","successor":"` + handleA3 + `"}`), patch: status(`{"successor":"` + handleB2 + `"}`)},
		refusal{kind: vol, field: "status.successor", rule: successorFixed, status: true, transition: true, setup: status(`{"state":"Demoted","successor":"` + handleA3 + `"}`), patch: status(`{"successor":null}`)},
		refusal{kind: vol, field: "status.state", rule: tombstoneStays, status: true, transition: true, setup: status(`{"state":"Tombstone"}`), patch: status(`{"state":"Active"}`)},
		refusal{kind: vol, field: "status.state", rule: tombstoneStays, status: true, transition: true, setup: status(`{"state":"Tombstone"}`), patch: status(`{"state":"Demoted"}`)},
	)

	const snap = "Snapshot"
	add(
		refusal{kind: snap, field: "spec.volume", rule: pattern, patch: spec(`{"volume":` + badHandle + `}`)},
		refusal{kind: snap, field: "spec.snapshotName", rule: minLength, patch: spec(`{"snapshotName":""}`)},
		refusal{kind: snap, field: "spec", rule: snapshotImmutable, transition: true, patch: spec(`{"snapshotName":"baton-2"}`)},
		refusal{kind: snap, field: "status.sizeBytes", rule: minimum, status: true, patch: status(`{"sizeBytes":-1}`)},
	)

	const rep = "Replication"
	add(
		refusal{kind: rep, field: "spec.sourceVolume", rule: pattern, patch: spec(`{"sourceVolume":` + badHandle + `}`)},
		refusal{kind: rep, field: "spec.sourceVolume", rule: sourceImmutable, transition: true, patch: spec(`{"sourceVolume":"` + handleA3 + `"}`)},
		refusal{kind: rep, field: "spec.targetCluster", rule: pattern, patch: spec(`{"targetCluster":` + badUUID + `}`)},
		refusal{kind: rep, field: "spec.targetCluster", rule: notOwnCluster, patch: spec(`{"targetCluster":"` + clusterA + `"}`)},
		refusal{kind: rep, field: "spec.interval", rule: pattern, patch: spec(`{"interval":"5"}`)},
		refusal{kind: rep, field: "spec.interval", rule: intervalPositive, patch: spec(`{"interval":"0m"}`)},
		refusal{kind: rep, field: "spec.retention", rule: minimum, patch: spec(`{"retention":1}`)},
		refusal{kind: rep, field: "spec.retention", rule: maximum, patch: spec(`{"retention":65}`)},
		refusal{kind: rep, field: "spec.failbackSource", rule: pattern, patch: spec(`{"failbackSource":"site-a"}`)},
		refusal{kind: rep, field: "status.phase", rule: enum, status: true, patch: status(`{"phase":"Healthy"}`)},
		refusal{kind: rep, field: "status.lastSyncBytes", rule: minimum, status: true, patch: status(`{"lastSyncBytes":-1}`)},
		refusal{kind: rep, field: "status.lastSnapshot.name", rule: minLength, status: true, patch: status(`{"lastSnapshot":{"name":""}}`)},
		refusal{kind: rep, field: "status.commonSnapshot.name", rule: minLength, status: true, patch: status(`{"commonSnapshot":{"name":""}}`)},
		refusal{kind: rep, field: "status.cycle.phase", rule: enum, status: true, patch: status(`{"cycle":{"phase":"Sleeping"}}`)},
		refusal{kind: rep, field: "status.cycle.sequence", rule: minimum, status: true, patch: status(`{"cycle":{"phase":"Idle","sequence":-1}}`)},
		refusal{kind: rep, field: "status.cycle.snapshots[].name", rule: minLength, status: true, patch: status(`{"cycle":{"phase":"Idle","snapshots":[{"name":""}]}}`)},
		refusal{kind: rep, field: "status.cycle.lastSync.bytes", rule: minimum, status: true, patch: status(`{"cycle":{"phase":"Idle","lastSync":{"bytes":-1}}}`)},
		refusal{kind: rep, field: "status.cycle.failures", rule: minimum, status: true, patch: status(`{"cycle":{"phase":"Idle","failures":-1}}`)},
		refusal{kind: rep, field: "status.cycle.receivers[].node", rule: minLength, status: true, patch: status(`{"cycle":{"phase":"Idle","receivers":[{"node":""}]}}`)},
	)

	const rc = "Replica"
	add(
		refusal{kind: rc, field: "spec.source", rule: pattern, patch: spec(`{"source":` + badHandle + `}`)},
		refusal{kind: rc, field: "spec.source", rule: replicaSource, transition: true, patch: spec(`{"source":"` + handleA3 + `"}`)},
		refusal{kind: rc, field: "spec.rootHandle", rule: pattern, patch: spec(`{"rootHandle":` + badHandle + `}`)},
		refusal{kind: rc, field: "spec.rootHandle", rule: rootImmutable, transition: true, patch: spec(`{"rootHandle":"` + handleA3 + `"}`)},
		refusal{kind: rc, field: "spec.sourceGeneration", rule: minimum, patch: spec(`{"sourceGeneration":-1}`)},
		refusal{kind: rc, field: "spec.sizeBytes", rule: minimum, patch: spec(`{"sizeBytes":0}`)},
		refusal{kind: rc, field: "spec.placeCount", rule: minimum, patch: spec(`{"placeCount":0}`)},
		refusal{kind: rc, field: "spec.placeCount", rule: maximum, patch: spec(`{"placeCount":17}`)},
		refusal{kind: rc, field: "spec.provisioning", rule: enum, patch: spec(`{"provisioning":"sparse"}`)},
		refusal{kind: rc, field: "spec.fsType", rule: pattern, patch: spec(`{"fsType":"ext4,ro"}`)},
		refusal{kind: rc, field: "spec.volumeMode", rule: enum, patch: spec(`{"volumeMode":"Raw"}`)},
		refusal{kind: rc, field: "status.received[].node", rule: minLength, status: true, patch: status(`{"received":[{"node":""}]}`)},
		refusal{kind: rc, field: "status.received[].snapshots[].name", rule: minLength, status: true, patch: status(`{"received":[{"node":"node-1","snapshots":[{"name":""}]}]}`)},
		refusal{kind: rc, field: "status.clonedInto", rule: pattern, status: true, patch: status(`{"clonedInto":` + badHandle + `}`)},
		refusal{kind: rc, field: "status.clonedInto", rule: clonedIntoFixed, status: true, transition: true, setup: status(`{"clonedInto":"` + handleA3 + `"}`), patch: status(`{"clonedInto":"` + handleB2 + `"}`)},
		refusal{kind: rc, field: "status.clonedInto", rule: clonedIntoFixed, status: true, transition: true, setup: status(`{"clonedInto":"` + handleA3 + `"}`), patch: status(`{"clonedInto":null}`)},
	)

	const ops = "OperatorOps"
	add(
		refusal{kind: ops, field: "spec", rule: opsImmutable, transition: true, patch: spec(`{"nodeNames":["node-1","node-2","node-3"]}`)},
		refusal{kind: ops, field: "spec", rule: opsImmutable, transition: true, patch: spec(`{"devices":{"allowLoopFiles":false}}`)},
		refusal{kind: ops, field: "spec.devices.minSizeBytes", rule: minimum, patch: spec(`{"devices":{"minSizeBytes":-1}}`)},
		refusal{kind: ops, field: "status.phase", rule: enum, status: true, patch: status(`{"phase":"Done"}`)},
		refusal{kind: ops, field: "status.nodes[].devices[].type", rule: enum, status: true, patch: status(`{"nodes":[{"name":"node-1","devices":[{"path":"/dev/sdb","type":"SSD"}]}]}`)},
		refusal{kind: ops, field: "status.nodes[].devices[].sizeBytes", rule: minimum, status: true, patch: status(`{"nodes":[{"name":"node-1","devices":[{"path":"/dev/sdb","sizeBytes":-1}]}]}`)},
	)

	const cdc = "ClusterDeploymentConfig"
	add(layoutRefusals(cdc, "spec.sizing.", sizing)...)
	add(
		refusal{kind: cdc, field: "spec.sizing.clusterName", rule: pattern, patch: sizing(`{"clusterName":"Site_A"}`)},
		refusal{kind: cdc, field: "spec.nodeSets[].name", rule: pattern, patch: spec(`{"nodeSets":[{"name":"Storage","nodes":["node-1"]}]}`)},
		refusal{kind: cdc, field: "spec.nodeSets[].nodes", rule: minItems, patch: spec(`{"nodeSets":[{"name":"storage","nodes":[]}]}`)},
		refusal{kind: cdc, field: "spec.nodeSets[].devices[]", rule: pattern, patch: spec(`{"nodeSets":[{"name":"storage","nodes":["node-1"],"devices":["sdb"]}]}`)},
		refusal{kind: cdc, field: "spec.approved", rule: noNodeSets, patch: spec(`{"nodeSets":null,"approved":true}`)},
		refusal{kind: cdc, field: "spec.approved", rule: noNodeSets, patch: spec(`{"nodeSets":[],"approved":true}`)},
		refusal{kind: cdc, field: "spec.approved", rule: noSizing, patch: spec(`{"sizing":null,"approved":true}`)},
		refusal{kind: cdc, field: "spec.approved", rule: approvalOneWay, transition: true, setup: spec(`{"approved":true}`), patch: spec(`{"approved":false}`)},
		refusal{kind: cdc, field: "spec.approved", rule: approvalOneWay, transition: true, setup: spec(`{"approved":true}`), patch: spec(`{"approved":null}`)},
		refusal{kind: cdc, field: "spec", rule: draftFrozen, transition: true, setup: spec(`{"approved":true}`), patch: sizing(`{"placeCount":3}`)},
		refusal{kind: cdc, field: "spec", rule: draftFrozen, transition: true, setup: spec(`{"approved":true}`), patch: spec(`{"nodeSets":[{"name":"storage","nodes":["node-1","node-2","node-3","node-4"]}]}`)},
		refusal{kind: cdc, field: "status.phase", rule: enum, status: true, patch: status(`{"phase":"Online"}`)},
		refusal{kind: cdc, field: "status.cluster.clusterID", rule: pattern, status: true, patch: status(`{"cluster":{"name":"site-a","clusterID":"site-a"}}`)},
	)

	const tf = "TestFailover"
	add(
		refusal{kind: tf, field: "spec.source", rule: minLength, patch: spec(`{"source":""}`)},
		refusal{kind: tf, field: "spec.targetNamespace", rule: pattern, patch: spec(`{"targetNamespace":"Drill"}`)},
		refusal{kind: tf, field: "spec.pvcName", rule: pattern, patch: spec(`{"pvcName":"bubble_pvc"}`)},
		refusal{kind: tf, field: "status.phase", rule: enum, status: true, patch: status(`{"phase":"Running"}`)},
		refusal{kind: tf, field: "status.snapshot.name", rule: minLength, status: true, patch: status(`{"snapshot":{"name":""}}`)},
		refusal{kind: tf, field: "status.bubbleVolume", rule: pattern, status: true, patch: status(`{"bubbleVolume":` + badHandle + `}`)},
		refusal{kind: tf, field: "status.sourceVolumeMode", rule: enum, status: true, patch: status(`{"sourceVolumeMode":"Raw"}`)},
		refusal{kind: tf, field: "status.sourceFsType", rule: pattern, status: true, patch: status(`{"sourceFsType":"ext4,ro"}`)},
	)

	add(hubRefusals()...)
	return r
}

// hubRefusals are the refusals of the hub's kinds: a request names its site
// once, sizes like the draft it sizes, and approves one way.
func hubRefusals() []refusal {
	const ssd = "StorageSiteDeployment"
	r := layoutRefusals(ssd, "spec.sizing.", sizing)
	r = append(r,
		refusal{kind: ssd, field: "spec.site", rule: pattern, patch: spec(`{"site":"Site_A"}`)},
		refusal{kind: ssd, field: "spec.site", rule: siteImmutable, transition: true, patch: spec(`{"site":"site-c"}`)},
		refusal{kind: ssd, field: "spec.siteNamespace", rule: pattern, patch: spec(`{"siteNamespace":"Baton"}`)},
		refusal{kind: ssd, field: "spec.siteNamespace", rule: siteNSImmutable, transition: true, patch: spec(`{"siteNamespace":"storage"}`)},
		refusal{kind: ssd, field: "spec.discovery.devices.minSizeBytes", rule: minimum, patch: spec(`{"discovery":{"devices":{"minSizeBytes":-1}}}`)},
		refusal{kind: ssd, field: "spec.sizing.clusterName", rule: pattern, patch: sizing(`{"clusterName":"Site_A"}`)},
		refusal{kind: ssd, field: "spec.approved", rule: requestNoSizing, patch: spec(`{"sizing":null,"approved":true}`)},
		refusal{kind: ssd, field: "spec.approved", rule: approvalOneWay, transition: true, setup: spec(`{"approved":true}`), patch: spec(`{"approved":false}`)},
		refusal{kind: ssd, field: "spec.approved", rule: approvalOneWay, transition: true, setup: spec(`{"approved":true}`), patch: spec(`{"approved":null}`)},
		refusal{kind: ssd, field: "spec", rule: requestFrozen, transition: true, setup: spec(`{"approved":true}`), patch: sizing(`{"placeCount":3}`)},
		refusal{kind: ssd, field: "spec", rule: requestFrozen, transition: true, setup: spec(`{"approved":true}`), patch: spec(`{"discovery":{"nodeNames":["node-4"]}}`)},
		refusal{kind: ssd, field: "status.phase", rule: enum, status: true, patch: status(`{"phase":"Ready"}`)},
		refusal{kind: ssd, field: "status.readyNodeCount", rule: minimum, status: true, patch: status(`{"readyNodeCount":-1}`)},
		refusal{kind: ssd, field: "status.cluster.clusterID", rule: pattern, status: true, patch: status(`{"cluster":{"name":"site-a","clusterID":"site-a"}}`)},
		refusal{kind: ssd, field: "status.draft.phase", rule: enum, status: true, patch: status(`{"draft":{"name":"site-a","phase":"Online"}}`)},
		refusal{kind: ssd, field: "status.draft.nodeSets[].name", rule: pattern, status: true, patch: status(`{"draft":{"name":"site-a","nodeSets":[{"name":"Storage","nodes":["node-1"]}]}}`)},
		refusal{kind: ssd, field: "status.draft.nodeSets[].nodes", rule: minItems, status: true, patch: status(`{"draft":{"name":"site-a","nodeSets":[{"name":"storage","nodes":[]}]}}`)},
		refusal{kind: ssd, field: "status.draft.nodeSets[].devices[]", rule: pattern, status: true, patch: status(`{"draft":{"name":"site-a","nodeSets":[{"name":"storage","nodes":["node-1"],"devices":["sdb"]}]}}`)},
	)

	const stf = "SiteTestFailover"
	return append(r,
		refusal{kind: stf, field: "spec.site", rule: pattern, patch: spec(`{"site":"-site-b"}`)},
		refusal{kind: stf, field: "spec.site", rule: siteImmutable, transition: true, patch: spec(`{"site":"site-a"}`)},
		refusal{kind: stf, field: "spec.siteNamespace", rule: pattern, patch: spec(`{"siteNamespace":"baton_system"}`)},
		refusal{kind: stf, field: "spec.siteNamespace", rule: siteNSImmutable, transition: true, patch: spec(`{"siteNamespace":"storage"}`)},
		refusal{kind: stf, field: "spec.drill.source", rule: minLength, patch: drill(`{"source":""}`)},
		refusal{kind: stf, field: "spec.drill.targetNamespace", rule: pattern, patch: drill(`{"targetNamespace":"Drill"}`)},
		refusal{kind: stf, field: "spec.drill.pvcName", rule: pattern, patch: drill(`{"pvcName":"bubble_pvc"}`)},
		refusal{kind: stf, field: "status.drill.phase", rule: enum, status: true, patch: status(`{"drill":{"phase":"Running"}}`)},
		refusal{kind: stf, field: "status.drill.snapshot.name", rule: minLength, status: true, patch: status(`{"drill":{"snapshot":{"name":""}}}`)},
		refusal{kind: stf, field: "status.drill.bubbleVolume", rule: pattern, status: true, patch: status(`{"drill":{"bubbleVolume":` + badHandle + `}}`)},
		refusal{kind: stf, field: "status.drill.sourceVolumeMode", rule: enum, status: true, patch: status(`{"drill":{"sourceVolumeMode":"Raw"}}`)},
		refusal{kind: stf, field: "status.drill.sourceFsType", rule: pattern, status: true, patch: status(`{"drill":{"sourceFsType":"ext4,ro"}}`)},
	)
}
