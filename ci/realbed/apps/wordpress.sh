#!/usr/bin/env bash
# Builds WordPress's two images in the private dockerd and prints their names,
# one a line, as name=image:
#   mariadb=baton.local/mariadb:<hash>      Debian's mariadb-server (10.11), the
#                                           database pod; its datadir is a volume
#   wordpress=baton.local/wordpress:<hash>  Debian's wordpress (6.1) with apache2
#                                           and mod_php, the web pod; its uploads
#                                           directory is the other volume
# Two pods, not one: each volume belongs to the one process that writes it, the
# database recovers (InnoDB redo) whether or not the web server is up, and the
# web pod waits for the database the way a real deployment does. Each image is
# a debootstrapped minbase tree plus the files under wordpress/ or mariadb/.
# --trees-only stops before the docker builds (it needs no dockerd). Needs
# the private dockerd (../dockerd.sh start). Cold a few minutes per tree;
# warm a few seconds.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# debootstrap installs no Recommends: the theme is named, the translations
# (wordpress-l10n) are left out; wordpress pulls php, php-gd, php-mysql and
# mariadb-client in by its Depends.
WORDPRESS_PACKAGES=wordpress,wordpress-theme-twentytwentythree,apache2,libapache2-mod-php,php-mysql,ca-certificates
MARIADB_PACKAGES=mariadb-server

# context NAME: a fresh build context with the files under apps/NAME/.
context() {
	local ctx=$apps/context/$1
	rm -rf "$ctx" && mkdir -p "$ctx"
	cp -r "$apps_dir/$1/." "$ctx/"
	echo "$ctx"
}

mkdir -p "$apps"
lock apps-wordpress
app_tree mariadb "$MARIADB_PACKAGES"
app_tree wordpress "$WORDPRESS_PACKAGES"
[ "${1:-}" = --trees-only ] && exit 0
# The package's postinst initialised a datadir; the volume replaces it.
echo "mariadb=$(app_image mariadb "$apps/rootfs/mariadb" "$(context mariadb)" './var/lib/mysql/*')"
echo "wordpress=$(app_image wordpress "$apps/rootfs/wordpress" "$(context wordpress)")"
