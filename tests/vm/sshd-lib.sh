# Sourced: an sshd of the caller's own on 127.0.0.1 (a port the kernel
# picked, a host key and a login key made for it) that root logs in to with
# that key, and the libvirt URI that reaches the system daemon through it.
# Needs skip() from the caller.  sshd_start DIR sets sshd_pid, sshd_port
# and remote_uri; sshd_stop ends it by its pid and removes the known_hosts
# line ssh added for it.  Used by tests/vm/remote.sh and bench/remote.sh.

sshd_pid=
sshd_port=
remote_uri=

sshd_stop() {
  [ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null
  [ -n "$sshd_port" ] && ssh-keygen -R "[127.0.0.1]:$sshd_port" >/dev/null 2>&1
  sshd_pid=
}

sshd_start() {
  local dir="$1" sshd
  sshd=$(command -v sshd || echo /usr/sbin/sshd)
  [ -x "$sshd" ] || skip "no sshd (openssh-server)"
  ssh-keygen -q -t ed25519 -N '' -f "$dir/key" || skip "cannot make a key"
  ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key" || skip "cannot make a host key"
  sshd_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  cat >"$dir/sshd_config" <<EOF2
ListenAddress 127.0.0.1
Port $sshd_port
HostKey $dir/host_key
AuthorizedKeysFile $dir/key.pub
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $dir/sshd.pid
EOF2
  mkdir -p /run/sshd
  "$sshd" -f "$dir/sshd_config" -E "$dir/sshd.log" || skip "sshd did not start: $(cat "$dir/sshd.log")"
  for _ in $(seq 50); do [ -s "$dir/sshd.pid" ] && break; sleep 0.1; done
  sshd_pid=$(cat "$dir/sshd.pid" 2>/dev/null)
  [ -n "$sshd_pid" ] || skip "sshd wrote no pid"
  remote_uri="qemu+ssh://root@127.0.0.1:$sshd_port/system?keyfile=$dir/key&no_verify=1"
  virsh -c "$remote_uri" version >"$dir/virsh-version.txt" 2>&1 \
    || skip "libvirt over ssh does not answer: $(tail -1 "$dir/virsh-version.txt")"
}
