#!/usr/bin/env bash
# sandbox-suite.sh runs internal/sandbox's tests (the escape and resource
# suite: network, files, environment, privileges, fork and memory bombs,
# CPU, wall and output limits) inside the sandbox image as its worker runs
# there: root in the container, the host network, a read-only root file
# system, a 2 GiB /dev/shm, and the security options of sandbox-opts.txt.
# The checkout is mounted read-only at its own path, so the suite's "the
# sandbox cannot read the repository" case has something to hide.
#
# Then it shows that each option is needed: without any of them, and
# without each capability, seccomp or /proc setting in turn, the suite must
# fail, saying the sandbox is unusable (never run unsandboxed). AppArmor
# cannot be checked on a host without it (this one). Last, it runs the
# suite with the narrower seccomp profile of seccomp-profile.py (the
# engine's default plus sethostname) in place of seccomp=unconfined.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="$PWD/deploy/containers/containers.conf"
IMAGE="${BENCHLINE_SANDBOX_IMAGE:-localhost/benchline-sandbox:dev}"
mapfile -t OPTS < <(grep -v '^\s*#' deploy/containers/sandbox-opts.txt | sed '/^\s*$/d')

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The test binary is mounted, not baked in: the image run is the one shipped.
CGO_ENABLED=0 nice go test -c -o "$dir/sandbox.test" ./internal/sandbox

suite() { # suite LOG TEST-ARGS -- OPTIONS...
  local log=$1 args=()
  shift
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  podman run --rm --network host --read-only --tmpfs /tmp --shm-size 2g \
    -v "$dir:/suite:ro" -v "$PWD:$PWD:ro" --entrypoint /suite/sandbox.test "$@" "$IMAGE" \
    -test.count=1 -test.v "${args[@]}" >"$log" 2>&1
}

echo "sandbox suite: in $IMAGE with ${OPTS[*]}"
start=$(date +%s)
if ! suite "$dir/full.log" -- "${OPTS[@]}"; then
  grep -E '^(--- FAIL|FAIL|\s+\S+_test.go)' "$dir/full.log" | tail -40
  echo "sandbox suite: FAILED inside the sandbox image"
  exit 1
fi
grep -E '^--- (PASS|SKIP)' "$dir/full.log" | sed 's/^/  /'
if grep -q 'only the rlimit fallback is tested' "$dir/full.log"; then
  echo "  (no writable cgroup in the container: the rlimit fallback enforces memory and processes)"
fi
echo "sandbox suite: passed in the sandbox image in $(($(date +%s) - start))s"

# refused WHAT OPTIONS...: the suite (-short) must fail with the sandbox's own message.
refused() {
  local what=$1
  shift
  if suite "$dir/neg.log" -test.short -- "$@"; then
    echo "sandbox suite: $what: the suite still passed: that option is not needed (narrow sandbox-opts.txt)"
    return 1
  fi
  local why
  why=$(grep -o -m1 'bubblewrap cannot run a program here ([^;]*' "$dir/neg.log" || grep -m1 -E '^--- FAIL' "$dir/neg.log")
  if [ -z "$why" ]; then
    tail -20 "$dir/neg.log"
    echo "sandbox suite: $what: failed, but not as a refused sandbox"
    return 1
  fi
  echo "  $what: refused: $why"
}
echo "sandbox suite: every option is needed:"
refused "podman's defaults (no option)"
for i in "${!OPTS[@]}"; do
  o=${OPTS[$i]}
  rest=("${OPTS[@]:0:$i}" "${OPTS[@]:$((i + 1))}")
  case "$o" in
    --cap-drop=ALL | --security-opt=no-new-privileges) ;; # they narrow; leaving them out only widens
    --security-opt=apparmor=unconfined)
      if [ -d /sys/kernel/security/apparmor ]; then refused "without $o" "${rest[@]}"; else
        echo "  without $o: not checkable here (no AppArmor on this host); kept for hosts whose AppArmor refuses user namespaces"
      fi ;;
    --cap-add=*)
      IFS=, read -r -a caps <<<"${o#--cap-add=}"
      for c in "${caps[@]}"; do
        left=$(printf '%s\n' "${caps[@]}" | grep -vx "$c" | paste -sd, -)
        refused "without $c" "${rest[@]}" "--cap-add=$left"
      done ;;
    *) refused "without $o" "${rest[@]}" ;;
  esac
done

# The narrower seccomp profile: the engine's default plus sethostname.
default=/usr/share/containers/seccomp.json
if [ -f "$default" ]; then
  python3 deploy/containers/seccomp-profile.py "$default" >"$dir/seccomp.json"
  narrow=()
  for o in "${OPTS[@]}"; do
    [ "$o" = --security-opt=seccomp=unconfined ] && o="--security-opt=seccomp=$dir/seccomp.json"
    narrow+=("$o")
  done
  if suite "$dir/narrow.log" -- "${narrow[@]}"; then
    echo "sandbox suite: passed too with podman's default seccomp profile plus sethostname (seccomp-profile.py) in place of seccomp=unconfined"
  else
    grep -E '^(--- FAIL|\s+\S+_test.go)' "$dir/narrow.log" | head -10
    echo "sandbox suite: FAILED with the engine's default seccomp profile plus sethostname"
    exit 1
  fi
fi
