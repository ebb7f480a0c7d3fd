#!/usr/bin/env bash
# Builds the real bed's application images (WordPress's two and Gitea's) in
# the private dockerd, prints them as name=image lines and writes the same
# lines to $cache/apps/images.txt, where bed/real/webapps's tests and the bed
# find them:
#   mariadb=baton.local/mariadb:<hash>
#   wordpress=baton.local/wordpress:<hash>
#   gitea=baton.local/gitea:<hash>
# Starts the private dockerd if it is not running (it is never stopped here).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bash "$realbed_dir/dockerd.sh" start
mkdir -p "$apps"
lines=$(bash "$apps_dir/wordpress.sh")
lines+=$'\n'"gitea=$(bash "$apps_dir/gitea.sh")"
echo "$lines" >"$apps/images.txt.new" && mv "$apps/images.txt.new" "$apps/images.txt"
echo "$lines"
