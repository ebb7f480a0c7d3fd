#!/usr/bin/env bash
# `make realbed`: the real bed, end to end. Brings the clusters up (up.sh),
# builds baton's image (baton-image.sh), deploys baton into each site
# (deploy.sh), runs the claim round trip in each (proof.sh), then prints what
# is up, how to reach it, and the one line of what the bed still lacks
# (`batonctl realbed lacking`, read off the host and the clusters). It
# leaves the bed running; `make realbed-down` (down.sh) tears it down.
# Exits 1 naming the step that failed.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$realbed_dir/batonctl.sh"
need_root "the real bed"

started=$SECONDS
bash "$realbed_dir/up.sh"
image=$(bash "$realbed_dir/baton-image.sh") || die "building baton's image failed"
ctl=$(batonctl)
"$ctl" realbed deploy "$image" || die "deploying baton failed"
for site in $SITES; do
	bash "$realbed_dir/proof.sh" "$site" "$image" || die "$site: the claim round trip failed"
done
replicated=$("$ctl" realbed prove-replication) || die "the cross-site replication proof failed"
log "$replicated"

echo "real bed up in $((SECONDS - started)) s (private dockerd: export DOCKER_HOST=$DOCKER_HOST)"
for c in $CLUSTERS; do
	case " $SITES " in
	*" $c "*) what="baton ${image##*:} (operator, node agent on btrfs, CSI driver), claim round trip passed, replicating to its peer" ;;
	*) what="kind cluster only" ;;
	esac
	printf '  %-13s %s\n                KUBECONFIG=%s\n' "$c" "$what" "$run/$c.kubeconfig"
done
echo "  kubectl:      $run/kubectl"
# The scenarios, on the sites just brought up (REALBED_SCENARIOS, make
# realbed's wordpress/failover gitea/relocate by default; empty runs none).
status=0
if [ -n "${REALBED_SCENARIOS:-}" ]; then
	out=${REALBED_OUT:-out/realbed}
	# shellcheck disable=SC2086 # the list is words
	"$ctl" scenario run $REALBED_SCENARIOS --bed real --out "$repo_root/$out" || status=1
fi
# What the bed lacks, read off the host and the clusters.
"$ctl" realbed lacking
exit "$status"
