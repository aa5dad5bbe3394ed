# A container registry for one test: Debian's docker-registry
# (distribution v2.8) on 127.0.0.1 only, on a port the kernel picked free,
# with filesystem storage under the test's directory; stopped by its pid.
# Sourced by image-transports.sh and replay-image.sh.
#
#   registry_start DIR   sets registry_port and registry_pid; 1 when it did not come up
#   registry_push REF NAME:TAG   skopeo copy --all of REF into it (HTTP)
#   registry_stop

registry_pid=
registry_port=

registry_available () {
  command -v skopeo >/dev/null && command -v docker-registry >/dev/null
}

registry_start () {
  local dir=$1 status
  registry_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$dir/storage"
  cat >"$dir/config.yml" <<EOC
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $dir/storage
http:
  addr: 127.0.0.1:$registry_port
EOC
  docker-registry serve "$dir/config.yml" >"$dir/log" 2>&1 &
  registry_pid=$!
  for _ in $(seq 50); do
    status=$(python3 -c "
import urllib.request
try:
    print(urllib.request.urlopen('http://127.0.0.1:$registry_port/v2/', timeout=1).status)
except Exception:
    print(0)")
    [ "$status" = 200 ] && return 0
    sleep 0.2
  done
  return 1
}

registry_push () {
  skopeo copy --quiet --all --preserve-digests --dest-tls-verify=false \
    "$1" "docker://127.0.0.1:$registry_port/$2"
}

registry_stop () {
  if [ -n "$registry_pid" ]; then
    kill "$registry_pid" 2>/dev/null
    wait "$registry_pid" 2>/dev/null
    registry_pid=
  fi
}
