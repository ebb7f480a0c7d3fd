#!/usr/bin/env bash
# `make realbed`: the real bed, end to end. Brings the clusters up (up.sh),
# builds baton's image (baton-image.sh), deploys baton into each site
# (batonctl realbed deploy), installs OCM on the hub and joins both sites to
# it, deploys site-b's storage through the hub and registers the peers
# (unless BATON_REALBED_OCM=0: then the chart makes site-b's storage too),
# runs the claim round trip in both at once (proof.sh), proves A->B
# replication (both skipped when they passed on the very pods that run now),
# prints what is up and how to reach
# it, builds (cached) the application images, runs REALBED_SCENARIOS on it (wordpress/failover gitea/relocate by
# default; empty runs none) side by side, each on a bed of its own sharing the sites (BATON_REALBED_SIDE_BY_SIDE=0:
# one after the other), into REALBED_OUT, and ends with the one line of
# what the bed still lacks (`batonctl realbed lacking`, read off the host
# and the clusters). Each step is logged with its time and the time since
# the start. It leaves the bed running; `make realbed-down` (down.sh) tears
# it down. Exits 1 naming the step that failed.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$realbed_dir/batonctl.sh"
need_root "the real bed"

started=$SECONDS
# step NAME CMD...: runs CMD; logs how long it took, or dies naming NAME.
step() {
	local name=$1 t=$SECONDS
	shift
	"$@" || die "[$((SECONDS - started)) s] $name failed after $((SECONDS - t)) s"
	log "[$((SECONDS - started)) s] $name: $((SECONDS - t)) s"
}
# proofs: the claim round trip in both sites at once.
proofs() {
	local pids=() site status=0
	for site in $SITES; do
		bash "$realbed_dir/proof.sh" "$site" "$image" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do wait "$pid" || status=1; done
	return "$status"
}

step "clusters up" bash "$realbed_dir/up.sh"
t=$SECONDS
image=$(bash "$realbed_dir/baton-image.sh") || die "building baton's image failed"
log "[$((SECONDS - started)) s] baton's image $image: $((SECONDS - t)) s"
ctl=$(batonctl)
# baton's chart in both sites. With OCM (the default) site-b's release has
# no storage cluster: the hub deploys it below, and the peers follow it.
step "baton deployed" "$ctl" realbed deploy "$image"
# OCM on the hub (bed/real/ocm, docs/realbed.md "OCM on the hub"): OCM's
# registration controller and baton-hub on the hub, each site's klusterlet
# (registration and work agents) and baton's view agent, both sites joined
# and accepted; then site-b's storage deployed from the hub (a
# StorageSiteDeployment: discovery, the draft approved, the StorageCluster
# arriving through ManifestWork, Online) and, with its cluster UUID, each
# site registered as the other's peer. Each of its steps printed with its
# time. Its image is cached (cold: about 27 minutes). BATON_REALBED_OCM=0
# leaves it out, and the chart makes site-b's storage cluster.
if [ "${BATON_REALBED_OCM:-1}" != 0 ]; then
	t=$SECONDS
	ocm_image=$(bash "$realbed_dir/ocm-image.sh") || die "building OCM's image failed"
	log "[$((SECONDS - started)) s] OCM's image $ocm_image: $((SECONDS - t)) s"
	step "OCM on the hub, both sites joined" "$ctl" realbed ocm install --ocm-image "$ocm_image" --baton-image "$image"
	step "site-b's storage deployed through the hub" "$ctl" realbed ocm deploy-storage site-b
	step "peers registered" "$ctl" realbed peers "$image"
fi
# The proofs are kept for the pods they passed on: baton's image and every
# pod of baton-system in each site, by UID and by its containers' restart
# counts. A warm run whose deployment changed nothing -- no pod replaced,
# none restarted -- says so and does not repeat them (about 55 s);
# BATON_REALBED_PROVE=always does. proved_on is empty when a site cannot
# be read, and then the proofs run.
proved_on() {
	local site pods
	echo "$image"
	for site in $SITES; do
		pods=$("$run/kubectl" --kubeconfig "$run/$site.kubeconfig" -n baton-system get pods -o \
			jsonpath='{range .items[*]}{.metadata.uid}{range .status.containerStatuses[*]} {.name}={.restartCount}{end}{"\n"}{end}') || return 1
		[ -n "$pods" ] || return 1
		echo "$site"
		sort <<<"$pods"
	done
}
proofs_stamp=$run/proofs.stamp
key=$(proved_on) || key=
if [ -n "$key" ] && [ "${BATON_REALBED_PROVE:-}" != always ] && [ -f "$proofs_stamp" ] &&
	[ "$(tail -n +2 "$proofs_stamp")" = "$key" ]; then
	log "[$((SECONDS - started)) s] claim round trips and replication proof: passed $(head -n 1 "$proofs_stamp") on these very pods, not repeated (BATON_REALBED_PROVE=always repeats them)"
else
	rm -f "$proofs_stamp"
	step "claim round trip in $SITES" proofs
	t=$SECONDS
	replicated=$("$ctl" realbed prove-replication) || die "the cross-site replication proof failed"
	log "[$((SECONDS - started)) s] $replicated: $((SECONDS - t)) s"
	key=$(proved_on) || key=
	if [ -n "$key" ]; then printf '%s\n%s\n' "$(date -u +%FT%TZ)" "$key" >"$proofs_stamp"; fi
fi

echo "real bed up in $((SECONDS - started)) s (private dockerd: export DOCKER_HOST=$DOCKER_HOST)"
for c in $CLUSTERS; do
	case " $SITES " in
	*" $c "*) what="baton ${image##*:} (operator, node agent on btrfs, CSI driver), claim round trip passed, replicating to its peer"
		if [ "$c" = baton-site-b ] && [ "${BATON_REALBED_OCM:-1}" != 0 ]; then what="$what; its storage cluster deployed by the hub through OCM"; fi ;;
	*) what="OCM's registration controller and baton-hub, both sites accepted"
		if [ "${BATON_REALBED_OCM:-1}" = 0 ]; then what="kind cluster only"; fi ;;
	esac
	printf '  %-13s %s\n                KUBECONFIG=%s\n' "$c" "$what" "$run/$c.kubeconfig"
done
echo "  kubectl:      $run/kubectl"
status=0
if [ -n "${REALBED_SCENARIOS:-}" ]; then
	out=${REALBED_OUT:-out/realbed}
	# The applications run as themselves: their images (built once, cached;
	# the bed loads them into a site's node when it first runs them there).
	if [ "${BATON_REALBED_MODELS:-}" != 1 ]; then
		step "application images" bash "$realbed_dir/apps/images.sh"
	fi
	t=$SECONDS
	together=
	if [ "${BATON_REALBED_SIDE_BY_SIDE:-1}" != 0 ]; then together=--side-by-side; fi
	# shellcheck disable=SC2086 # the list is words
	"$ctl" scenario run $REALBED_SCENARIOS --bed real $together --out "$repo_root/$out" || status=1
	log "[$((SECONDS - started)) s] scenarios $REALBED_SCENARIOS: $((SECONDS - t)) s (report: $repo_root/$out/report.html)"
fi
"$ctl" realbed lacking
echo "make realbed: $((SECONDS - started)) s"
exit "$status"
