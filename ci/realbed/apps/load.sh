#!/usr/bin/env bash
# Loads the application images (images.sh, built if needed) into kind
# clusters, the hook the real bed calls for each site an application may run
# on:
#   ci/realbed/apps/load.sh baton-site-a baton-site-b
# Prints the name=image lines, which the bed passes to
# webapps.WordPressObjects and webapps.GiteaObjects.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -gt 0 ] || die "usage: $0 CLUSTER..."
lines=$(bash "$apps_dir/images.sh")
images=$(echo "$lines" | cut -d= -f2)
for cluster in "$@"; do
	start=$SECONDS
	# shellcheck disable=SC2086 # one argument per image
	"$tools/kind" load docker-image --name "$cluster" $images >&2 || die "loading the application images into $cluster failed"
	log "application images loaded into $cluster in $((SECONDS - start)) s"
done
echo "$lines"
