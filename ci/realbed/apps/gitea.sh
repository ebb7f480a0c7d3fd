#!/usr/bin/env bash
# Builds Gitea's image in the private dockerd and prints its name:
#   1. gitea $GITEA_VERSION from the Go module proxy, with cgo and the tags
#      `sqlite sqlite_unlock_notify` (SQLite is mattn/go-sqlite3, C). Its go.mod
#      has replace directives, so `go install pkg@version` is refused: the
#      module's own tree is copied out of the module cache and built as the
#      main module. Without the `bindata` tag Gitea reads its templates,
#      options (locales, licences) and public files from disk, so the module's
#      templates/, options/ and public/ ship beside the binary
#      (/usr/share/gitea, its work path). The web UI's webpack bundle is not in
#      the module; the API, all the real bed drives, does not need it.
#   2. a minbase tree with git (Gitea runs git for every repository
#      operation), ca-certificates, tzdata and sqlite3 (the database's own
#      tool, to inspect it by hand; the tests change rows with it);
#   3. the image: the tree, the binary, the entrypoint (gitea-entrypoint) and
#      the git wrapper that makes pushes durable (gitea-git), run as the
#      unprivileged user git.
# --binary-only and --trees-only stop before the docker build (they need no
# dockerd). Needs the private dockerd (../dockerd.sh start). Cold: the binary is minutes
# (see docs/realbed.md), the tree a few; warm: a few seconds.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GITEA_TAGS="sqlite sqlite_unlock_notify"
GITEA_PACKAGES=git,ca-certificates,tzdata,sqlite3

# gitea_binary: $apps/gitea-$GITEA_VERSION/{gitea,share/}, keyed by the
# version, the tags and the Go toolchain.
gitea_binary() {
	local out=$apps/gitea-$GITEA_VERSION
	local want="$GITEA_VERSION $GITEA_TAGS $(go version)"
	if [ -f "$out.stamp" ] && [ "$(cat "$out.stamp")" = "$want" ]; then return 0; fi
	local start=$SECONDS json dir
	json=$(cd / && GOFLAGS=-mod=mod go mod download -json "code.gitea.io/gitea@$GITEA_VERSION") ||
		die "the module proxy did not serve code.gitea.io/gitea@$GITEA_VERSION: $json"
	dir=$(echo "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -f "$dir/go.mod" ] || die "code.gitea.io/gitea@$GITEA_VERSION: no module tree in $dir"
	local src=$apps/gitea-src
	rm -rf "$src" "$out" "$out.stamp" && mkdir -p "$out/share"
	cp -r "$dir" "$src" && chmod -R u+w "$src"
	log "building gitea $GITEA_VERSION (cgo, tags: $GITEA_TAGS) -- many minutes when cold"
	# The Makefile's flags: the version, the tags, and SQLite's higher
	# variable limit (Gitea batches large IN lists).
	(cd "$src" && CGO_ENABLED=1 CGO_CFLAGS="-O2 -g -DSQLITE_MAX_VARIABLE_NUMBER=32766" GOFLAGS=-mod=mod \
		nice go build -trimpath -tags "$GITEA_TAGS" \
		-ldflags "-s -w -X main.Version=${GITEA_VERSION#v} -X 'main.Tags=$GITEA_TAGS'" -o "$out/gitea" .) \
		>"$apps/gitea-build.log" 2>&1 || { tail -30 "$apps/gitea-build.log" >&2; die "building gitea failed; its log: $apps/gitea-build.log"; }
	cp -r "$src/templates" "$src/options" "$src/public" "$out/share/"
	rm -rf "$src"
	echo "$want" >"$out.stamp"
	log "gitea $GITEA_VERSION built in $((SECONDS - start)) s"
}

mkdir -p "$apps"
lock apps-gitea
gitea_binary
[ "${1:-}" = --binary-only ] && exit 0
app_tree gitea "$GITEA_PACKAGES"
[ "${1:-}" = --trees-only ] && exit 0
tree=$apps/rootfs/gitea
ctx=$apps/context/gitea
rm -rf "$ctx" && mkdir -p "$ctx"
cp -r "$apps/gitea-$GITEA_VERSION/gitea" "$apps/gitea-$GITEA_VERSION/share" "$ctx/"
cp "$apps/gitea-$GITEA_VERSION.stamp" "$ctx/gitea.stamp"
install -m 0755 "$apps_dir/gitea-entrypoint" "$ctx/entrypoint"
install -m 0755 "$apps_dir/gitea-git" "$ctx/gitea-git"
cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
ADD rootfs.tar /
COPY gitea /usr/local/bin/gitea
COPY share/ /usr/share/gitea/
COPY entrypoint /usr/local/bin/gitea-entrypoint
COPY gitea-git /usr/local/bin/gitea-git
RUN useradd --system --uid 1000 --user-group --home-dir /data/state/home --no-create-home --shell /bin/sh git
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GITEA_WORK_DIR=/usr/share/gitea
EXPOSE 3000
ENTRYPOINT ["/usr/local/bin/gitea-entrypoint"]
DOCKERFILE
app_image gitea "$tree" "$ctx"
