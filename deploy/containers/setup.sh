#!/usr/bin/env bash
# setup.sh prepares `make test-containers` (docs/DEPLOY.md, "Containers,
# here"): it installs podman, buildah, runc, mmdebstrap and podman-compose with
# apt-get (as root), makes the Dockerfile's base images locally under the names
# the Dockerfile uses (no image registry is reachable here; a real build pulls
# the same names), then builds both targets, runtime and sandbox. Each step is
# skipped when its output exists; BENCHLINE_REBUILD=1 rebuilds the two images.
#
# The base images are stand-ins, made from this machine's Debian mirror:
#   docker.io/library/debian:bookworm-slim    mmdebstrap --variant=minbase
#   docker.io/library/golang:$GO-bookworm     that + this machine's /usr/local/go, git, gcc
#   gcr.io/distroless/static-debian12:nonroot  FROM scratch + passwd/group (65532 nonroot) + CA certificates
# Both carry this machine's CA bundle (its network re-signs TLS) and the Go
# image its GOPROXY: the only differences from the real ones a build sees.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="$PWD/deploy/containers/containers.conf"

CACHE="${BENCHLINE_CACHE:-$HOME/.cache/benchline}"
WORK="$CACHE/containers"
mkdir -p "$WORK"
GO_VERSION=$(sed -n 's/^ARG GO_VERSION=//p' deploy/docker/Dockerfile)
DEBIAN=bookworm
APT_PACKAGES=(podman buildah runc mmdebstrap podman-compose uidmap golang-github-containernetworking-plugin-dnsname catatonit)
NICE=(nice -n 10)

log() { printf 'containers setup: %s (%s)\n' "$*" "$(date -u +%T)" >&2; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" != 0 ]; then
    log "missing Debian packages: ${missing[*]} (sudo apt-get install -y --no-install-recommends ${missing[*]})"
    exit 1
  fi
  log "installing Debian packages: ${missing[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "$(id -u)" = 0 ] || { log "podman here runs as root (runc, cgroupfs): run as root"; exit 1; }

have() { podman image exists "$1"; }

# 1. debian:bookworm-slim from the machine's mirror.
if ! have "docker.io/library/debian:$DEBIAN-slim"; then
  log "making debian:$DEBIAN-slim with mmdebstrap (a few minutes)"
  rm -rf "$WORK/debian" && mkdir -p "$WORK/debian/usr/local/share/ca-certificates"
  cp /etc/ssl/certs/ca-certificates.crt "$WORK/debian/usr/local/share/ca-certificates/host-network.crt"
  "${NICE[@]}" mmdebstrap --variant=minbase --include=ca-certificates \
    --customize-hook="copy-in $WORK/debian/usr/local/share/ca-certificates/host-network.crt /usr/local/share/ca-certificates/" \
    --customize-hook='chroot "$1" update-ca-certificates' \
    --customize-hook='echo "cafile=/etc/ssl/certs/ca-certificates.crt" > "$1/etc/npmrc"' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    "$DEBIAN" "$WORK/rootfs.tar"
  podman import --change 'CMD ["bash"]' "$WORK/rootfs.tar" "docker.io/library/debian:$DEBIAN-slim" >/dev/null
  rm -f "$WORK/rootfs.tar"
fi

# 2. golang:$GO_VERSION-bookworm: Debian plus this machine's Go (the same version).
if ! have "docker.io/library/golang:$GO_VERSION-$DEBIAN"; then
  have_go=$(go env GOVERSION)
  [ "$have_go" = "go$GO_VERSION" ] || { log "the Dockerfile wants Go $GO_VERSION; this machine has $have_go"; exit 1; }
  log "making golang:$GO_VERSION-$DEBIAN"
  ctx="$WORK/golang"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp -a "$(go env GOROOT)" "$ctx/go"
  cat >"$ctx/Containerfile" <<EOT
FROM docker.io/library/debian:$DEBIAN-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git gcc libc6-dev make \
 && rm -rf /var/lib/apt/lists/*
COPY go /usr/local/go
ENV GOLANG_VERSION=$GO_VERSION GOPATH=/go GOTOOLCHAIN=local GOPROXY=$(go env GOPROXY) GOSUMDB=$(go env GOSUMDB)
ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /go
EOT
  "${NICE[@]}" podman build --pull=never --network host -t "docker.io/library/golang:$GO_VERSION-$DEBIAN" "$ctx" >"$WORK/golang.log" 2>&1 \
    || { tail -20 "$WORK/golang.log"; exit 1; }
  rm -rf "$ctx"
fi

# 3. distroless static nonroot: an empty image with users, CA certificates
#    and a /tmp of mode 1777 (imported from a tar: a Containerfile COPY would
#    not keep the directories' modes and owners).
if ! have gcr.io/distroless/static-debian12:nonroot; then
  log "making gcr.io/distroless/static-debian12:nonroot"
  ctx="$WORK/distroless"
  rm -rf "$ctx" && mkdir -p "$ctx/etc/ssl/certs" "$ctx/tmp" "$ctx/home/nonroot"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$ctx/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$ctx/etc/group"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/etc/ssl/certs/"
  chmod 1777 "$ctx/tmp"
  chown 65532:65532 "$ctx/home/nonroot"
  tar -C "$ctx" -cf "$ctx.tar" .
  podman import --change 'USER 65532:65532' --change 'WORKDIR /home/nonroot' "$ctx.tar" gcr.io/distroless/static-debian12:nonroot >/dev/null
  rm -rf "$ctx" "$ctx.tar"
fi

# `setup.sh bases` stops here.
[ "${1:-}" = bases ] && exit 0

# 4. The project's two images, one at a time (2 cores), with the version stamped.
VERSION="${BENCHLINE_VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)
for target in runtime sandbox; do
  tag=benchline:dev
  [ "$target" = sandbox ] && tag=benchline-sandbox:dev
  if [ "${BENCHLINE_REBUILD:-1}" = 0 ] && have "localhost/$tag"; then continue; fi
  log "building $tag (--target $target, version $VERSION)"
  start=$(date +%s)
  "${NICE[@]}" podman build --pull=never --network host -f deploy/docker/Dockerfile --target "$target" \
    --build-arg VERSION="$VERSION" --build-arg COMMIT="$COMMIT" \
    --build-arg BUILD_DATE="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    -t "$tag" . >"$WORK/build-$target.log" 2>&1 || { tail -30 "$WORK/build-$target.log"; exit 1; }
  log "built $tag in $(($(date +%s) - start))s: $(podman image inspect --format '{{.Size}}' "$tag") bytes"
done
